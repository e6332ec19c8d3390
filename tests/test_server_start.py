"""Servers at start. ``memhost mcp`` over stdio keeps stdout for JSON-RPC alone: a provider
that prints at import time, in ``check_available`` or from a thread of its own, even straight
to file descriptor 1, never reaches the client's stream; its output goes to stderr. A provider
whose import hangs costs a server only the import bound, and the mcp, chat and settings servers
say on stderr what they are waiting for."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

# The mcp SDK is imported by the one test that uses it, not here: importing it costs each
# pytest-xdist worker most of a second at collection, whether or not the worker runs that test.
# Without it the whole file is skipped, as before.
if importlib.util.find_spec("mcp") is None:
    pytest.skip("the mcp SDK is not installed (pip install 'memhost[mcp]')",
                allow_module_level=True)

from memhost.config import update_config  # noqa: E402
from cli_runner import run_memhost, stdio_command

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))
HANG_GUARD = 120  # seconds; a guard against a hung test, never a timing assertion

NOISY = textwrap.dedent('''\
    import os
    import sys
    import threading
    import time

    from memhost import hookimpl

    print("noisy: imported")  # buffered: reaches fd 1 whenever Python flushes
    os.write(1, b"noisy: raw bytes on fd 1 at import\\n")


    def chatter():
        time.sleep(0.2)
        print("noisy: a thread of its own says hi", flush=True)


    class Noisy:
        @hookimpl
        def check_available(self, config):
            print("noisy: checking availability", flush=True)
            sys.stdout.write("noisy: more from check_available\\n")
            threading.Thread(target=chatter, daemon=True).start()
            return None

        @hookimpl
        def initialize(self, session_id):
            print("noisy: initialize", flush=True)

        @hookimpl
        def prefetch(self, query):
            print("noisy: prefetch", flush=True)
            return "the user keeps bees"
    ''')


def install(home: Path, name: str, code: str) -> None:
    folder = home / "plugins" / name
    folder.mkdir(parents=True)
    folder.joinpath("plugin.toml").write_text(
        f'name = "{name}"\nversion = "1.0"\nentry = "provider:Noisy"\n')
    folder.joinpath("provider.py").write_text(code)
    update_config(home, {("memory", "provider"): name})


def request(message_id: int, method: str, params: dict | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "id": message_id, "method": method}
    if params is not None:
        body["params"] = params
    return (json.dumps(body) + "\n").encode()


INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {},
              "clientInfo": {"name": "raw-test", "version": "1"}}


def raw_session(home: Path, *calls: bytes) -> tuple[list[str], str]:
    """Drive ``memhost mcp`` over raw pipes: initialize, then ``calls`` (ids 2 and on; by
    default list tools, call recall); every line the server wrote to stdout, and its stderr."""
    assert SCRIPT
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    calls = calls or (request(2, "tools/list"),
                      request(3, "tools/call", {"name": "recall", "arguments": {"query": "bees?"}}))
    last = f'"id":{len(calls) + 1}'
    messages = (request(1, "initialize", INITIALIZE)
                + b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n' + b"".join(calls))
    errlog = home / "mcp-stderr.log"
    lines: list[str] = []
    with stdio_command(["mcp"], env=env) as command:
        with open(errlog, "wb") as err:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=err, env=env)
        assert process.stdin and process.stdout
        process.stdin.write(messages)
        process.stdin.flush()
        try:
            while not any(last in line.replace(" ", "") for line in lines):
                line = process.stdout.readline()
                if not line:
                    break
                lines.append(line.decode())
        finally:
            process.stdin.close()  # the end of the connection: the server shuts down
            lines += process.stdout.read().decode().splitlines(keepends=True)
            process.wait(timeout=HANG_GUARD)
    return lines, errlog.read_text(encoding="utf-8")


def test_stdout_carries_only_json_rpc_whatever_the_provider_prints(home: Path) -> None:
    install(home, "noisy", NOISY)

    lines, stderr = raw_session(home)

    assert lines, stderr
    replies = [json.loads(line) for line in lines]  # every line is JSON (or this raises)
    assert all(reply.get("jsonrpc") == "2.0" for reply in replies)
    assert [r.get("id") for r in replies if "id" in r] == [1, 2, 3]
    assert "the user keeps bees" in json.dumps(replies[-1])
    for said in ("noisy: imported", "noisy: raw bytes on fd 1 at import",
                 "noisy: checking availability", "noisy: more from check_available",
                 "noisy: initialize", "noisy: prefetch"):
        assert said in stderr


def test_a_request_holding_half_a_character_is_answered(home: Path) -> None:
    """JSON allows the escape of a lone surrogate, and Python's encoder writes one; the SDK's
    parser refuses such a message and drops it unanswered. memhost reads it with U+FFFD in its
    place, as it reads bytes on the wire that are not UTF-8, so the client gets its answer."""
    add = request(2, "tools/call", {"name": "memory", "arguments": {
        "action": "add", "target": "memory", "content": "tea \ud800 every morning"}})
    assert b"\\ud800" in add  # the escape, as json.dumps writes it
    lines, stderr = raw_session(home, add, request(3, "tools/list"))
    replies = {reply.get("id"): reply for reply in map(json.loads, lines)}
    assert 2 in replies and 3 in replies, stderr
    assert json.loads(replies[2]["result"]["content"][0]["text"])["success"], replies[2]
    memory = (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
    assert memory == "tea \ufffd every morning"


@pytest.mark.parametrize("raw, read", [
    (r'"tea \ud800 x"', "tea \ufffd x"),
    (r'"low \udc00"', "low \ufffd"),
    (r'"pair \ud83d\ude00 kept"', "pair \U0001f600 kept"),
    (r'"an escaped backslash \\ud800 is text"', "an escaped backslash \\ud800 is text"),
    (r'"after one \\\ud800"', "after one \\\ufffd"),
    (r'"reversed \ude00\ud83d"', "reversed \ufffd\ufffd"),
    (r'"plain \u00e9"', "plain \u00e9"),
])
def test_sound_line_writes_only_lone_surrogate_escapes_anew(raw: str, read: str) -> None:
    from memhost.mcp.stdio import sound_line

    assert json.loads(sound_line(raw)) == read


def _nested_call(request_id: object, depth: int) -> bytes:
    """A tools/call whose whole message nests ``depth`` levels (its argument holds the rest)."""
    inner = "[" * (depth - 3) + "]" * (depth - 3)
    return ('{"jsonrpc": "2.0", "id": %s, "method": "tools/call", "params": {"name": "memory", '
            '"arguments": {"content": %s}}}\n' % (json.dumps(request_id), inner)).encode()


def test_a_request_nested_too_deeply_is_answered_with_an_error(home: Path) -> None:
    """The SDK's parser stops at a nesting depth and drops the message unanswered; memhost
    answers it with an error under its id, and the session goes on."""
    from memhost.mcp.stdio import DEEPEST_READ

    lines, stderr = raw_session(home, _nested_call(2, DEEPEST_READ),
                                _nested_call(3, DEEPEST_READ + 1), request(4, "tools/list"))
    replies = {reply.get("id"): reply for reply in map(json.loads, lines)}
    assert {2, 3, 4} <= replies.keys(), stderr
    assert "result" in replies[2]  # as deep as the SDK reads: the tool answered
    assert "nests deeper than the MCP SDK reads" in replies[3]["error"]["data"]
    assert replies[4]["result"]["tools"]


def test_the_depth_the_sdk_reads_is_the_one_memhost_assumes() -> None:
    """If an SDK upgrade moves its parser's limit, DEEPEST_READ must move with it."""
    from mcp import types

    from memhost.mcp.stdio import DEEPEST_READ

    read = types.jsonrpc_message_adapter.validate_json
    read(_nested_call(1, DEEPEST_READ))
    with pytest.raises(ValueError):
        read(_nested_call(1, DEEPEST_READ + 1))


