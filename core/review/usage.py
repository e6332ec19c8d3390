"""Usage history: one sample a day of each memory store's fullness, for ``memhost doctor``'s trend.

The sample is taken after a store's first write of the day and kept in
``memories/usage-history.json`` (at most :data:`HISTORY_DAYS` days); :func:`usage_trend` reads how
fullness moved and when, at that pace, the store will be full.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memhost.files import atomic_write_bytes, locked, read_json_or
from memhost.review.staleness import DAY, days

HISTORY_NAME = "usage-history.json"
HISTORY_DAYS = 90  # samples kept (one a day)
TREND_DAYS = 30  # how far back doctor's trend looks

def history_path(folder: Path) -> Path:
    return folder / HISTORY_NAME


def _day(when: float) -> str:
    return _dt.datetime.fromtimestamp(when, _dt.timezone.utc).date().isoformat()


def load_history(folder: Path) -> list[dict[str, Any]]:
    """The samples, oldest first: ``{"day", "time", "memory": [used, limit], "user": [...]}``
    (a store that was not written that day is absent from the day's sample)."""
    data = read_json_or(history_path(folder), {})
    samples = data.get("samples") if isinstance(data, dict) else None
    return [s for s in samples or [] if isinstance(s, dict) and isinstance(s.get("day"), str)]


#: Per (folder, target): the UTC day (its first and last second) this process last saw that
#: target's sample in the history, the history's path as a string and the file's identity then.
#: A later write that day costs one stat (a lost history is noticed), with no date arithmetic.
_SAMPLED: dict[tuple[Path, str], tuple[float, float, str, tuple[int, ...]]] = {}


def _sampled(key: tuple[Path, str], when: float, identity: tuple[int, ...]) -> None:
    if len(_SAMPLED) >= 256 and key not in _SAMPLED:
        _SAMPLED.clear()
    start = when - when % DAY  # UTC days, as _day counts them
    _SAMPLED[key] = (start, start + DAY, os.fspath(history_path(key[0])), identity)


def _identity(path: Path | str) -> tuple[int, ...] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def record_usage(folder: Path, target: str, used: int, limit: int, when: float) -> None:
    """Note ``target``'s fullness after a write: one sample a day, set by the store's first
    write of the day, at most :data:`HISTORY_DAYS` days kept. Later writes that day cost one
    stat of the history file in a process that saw the sample (one small read otherwise)."""
    key = (folder, target)
    seen = _SAMPLED.get(key)
    if seen is not None and seen[0] <= when < seen[1] and _identity(seen[2]) == seen[3]:
        return
    day = _day(when)
    path = history_path(folder)
    identity = _identity(path)

    def noted(samples: list[dict[str, Any]]) -> bool:
        return any(s["day"] == day and target in s for s in samples)

    if noted(load_history(folder)):
        if identity is not None:  # taken before the read: a change since makes it differ
            _sampled(key, when, identity)
        return
    with locked(path, 5.0):
        samples = load_history(folder)
        if noted(samples):
            return
        sample = next((s for s in samples if s["day"] == day), None)
        if sample is None:
            sample = {"day": day, "time": when}
            samples.append(sample)
            samples.sort(key=lambda s: s["day"])
        sample[target] = [used, limit]
        payload = {"version": 1, "samples": samples[-HISTORY_DAYS:]}
        atomic_write_bytes(path, json.dumps(payload, sort_keys=True).encode("utf-8"),
                           durable=False)
        if (written := _identity(path)) is not None:
            _sampled(key, when, written)


@dataclass(frozen=True)
class Trend:
    target: str
    since: float  # time of the oldest sample used
    then_percent: int
    now_percent: int
    #: Days until full at the growth rate seen, when it grows and would fill within a year.
    full_in_days: int | None

    @property
    def change(self) -> int:
        return self.now_percent - self.then_percent


def _percent(used: Any, limit: Any) -> int | None:
    if not isinstance(used, int) or not isinstance(limit, int) or limit <= 0:
        return None
    return min(100, int(used / limit * 100))


def usage_trend(folder: Path, target: str, used: int, limit: int, now: float,
                samples: Sequence[dict[str, Any]] | None = None) -> Trend | None:
    """How ``target``'s fullness moved over the last :data:`TREND_DAYS` days (or since the first
    sample, when younger) to ``used`` now; ``None`` without a sample at least a day old."""
    samples = load_history(folder) if samples is None else samples
    since = now - TREND_DAYS * DAY
    usable = [s for s in samples if isinstance(s.get(target), list) and len(s[target]) == 2
              and isinstance(s.get("time"), int | float) and s["time"] <= now - DAY]
    now_percent = _percent(used, limit)
    if not usable or now_percent is None:
        return None
    # The store as it was when the span began: the last sample before it (nothing was written
    # in between), else the span's first sample.
    before = [s for s in usable if s["time"] <= since]
    first = before[-1] if before else usable[0]
    start = max(float(first["time"]), since)
    then_percent = _percent(*first[target])
    if then_percent is None:
        return None
    elapsed = max(DAY, now - start)
    growth = (used - first[target][0]) / elapsed  # chars per second
    full_in = None
    if growth > 0 and used < limit:
        seconds = (limit - used) / growth
        if seconds < 365 * DAY:
            full_in = max(1, days(seconds))
    return Trend(target, start, then_percent, now_percent, full_in)

