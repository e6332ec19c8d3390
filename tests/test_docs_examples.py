"""The README's Python block and every host example in docs/hosts.md run as written: each in a
process of its own, with the OpenAI SDK talking to a scripted model server on a real socket
(:mod:`fake_llm`), and each leaves the memory it should."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_llm import FakeLLM
from recall_helpers import configure

REPO = Path(__file__).resolve().parents[1]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def model(body: dict[str, Any]) -> dict[str, Any]:
    """A model that saves the user's name with the memory tool when told it, then answers."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"content": "Nice to meet you! I'll remember that."}
    name = re.search(r"my name is (\w+)", last.get("content") or "", re.I)
    if name:
        return {"tool_calls": [{"id": "call_1", "name": "memory", "arguments": json.dumps({
            "action": "add", "target": "user",
            "content": f"The user's name is {name.group(1)}."})}]}
    return {"content": "Happy to help."}


def readme_block() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    tour = text[text.index("**Embedding it in a host.**"):]
    match = PYTHON_BLOCK.search(tour)
    assert match, "README.md: the host section has no ```python block"
    return match.group(1)


def host_examples() -> dict[str, str]:
    """docs/hosts.md's ```python blocks under '## Example hosts', by their ### heading."""
    text = (REPO / "docs" / "hosts.md").read_text(encoding="utf-8")
    section = text[text.index("## Example hosts"):]
    section = section[:section.index("\n## ", 1)]
    examples = {}
    for part in re.split(r"^### ", section, flags=re.M)[1:]:
        title = part.splitlines()[0].strip()
        match = PYTHON_BLOCK.search(part)
        assert match, f"docs/hosts.md: {title!r} has no ```python block"
        examples[title] = match.group(1)
    return examples


@pytest.fixture
def server() -> Iterator[FakeLLM]:
    with FakeLLM(default={"default": model}) as fake:
        yield fake


def run(code: str, home: Path, server: FakeLLM, tmp_path: Path) -> str:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "MEMHOST_HOME": str(home), "OPENAI_BASE_URL": server.url,
           "OPENAI_API_KEY": "sk-docs-example", "MODEL": "fake-model"}
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    requests = server.log()
    assert requests, "the example never called the model"
    for request in requests:
        # format="openai": chat completions takes the wrapped shape only.
        assert request.tool_names and request.tool_names[0] == "memory"
    return result.stdout


def user_md(folder: Path) -> str:
    return (folder / "memories" / "USER.md").read_text(encoding="utf-8")


def stored_kinds(database: Path) -> list[str]:
    with sqlite3.connect(database) as conn:
        return [kind for (kind,) in conn.execute("SELECT kind FROM items ORDER BY id")]


@pytest.mark.slow
def test_the_readme_block_runs(home: Path, server: FakeLLM, tmp_path: Path) -> None:
    configure(home, "sqlite")
    out = run(readme_block(), home, server, tmp_path)
    assert "Nice to meet you!" in out
    assert user_md(home) == "The user's name is Ada."
    # finish_turn synced the turn and end_session stored the session: the shutdown at the end of
    # the with block delivered both.
    assert {"turn", "session"} <= set(stored_kinds(home / "recall.db"))
    assert not list((home / "outbox").glob("*/*.jsonl"))


def test_docs_hosts_has_the_three_examples() -> None:
    assert list(host_examples()) == ["A sync host", "An asyncio host", "A gateway with many users"]


@pytest.mark.slow
def test_the_sync_host_runs(home: Path, server: FakeLLM, tmp_path: Path) -> None:
    configure(home, "sqlite")
    out = run(host_examples()["A sync host"], home, server, tmp_path)
    assert out.count("assistant:") == 3
    assert "USER.md [1] The user's name is Ada. (by foreground, session chat-1)" in out
    assert user_md(home) == "The user's name is Ada."
    kinds = stored_kinds(home / "recall.db")
    # Each of the 3 turns is kept as two items (the message and the reply).
    assert kinds.count("turn") == 2 * 3 and kinds.count("session") == 2  # rotate("new") + end
    # After rotate("new") the system prompt the model got held what the first session saved.
    assert "The user's name is Ada." in server.log()[-1].messages[0]["content"]


@pytest.mark.slow
def test_the_asyncio_host_runs(home: Path, server: FakeLLM, tmp_path: Path) -> None:
    out = run(host_examples()["An asyncio host"], home, server, tmp_path)
    assert out.count("assistant:") == 2
    assert "[\"The user's name is Grace.\"]" in out
    assert user_md(home) == "The user's name is Grace."


@pytest.mark.slow
def test_the_gateway_runs(home: Path, server: FakeLLM, tmp_path: Path) -> None:
    configure(home, "sqlite")
    out = run(host_examples()["A gateway with many users"], home, server, tmp_path)
    for user in ("alice", "bob", "carol"):
        name = user.title()
        assert f"{user} [\"The user's name is {name}.\"]" in out
        assert user_md(home / "users" / user) == f"The user's name is {name}."
        assert "turn" in stored_kinds(home / "users" / user / "recall.db")
    assert not (home / "memories" / "USER.md").exists()
