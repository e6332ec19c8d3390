"""The ``memory`` tool: its schema and the dispatcher between a model's call and the store.

The schema is a plain object with ``required: ["target"]`` and no top-level combinators (some
backends reject ``oneOf``/``anyOf`` there); what each action needs is checked here, before any
write and before any approval prompt, so an invalid write is never staged.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from memhost.builtin_providers.entries import REQUIRED, text_problem
from memhost.builtin_providers.store import FILENAMES, TARGETS, MemoryStore, Outcome

TOOL_NAME = "memory"
MAX_FAILURES_PER_TURN = 3

# Sent with every model request, so every word earns its place: the whole schema stays under
# 2,300 characters of JSON (tests/test_tool.py measures it), its guidance kept.
_DESCRIPTION = """\
Save durable facts for future sessions. Entries go into every later session's system prompt, \
so keep them short and worth their space.

HOW: make all changes at once in ONE call with 'operations' (add/replace/remove steps). \
The batch is all-or-nothing and the budget is checked on the final result, so one call can free \
room and add. The answer reports usage and says when it is done; don't repeat it. Bare \
action/content/old_text are for a single change.

WHEN: save unasked when the user tells you about themselves, corrects you or states a \
preference, or you learn a stable fact about their environment, conventions or tools. \
Priority: preferences and corrections, then environment facts, then the rest. Good memory \
spares the user repeating themselves.

FULL: a refused add lists the current entries; reissue it as ONE batch that removes or \
shortens stale entries and adds the new one.

{targets}

Write facts ('User prefers short answers'), not commands.

DO NOT SAVE: trivial or obvious facts, things easy to look up, raw data or logs, task progress, \
records of finished work, temporary TODO state. Procedures belong in skills or docs."""

_BOTH_TARGETS = ("TARGETS: 'user' is who the user is (name, role, preferences, style); 'memory' "
                 "is your own notes (environment, conventions, tool quirks, lessons).")

_TARGET_ONLY = {
    "memory": ("The enabled store: 'memory' for your own notes.",
               "TARGET: only 'memory' is enabled, for your own notes (environment, conventions, "
               "tool quirks, lessons)."),
    "user": ("The enabled store: 'user' for the user profile.",
             "TARGET: only 'user' is enabled, for facts about the user (name, role, preferences, "
             "style)."),
}

_OP_SCHEMA = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": ["add", "replace", "remove"]},
                   "content": {"type": "string"}, "new_text": {"type": "string"},
                   "old_text": {"type": "string"}},
    "required": ["action"],
}


def tool_schema(enabled_targets: tuple[str, ...] = TARGETS) -> dict[str, Any] | None:
    """The schema, narrowed to the enabled stores; ``None`` when both are disabled."""
    if not enabled_targets:
        return None
    target = {"type": "string", "enum": list(enabled_targets),
              "description": "'user': the user profile; 'memory': your notes."}
    targets_line = _BOTH_TARGETS
    if len(enabled_targets) == 1:
        target["description"], targets_line = _TARGET_ONLY[enabled_targets[0]]
    description = _DESCRIPTION.format(targets=targets_line)
    return {
        "name": TOOL_NAME,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["add", "replace", "remove"],
                           "description": "One change; omit with operations."},
                "target": target,
                "content": {"type": "string", "description": "Entry text, for add and replace."},
                "old_text": {"type": "string", "description": (
                    "For replace and remove: a short unique part of the entry.")},
                "new_text": {"type": "string", "description": "Alias of content."},
                "operations": {"type": "array", "items": copy.deepcopy(_OP_SCHEMA), "description": (
                    "Several changes, applied atomically against the final budget.")},
            },
            "required": ["target"],
        },
    }


class WriteGate(Protocol):
    """Decides whether a validated write may go ahead (approval lives behind this)."""

    def decide(self, proposal: dict[str, Any], *, origin: str, session_id: str) -> dict[str, Any] | None:
        """``None`` lets the write proceed; a dict is the tool's answer instead (staged, denied)."""


