"""An atomic batch of memory operations: all applied in one write, or none.

Each operation is checked on its own first (:func:`prepare`); then, under the file's lock, they
are applied in order to the fresh entry list and the budget is checked against the final state
only, so a batch can make room and use it in the same write (:func:`edit`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memhost.builtin_providers.checks import WriteChecks
from memhost.builtin_providers.entries import FILENAMES, normalise, text_problem, with_replaced
from memhost.builtin_providers.outcomes import NOTHING_APPLIED, Change, OpError

#: action, the cleaned new entry ("" for remove), the cleaned old_text ("" for add), and the
#: entry a staged write was reviewed against.
Prepared = tuple[str, str, str, str | None]
Edit = Callable[[list[str]], tuple[list[str], str, dict[str, Any], list[Change]]]


def prepare(checks: WriteChecks, number: int, raw_op: Any) -> Prepared:
    """Check operation ``number`` of a batch on its own (before the lock is taken)."""
    op = raw_op if isinstance(raw_op, dict) else {}
    action = op.get("action")
    where = f"Operation {number} ({action or 'unknown'})"
    content = op.get("content")
    if content is None:
        content = op.get("new_text")
    if action not in ("add", "replace", "remove"):
        raise OpError(f"{where}: unknown action; use add, replace or remove." + NOTHING_APPLIED)
    entry = ""
    if action in ("add", "replace"):
        if problem := text_problem(content):
            hint = " (use action 'remove' to delete)" if action == "replace" else ""
            raise OpError(f"{where}: content {problem}{hint}." + NOTHING_APPLIED)
        try:
            entry = checks.clean_content(content, "Content")
        except OpError as exc:
            raise OpError(f"{where}: {exc.outcome.response['error']}", counts=False) from None
    old = ""
    if action in ("replace", "remove"):
        old_text = op.get("old_text")
        if problem := text_problem(old_text):
            raise OpError(f"{where}: old_text {problem}." + NOTHING_APPLIED)
        old = normalise(old_text).strip()
    matched = op.get("matched_entry")
    return action, entry, old, matched if isinstance(matched, str) else None

def edit(checks: WriteChecks, target: str, prepared: list[Prepared], origin: str) -> Edit:
    """The batch as one edit of the entry list (run under the lock)."""

    def op(entries: list[str]) -> tuple[list[str], str, dict[str, Any], list[Change]]:
        work = list(entries)
        replaced: dict[str, str] = {}
        removed: dict[str, str] = {}
        changes: list[Change] = []
        for number, (action, content, old, matched) in enumerate(prepared, 1):
            where = f"Operation {number} ({action})"
            if action == "add":
                if content not in work:
                    work.append(content)
                    changes.append(Change("add", target, content))
                continue
            index = checks.locate(target, work, old, action, matched, where=where, batch=True)
            previous = work[index]
            checks.refuse_pinned(target, previous, origin, where=where)
            if action == "remove":
                del work[index]
                removed[str(number)] = previous
                changes.append(Change("remove", target, "", previous))
            else:
                work = with_replaced(work, previous, content)
                replaced[str(number)] = previous
                changes.append(Change("replace", target, content, previous))
        if entries and not work:
            raise OpError(
                f"Refusing to empty {FILENAMES[target]}: this batch would remove every entry. "
                "Keep at least one entry (merge overlapping ones into a shorter entry instead). "
                "To delete the last entry on purpose, use a single 'remove'." + NOTHING_APPLIED,
                usage=checks.short_usage(target, entries))
        checks.check_budget(target, entries, work, (
            f"After all {len(prepared)} operations the store would be over its budget. Remove "
            "or shorten more entries in the same batch, then retry."), batch=True)
        extra: dict[str, Any] = {}
        if replaced:
            extra["replaced_entries"] = replaced
        if removed:
            extra["removed_entries"] = removed
        return work, f"Applied {len(prepared)} operation(s).", extra, changes

    return op
