"""Per-entry metadata kept beside each memory file (``MEMORY.md.meta.json``).

The markdown file stays the single source of truth and stays human-editable; this sidecar only
adds what the format has no room for: when an entry was created, updated and last confirmed,
where it came from, and curation marks (pinned, review-after). Entries are keyed by a hash of
their text, so a hand edit simply leaves an entry without metadata, and losing the sidecar loses
ages, never entries. It is written atomically but without fsync: it is cheap to lose.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

from memhost.files import atomic_write_bytes, read_json_or

#: ``created``/``updated``/``confirmed`` are Unix times; ``origin`` and ``session`` are the last
#: write's; ``confirmed_by`` says who confirmed (``cli``, ``background_review``...);
#: ``review_after`` is a date, ``YYYY-MM-DD``; ``pinned`` is true or absent. Only writes set
#: ``updated`` and only an explicit confirm sets ``confirmed``: reading or showing an entry
#: (the session snapshot included) changes nothing here. A replace carries the record over to
#: the new text (the same fact, revised), so ``created``, ``pinned`` and a review date still
#: ahead stay; a review date that has come is answered by the update (or a confirm) and dropped.
FIELDS = ("created", "updated", "confirmed", "confirmed_by", "origin", "session", "review_after",
          "pinned")


def entry_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def meta_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".meta.json")


def load(store_path: Path) -> dict[str, dict[str, Any]]:
    data = read_json_or(meta_path(store_path), {})
    entries = data.get("entries") if isinstance(data, dict) else None
    return {k: v for k, v in (entries or {}).items() if isinstance(v, dict)}


def save(store_path: Path, entries: list[str], meta: dict[str, dict[str, Any]]) -> None:
    """Keep only the metadata of entries still in the file."""
    keep = {entry_key(e) for e in entries}
    payload = {"version": 1, "entries": {k: v for k, v in meta.items() if k in keep}}
    data = json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")
    atomic_write_bytes(meta_path(store_path), data, durable=False)


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
