"""``memhost mcp`` driven by the ``mcp`` SDK's own clients: the real console script in a
subprocess over stdio (handshake and per-request protocols) and over streamable HTTP, with a
real folder provider in the home, checking the files on disk, the outbox, the exit code and the
shutdown report."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

# The mcp SDK (and httpx2, installed with it) is imported by the tests that use it, not here:
# importing it costs each pytest-xdist worker most of a second at collection, whether or not the
# worker runs any of these tests. Without it the whole file is skipped, as before.
if importlib.util.find_spec("mcp") is None:
    pytest.skip("the mcp SDK is not installed (pip install 'memhost[mcp]')",
                allow_module_level=True)

from memhost.builtin_providers.store import MemoryStore  # noqa: E402
from memhost.builtin_providers.tool import tool_schema  # noqa: E402
from memhost.config import update_config  # noqa: E402
from memhost.fencing import CLOSE_TAG, OPEN_TAG  # noqa: E402
from cli_runner import run_memhost, spawn_memhost, stdio_command, wait_for_output

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))
SQLITE = Path(__file__).resolve().parent.parent / "plugins" / "sqlite"

# A folder provider that records every hook it gets, recalls lines of its own notes file that
# share a word with the query, has one tool, and prints to stdout (which must never reach the
# protocol stream).
JOTTER = {
    "plugin.toml": 'name = "jotter"\nversion = "1.0"\nentry = "provider:Jotter"\n',
    "provider.py": textwrap.dedent('''
        import json
        from pathlib import Path

        from memhost import hookimpl


        class Jotter:
            def __init__(self):
                self.home = None

            def _log(self, hook, **data):
                with open(self.home / "jotter-log.jsonl", "a", encoding="utf-8") as f:
                    f.write(json.dumps({"hook": hook, **data}) + "\\n")

            @hookimpl
            def initialize(self, session_id, home):
                self.home = Path(home)
                print("jotter says hello on stdout", flush=True)
                self._log("initialize", session_id=session_id)

            @hookimpl
            def tool_schemas(self):
                return [{"name": "jotter_count", "description": "Count the jotted notes.",
                         "parameters": {"type": "object", "properties": {}}}]

            @hookimpl
            def handle_tool_call(self, tool_name, arguments):
                return json.dumps({"success": True, "notes": len(self._notes())})

            def _notes(self):
                path = self.home / "jotter-notes.txt"
                return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

            @hookimpl
            def prefetch(self, query, session_id):
                print("jotter prefetch chatter on stdout", flush=True)
                words = {w.strip("?.,!").lower() for w in query.split()}
                hits = [n for n in self._notes() if words & set(n.lower().split())]
                self._log("prefetch", query=query, session_id=session_id)
                return "\\n".join(f"- {n}" for n in hits) or None

            @hookimpl
            def on_builtin_write(self, action, target, content, session_id):
                self._log("on_builtin_write", action=action, target=target, content=content,
                          session_id=session_id)

            @hookimpl
            def session_end(self, session_id):
                self._log("session_end", session_id=session_id)

            @hookimpl
            def shutdown(self):
                self._log("shutdown")
    '''),
}


def install_jotter(home: Path) -> None:
    folder = home / "plugins" / "jotter"
    folder.mkdir(parents=True)
    for name, text in JOTTER.items():
        (folder / name).write_text(text, encoding="utf-8")
    (home / "jotter-notes.txt").write_text("Ada keeps bees on the roof\nThe build uses make\n",
                                           encoding="utf-8")
    update_config(home, {("memory", "provider"): "jotter"})


def jotter_log(home: Path) -> list[dict[str, Any]]:
    path = home / "jotter-log.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def server_env(home: Path) -> dict[str, str]:
    # stdio_client passes only a few safe variables on; everything memhost needs is named here.
    return {"MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}


class Run:
    """One ``memhost mcp`` process: its stderr and, once it ended, its exit code."""

    def __init__(self, tmp: Path) -> None:
        self.stderr_path = tmp / "mcp-stderr.log"
        self.rc_path = tmp / "mcp-rc.txt"

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8")

    @property
    def returncode(self) -> int:
        return int(self.rc_path.read_text().strip())

    def report(self) -> dict[str, Any]:
        match = re.search(r"shutdown report: (\{.*\})", self.stderr)
        assert match, self.stderr
        return json.loads(match.group(1))

    def session_id(self) -> str:
        match = re.search(r"session (mcp-\S+) started", self.stderr)
        assert match, self.stderr
        return match.group(1)


@asynccontextmanager
async def stdio_session(home: Path, tmp: Path, run: Run) -> AsyncIterator[ClientSession]:
    """The SDK's stdio client on the real console script; a shell records its exit code."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    # The client sends SIGTERM to the process group when the server is slow to exit; the shell
    # then waits for memhost and still records its code (memhost itself closes cleanly on it).
    with stdio_command(["mcp"], env=server_env(home)) as memhost_mcp:
        command = (f"trap 'true' TERM; {shlex.join(memhost_mcp)}; "
                   f"echo $? > {shlex.quote(str(run.rc_path))}")
        params = StdioServerParameters(command="/bin/sh", args=["-c", command],
                                       env=server_env(home))
        with open(run.stderr_path, "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    yield session


def text_of(result: Any) -> str:
    [content] = result.content
    return content.text


def answer(result: Any) -> dict[str, Any]:
    return json.loads(text_of(result))


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def test_import_memhost_does_not_import_mcp() -> None:
    code = ("import sys, memhost, memhost.cli; memhost.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_stdio_session_end_to_end(home: Path, tmp_path: Path, run: Run) -> None:
    from memhost.mcp.server import RECALL_SCHEMA

    install_jotter(home)
    MemoryStore(home).add("memory", "The project is built with make")

    async def client() -> None:
        async with stdio_session(home, tmp_path, run) as session:
            init = await session.initialize()
            # The frozen snapshot reaches clients that only read the instructions, too.
            assert "The project is built with make" in init.instructions

            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert list(tools) == ["memory", "jotter_count", "recall"]
            memory_schema = tool_schema()
            assert tools["memory"].input_schema == memory_schema["parameters"]
            assert tools["memory"].description == memory_schema["description"]
            assert tools["recall"].input_schema == RECALL_SCHEMA["parameters"]

            added = answer(await session.call_tool("memory", {
                "action": "add", "target": "user", "content": "The user is called Ada"}))
            assert added["success"] is True and added["entry_count"] == 1
            assert (home / "memories" / "USER.md").read_text(encoding="utf-8") == \
                "The user is called Ada"
            replaced = answer(await session.call_tool("memory", {
                "action": "replace", "target": "memory", "old_text": "built with make",
                "content": "The project is built with ninja"}))
            assert replaced["success"] is True
            assert (home / "memories" / "MEMORY.md").read_text(encoding="utf-8") == \
                "The project is built with ninja"
            # Answers are the manager's, errors included, and flagged as tool errors.
            refused = await session.call_tool("memory", {"action": "remove", "target": "memory",
                                                         "old_text": "no such entry"})
            assert refused.is_error and answer(refused)["success"] is False

            # The snapshot is frozen at session start: the writes above are not in it.
            resource = await session.read_resource("memhost://memory/snapshot")
            [contents] = resource.contents
            assert "The project is built with make" in contents.text
            assert "ninja" not in contents.text and "Ada" not in contents.text
            prompt = await session.get_prompt("memory-snapshot")
            assert prompt.messages[0].content.text == contents.text
            assert [p.name for p in (await session.list_prompts()).prompts] == ["memory-snapshot"]

            recalled = text_of(await session.call_tool("recall", {"query": "what about bees?"}))
            assert recalled.startswith(OPEN_TAG) and recalled.endswith(CLOSE_TAG)
            assert "- Ada keeps bees on the roof" in recalled
            assert "make" not in recalled  # the other note does not match
            nothing = text_of(await session.call_tool("recall", {"query": "weather tomorrow"}))
            assert nothing.startswith("Nothing recalled") and "'jotter'" in nothing

            assert answer(await session.call_tool("jotter_count", {})) == \
                {"success": True, "notes": 2}

    anyio.run(client)

    assert run.returncode == 0, run.stderr
    report = run.report()
    assert report["status"] == "drained" and report["kept_in_outbox"] == 0
    assert report["providers_shut_down"] == ["jotter", "builtin"]
    assert "jotter says hello on stdout" in run.stderr  # stray output went to stderr
    # The provider saw one session: initialised, the two writes mirrored, ended, shut down.
    session_id = run.session_id()
    log = [e for e in jotter_log(home) if e["hook"] != "prefetch"]
    assert [e["hook"] for e in log] == ["initialize", "on_builtin_write", "on_builtin_write",
                                        "session_end", "shutdown"]
    assert {e.get("session_id") for e in log[:4]} == {session_id}
    assert [(e["action"], e["target"], e["content"]) for e in log[1:3]] == [
        ("add", "user", "The user is called Ada"),
        ("replace", "memory", "The project is built with ninja")]
    # Nothing is left in the outbox for the next start to replay.
    assert not list((home / "outbox" / "jotter").glob("*.jsonl"))


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw-client", "version": "7"}}}


@pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
def test_the_session_ends_with_the_connection(home: Path, ending: str) -> None:
    """Closing stdin (or a signal, while the client keeps its end of stdin open) ends the
    session, shuts the manager down and exits with 0, with nothing on stdout but protocol
    messages."""
    assert SCRIPT
    install_jotter(home)
    env = {**os.environ, "MEMHOST_HOME": str(home)}
    with stdio_command(["mcp"], env=env) as command:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "memhost"
        if ending == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
            # The signal alone ends it: a supervisor stopping the server need not wait for the
            # client to let go of the pipe (stdin is closed only after it exited).
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                pytest.fail("memhost mcp did not exit on SIGTERM while stdin was open")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out == ""  # the provider's prints went to stderr
    assert "jotter says hello on stdout" in err
    assert re.search(r"session mcp-\S+ started \(stdio, client raw-client 7\)", err)
    assert ("SIGTERM: closing the memory session" in err) == (ending == "SIGTERM")
    report = json.loads(re.search(r"shutdown report: (\{.*\})", err).group(1))
    assert report["status"] == "drained"
    assert [e["hook"] for e in jotter_log(home)][-2:] == ["session_end", "shutdown"]


def test_staged_writes_answer_with_a_pending_id(home: Path, tmp_path: Path, run: Run) -> None:
    update_config(home, {("memory", "write_approval"): True})

    async def client() -> dict[str, Any]:
        async with stdio_session(home, tmp_path, run) as session:
            await session.initialize()
            return answer(await session.call_tool("memory", {
                "action": "add", "target": "user", "content": "The user prefers tea"}))

    staged = anyio.run(client)
    assert staged["success"] is True and staged["staged"] is True
    assert re.fullmatch(r"[0-9a-f]{8}", staged["pending_id"])
    assert not (home / "memories" / "USER.md").exists()  # not applied
    record = json.loads((home / "pending" / "memory" / f"{staged['pending_id']}.json")
                        .read_text(encoding="utf-8"))
    assert record["payload"]["content"] == "The user prefers tea"
    assert run.returncode == 0 and run.report()["status"] == "drained"


def test_recall_without_a_provider_says_so(home: Path, tmp_path: Path, run: Run) -> None:
    async def client() -> tuple[str, list[str]]:
        async with stdio_session(home, tmp_path, run) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            return text_of(await session.call_tool("recall", {"query": "my name?"})), names

    text, names = anyio.run(client)
    assert names == ["memory", "recall"]
    assert text.startswith("No external memory provider is active")
    assert run.returncode == 0


@pytest.mark.skipif(not (SQLITE / "plugin.toml").is_file(),
                    reason="the bundled 'sqlite' provider (plugins/sqlite) is not in this tree yet")
def test_recall_with_the_sqlite_provider(home: Path, tmp_path: Path, run: Run) -> None:
    update_config(home, {("memory", "provider"): "sqlite"})

    async def client() -> tuple[list[str], str]:
        async with stdio_session(home, tmp_path, run) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            saved = answer(await session.call_tool("memory", {
                "action": "add", "target": "user",
                "content": "The user's sister Maren lives in Trondheim"}))
            assert saved["success"] is True
            # The write reaches the provider on memhost's background worker; recall until it
            # has landed (bounded).
            recalled = ""
            with anyio.move_on_after(20):
                while OPEN_TAG not in recalled:
                    recalled = text_of(await session.call_tool(
                        "recall", {"query": "Where does Maren live?"}))
                    if OPEN_TAG not in recalled:
                        await anyio.sleep(0.2)
            return names, recalled

    names, recalled = anyio.run(client)
    assert names[0] == "memory" and names[-1] == "recall" and len(names) > 2
    assert recalled.startswith(OPEN_TAG), recalled
    assert "Trondheim" in recalled
    assert run.returncode == 0, run.stderr
    assert run.report()["status"] == "drained"
    assert not list((home / "outbox" / "sqlite").glob("*.jsonl"))


def test_a_client_on_the_per_request_protocol(home: Path) -> None:
    """The SDK's high-level client negotiates the newer, handshake-free protocol by itself."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    assert SCRIPT

    async def client() -> tuple[str, dict[str, Any], str]:
        with stdio_command(["mcp"], env=server_env(home)) as command:
            params = StdioServerParameters(command=command[0], args=command[1:],
                                           env=server_env(home))
            async with Client(params) as mcp_client:
                tools = [t.name for t in (await mcp_client.list_tools()).tools]
                assert tools == ["memory", "recall"]
                added = await mcp_client.call_tool("memory", {
                    "action": "add", "target": "memory", "content": "Deploys happen on Fridays"})
                return mcp_client.protocol_version, answer(added), tools[0]

    version, added, _ = anyio.run(client)
    assert not version.startswith("2025")  # not the initialize handshake
    assert added["success"] is True
    assert MemoryStore(home).entries("memory") == ["Deploys happen on Fridays"]


def test_bad_arguments_fail_before_serving(home: Path) -> None:
    assert SCRIPT
    env = {**os.environ, "MEMHOST_HOME": str(home)}
    port_on_stdio = run_memhost(["mcp", "--port", "9000"], env=env, input="", timeout=60)
    assert port_on_stdio.returncode == 2 and "--transport http" in port_on_stdio.stderr
    short = run_memhost(["mcp", "--transport", "http", "--port", "0"],
                        env={**env, "MEMHOST_MCP_TOKEN": "short"}, timeout=60)
    assert short.returncode == 2 and "MEMHOST_MCP_TOKEN" in short.stderr
    update_config(home, {("memory", "provider"): "nosuch"})
    strict = run_memhost(["mcp"], env={**env, "MEMHOST_STRICT_PROVIDERS": "1"}, input="",
                         timeout=60)
    assert strict.returncode == 2 and "'nosuch'" in strict.stderr and strict.stdout == ""
    (home / "config.toml").write_text("[memory]\nprefetch_timeout = 'soon'\n", encoding="utf-8")
    broken = run_memhost(["mcp"], env=env, input="", timeout=60)
    assert broken.returncode == 2 and "prefetch_timeout" in broken.stderr
    assert broken.stdout == ""


# -- HTTP ----------------------------------------------------------------------------------------


@pytest.fixture
def http_server(home: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    err = tmp_path / "mcp.err"
    proc = spawn_memhost(["mcp", "--transport", "http", "--port", "0"],
                         env={**os.environ, "MEMHOST_HOME": str(home)},
                         stdout=tmp_path / "mcp.out", stderr=err)
    try:
        banner = wait_for_output(proc, err, "Authorization: Bearer")
        url = re.search(r"serving (http://127\.0\.0\.1:\d+/mcp)", banner)
        token = re.search(r"token: (\S+)", banner)
        assert url and token, banner
        yield {"url": url.group(1), "token": token.group(1), "proc": proc, "stderr": err}
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


def test_http_refuses_requests_without_the_token(http_server: dict[str, Any]) -> None:
    import httpx2  # installed with mcp
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    url, token = http_server["url"], http_server["token"]
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer wrong-token"},
                    {"Authorization": f"Basic {token}"}, {"Authorization": token}):
        refused = httpx2.post(url, json=initialize, headers={**accept, **headers}, timeout=10)
        assert refused.status_code == 401, headers
        assert token not in refused.text
    assert httpx2.get(url, headers=accept, timeout=10).status_code == 401
    # With the token, a request a web page could make through DNS rebinding is still refused.
    bearer = {**accept, "Authorization": f"Bearer {token}"}
    assert httpx2.post(url, json=initialize, timeout=10,
                       headers={**bearer, "Host": "attacker.example"}).status_code == 421
    assert httpx2.post(url, json=initialize, timeout=10,
                       headers={**bearer, "Origin": "http://attacker.example"}).status_code == 403

    async def client() -> list[str]:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return [t.name for t in (await session.list_tools()).tools]

    assert anyio.run(client) == ["memory", "recall"]


def test_http_sessions_start_and_end_with_their_connection(
        home: Path, http_server: dict[str, Any]) -> None:
    import httpx2  # installed with mcp
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    url, token, proc = http_server["url"], http_server["token"], http_server["proc"]

    async def client() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            for content in ("First client was here", "Second client was here"):
                async with streamable_http_client(url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        added = answer(await session.call_tool("memory", {
                            "action": "add", "target": "memory", "content": content}))
                        assert added["success"] is True

    anyio.run(client)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    stderr = http_server["stderr"].read_text(encoding="utf-8")
    started = re.findall(r"session (mcp-\S+) started \(HTTP session", stderr)
    ended = re.findall(r"session (mcp-\S+) ended \(HTTP session", stderr)
    assert len(started) == 2 and len(set(started)) == 2 and sorted(ended) == sorted(started)
    assert stderr.count('"status": "drained"') == 2
    assert MemoryStore(home).entries("memory") == ["First client was here",
                                                   "Second client was here"]
