"""Per-entry metadata kept beside each memory file (``MEMORY.md.meta.json``).

The markdown file stays the single source of truth and stays human-editable; this sidecar only
adds what the format has no room for: when an entry was created, updated and last confirmed,
where it came from, and curation marks (pinned, review-after). Entries are keyed by a hash of
their text, so a hand edit simply leaves an entry without metadata, and losing the sidecar loses
ages, never entries. It is written atomically but without fsync: it is cheap to lose.

Every write reads the sidecar and most rewrite it, so this process keeps the last text it read
or wrote of each sidecar with its parsed records: when the file holds the same bytes again (read
under the caller's lock, and compared whole) they are not parsed a second time, and a save
that would write the bytes already there writes nothing.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from memhost.files import atomic_write_bytes

#: ``created``/``updated``/``confirmed`` are Unix times; ``origin`` and ``session`` are the last
#: write's; ``confirmed_by`` says who confirmed (``cli``, ``background_review``...);
#: ``review_after`` is a date, ``YYYY-MM-DD``; ``pinned`` is true or absent. Only writes set
#: ``updated`` and only an explicit confirm sets ``confirmed``: reading or showing an entry
#: (the session snapshot included) changes nothing here. A replace carries the record over to
#: the new text (the same fact, revised), so ``created``, ``pinned`` and a review date still
#: ahead stay; a review date that has come is answered by the update (or a confirm) and dropped.
FIELDS = ("created", "updated", "confirmed", "confirmed_by", "origin", "session", "review_after",
          "pinned")


@lru_cache(maxsize=4096)
def entry_key(text: str) -> str:
    # Cached: a write looks up every entry of its file (drift guard, metadata carried over, the
    # records kept), and nearly all of them are the entries of the previous write.
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def meta_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".meta.json")


#: Per sidecar path: the bytes last read or written, and the records they hold.
_SEEN: dict[Path, tuple[bytes, dict[str, dict[str, Any]]]] = {}
_SEEN_PATHS = 64


def _remember(path: Path, data: bytes, records: dict[str, dict[str, Any]]) -> None:
    if len(_SEEN) >= _SEEN_PATHS and path not in _SEEN:
        _SEEN.clear()
    _SEEN[path] = (data, records)


def _records(data: bytes) -> dict[str, dict[str, Any]]:
    try:
        parsed = json.loads(data.decode("utf-8"))
    except ValueError:  # not JSON, or not UTF-8: the metadata is lost, never the entries
        return {}
    entries = parsed.get("entries") if isinstance(parsed, dict) else None
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(v, dict)}


def load(store_path: Path) -> dict[str, dict[str, Any]]:
    """The records of the sidecar as it is on disk now (``{}`` when missing or unreadable);
    the caller may change what it gets."""
    path = meta_path(store_path)
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    seen = _SEEN.get(path)
    if seen is not None and seen[0] == data:
        records = seen[1]
    else:
        records = _records(data)
        _remember(path, data, records)
    return {k: dict(v) for k, v in records.items()}


def save(store_path: Path, entries: list[str], meta: dict[str, dict[str, Any]]) -> None:
    """Keep only the metadata of entries still in the file."""
    keep = {entry_key(e) for e in entries}
    kept = {k: v for k, v in meta.items() if k in keep}
    data = json.dumps({"version": 1, "entries": kept}, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":")).encode("utf-8")
    path = meta_path(store_path)
    try:
        unchanged = path.read_bytes() == data
    except OSError:
        unchanged = False
    if not unchanged:
        atomic_write_bytes(path, data, durable=False)
    _remember(path, data, {k: dict(v) for k, v in kept.items()})


def for_entry(meta: dict[str, dict[str, Any]], text: str) -> dict[str, Any]:
    return meta.get(entry_key(text), {})


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
