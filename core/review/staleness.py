"""How old each memory entry is, and which ones are stale.

An entry's age counts from the last time it was *kept alive*: written (added or replaced) or
explicitly confirmed. Being shown in a session's snapshot, or read by any command, never counts.
An entry with a review date is stale from that date on and not before, whatever its age (a person
chose the date, so it replaces the age window); otherwise it is stale when its last update or
confirmation is older than the window (``[curator] stale_after_days``). A pinned entry is never
stale by age, only by a review date set on it. An entry without metadata (written by hand, or its
sidecar was lost) has an unknown age: it is never stale by age; confirm or pin it to start
tracking it. What the curator does with stale entries is in :mod:`memhost.review.curator`.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import TARGETS, MemoryStore

DAY = 86_400.0

# -- durations and dates ----------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([dwy]?)\s*$", re.IGNORECASE)
_UNITS = {"": DAY, "d": DAY, "w": 7 * DAY, "y": 365 * DAY}


def parse_duration(text: str) -> float:
    """``"90d"``, ``"12w"``, ``"1y"`` or a bare number of days, in seconds."""
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a duration; use a number of days with d, w or y, "
                         "for example 90d, 12w or 1y")
    return float(match.group(1)) * _UNITS[match.group(2).lower()]


def review_date(text: str, now: float) -> str:
    """A review date given as ``YYYY-MM-DD`` or as a duration from now (``30d``, ``+6w``)."""
    value = str(text).strip()
    try:
        return _dt.date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    try:
        seconds = parse_duration(value.lstrip("+"))
    except ValueError:
        raise ValueError(f"{text!r} is not a date; use YYYY-MM-DD (for example 2026-03-01) or a "
                         "time from now such as 30d, 6w or 1y") from None
    return _dt.date.fromtimestamp(now + seconds).isoformat()


review_time = entrymeta.review_time


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def last_touch(record: dict[str, Any]) -> float | None:
    """When the entry was last written or confirmed (its creation counts as a write)."""
    times = [t for t in (_number(record.get(k)) for k in ("created", "updated", "confirmed"))
             if t is not None]
    return max(times) if times else None


def days(seconds: float) -> int:
    return int(seconds // DAY)



# -- staleness --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryState:
    """One entry as the curator sees it."""

    target: str
    text: str
    created: float | None
    updated: float | None
    confirmed: float | None
    origin: str | None
    pinned: bool
    review_after: str | None
    #: Last update or confirmation (``None``: age unknown, the entry has no metadata).
    touched: float | None
    #: Seconds since ``touched``.
    age: float | None
    stale: bool
    #: Why it is stale, or why its age is unknown; ``""`` for a fresh entry.
    reason: str

    @property
    def age_known(self) -> bool:
        return self.touched is not None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["age_days"] = days(self.age) if self.age is not None else None
        return data


def assess(target: str, text: str, record: dict[str, Any], *, now: float,
           window: float) -> EntryState:
    """Apply the staleness rule (module docstring) to one entry and its sidecar record."""
    touched = last_touch(record)
    pinned = bool(record.get("pinned"))
    review = record.get("review_after") if isinstance(record.get("review_after"), str) else None
    review_at = review_time(review)
    age = max(0.0, now - touched) if touched is not None else None
    if review_at is not None:  # a person chose the date: it replaces the age window
        stale = now >= review_at
        reason = f"review date {review} has come" if stale else ""
    elif touched is None:
        stale, reason = False, "age unknown (no metadata)"
    elif pinned:
        stale, reason = False, ""
    else:
        stale = age is not None and age > window
        reason = f"not updated or confirmed for {days(age or 0)} days" if stale else ""
    return EntryState(target, text, _number(record.get("created")), _number(record.get("updated")),
                      _number(record.get("confirmed")), record.get("origin") or None, pinned,
                      review, touched, age, stale, reason)


def entry_states(store: MemoryStore, target: str, *, now: float | None = None,
                 window: float = 90 * DAY) -> list[EntryState]:
    """Every entry of ``target`` with its state; raises ``Unreadable`` for an unreadable file."""
    now = store.clock() if now is None else now
    return [assess(target, text, record, now=now, window=window)
            for text, record in store.metadata(target)]


def _targets(store: MemoryStore, targets: Iterable[str] | None) -> list[str]:
    wanted = list(targets) if targets is not None else list(TARGETS)
    return [t for t in wanted if store.enabled.get(t, False)]


def oldest_first(states: Iterable[EntryState]) -> list[EntryState]:
    def key(state: EntryState) -> float:
        if state.touched is not None:
            return state.touched
        return review_time(state.review_after) or 0.0

    return sorted(states, key=key)


def stale_entries(store: MemoryStore, older_than: float = 90 * DAY, now: float | None = None, *,
                  targets: Iterable[str] | None = None) -> list[EntryState]:
    """The stale entries of the enabled stores, oldest first (``older_than`` in seconds)."""
    now = store.clock() if now is None else now
    found = [s for t in _targets(store, targets)
             for s in entry_states(store, t, now=now, window=older_than) if s.stale]
    return oldest_first(found)
