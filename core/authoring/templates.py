"""The text of the files ``memhost providers new`` writes, as :class:`string.Template` strings:
``$name`` placeholders (filled from :meth:`memhost.authoring.scaffold.Names.mapping`), ``$$`` for a
literal dollar. ``NOTES`` has no placeholders and is written as it is.
"""

PROVIDER = '''\
"""The $name memory provider: short notes kept in a JSON-lines file under the memhost home.

Hooks run on different threads (see the threading rules in memhost's docs/providers.md):
handle_tool_call and initialize on the host's thread, prefetch on a worker thread, sync_turn and
session_end on the background worker. The note file takes care of its own locking.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memhost import hookimpl

from .notes import NoteFile

TOOL = "$tool"
DEFAULT_MAX_RESULTS = 3


class $cls:
    def __init__(self) -> None:
        self.notes: NoteFile | None = None
        self.max_results = DEFAULT_MAX_RESULTS
        self.match = "any"
        self.context = "primary"

    @hookimpl
    def check_available(self, config: dict[str, Any]) -> str | None:
        # Before initialize, on the host's thread: check settings only, never the network.
        limit = config.get("max_results", DEFAULT_MAX_RESULTS)
        if isinstance(limit, bool) or not isinstance(limit, int | float) or limit < 1:
            return f"max_results must be a number of at least 1, not {limit!r}"
        return None

    @hookimpl
    def initialize(self, session_id: str, home: Path, config: dict[str, Any], context: str) -> None:
        self.max_results = int(config.get("max_results", DEFAULT_MAX_RESULTS))
        self.match = config.get("match", "any")
        self.context = context
        self.notes = NoteFile(Path(home) / "$name" / "notes.jsonl")

    @hookimpl
    def prompt_fragment(self) -> str | None:
        return (f"You can keep short notes with the `{TOOL}` tool (action 'add' or 'search'). "
                "Notes that match the user's message are recalled before each turn.")

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        return [{
            "name": TOOL,
            "description": "Add a short note, or search the notes kept so far.",
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["add", "search"]},
                    "text": {"type": "string", "description": "the note, or the search words"},
                },
                "required": ["action", "text"],
            },
        }]

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any]) -> str:
        if self.notes is None:
            return json.dumps({"success": False, "error": "the provider is not initialised"})
        action, text = arguments.get("action"), str(arguments.get("text", "")).strip()
        if not text:
            return json.dumps({"success": False, "error": "'text' must not be empty"})
        if action == "add":
            if self.context != "primary":
                return json.dumps({"success": False,
                                   "error": f"notes are read-only in a {self.context} session"})
            self.notes.add(text)
            return json.dumps({"success": True})
        if action == "search":
            found = self.notes.search(text, self.max_results, require_all=self.match == "all")
            return json.dumps({"success": True, "notes": found})
        return json.dumps({"success": False, "error": "action must be 'add' or 'search'"})

    @hookimpl
    def prefetch(self, query: str) -> str | None:
        # On the turn's critical path: answer fast, return raw text (memhost fences it).
        if self.notes is None:
            return None
        found = self.notes.search(query, self.max_results, require_all=self.match == "all")
        return "\\n".join(f"- {note}" for note in found) or None

    @hookimpl
    def sync_turn(self, user_content: str) -> None:
        # On the background worker, after each completed turn. Only primary sessions write.
        if self.notes is None or self.context != "primary":
            return
        lowered = user_content.strip().lower()
        if lowered.startswith("remember that "):
            self.notes.add(user_content.strip()[len("remember that "):])

    @hookimpl
    def shutdown(self) -> None:
        self.notes = None
'''

NOTES = '''\
"""A small append-only note file (JSON lines), safe to use from several threads."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


class NoteFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def add(self, text: str) -> None:
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"text": text}, ensure_ascii=False) + "\\n")

    def all(self) -> list[str]:
        with self._lock:
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines()
            except FileNotFoundError:
                return []
        notes = []
        for line in lines:
            try:
                notes.append(str(json.loads(line)["text"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash
        return notes

    def search(self, query: str, limit: int, *, require_all: bool = False) -> list[str]:
        wanted = _words(query)
        if not wanted:
            return []
        scored = []
        for note in self.all():
            shared = wanted & _words(note)
            if shared and (not require_all or shared == wanted):
                scored.append((len(shared), note))
        scored.sort(key=lambda item: -item[0])
        return [note for _, note in scored[:limit]]
'''

