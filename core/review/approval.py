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
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memhost.builtin_providers.entries import canonical_entry
from memhost.builtin_providers.store import FILENAMES, MemoryStore
from memhost.security.screen import screen_write
from filelock import Timeout

from memhost.files import atomic_write_json, ensure_private_dir, locked, read_json_or

log = logging.getLogger(__name__)

SUBSYSTEM = "memory"
FOREGROUND = "foreground"
BACKGROUND = "background_review"
DESTRUCTIVE = frozenset({"replace", "remove"})
LABELS = {"user": "the user profile (USER.md)", "memory": "memory (MEMORY.md)"}
_ID = re.compile(r"^[0-9a-f]{8}$")

ConfirmCallback = Callable[[str, str], bool]

DENIED = ("Denied by the user: this memory change was NOT saved. Do not retry it; carry on "
          "without it, and tell the user if it matters.")


def pending_dir(home: Path) -> Path:
    return home / "pending" / SUBSYSTEM


@dataclass(frozen=True)
class PendingWrite:
    """One staged write, as stored on disk."""

    id: str
    created_at: float
    origin: str
    session_id: str
    summary: str
    detail: str
    payload: dict[str, Any]
    #: For each replace/remove: ``{"op": n or None, "action", "old_text", "entry"}``, where
    #: ``entry`` is the full text of the entry it changes, resolved when it was staged.
    matched: list[dict[str, Any]] = field(default_factory=list)
    subsystem: str = SUBSYSTEM
    version: int = 1

    @property
    def target(self) -> str:
        return str(self.payload.get("target", ""))

    @property
    def action(self) -> str:
        return str(self.payload.get("action", ""))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> PendingWrite:
        if not isinstance(data, dict) or not _ID.match(str(data.get("id", ""))):
            raise ValueError("not a pending-write record")
        payload = data.get("payload")
        if not isinstance(payload, dict) or payload.get("target") not in FILENAMES:
            raise ValueError("the record has no valid payload")
        matched = data.get("matched") or []
        if not isinstance(matched, list):
            raise ValueError("the record's matched entries are not a list")
        return cls(id=data["id"], created_at=float(data.get("created_at") or 0.0),
                   origin=str(data.get("origin") or FOREGROUND),
                   session_id=str(data.get("session_id") or ""),
                   summary=str(data.get("summary") or ""), detail=str(data.get("detail") or ""),
                   payload=payload, matched=matched)


