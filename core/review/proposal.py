"""A memory write proposal (the ``memory`` tool's validated arguments) before it applies: a
summary for a person to read, a check against the store as it is now that finds the exact
entries it would change, and a copy pinned to those entries so that approving it later changes
exactly what the person was shown."""

from __future__ import annotations

from typing import Any

from memhost.builtin_providers.entries import canonical_entry
from memhost.builtin_providers.store import MemoryStore

DESTRUCTIVE = frozenset({"replace", "remove"})
LABELS = {"user": "the user profile (USER.md)", "memory": "memory (MEMORY.md)"}


def describe(proposal: dict[str, Any], matched: list[dict[str, Any]]) -> tuple[str, str]:
    """A one-line summary and a detail text for an approval prompt or the pending list."""
    target = proposal.get("target", "memory")
    label = LABELS.get(target, target)
    entry_for = {m.get("op"): m.get("entry", "") for m in matched}
    action = proposal.get("action")
    if action == "add":
        return f"add to {label}", str(proposal.get("content", ""))
    if action == "replace":
        return (f"replace in {label}",
                f"old: {entry_for.get(None, proposal.get('old_text', ''))}\n"
                f"new: {proposal.get('content', '')}")
    if action == "remove":
        return f"remove from {label}", str(entry_for.get(None, proposal.get("old_text", "")))
    operations = proposal.get("operations") or []
    lines = []
    for number, op in enumerate(operations, 1):
        op = op if isinstance(op, dict) else {}
        kind = op.get("action")
        content = op.get("content") if op.get("content") is not None else op.get("new_text")
        old = entry_for.get(number, op.get("old_text", ""))
        if kind == "remove":
            lines.append(f"- remove: {old}")
        elif kind == "replace":
            lines.append(f"- replace: {old} -> {content}")
        else:
            lines.append(f"- {kind}: {content}")
    count = len(operations)
    return f"apply {count} change{'s' if count != 1 else ''} to {label}", "\n".join(lines)


def is_destructive(proposal: dict[str, Any]) -> bool:
    """Whether the proposal replaces or removes an entry (alone or in a batch)."""
    if proposal.get("action") in DESTRUCTIVE:
        return True
    if proposal.get("action") == "batch":
        return any(isinstance(op, dict) and op.get("action") in DESTRUCTIVE
                   for op in proposal.get("operations") or ())
    return False


def failure(message: str, **extra: Any) -> dict[str, Any]:
    """A failed answer, in the ``memory`` tool's shape."""
    return {"success": False, "error": message, **extra}


def _check_content(store: MemoryStore, content: Any, where: str) -> dict[str, Any] | None:
    if not isinstance(content, str) or not content.strip():
        return failure(f"{where}content is required. Nothing was saved or staged.")
    try:
        entry = canonical_entry(content)
    except ValueError as exc:
        return failure(f"{where}the content is not a valid entry: {exc}. Nothing was saved or "
                       "staged.")
    refusal = store.screen.refusal(entry)
    if refusal is not None:
        return failure(f"{where}{refusal['error']}", blocked_pattern=refusal["blocked_pattern"])
    return None


def resolve(store: MemoryStore, proposal: dict[str, Any]) -> list[dict[str, Any]] | dict[str, Any]:
    """Check a proposal against the store as it is now, without changing anything.

    Returns the entries it would change (see :attr:`PendingWrite.matched`), or the tool's
    failure answer when it could not apply (no match, ambiguous match, bad content).
    """
    target = proposal["target"]
    action = proposal["action"]
    if action != "batch":
        steps: list[tuple[int | None, dict[str, Any]]] = [(None, proposal)]
    else:
        operations = proposal.get("operations") or []
        steps = [(n, op if isinstance(op, dict) else {}) for n, op in enumerate(operations, 1)]
    matched: list[dict[str, Any]] = []
    for number, step in steps:
        where = f"Operation {number}: " if number is not None else ""
        kind = step.get("action")
        if kind not in ("add", "replace", "remove"):
            return failure(f"{where}unknown action {kind!r}; use add, replace or remove. "
                           "Nothing was saved or staged.")
        if kind in ("add", "replace"):
            content = step.get("content") if step.get("content") is not None else step.get("new_text")
            problem = _check_content(store, content, where)
            if problem is not None:
                return problem
        if kind in DESTRUCTIVE:
            old_text = step.get("old_text")
            outcome = store.resolve(target, old_text if isinstance(old_text, str) else "", kind)
            if not outcome.ok:
                answer = dict(outcome.response)
                answer["error"] = f"{where}{answer.get('error', 'no match')} Nothing was saved or staged."
                return answer
            matched.append({"op": number, "action": kind, "old_text": old_text,
                            "entry": outcome.response["matched_entry"]})
    return matched


def pin(proposal: dict[str, Any], matched: list[dict[str, Any]]) -> dict[str, Any]:
    """A copy of ``proposal`` whose replace/remove steps apply to exactly the matched entries."""
    pinned = dict(proposal)
    entry_for = {m.get("op"): m.get("entry") for m in matched}
    if proposal.get("action") == "batch":
        operations = []
        for number, op in enumerate(proposal.get("operations") or [], 1):
            op = dict(op) if isinstance(op, dict) else {}
            if op.get("action") in DESTRUCTIVE and entry_for.get(number) is not None:
                op["matched_entry"] = entry_for[number]
            operations.append(op)
        pinned["operations"] = operations
    elif proposal.get("action") in DESTRUCTIVE and entry_for.get(None) is not None:
        pinned["matched_entry"] = entry_for[None]
    return pinned


def destructive_steps(payload: dict[str, Any]) -> list[tuple[int | None, dict[str, Any]]]:
    """The replace and remove steps of a proposal, numbered as in its batch (``None`` alone)."""
    if payload.get("action") in DESTRUCTIVE:
        return [(None, payload)]
    if payload.get("action") == "batch":
        return [(n, op) for n, op in enumerate(payload.get("operations") or [], 1)
                if isinstance(op, dict) and op.get("action") in DESTRUCTIVE]
    return []
