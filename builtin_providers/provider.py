"""The builtin provider: the memory store and the ``memory`` tool, as an ordinary memhost plugin.

It goes through the same registration path as every external provider; the manager only knows
it by name (``builtin``) to keep it first and to keep mirrored writes away from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memhost import hookimpl
from memhost.builtin_providers.snapshot import Snapshot
from memhost.builtin_providers.store import MemoryStore
from memhost.builtin_providers.tool import MemoryTool, WriteGate

NAME = "builtin"

_GUIDANCE = """\
You have a persistent memory that carries over between sessions, edited with the `memory` tool. \
It is for the few facts that matter in every session: who the user is, their preferences and \
corrections, stable facts about their environment and conventions. It has a hard character \
budget; when it is full, merge or replace stale entries rather than skipping a fact that matters. \
Write declarative facts ("User prefers concise answers"), not instructions. Anything that will be \
stale within a week, and step-by-step procedures, do not belong here. The memory shown below was \
loaded when this session started; changes you make are saved at once and appear here from the \
next session on."""

_PROFILE_ONLY_GUIDANCE = """\
You have a persistent user profile that carries over between sessions, edited with the `memory` \
tool (target 'user' only). Save facts about the user: who they are, their preferences and \
corrections. Write declarative facts, not instructions. The profile shown below was loaded when \
this session started; changes appear from the next session on."""


class BuiltinProvider:
    def __init__(self, store: MemoryStore, *, gate: WriteGate | None = None,
                 origin: str = "foreground") -> None:
        self.store = store
        self.tool = MemoryTool(store, gate=gate, origin=origin)
        self.snapshot = Snapshot()
        self.session_id = ""

    @hookimpl
    def initialize(self, session_id: str, home: Path, context: str) -> None:
        self.session_id = session_id
        self.snapshot = self.store.snapshot()

    @hookimpl
    def shutdown(self) -> None:
        # A host serving many users closes a manager per user; its store must not keep
        # descriptors open for the rest of the process.
        self.store.close()

    @hookimpl
    def prompt_fragment(self) -> str | None:
        enabled = self.tool.enabled_targets()
        if not enabled:
            return None
        guidance = _GUIDANCE if "memory" in enabled else _PROFILE_ONLY_GUIDANCE
        blocks = self.snapshot.render()
        return guidance + ("\n\n" + blocks if blocks else "")

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        schema = self.tool.schema()
        return [schema] if schema else []

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any], session_id: str) -> str:
        return json.dumps(self.tool.call(arguments, session_id=session_id), ensure_ascii=False)
