"""The dead-letter queue: provider writes that could not be delivered, kept, never dropped.

A write whose delivery failed with an ordinary exception (a bug, not a passing failure), or that
kept failing with :class:`memhost.RetryableError` past ``memory.write_retry_budget``, moves out
of the outbox journal into ``<home>/outbox/<provider>/failed/<id>.json`` (0600, written
atomically before the journal acknowledges it, so a crash in between delivers it again rather
than losing it). Each file holds the hook calls still owed (a session boundary whose
``session_end`` went through keeps only its ``rotate``), the error and when it happened.

``memhost outbox list`` shows them, ``retry`` hands them back to the outbox (the next manager
started with that provider delivers them, in the order they failed) and ``drop`` deletes them.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.files import atomic_write_json, ensure_private_dir
from memhost.security.masking import scrub

_ID = re.compile(r"^[0-9a-f]{8}$")


def outbox_root(home: Path) -> Path:
    return home / "outbox"


@dataclass(frozen=True)
class FailedWrite:
    """One parked write: the calls it still owes its provider, and why it was parked."""

    id: str
    provider: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    error: str
    failed_at: float
    attempts: int
    path: Path

    @property
    def hooks(self) -> list[str]:
        return [hook for hook, _ in self.calls]

    def summary(self, width: int = 70) -> str:
        """A one-line description of what the write carries (its payload is already redacted)."""
        if not self.calls:
            return "(no calls)"
        hook, kwargs = self.calls[0]
        text = next((str(kwargs[k]) for k in ("user_content", "content", "task", "new_session_id",
                                              "session_id") if kwargs.get(k)), "")
        line = " ".join(text.split())
        line = line if len(line) <= width else line[: width - 1] + "…"
        return f"{' + '.join(self.hooks)}: {line}" if line else " + ".join(self.hooks)

    def as_dict(self, *, payload: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "provider": self.provider, "hooks": self.hooks,
                                "error": self.error, "failed_at": self.failed_at,
                                "attempts": self.attempts, "summary": self.summary(),
                                "path": str(self.path)}
        if payload:
            data["calls"] = [[hook, kwargs] for hook, kwargs in self.calls]
        return data


class DeadLetters:
    """The ``failed/`` folder of one provider's outbox."""

    def __init__(self, home: Path, provider: str) -> None:
        self.provider = provider
        self.folder = outbox_root(home) / provider / "failed"
        #: Files in the folder that are not readable failed writes: (path, why).
        self.unreadable: list[tuple[str, str]] = []

    def park(self, calls: tuple[tuple[str, dict[str, Any]], ...] | list[Any], error: str, *,
             attempts: int = 1) -> FailedWrite:
        """Keep ``calls`` as a failed write; durable when this returns."""
        error = scrub(error)  # the file outlives the process: no secret in its error text
        ensure_private_dir(self.folder)
        while True:
            write_id = secrets.token_hex(4)
            path = self.folder / f"{write_id}.json"
            if not path.exists():
                break
        record = FailedWrite(write_id, self.provider, tuple((h, k) for h, k in calls), error,
                             time.time(), attempts, path)
        atomic_write_json(path, {"id": write_id, "provider": self.provider,
                                 "calls": [[h, k] for h, k in record.calls], "error": error,
                                 "failed_at": record.failed_at, "attempts": attempts})
        return record

    def park_for(self, provider: Any, calls: Any, error: str, attempts: int) -> FailedWrite:
        """Park a write ``provider`` (a :class:`memhost.providers.Provider`) could not take:
        its health turns degraded, and the first such write (then a count) is logged."""
        from memhost.providers import faults

        parked = self.park(calls, error, attempts=attempts)
        provider.health.parked_write(error)
        faults.repeated(provider.name, "parked", (
            f"memory provider {provider.name!r} could not take a write ({error}); it is kept in "
            f"{self.folder} — `memhost outbox list` shows it, `memhost outbox retry` hands it "
            "back once the provider is fixed"))
        return parked

    def list(self) -> list[FailedWrite]:
        """Every failed write, oldest first."""
        self.unreadable = []
        if not self.folder.is_dir():
            return []
        found: list[FailedWrite] = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                data = jsondoc.loads(path.read_text(encoding="utf-8"))
                calls = tuple((str(h), dict(k)) for h, k in data["calls"])
                found.append(FailedWrite(str(data["id"]), self.provider, calls,
                                         str(data.get("error", "")),
                                         float(data.get("failed_at") or 0.0),
                                         int(data.get("attempts") or 1), path))
            except FileNotFoundError:
                continue  # retried or dropped meanwhile
            except (OSError, ValueError, KeyError, TypeError) as exc:
                self.unreadable.append((str(path), f"{type(exc).__name__}: {exc}"))
        found.sort(key=lambda r: (r.failed_at, r.id))
        return found

    def count(self) -> int:
        if not self.folder.is_dir():
            return 0
        return sum(1 for _ in self.folder.glob("*.json"))

    def remove(self, record: FailedWrite) -> None:
        record.path.unlink(missing_ok=True)


def providers_with_outbox(home: Path) -> list[str]:
    """Names of the providers that have an outbox folder under ``home``."""
    root = outbox_root(home)
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def is_id(text: str) -> bool:
    return bool(_ID.match(text))
