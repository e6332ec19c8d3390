"""What discovery finds: provider candidates, load-failure records and the result of a scan.

Pure records, shared by :mod:`memhost.discovery.scan` (which scans) and
:mod:`memhost.discovery.loading` (which imports one candidate). Load failures seen in this process
are kept here, latest per provider, for listings and ``memhost doctor``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memhost.errors import ProviderError

DISABLED_ENV = "MEMHOST_DISABLED_PROVIDERS"

_recorded: dict[tuple[str, str, str], LoadFailure] = {}
_recorded_lock = threading.Lock()


@dataclass(frozen=True)
class Candidate:
    """One provider found by discovery. ``status``: ``available``, ``unavailable`` (a required
    package is missing; ``reason`` says which and how to install it), ``failed`` (its manifest
    is broken; ``reason`` says how), ``blocked`` or ``shadowed``."""

    name: str
    source: str
    path: Path | None = None
    distribution: str | None = None
    dist_version: str | None = None
    version: str = ""
    description: str = ""
    entry: str = ""
    requires: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    status: str = "available"
    reason: str = ""
    shadowed_by: str = ""
    entry_point: Any = field(default=None, repr=False, compare=False)

    @property
    def where(self) -> str:
        """The folder, or the distribution and version for an entry point."""
        if self.source == "entrypoint":
            return f"{self.distribution or '?'} {self.dist_version or '?'}"
        return str(self.path)

    def describe(self) -> str:
        return f"{self.source} {self.where}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "source": self.source,
            "path": str(self.path) if self.path else None,
            "distribution": self.distribution, "distribution_version": self.dist_version,
            "version": self.version, "description": self.description, "entry": self.entry,
            "requires": list(self.requires), "missing": list(self.missing),
            "status": self.status, "reason": self.reason, "shadowed_by": self.shadowed_by or None,
        }


@dataclass(frozen=True)
class LoadFailure:
    """A provider that could not be read or loaded."""

    name: str
    source: str
    path: str | None
    distribution: str | None
    dist_version: str | None
    error: str
    traceback: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "path": self.path,
                "distribution": self.distribution, "distribution_version": self.dist_version,
                "error": self.error, "traceback": self.traceback}


class ProviderLoadError(ProviderError):
    """A provider could not be loaded; :attr:`failure` keeps the record (and traceback)."""

    def __init__(self, message: str, failure: LoadFailure) -> None:
        super().__init__(message)
        self.failure = failure


@dataclass
class Discovery:
    """Everything :func:`discover` found."""

    candidates: list[Candidate]
    shadowed: list[Candidate]
    blocked: list[str]
    failures: list[LoadFailure]

    def get(self, name: str) -> Candidate | None:
        return next((c for c in self.candidates if c.name == name), None)

    def names(self) -> list[str]:
        return sorted(c.name for c in self.candidates)

    def as_dict(self) -> dict[str, Any]:
        return {"providers": [c.as_dict() for c in self.candidates],
                "shadowed": [c.as_dict() for c in self.shadowed],
                "blocked": list(self.blocked),
                "failures": [f.as_dict() for f in self.failures]}


def make_failure(candidate: Candidate, error: str, tb: str = "") -> LoadFailure:
    return LoadFailure(candidate.name, candidate.source,
                       str(candidate.path) if candidate.path else None,
                       candidate.distribution, candidate.dist_version, error, tb)


def record(failure: LoadFailure) -> None:
    with _recorded_lock:
        key = (failure.name, failure.source, failure.path or failure.distribution or "")
        _recorded[key] = failure


def forget(candidate: Candidate) -> None:
    with _recorded_lock:
        where = str(candidate.path) if candidate.path else candidate.distribution or ""
        _recorded.pop((candidate.name, candidate.source, where), None)


def recorded_failures() -> list[LoadFailure]:
    """Load failures seen by :func:`load_provider` in this process (latest per provider)."""
    with _recorded_lock:
        return list(_recorded.values())


def recorded_items() -> list[tuple[tuple[str, str, str], LoadFailure]]:
    """``((name, source, path or distribution), failure)`` for every recorded failure."""
    with _recorded_lock:
        return list(_recorded.items())


__all__ = ["Candidate", "DISABLED_ENV", "Discovery", "LoadFailure", "ProviderLoadError",
           "forget", "make_failure", "record", "recorded_failures", "recorded_items"]
