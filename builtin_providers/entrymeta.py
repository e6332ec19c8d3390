"""Per-entry metadata of each memory file: the sidecar ``MEMORY.md.meta.json`` and the journal.

The markdown file stays the single source of truth and stays human-editable; the metadata only
adds what the format has no room for: when an entry was created, updated and last confirmed,
where it came from, and curation marks (pinned, review-after). Entries are keyed by a hash of
their text, so a hand edit simply leaves an entry without metadata.

Each write records the metadata it sets in the file's journal, in the same durable record as
the write itself (:mod:`memhost.builtin_providers.commit`); a checkpoint folds those records
into the sidecar (written atomically and fsynced) and keeps only entries still in the file. What
a reader sees is the sidecar with the journal's records laid over it.

A sidecar that cannot be read as metadata (not JSON, not UTF-8, not the expected shape) is
**corrupt**, never taken as empty: its records are not used, every listing of problems
(``doctor``, ``status()``) reports it, and the next write moves it aside to
``MEMORY.md.meta.json.corrupt-<time>`` before anything is written in its place, so the pins and
review dates it may still hold can be recovered by hand.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.builtin_providers import journal
from memhost.files import atomic_write_bytes

log = logging.getLogger(__name__)

#: ``created``/``updated``/``confirmed`` are Unix times; ``origin`` and ``session`` are the last
#: write's; ``confirmed_by`` says who confirmed (``cli``, ``background_review``...);
#: ``review_after`` is a date, ``YYYY-MM-DD``; ``pinned`` is true or absent. Only writes set
#: ``updated`` and only an explicit confirm sets ``confirmed``: reading or showing an entry
#: (the session snapshot included) changes nothing here. A replace carries the record over to
#: the new text (the same fact, revised), so ``created``, ``pinned`` and a review date still
#: ahead stay; a review date that has come is answered by the update (or a confirm) and dropped.
FIELDS = ("created", "updated", "confirmed", "confirmed_by", "origin", "session", "review_after",
          "pinned")
CORRUPT_MARK = ".corrupt-"
_CANNOT_READ = "it cannot be read"

Records = dict[str, dict[str, Any]]


@lru_cache(maxsize=4096)
def entry_key(text: str) -> str:
    # Cached: the drift guard and each write look up entries of the previous write again.
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def meta_path(store_path: Path) -> Path:
    return _paths(store_path)[0]


@lru_cache(maxsize=256)
def _paths(store_path: Path) -> tuple[Path, str, Path]:
    # Built once per memory file: every write and every read looks them up.
    meta = store_path.with_name(store_path.name + ".meta.json")
    return meta, os.fspath(meta), journal.path_for(store_path)


# -- the sidecar --------------------------------------------------------------------------------

#: Per sidecar path: the identity (inode, size, mtime) last read, its records and its problem.
_SEEN: dict[Path, tuple[tuple[int, int, int], Records, str | None]] = {}


def _parse(data: bytes) -> tuple[Records, str | None]:
    try:
        parsed = jsondoc.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {}, f"it is not valid UTF-8 (byte {exc.start})"
    except ValueError as exc:
        return {}, f"it is not valid JSON ({exc})"
    entries = parsed.get("entries") if isinstance(parsed, dict) else None
    if not isinstance(entries, dict):
        return {}, "it is JSON, but not a metadata file (no 'entries' object)"
    return {k: v for k, v in entries.items() if isinstance(v, dict)}, None


def _sidecar(store_path: Path) -> tuple[Records, str | None]:
    """The sidecar's records (not to be changed) and why it is corrupt, if it is."""
    path, name, _ = _paths(store_path)
    try:
        found = os.stat(name)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"{_CANNOT_READ} ({exc.strerror or exc})"
    ident = (found.st_ino, found.st_size, found.st_mtime_ns)
    seen = _SEEN.get(path)
    if seen is not None and seen[0] == ident:
        return seen[1], seen[2]
    try:
        data = path.read_bytes()
    except OSError as exc:
        return {}, f"{_CANNOT_READ} ({exc.strerror or exc})"
    records, problem = _parse(data)
    if len(_SEEN) >= 64:
        _SEEN.clear()
    _SEEN[path] = (ident, records, problem)
    return records, problem


class View:
    """The metadata of one memory file as it is now: the sidecar with the journal laid over."""

    __slots__ = ("overlay", "problem", "sidecar")

    def __init__(self, store_path: Path, *, reread: bool = True) -> None:
        self.sidecar, self.problem = _sidecar(store_path)
        self.overlay = journal.state(_paths(store_path)[2], reread=reread).meta

    def get(self, key: str | None) -> dict[str, Any] | None:
        if key is None:
            return None
        if key in self.overlay:
            return self.overlay[key]
        return self.sidecar.get(key)

    def records(self) -> Records:
        merged = dict(self.sidecar)
        for key, record in self.overlay.items():
            if record is None:
                merged.pop(key, None)
            else:
                merged[key] = record
        return merged


