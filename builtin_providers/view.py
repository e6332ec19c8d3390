"""A typed read of the builtin memory: :class:`MemoryEntry`, one per entry, with its metadata.

Hosts read the memory through ``MemoryManager.entries(target)`` rather than parse the JSON of
``call_tool`` answers or the files themselves. The metadata comes from the sidecar
(:mod:`memhost.builtin_providers.entrymeta`); an entry added by hand has none, and its fields are
``None``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from memhost.builtin_providers.entrymeta import review_time
from memhost.builtin_providers.store import TARGETS, MemoryStore


@dataclass(frozen=True)
class MemoryEntry:
    """One entry of ``MEMORY.md`` (target ``memory``) or ``USER.md`` (target ``user``)."""

    target: str
    #: 1-based position in the file, as ``memhost memory show`` numbers entries.
    index: int
    text: str
    #: Unix times: when the store first wrote it, last changed it, and last had it confirmed.
    created: float | None = None
    updated: float | None = None
    confirmed: float | None = None
    #: Who wrote it last: ``foreground`` (the model in a conversation), ``background_review``,
    #: ``cli``, ``settings``, ...
    origin: str | None = None
    #: The session of the last write.
    session: str | None = None
    pinned: bool = False
    #: The day from which the curator asks whether the entry still holds.
    review_after: datetime.date | None = None


def _time(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_entries(store: MemoryStore, target: str) -> list[MemoryEntry]:
    """The entries of ``target`` as the file holds them now (``ValueError`` for an unknown
    target; :class:`~memhost.builtin_providers.store.Unreadable` when the file can't be read)."""
    if target not in TARGETS:
        raise ValueError(f"unknown memory target {target!r}; use 'memory' or 'user'")
    entries = []
    for index, (text, meta) in enumerate(store.metadata(target), 1):
        review = None
        if review_time(meta.get("review_after")) is not None:
            review = datetime.date.fromisoformat(meta["review_after"])
        entries.append(MemoryEntry(
            target=target, index=index, text=text, created=_time(meta.get("created")),
            updated=_time(meta.get("updated")), confirmed=_time(meta.get("confirmed")),
            origin=_text(meta.get("origin")), session=_text(meta.get("session")),
            pinned=meta.get("pinned") is True, review_after=review))
    return entries


__all__ = ["MemoryEntry", "read_entries"]