@pytest.mark.parametrize("request_id", [7, "r-7"])
def test_sound_line_keeps_the_id_of_a_request_nested_too_deeply(request_id: object) -> None:
    from memhost.mcp.stdio import DEEPEST_READ, TOO_DEEP, sound_line

    line = _nested_call(request_id, DEEPEST_READ + 500).decode()
    assert json.loads(sound_line(line)) == {"jsonrpc": "2.0", "id": request_id,
                                            "method": TOO_DEEP}
    readable = _nested_call(request_id, DEEPEST_READ).decode()
    assert sound_line(readable) == readable
    note = '{"jsonrpc": "2.0", "method": "x", "params": {"a": %s}}' % ("[" * 300 + "]" * 300)
    assert sound_line(note) == note  # a notification: nobody waits for an answer


def test_the_sdk_client_works_with_a_noisy_provider(home: Path, tmp_path: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    install(home, "noisy", NOISY)
    errlog_path = tmp_path / "stderr.log"

    env = {"MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}

    async def client() -> None:
        with stdio_command(["mcp"], env=env) as command, anyio.fail_after(HANG_GUARD), \
                open(errlog_path, "w", encoding="utf-8") as errlog:
            params = StdioServerParameters(command=command[0], args=command[1:], env=env)
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = [t.name for t in (await session.list_tools()).tools]
                    assert tools == ["memory", "recall"]
                    result = await session.call_tool("recall", {"query": "what about bees?"})
                    assert "the user keeps bees" in result.content[0].text

    anyio.run(client)
    assert "noisy: checking availability" in errlog_path.read_text(encoding="utf-8")


def test_a_hanging_import_costs_only_the_bound_and_the_wait_is_shown(home: Path) -> None:
    install(home, "sleepy", "import time\ntime.sleep(60)\n" + NOISY)
    update_config(home, {("memory", "provider_import_timeout"): 1.0})

    lines, stderr = raw_session(home)

    replies = [json.loads(line) for line in lines]
    assert [r.get("id") for r in replies if "id" in r] == [1, 2, 3]
    assert "import timed out after 1 s" in stderr
    assert "loading memory provider 'sleepy'" in stderr


def test_the_settings_server_says_what_a_slow_provider_check_waits_on(home: Path,
                                                                     tmp_path: Path) -> None:
    from test_settings_api import start_server

    install(home, "sleepy", "import time\ntime.sleep(60)\n" + NOISY)
    update_config(home, {("memory", "provider_import_timeout"): 2.0})
    server = start_server(home, tmp_path / "logs")
    try:
        status, listing = server.json("GET", "/api/providers")
    finally:
        server.stop()

    assert status == 200
    row = next(p for p in listing["providers"] if p["name"] == "sleepy")
    assert "import timed out after 2 s" in row["reason"]
    stderr = server.stderr_path.read_text(encoding="utf-8")
    assert "checking memory provider 'sleepy' (import, check_available)..." in stderr
    assert "checking memory provider 'sleepy' (import, check_available): done in" in stderr


def test_chat_shows_what_it_waits_on_at_start(home: Path) -> None:
    from fake_llm import FakeLLM, text_reply

    install(home, "sleepy", "import time\ntime.sleep(60)\n" + NOISY)
    update_config(home, {("memory", "provider_import_timeout"): 1.0})
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    with FakeLLM(lambda body: "chat") as fake:
        fake.script(text_reply("Hello!"), queue="chat")
        result = run_memhost(["chat", "--base-url", fake.url, "--model", "m"], input="hi\n",
                             env=env, timeout=HANG_GUARD)

    assert result.returncode == 0, result.stderr
    assert "memhost chat: loading memory provider 'sleepy' (import, check_available)..." \
        in result.stderr
    assert "import timed out after 1 s" in result.stderr
    assert "memhost chat: starting the memory session" in result.stderr
    assert "Hello!" in result.stdout