class MemoryTool:
    """One model's handle on the store, with that model's per-turn circuit breaker."""

    def __init__(self, store: MemoryStore | None, *, gate: WriteGate | None = None,
                 origin: str = "foreground") -> None:
        # ``None`` is allowed so a host without a usable store still answers the model with a
        # clear error instead of an AttributeError.
        self.store = store  # type: ignore[assignment]
        self.gate = gate
        self.origin = origin
        self.failures = 0

    def enabled_targets(self) -> tuple[str, ...]:
        if self.store is None:
            return ()
        return tuple(t for t in TARGETS if self.store.enabled[t])

    def schema(self) -> dict[str, Any] | None:
        return tool_schema(self.enabled_targets())

    def reset_turn(self) -> None:
        """A new turn: the consolidation breaker starts again."""
        self.failures = 0

    def call(self, arguments: dict[str, Any] | None, *, session_id: str = "") -> dict[str, Any]:
        args = arguments if isinstance(arguments, dict) else {}
        if self.store is None:
            return _error("Memory is not available in this environment (no memory store was "
                          "set up). Continue without saving; `memhost doctor` shows why.")
        enabled = self.enabled_targets()
        if not enabled:
            return _error("Memory is turned off: both stores are disabled. Set memory_enabled or "
                          "user_profile_enabled to true under [memory] in config.toml.")
        # A missing/null target means the only enabled store when the schema was narrowed to one
        # (defaulting to a disabled 'memory' there would refuse a call the schema allowed).
        target = args.get("target") or (enabled[0] if len(enabled) == 1 else "memory")
        if target not in TARGETS:
            return _error(f"Invalid memory target {target!r}. Use 'memory' or 'user'.")
        if target not in enabled:
            key = "memory_enabled" if target == "memory" else "user_profile_enabled"
            return _error(f"Writes to {FILENAMES[target]} are disabled ({key} = false under "
                          "[memory] in config.toml).", target=target)
        content = args.get("content")
        if content is None:
            content = args.get("new_text")
        action, operations = args.get("action"), args.get("operations")

        if operations is not None and operations != []:
            if not isinstance(operations, list):
                return _error("operations must be a list of {action, content?, old_text?} objects.")
            proposal = {"action": "batch", "target": target, "operations": operations}
        elif action is None or action == "":  # some clients send "" for an omitted field
            return _error("Missing required parameter: give either 'action' (add, replace or "
                          "remove) for one change, or 'operations' for several. The current "
                          "memory is already in your system prompt; there is nothing to read.")
        elif action not in ("add", "replace", "remove"):
            return _error(f"Unknown action {action!r}. Use add, replace or remove.")
        else:
            problem = self._validate_single(action, target, content, args.get("old_text"))
            if problem is not None:
                return problem
            proposal = {"action": action, "target": target, "content": content,
                        "old_text": args.get("old_text")}

        if self.gate is not None:
            answer = self.gate.decide(proposal, origin=self.origin, session_id=session_id)
            if answer is not None:
                return answer
        return self._finish(self.apply(proposal, session_id=session_id))

    def apply(self, proposal: dict[str, Any], *, session_id: str = "",
              origin: str | None = None) -> Outcome:
        """Run a validated proposal against the store (also used to replay approved writes)."""
        origin = origin or self.origin
        target, action = proposal["target"], proposal["action"]
        if action == "batch":
            return self.store.apply_batch(target, proposal["operations"], origin=origin,
                                          session_id=session_id)
        if action == "add":
            return self.store.add(target, proposal["content"], origin=origin, session_id=session_id)
        if action == "replace":
            return self.store.replace(target, proposal["old_text"], proposal["content"],
                                      matched_entry=proposal.get("matched_entry"),
                                      origin=origin, session_id=session_id)
        if action == "remove":
            return self.store.remove(target, proposal["old_text"],
                                     matched_entry=proposal.get("matched_entry"),
                                     origin=origin, session_id=session_id)
        return Outcome({"success": False, "error": f"Unknown action {action!r}."})

    def _validate_single(self, action: str, target: str, content: Any,
                         old_text: Any) -> dict[str, Any] | None:
        if action == "add" and (problem := _field_problem("Content", action, content)):
            return _error(f"{problem}.")
        if action in ("replace", "remove") and (problem := text_problem(old_text)):
            try:
                entries = self.store.entries(target)
            except Exception:
                entries = []
            given = "None was given" if problem == REQUIRED else f"It {problem}"
            return _error(
                f"'{action}' needs old_text: a short unique part of the entry to {action}. "
                f"{given}. Call {action} again with old_text set to part of one of "
                "current_entries.",
                current_entries=self.store.shown_entries(target, entries),
                usage=self.store.short_usage(target, entries))
        if action == "replace" and (problem := _field_problem("content", action, content)):
            return _error(f"{problem} (use 'remove' to delete an entry).")
        return None

    def _finish(self, outcome: Outcome) -> dict[str, Any]:
        if outcome.ok:
            self.failures = 0
            return outcome.response
        if outcome.consolidation_failure:
            self.failures += 1
            if self.failures > MAX_FAILURES_PER_TURN:
                return {"success": False, "done": True, "error": (
                    f"Memory could not be updated after {self.failures} attempts in this turn. "
                    "Stop calling the memory tool now, leave memory as it is, and answer the user; "
                    "tell them the fact was not saved. It can be saved in a later turn.")}
        return outcome.response


def _field_problem(name: str, action: str, value: Any) -> str | None:
    """"content is required for 'add'", or "content for 'add' must be a string, not a list"."""
    problem = text_problem(value)
    if problem is None:
        return None
    if problem == REQUIRED:
        return f"{name} {problem} for {action!r}"
    return f"{name} for {action!r} {problem}"


def _error(message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": message, **extra}