def view(store_path: Path, *, reread: bool = True) -> View:
    """The metadata now; ``reread=False`` under the lock, just after the journal was read."""
    return View(store_path, reread=reread)


def load(store_path: Path) -> Records:
    """Every record as it is now (``{}`` for a missing or corrupt sidecar and no journal); the
    caller may change what it gets."""
    return {k: dict(v) for k, v in View(store_path).records().items()}


def for_entry(meta: Records | View, text: str) -> dict[str, Any]:
    return meta.get(entry_key(text)) or {}


def written(current: View, changes: Iterable[Any], after: list[str], *, now: float,
            origin: str, session_id: str) -> dict[str, dict[str, Any] | None]:
    """The records a write sets (``None``: dropped) for its ``changes`` (``action``, ``content``,
    ``previous``), ``after`` being the file's entries once written. A replace carries the old
    record over to the new text (see :data:`FIELDS`)."""
    meta: dict[str, dict[str, Any] | None] = {}
    for change in changes:
        if change.action == "remove":
            continue
        old_key = entry_key(change.previous) if change.previous else None
        old = (meta[old_key] if old_key in meta else current.get(old_key)) or {}
        record = {**old, "updated": now, "origin": origin, "session": session_id}
        record.setdefault("created", now)
        if review_passed(record, now):
            del record["review_after"]  # revising the entry is the review that was due
        meta[entry_key(change.content)] = record
    gone = {c.previous for c in changes if c.previous is not None}
    if gone:
        gone.difference_update(after)
        meta.update((entry_key(text), None) for text in gone)
    return meta


# -- corruption ---------------------------------------------------------------------------------


def problems(store_path: Path) -> list[str]:
    """What is wrong with the metadata of ``store_path``, in words a person can act on."""
    found = []
    path = meta_path(store_path)
    _, problem = _sidecar(store_path)
    if problem is not None:
        found.append(f"{path} is corrupt ({problem}): the ages, pins and review dates it holds "
                     "are not in use. The next write moves it aside (kept, never overwritten) "
                     "as " + path.name + CORRUPT_MARK + "<time>")
    for backup in set_aside(store_path):
        found.append(f"{backup} is a corrupt metadata sidecar kept when it was found: pins and "
                     "review dates it held are not in use. Recover what you need from it (pin "
                     "or set review dates again with `memhost memory pin`/`review-after`), then "
                     "delete it")
    return found


def set_aside(store_path: Path) -> list[Path]:
    """The corrupt sidecars of ``store_path`` kept so far, oldest first."""
    path = meta_path(store_path)
    prefix = path.name + CORRUPT_MARK
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    return sorted(path.parent / n for n in names if n.startswith(prefix))


def set_aside_if_corrupt(store_path: Path) -> Path | None:
    """Move a corrupt sidecar out of the way, keeping its bytes (the caller holds the lock)."""
    _, problem = _sidecar(store_path)
    if problem is None or problem.startswith(_CANNOT_READ):
        return None  # unreadable now (permissions, I/O) is not corrupt: leave it where it is
    path = meta_path(store_path)
    stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
    backup = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}")
    counter = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}.{counter}")
        counter += 1
    os.replace(path, backup)
    log.warning("%s is corrupt (%s); it was moved to %s, and its pins and review dates are not "
                "in use until restored by hand", path, problem, backup)
    return backup


# -- checkpoint ---------------------------------------------------------------------------------


def fold(store_path: Path, overlay: dict[str, dict[str, Any] | None],
         entries: Iterable[str]) -> None:
    """Write the sidecar with ``overlay`` folded in, keeping only ``entries``' records, durably
    (the caller holds the lock and then drops the journal records ``overlay`` came from)."""
    set_aside_if_corrupt(store_path)
    sidecar, _ = _sidecar(store_path)
    merged = dict(sidecar)
    for key, record in overlay.items():
        if record is None:
            merged.pop(key, None)
        else:
            merged[key] = record
    keep = {entry_key(e) for e in entries}
    kept = {k: v for k, v in merged.items() if k in keep}
    data = json.dumps({"version": 1, "entries": kept}, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode("utf-8")
    atomic_write_bytes(meta_path(store_path), data)


# -- reading records ----------------------------------------------------------------------------


def review_time(value: Any) -> float | None:
    """The Unix time a ``review_after`` date starts (local midnight), or ``None``."""
    if not isinstance(value, str):
        return None
    try:
        day = datetime.date.fromisoformat(value)
    except ValueError:
        return None
    return datetime.datetime.combine(day, datetime.time.min).timestamp()


def review_passed(record: dict[str, Any], now: float) -> bool:
    """Whether the record's review date has come."""
    when = review_time(record.get("review_after"))
    return when is not None and now >= when


def written_by_store(record: dict[str, Any]) -> bool:
    """Whether the store itself wrote the entry (rather than only a mark being set on it)."""
    return "created" in record or "updated" in record
