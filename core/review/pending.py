"""The store of memory writes waiting for a person's approval.

A staged write is one JSON file, ``<home>/pending/memory/<id>.json`` (0600, written atomically),
holding the validated proposal, a summary, its origin and time, and the full text of every entry
it would change (:class:`PendingWrite`). :class:`PendingStore` stages, lists, reads and discards
them; staging holds a folder lock, so a leftover temp file is a killed writer's and is swept.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memhost import locking
from memhost.builtin_providers.store import FILENAMES
from memhost.files import atomic_write_json, ensure_private_dir, locked, read_json_or

SUBSYSTEM = "memory"
FOREGROUND = "foreground"
_ID = re.compile(r"^[0-9a-f]{8}$")


def pending_dir(home: Path) -> Path:
    """Where the staged memory writes of ``home`` are kept."""
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
            except (locking.Timeout, OSError):
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
