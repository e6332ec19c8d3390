"""Risk scores kept across processes, so a fresh process does not rescore unchanged entries.

Every entry shown at session start is scored, and so is every pair of adjacent entries. Within a
process the scores are kept by text (:mod:`memhost.builtin_providers.snapshot`); this module
keeps them for the next process, in ``<name>.scan.json`` beside each memory file: for the scorer
that wrote it (:func:`memhost.security.scorer.version`, which changes with any feature, weight
or table), the file's text as a whole (its SHA-256) with the scores of its entries and pairs in
order, then, on a line of its own, the score of each entry and pair by the SHA-256 of its text.
An unchanged file, the usual case, costs one digest and the first line; the second line, which
holds most of the bytes, is parsed only for a file that changed since. Scores, not verdicts:
the thresholds (``[injection]`` in config) apply when the snapshot is rendered, so changing them
needs no rescoring. A session start that finds every entry and pair there scores nothing.

* Losable, like the metadata sidecar: written atomically (0600) without fsync, and a file that
  is missing, unreadable, not JSON or from another scorer version is ignored: its entries are
  scored as if it were not there. Its temp files are the memory file's (``.MEMORY.md.*.tmp``),
  which every write sweeps.
* Trusted as much as the memory file beside it. A process that can write it can also write the
  memory file, the configuration and the rest of the home; what the scoring at session start
  guards against is text that reached the memory file some other way than the ``memory`` tool
  (a hand edit, another program appending to it), and such text is never in this file unless
  something put it there on purpose.
* Written only by a session start that scored something: a write records its own score in the
  process (it scored the entry before saving it), never on disk, so writes cost nothing here.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.builtin_providers import snapshot
from memhost.builtin_providers.entries import DELIMITER
from memhost.files import atomic_write_bytes, read_file
from memhost.security import scorer

log = logging.getLogger(__name__)

VERSION = 3  # 3: the scores by digest on a line after the rest


def cache_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".scan.json")


def _digest(key: snapshot.Key) -> str:
    """The SHA-256 of an entry's text, or of a pair's two texts joined by the delimiter."""
    text = key if isinstance(key, str) else DELIMITER.join(key)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path: Path) -> tuple[dict[str, Any], bytes] | None:
    """The saved first line, when it is for this scorer, and the rest unparsed; ``None``
    otherwise."""
    try:
        head, _, rest = read_file(path)[0].partition(b"\n")
        data = jsondoc.loads(head)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION \
            or data.get("scorer") != scorer.version():
        return None
    return data, rest


def _scores_by_digest(rest: bytes) -> dict[str, Any] | None:
    try:
        scores = jsondoc.loads(rest)
    except ValueError:
        return None
    return scores if isinstance(scores, dict) else None


_NUMBER_TYPES = frozenset((int, float))  # not bool, which JSON's true and false would be


def _numbers(values: list[Any]) -> bool:
    return _NUMBER_TYPES.issuperset(map(type, values))


#: Per memory file: the text whose scores this process last looked up, and the generation of
#: the process's scores then. A session start that finds both unchanged has nothing to look up
#: (the common case in a long-lived process).
_RECALLED: dict[Path, tuple[str, int]] = {}


def _keys(entries: list[str]) -> list[snapshot.Key]:
    return [*entries, *snapshot.pairs(entries)]


def recall(store_path: Path, raw: str, entries: list[str]) -> bool:
    """Give this process the saved scores for ``entries`` (parsed from ``raw``, the file's text)
    and their pairs; whether some still has no score, i.e. will be scored when shown."""
    seen = (raw, snapshot.generation())
    if _RECALLED.get(store_path) == seen:
        return False
    if len(_RECALLED) >= 64:
        _RECALLED.clear()
    _RECALLED[store_path] = seen
    keys = _keys(entries)
    todo = snapshot.unscored(keys)
    if not todo:
        return False
    saved = _read(cache_path(store_path))
    if saved is None:
        return True
    head, rest = saved
    ordered = head.get("ordered")
    if head.get("file") == _digest(raw) and isinstance(ordered, list) \
            and len(ordered) == len(keys) and _numbers(ordered):
        # The file is as it was when saved: one digest instead of one per entry and pair.
        snapshot.remember(dict(zip(keys, ordered)))
        return False
    scores = _scores_by_digest(rest)
    if scores is None:
        return True
    found = {}
    for key in todo:
        value = scores.get(_digest(key))
        if type(value) in _NUMBER_TYPES:
            found[key] = float(value)
    snapshot.remember(found)
    return len(found) < len(todo)


def save(store_path: Path, raw: str, entries: list[str]) -> None:
    """Save the scores of ``entries`` and their pairs (every one of which this process holds)."""
    scores, ordered = {}, []
    for key in _keys(entries):
        value = snapshot.known(key)
        if value is None or value == snapshot.TOO_LARGE:
            ordered = None  # the file as a whole cannot be vouched for
            continue
        scores[_digest(key)] = value
        if ordered is not None:
            ordered.append(value)
    head = {"version": VERSION, "scorer": scorer.version(),
            "file": _digest(raw) if ordered is not None else "", "ordered": ordered or []}
    lines = [json.dumps(part, separators=(",", ":")) for part in (head, scores)]
    try:
        atomic_write_bytes(cache_path(store_path), "\n".join(lines).encode("utf-8") + b"\n",
                           durable=False)
    except OSError as exc:  # a read-only folder: the next process scores again, that is all
        log.debug("could not save risk scores beside %s: %s", store_path, exc)
