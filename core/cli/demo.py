"""``memhost demo``: two sessions of the builtin memory, scripted, on a throwaway home.

It plays the model's side of the ``memory`` tool through the real builtin provider, so what it
prints is what a host would see. It never touches the user's own home.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

MEMORY_LIMIT = 270  # small, so that a handful of entries fills it
USER_LIMIT = 400

PROFILE = "Name: Dana. Data engineer; likes short answers with the code first."
NOTES = [
    "Project uses Python 3.12 and uv; run tests with `uv run pytest`.",
    "The staging database is read-only; migrations go through the deploy pipeline.",
    "CI runs on GitHub Actions; the lint job fails on unused imports.",
]
NEW_NOTE = "Releases go out on Tuesdays and Thursdays only; never deploy on a Friday."
SHORTER = "Python 3.12 + uv; tests: `uv run pytest`."


class DemoFailed(Exception):
    """The memory did not behave as the script expects."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help="a scripted walk through two sessions of the builtin memory",
        description="Walk through two sessions on a temporary home (never your own): writes, the "
                    "frozen snapshot, the next session seeing them, a full store consolidated in "
                    "one batch, and the archive. --home is ignored.")
    parser.set_defaults(func=cmd_demo)


def _wrap(text: str, lead: str) -> str:
    return textwrap.fill(text, width=110, initial_indent=lead, subsequent_indent=" " * len(lead),
                         break_long_words=False, break_on_hyphens=False)


def _heading(title: str) -> None:
    print(f"\n── {title} " + "─" * max(3, 66 - len(title)))


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise DemoFailed(what)


class _Model:
    """Plays the model: calls the memory tool and shows both sides."""

    def __init__(self, provider: Any, session_id: str) -> None:
        self.provider = provider
        self.session_id = session_id

    def call(self, **arguments: Any) -> dict[str, Any]:
        print(_wrap(json.dumps(arguments, ensure_ascii=False), "model → memory "))
        answer = self.provider.handle_tool_call("memory", arguments, self.session_id)
        print(_wrap(answer, "tool  ← "))
        return json.loads(answer)


def _start(home: Path, session_id: str) -> Any:
    from memhost.builtin_providers.provider import BuiltinProvider
    from memhost.builtin_providers.store import MemoryStore
    from memhost.config import load_config

    provider = BuiltinProvider(MemoryStore.from_settings(home, load_config(home).memory))
    provider.initialize(session_id=session_id, home=home, context="primary")
    return provider


def _show_snapshot(text: str) -> str:
    print(textwrap.indent(text, "  ") if text else "  (empty: nothing is saved yet)")
    return text


def run(home: Path) -> None:
    from memhost.cli import main as cli
    from memhost.config import update_config

    update_config(home, {("memory", "memory_char_limit"): MEMORY_LIMIT,
                         ("memory", "user_char_limit"): USER_LIMIT})
    print(f"home: {home} (temporary)")
    print(f"config.toml: [memory] memory_char_limit = {MEMORY_LIMIT}, user_char_limit = "
          f"{USER_LIMIT} (small, to fill it quickly)")

    _heading("Session 1 starts; its system prompt gets a frozen snapshot")
    first = _start(home, "session-1")
    before = _show_snapshot(first.snapshot.render())
    model = _Model(first, "session-1")
    _expect(model.call(action="add", target="user", content=PROFILE)["success"], "profile add")
    answer = model.call(target="memory", operations=[{"action": "add", "content": n} for n in NOTES])
    _expect(answer["success"], "batch of adds")
    _expect(first.snapshot.render() == before, "the running session's snapshot changed")
    print("Session 1's snapshot is unchanged (still empty): the writes are on disk at once, and "
          "its prompt stays byte-stable.")

    _heading("Session 2 starts; its snapshot holds the writes")
    second = _start(home, "session-2")
    shown = _show_snapshot(second.snapshot.render())
    _expect(all(n in shown for n in NOTES), "session 2 sees the writes")

    _heading("Memory is full; the model consolidates in one batch")
    model = _Model(second, "session-2")
    refused = model.call(action="add", target="memory", content=NEW_NOTE)
    _expect(not refused["success"] and "current_entries" in refused, "over-budget add refused")
    merged = model.call(target="memory", operations=[
        {"action": "remove", "old_text": "CI runs on GitHub Actions"},
        {"action": "replace", "old_text": "uv run pytest", "content": SHORTER},
        {"action": "add", "content": NEW_NOTE},
    ])
    _expect(merged["success"], "consolidation batch")

    _heading("Nothing is lost: replaced and removed entries are archived")
    print("$ memhost memory history")
    cli(["--home", str(home), "memory", "history"])
    from memhost.builtin_providers.archive import Archive
    from memhost.home import memories_dir

    removed = next(r for r in Archive(memories_dir(home)).entries() if r.action == "remove")
    print(f"$ memhost memory restore {removed.id}")
    _expect(cli(["--home", str(home), "memory", "restore", removed.id]) == 0, "restore")

    _heading("Session 3 would start with this MEMORY block")
    third = _start(home, "session-3")
    _expect(removed.text in _show_snapshot(third.snapshot.memory), "restored entry is back")


def cmd_demo(args: argparse.Namespace) -> int:
    import tempfile

    from memhost.cli import _common

    with tempfile.TemporaryDirectory(prefix="memhost-demo-") as tmp:
        try:
            run(Path(tmp) / "home")
        except DemoFailed as exc:
            _common.eprint(f"memhost: demo: unexpected behaviour at step: {exc}")
            return 1
    print("\nDone; the temporary home was deleted. Your own memory: `memhost memory show`.")
    return 0
