"""``memhost --user ID``: the command line and the settings page on one user's memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memhost import MemoryHub
from memhost.cli import main
from cli_runner import stdio_command
from recall_helpers import configure
from test_settings_api import SCRIPT, URL_LINE, Server


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_memory_commands_work_on_the_users_memory(home: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--user", "bob", "memory", "add", "--target", "user",
                       "Bob prefers tea.")
    assert code == 0, out
    assert (home / "users" / "bob" / "memories" / "USER.md").read_text(
        encoding="utf-8") == "Bob prefers tea."
    assert not (home / "memories" / "USER.md").exists()
    code, out, _ = run(capsys, "--user", "bob", "memory", "show", "--json")
    shown = json.loads(out)
    assert shown["user"] == "bob"
    assert [e["text"] for e in shown["stores"][1]["entries"]] == ["Bob prefers tea."]
    code, out, _ = run(capsys, "memory", "show", "--json")
    assert json.loads(out)["stores"][1]["entries"] == []


# "": `--user "$ID"` with the variable unset must not write to the home's own memory.
@pytest.mark.parametrize("bad", ["", "../alice", "Bob", "a/b", "x" * 65])
def test_a_bad_user_id_is_an_error_that_says_what_is_allowed(
        home: Path, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    code, out, err = run(capsys, "--user", bad, "memory", "add", "--target", "user", "x")
    assert code == 2
    assert "lower-case letters, digits" in err
    assert not (home / "users").exists() and not (home / "memories" / "USER.md").exists()


def test_pending_writes_are_the_users(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(home, "builtin", memory={"write_approval": True})
    with MemoryHub(home) as hub:
        memory = hub.manager("carol")
        memory.start_session("chat-1")
        staged = json.loads(memory.call_tool("memory", {"action": "add", "target": "user",
                                                        "content": "Carol is left-handed."}))
        assert staged.get("staged"), staged
    code, out, _ = run(capsys, "memory", "pending", "--json")
    assert json.loads(out)["pending"] == []
    code, out, _ = run(capsys, "--user", "carol", "memory", "pending", "--json")
    [record] = json.loads(out)["pending"]
    code, out, _ = run(capsys, "--user", "carol", "memory", "approve", record["id"])
    assert code == 0, out
    assert "left-handed" in (home / "users" / "carol" / "memories" / "USER.md").read_text(
        encoding="utf-8")


def test_recall_stats_of_one_user(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configure(home, "sqlite")
    with MemoryHub(home) as hub:
        memory = hub.manager("dave")
        memory.start_session("chat-1")
        memory.begin_turn("The staging cluster is called heron.")
        memory.finish_turn("The staging cluster is called heron.", "Noted.")
    code, out, err = run(capsys, "--user", "dave", "recall", "stats", "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["path"] == str(home / "users" / "dave" / "recall.db")
    code, out, err = run(capsys, "--user", "erin", "recall", "stats")
    assert code == 1 and "no recall database" in err


def test_the_settings_page_edits_the_users_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    out_path, err_path = logs / "out", logs / "err"
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1",
           "PYTHONUNBUFFERED": "1"}
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen([SCRIPT or sys.executable, "--user", "frank", "settings", "serve",
                                 "--port", "0"], env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (match := URL_LINE.search(out_path.read_text(encoding="utf-8"))):
        assert proc.poll() is None and time.monotonic() < deadline, err_path.read_text()
        time.sleep(0.05)
    server = Server(proc, match.group(1), int(match.group(2)), match.group(3), home, out_path,
                    err_path)
    try:
        status, answer = server.json("POST", "/api/memory/user", body={
            "action": "add", "content": "Frank works nights."})
        assert status == 200 and answer["success"], answer
        status, memory = server.json("GET", "/api/memory")
        assert status == 200
        texts = [e["text"] for store in memory["stores"] for e in store["entries"]]
        assert texts == ["Frank works nights."]
    finally:
        server.stop()
    assert (home / "users" / "frank" / "memories" / "USER.md").read_text(
        encoding="utf-8") == "Frank works nights."
    assert not (home / "memories" / "USER.md").exists()
    assert "frank" in out_path.read_text(encoding="utf-8")


def test_memhost_mcp_serves_the_users_memory(home: Path, tmp_path: Path) -> None:
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {"MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}

    async def client() -> dict[str, object]:
        with stdio_command(["--user", "ivy", "mcp"], env=env) as command, \
                open(tmp_path / "mcp-stderr.log", "w", encoding="utf-8") as errlog:
            params = StdioServerParameters(command=command[0], args=command[1:], env=env)
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool("memory", {
                        "action": "add", "target": "user", "content": "Ivy is a night owl."})
                    return json.loads(result.content[0].text)

    answer = anyio.run(client)
    assert answer["success"], answer
    assert (home / "users" / "ivy" / "memories" / "USER.md").read_text(
        encoding="utf-8") == "Ivy is a night owl."
    assert not (home / "memories" / "USER.md").exists()


@pytest.mark.parametrize("command", [["config", "show"], ["providers", "list"]])
def test_user_on_what_users_share_is_an_error(home: Path, capsys: pytest.CaptureFixture[str],
                                              command: list[str]) -> None:
    code, _, err = run(capsys, "--user", "bob", *command)
    assert code == 2 and "without --user" in err
    code, _, err = run(capsys, "--user", "", *command)
    assert code == 2 and "without --user" in err