class PendingStore:
    """The staged writes under ``<home>/pending/memory/``."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.folder = pending_dir(home)
        #: Files :meth:`list` found but could not read, with the reason.
        self.unreadable: list[tuple[str, str]] = []

    def path(self, pending_id: str) -> Path:
        if not _ID.match(pending_id):
            raise ValueError(f"{pending_id!r} is not a pending-write id (8 hex characters, as "
                             "`memhost memory pending` shows)")
        return self.folder / f"{pending_id}.json"

    def stage(self, payload: dict[str, Any], *, summary: str, detail: str, origin: str,
              session_id: str = "", matched: list[dict[str, Any]] | None = None) -> PendingWrite:
        """Save a proposal; raises ``OSError`` when it cannot be written."""
        ensure_private_dir(self.folder)
        # Staging happens under one folder lock, so a temp file seen while holding it belongs to
        # a writer that was killed mid-way, and can go.
        with locked(self._lock_path):
            self._sweep_temp_files()
            while True:
                pending_id = secrets.token_hex(4)
                if not self.path(pending_id).exists():
                    break
            record = PendingWrite(id=pending_id, created_at=time.time(), origin=origin,
                                  session_id=session_id, summary=summary, detail=detail,
                                  payload=payload, matched=list(matched or []))
            atomic_write_json(self.path(pending_id), record.as_dict())
        return record

    @property
    def _lock_path(self) -> Path:
        return self.folder / "staging"

    def _sweep_temp_files(self) -> None:
        for stale in self.folder.glob(".*.json.*.tmp"):
            try:
                stale.unlink()
            except OSError:
                pass

    def list(self) -> list[PendingWrite]:
        """Every readable record, oldest first; unreadable ones are noted in :attr:`unreadable`."""
        self.unreadable = []
        records = []
        if self.folder.is_dir():
            try:
                with locked(self._lock_path, timeout=0):
                    self._sweep_temp_files()
            except (Timeout, OSError):
                pass  # someone is staging right now; their temp file is alive
        try:
            paths = sorted(self.folder.glob("*.json"))
        except OSError:
            return []
        for path in paths:
            data = read_json_or(path, None)
            try:
                records.append(PendingWrite.from_dict(data))
            except (ValueError, TypeError) as exc:
                reason = "not valid JSON or unreadable" if data is None else str(exc)
                self.unreadable.append((str(path), reason))
        records.sort(key=lambda r: (r.created_at, r.id))
        return records

    def get(self, pending_id: str) -> PendingWrite | None:
        try:
            path = self.path(pending_id)
        except ValueError:
            return None
        data = read_json_or(path, None)
        try:
            return PendingWrite.from_dict(data)
        except (ValueError, TypeError):
            return None

    def discard(self, pending_id: str) -> bool:
        try:
            self.path(pending_id).unlink()
        except (FileNotFoundError, ValueError):
            return False
        return True

    def count(self) -> int:
        try:
            return sum(1 for _ in self.folder.glob("*.json"))
        except OSError:
            return 0


# -- describing a proposal --------------------------------------------------------------------


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


def _is_destructive(proposal: dict[str, Any]) -> bool:
    if proposal.get("action") in DESTRUCTIVE:
        return True
    if proposal.get("action") == "batch":
        return any(isinstance(op, dict) and op.get("action") in DESTRUCTIVE
                   for op in proposal.get("operations") or ())
    return False


def _failure(message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "error": message, **extra}


def _check_content(store: MemoryStore, content: Any, where: str) -> dict[str, Any] | None:
    if not isinstance(content, str) or not content.strip():
        return _failure(f"{where}content is required. Nothing was saved or staged.")
    try:
        entry = canonical_entry(content)
    except ValueError as exc:
        return _failure(f"{where}the content is not a valid entry: {exc}. Nothing was saved or "
                        "staged.")
    refusal = store.screen.refusal(entry)
    if refusal is not None:
        return _failure(f"{where}{refusal['error']}", blocked_pattern=refusal["blocked_pattern"])
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
            return _failure(f"{where}unknown action {kind!r}; use add, replace or remove. "
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
        if not self.enabled and not (background and _is_destructive(proposal)) and not risky:
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
            return _failure(f"This memory change needs the user's approval, but it could not be "
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
        return _failure(f"No pending write has the id {pending_id!r}. List them with "
                        "`memhost memory pending`.", pending_id=pending_id)
    with locked(pending.folder / ".approve"):
        record = pending.get(pending_id)  # again under the lock: another process may have won
        if record is None:
            return _failure(f"No pending write has the id {pending_id!r}. List them with "
                            "`memhost memory pending`.", pending_id=pending_id)
        target = record.target
        if not store.enabled.get(target, False):
            return _failure(f"Pending write {record.id} changes {FILENAMES[target]}, which is "
                            "disabled under [memory] in config.toml; enable it first, or reject "
                            "the write. It is kept.", pending_id=record.id, kept=True)
        needs_pin = [n for n, op in _destructive_steps(record.payload)]
        pinned_ops = {m.get("op") for m in record.matched if m.get("entry") is not None}
        if any(n not in pinned_ops for n in needs_pin):
            return _failure(f"Pending write {record.id} does not record the entry it changes, so "
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
    pending = PendingStore(home)
    record = pending.get(pending_id)
    if record is None or not pending.discard(pending_id):
        return _failure(f"No pending write has the id {pending_id!r}. List them with "
                        "`memhost memory pending`.", pending_id=pending_id)
    return {"success": True, "pending_id": pending_id, "rejected": True,
            "summary": record.summary, "message": "Rejected; nothing was changed."}


def _destructive_steps(payload: dict[str, Any]) -> list[tuple[int | None, dict[str, Any]]]:
    if payload.get("action") in DESTRUCTIVE:
        return [(None, payload)]
    if payload.get("action") == "batch":
        return [(n, op) for n, op in enumerate(payload.get("operations") or [], 1)
                if isinstance(op, dict) and op.get("action") in DESTRUCTIVE]
    return []


__all__ = [
    "BACKGROUND",
    "ApprovalGate",
    "PendingStore",
    "PendingWrite",
    "approve",
    "describe",
    "pending_dir",
    "reject",
    "resolve",
]