CONFIG_SCHEMA = '''\
"""Settings of the $name provider. Loaded on its own by path: import only memhost.schema."""

from memhost.schema import ConfigField, FieldOption, ProviderConfigSchema

CONFIG_SCHEMA = ProviderConfigSchema(
    name="$name",
    label="$label",
    storage="config",
    fields=(
        ConfigField(
            "max_results", label="Notes recalled per turn", kind="number", default=3,
            min=1, max=20, step=1,
            description="How many matching notes are added to the model's context each turn.",
        ),
        ConfigField(
            "match", label="Match", kind="select", default="any",
            options=(FieldOption("any", "Any word"), FieldOption("all", "Every word")),
            description="Whether a note must share any or every word of the query.",
        ),
    ),
)
'''

README = '''\
# $label memory provider

A memhost memory provider that keeps short notes in `<home>/$name/notes.jsonl`.

- Tool `$tool`: `{"action": "add" | "search", "text": "..."}`.
- Before each turn, notes sharing words with the user's message are recalled.
- After each turn, a user message starting with "remember that" is kept as a note.

## Settings

| key | kind | default | meaning |
|---|---|---|---|
| `max_results` | number | 3 | notes recalled per turn |
| `match` | select | `any` | a note must share `any` or `all` words of the query |

Change them with `memhost config set providers.$name.max_results 5`.

## Use it

    memhost providers check $name
    memhost providers use $name

## Test it

    $test_command
'''

FOLDER_MANIFEST = '''\
name = "$name"
version = "0.1.0"
description = "Short notes kept in a JSON-lines file, recalled by matching words."
entry = "provider:$cls"
# pip requirements this provider needs, e.g. ["httpx>=0.27"]
requires = []
'''

FOLDER_TEST = '''\
"""Runs memhost's provider contract suite against this provider, plus its own behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from memhost.testing import ProviderContract, load_folder_provider

FOLDER = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_provider():
    return load_folder_provider(FOLDER)


class Test$cls(ProviderContract):
    @pytest.fixture
    def provider(self, fresh_provider):
        return fresh_provider

    @pytest.fixture
    def provider_config(self):
        return {"max_results": 3, "match": "any"}

    @pytest.fixture
    def tool_arguments(self):
        return {"$tool": {"action": "add", "text": "Deployments happen on Tuesdays."}}


def test_a_note_added_with_the_tool_is_recalled(fresh_provider, tmp_path):
    provider = fresh_provider
    provider.initialize(session_id="s1", home=tmp_path, config={}, context="primary")
    provider.handle_tool_call(
        tool_name="$tool", arguments={"action": "add", "text": "Deployments happen on Tuesdays."})
    assert "Tuesdays" in provider.prefetch(query="when are deployments?")
    assert provider.prefetch(query="favourite colour") is None
'''

PACKAGE_PYPROJECT = '''\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "A memhost memory provider: short notes, recalled by matching words."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["memhost>=0.1"]

# memhost finds the provider through this entry point: name = "module:Class".
[project.entry-points."memhost.providers"]
$name = "$package.provider:$cls"

[project.optional-dependencies]
test = ["pytest>=8"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
'''

PACKAGE_TEST = '''\
"""Runs memhost's provider contract suite against this provider, plus its own behaviour."""

from __future__ import annotations

import pytest

from memhost.testing import ProviderContract
from $package.provider import $cls


class Test$cls(ProviderContract):
    @pytest.fixture
    def provider(self):
        return $cls()

    @pytest.fixture
    def provider_config(self):
        return {"max_results": 3, "match": "any"}

    @pytest.fixture
    def tool_arguments(self):
        return {"$tool": {"action": "add", "text": "Deployments happen on Tuesdays."}}


def test_a_note_added_with_the_tool_is_recalled(tmp_path):
    provider = $cls()
    provider.initialize(session_id="s1", home=tmp_path, config={}, context="primary")
    provider.handle_tool_call(
        tool_name="$tool", arguments={"action": "add", "text": "Deployments happen on Tuesdays."})
    assert "Tuesdays" in provider.prefetch(query="when are deployments?")
    assert provider.prefetch(query="favourite colour") is None
'''


