"""Write approval: which memory writes need a person's yes, and the store of those waiting for it.

:class:`ApprovalGate` is the ``memory`` tool's :class:`~memhost.builtin_providers.tool.WriteGate`.
With ``memory.write_approval`` off, a foreground write applies at once; a background review may
add entries, but its ``replace``, ``remove`` and any batch holding one are always staged, because
an unattended pass must never delete a standing fact. With it on, a foreground write asks the
host's confirm callback (no callback: staged) and every background write is staged.

A staged write is one JSON file, ``<home>/pending/memory/<id>.json`` (0600, written atomically),
holding the validated proposal, a summary, its origin and time, and the full text of every entry
it would change. Approving replays it through the same tool code, pinned to exactly those
entries, and refuses (keeping the record) when one of them changed since; rejecting deletes it.

The staged writes' store is :mod:`memhost.review.pending` and a proposal's summary, check and
pinning are :mod:`memhost.review.proposal`; their public names stay importable from here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memhost.builtin_providers.store import FILENAMES, MemoryStore
from memhost.files import locked
from memhost.review.pending import FOREGROUND, SUBSYSTEM, PendingStore, PendingWrite, pending_dir
from memhost.review.proposal import (DESTRUCTIVE, describe, destructive_steps, failure,
                                     is_destructive, pin, resolve)
from memhost.security.screen import screen_write

log = logging.getLogger(__name__)

BACKGROUND = "background_review"

ConfirmCallback = Callable[[str, str], bool]

DENIED = ("Denied by the user: this memory change was NOT saved. Do not retry it; carry on "
          "without it, and tell the user if it matters.")


# -- the gate ---------------------------------------------------------------------------------


class ApprovalGate:
    """The ``memory`` tool's write gate (``memory.write_approval`` and background staging).

    ``confirm`` is the host's callback ``cb(summary, detail) -> bool``, or a zero-argument
    function returning it (or ``None``), read at decision time so a host may set it late.
    """

    def __init__(self, store: MemoryStore, *, home: Path | None = None, enabled: bool = False,
                 confirm: Callable[[], ConfirmCallback | None] | None = None) -> None:
        self.store = store
        self.pending = PendingStore(home if home is not None else store.home)
        self.enabled = enabled
        self._confirm = confirm

    def decide(self, proposal: dict[str, Any], *, origin: str,
               session_id: str) -> dict[str, Any] | None:
        from memhost.review.background import in_review_thread

        background = origin == BACKGROUND or in_review_thread()
        refusal, risky = screen_write(self.store.screen, proposal, session_id=session_id,
                                      background=background)
        if refusal is not None:
            return refusal
        if not self.enabled and not (background and is_destructive(proposal)) and not risky:
            return None
        matched = resolve(self.store, proposal)
        if isinstance(matched, dict):
            return matched  # it could not apply anyway: say why, stage nothing
        summary, detail = describe(proposal, matched)
        if risky:
            return self._stage(proposal, matched, summary, detail, origin, session_id, risky)
        if not self.enabled:
            return self._stage(proposal, matched, summary, detail, origin, session_id, (
                "Staged as a proposal, NOT applied: a background review may add entries, but "
                "replacing or removing one waits for the user's approval"))
        if background:
            return self._stage(proposal, matched, summary, detail, origin, session_id, (
                "Staged for approval, NOT saved yet (memory.write_approval is on)"))
        callback = self._confirm() if self._confirm is not None else None
        if callback is None:
            return self._stage(proposal, matched, summary, detail, origin, session_id, (
                "Staged for approval, NOT saved yet: memory.write_approval is on and the user "
                "cannot be asked right now"))
        try:
            allowed = bool(callback(summary, detail))
        except Exception:
            log.warning("the write-approval prompt failed; the write is staged instead",
                        exc_info=True)
            return self._stage(proposal, matched, summary, detail, origin, session_id, (
                "Staged for approval, NOT saved yet: the approval prompt failed"))
        if not allowed:
            return {"success": False, "denied": True, "done": True, "error": DENIED}
        # Allowed: apply to exactly the entries the user was shown.
        pinned = pin(proposal, matched)
        proposal.clear()
        proposal.update(pinned)
        return None

    def _stage(self, proposal: dict[str, Any], matched: list[dict[str, Any]], summary: str,
               detail: str, origin: str, session_id: str, why: str) -> dict[str, Any]:
        short = detail if len(detail) <= 120 else detail[:119] + "…"
        try:
            record = self.pending.stage(dict(proposal), summary=f"{summary}: {short}",
                                        detail=detail, origin=origin, session_id=session_id,
                                        matched=matched)
        except OSError as exc:
            log.error("could not stage a memory write in %s: %s", self.pending.folder, exc)
            return failure(f"This memory change needs the user's approval, but it could not be "
                           f"staged ({exc.strerror or exc}), so it was NOT saved. Tell the user; "
                           "do not retry now.", done=True)
        log.info("memory write staged as %s (%s, origin %s)", record.id, summary, origin)
        return {"success": True, "staged": True, "done": True, "pending_id": record.id,
                "target": proposal.get("target"),
                "message": f"{why}. Pending id {record.id}; the user reviews it with `memhost "
                           "memory pending` and approves or rejects it. Do not repeat this change."}


# -- approving and rejecting ------------------------------------------------------------------


def approve(store: MemoryStore, pending_id: str, *, home: Path | None = None) -> dict[str, Any]:
    """Replay a staged write onto ``store``; the record is removed only when it applied."""
    from memhost.builtin_providers.tool import MemoryTool

    pending = PendingStore(home if home is not None else store.home)
    if pending.get(pending_id) is None:
        return failure(f"No pending write has the id {pending_id!r}. List them with "
                       "`memhost memory pending`.", pending_id=pending_id)
    with locked(pending.folder / ".approve"):
        record = pending.get(pending_id)  # again under the lock: another process may have won
        if record is None:
            return failure(f"No pending write has the id {pending_id!r}. List them with "
                           "`memhost memory pending`.", pending_id=pending_id)
        target = record.target
        if not store.enabled.get(target, False):
            return failure(f"Pending write {record.id} changes {FILENAMES[target]}, which is "
                           "disabled under [memory] in config.toml; enable it first, or reject "
                           "the write. It is kept.", pending_id=record.id, kept=True)
        needs_pin = [n for n, op in destructive_steps(record.payload)]
        pinned_ops = {m.get("op") for m in record.matched if m.get("entry") is not None}
        if any(n not in pinned_ops for n in needs_pin):
            return failure(f"Pending write {record.id} does not record the entry it changes, so "
                           "it cannot be applied safely; reject it.", pending_id=record.id,
                           kept=True)
        proposal = pin(record.payload, record.matched)
        tool = MemoryTool(store, origin=record.origin)
        outcome = tool.apply(proposal, session_id=record.session_id, origin=record.origin)
        if not outcome.ok:
            response = dict(outcome.response)
            response.update(pending_id=record.id, kept=True, error=(
                f"Pending write {record.id} was not applied and is kept: "
                f"{response.get('error', 'the write failed')}"))
            return response
        pending.discard(record.id)
    response = dict(outcome.response)
    response.update(pending_id=record.id, approved=True, summary=record.summary)
    return response


def reject(home: Path, pending_id: str) -> dict[str, Any]:
    """Discard a staged write; nothing in memory changes."""
    pending = PendingStore(home)
    record = pending.get(pending_id)
    if record is None or not pending.discard(pending_id):
        return failure(f"No pending write has the id {pending_id!r}. List them with "
                       "`memhost memory pending`.", pending_id=pending_id)
    return {"success": True, "pending_id": pending_id, "rejected": True,
            "summary": record.summary, "message": "Rejected; nothing was changed."}

__all__ = [
    "BACKGROUND",
    "DESTRUCTIVE",
    "FOREGROUND",
    "SUBSYSTEM",
    "ApprovalGate",
    "PendingStore",
    "PendingWrite",
    "approve",
    "describe",
    "pending_dir",
    "pin",
    "reject",
    "resolve",
]
