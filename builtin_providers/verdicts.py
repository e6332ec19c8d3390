"""Threat-scan verdicts kept across processes, so a fresh process does not rescan unchanged entries.

Every entry shown at session start is scanned. Within a process the verdicts are kept by entry
text (:mod:`memhost.builtin_providers.snapshot`); this module keeps them for the next process,
in ``<name>.scan.json`` beside each memory file: for the scanner that wrote it
(:func:`memhost.security.threats.version`, which changes with any pattern), the SHA-256 of the
file's text when every entry of it passed the scan, and of each entry that passed. A session start
that finds its file's text there scans nothing; one that finds some entries there scans only
the others, then saves the file's verdicts again.

* Only passes are kept. A withheld entry is scanned again by every process, so a pattern change
  that clears it takes effect, and nothing read from this file can withhold an entry.
* Losable, like the metadata sidecar: written atomically (0600) without fsync, and a file that
  is missing, unreadable, not JSON or from another scanner version is ignored: its entries are
  scanned as if it were not there. Its temp files are the memory file's (``.MEMORY.md.*.tmp``),
  which every write sweeps.
* Trusted as much as the memory file beside it. A process that can write it can also write the
  memory file, the configuration and the rest of the home; what the scan at session start guards
  against is text that reached the memory file some other way than the ``memory`` tool (a hand
  edit, another program appending to it), and such text is never in this file unless something
  put it there on purpose.
* Written only by a session start that scanned something: a write records its own verdict in the
  process (it scanned the entry before saving it), never on disk, so writes cost nothing here.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from memhost.builtin_providers import snapshot
from memhost.files import atomic_write_bytes
from memhost.security import threats

log = logging.getLogger(__name__)

VERSION = 1


def cache_path(store_path: Path) -> Path:
    return store_path.with_name(store_path.name + ".scan.json")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path: Path) -> tuple[set[str], set[str]] | None:
    """The file digests and entry digests saved for this scanner, or ``None``."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION \
            or data.get("scanner") != threats.version():
        return None
    files, entries = data.get("files"), data.get("entries")
    if not isinstance(files, list) or not isinstance(entries, list):
        return None
    return ({d for d in files if isinstance(d, str)}, {d for d in entries if isinstance(d, str)})


#: Per memory file: the text whose verdicts this process last looked up, and the generation of
#: the process's verdicts then. A session start that finds both unchanged has nothing to look up
#: (the common case in a long-lived process).
_RECALLED: dict[Path, tuple[str, int]] = {}


def recall(store_path: Path, raw: str, entries: list[str]) -> bool:
    """Give this process the saved verdicts for ``entries`` (parsed from ``raw``, the file's
    text); whether some entry still has no verdict, i.e. will be scanned when shown."""
    seen = (raw, snapshot.generation())
    if _RECALLED.get(store_path) == seen:
        return False
    if len(_RECALLED) >= 64:
        _RECALLED.clear()
    _RECALLED[store_path] = seen
    todo = snapshot.unscanned(entries)
    if not todo:
        return False
    saved = _read(cache_path(store_path))
    if saved is None:
        return True
    files, passed = saved
    if _digest(raw) in files:
        snapshot.passed(todo)
        return False
    snapshot.passed([e for e in todo if _digest(e) in passed])
    return bool(snapshot.unscanned(todo))


def save(store_path: Path, raw: str, entries: list[str]) -> None:
    """Save the passes among ``entries`` (every one of which has a verdict in this process)."""
    clean = [e for e in entries if snapshot.passed_scan(e)]
    payload = {
        "version": VERSION, "scanner": threats.version(),
        "files": [_digest(raw)] if len(clean) == len(entries) else [],
        "entries": sorted(_digest(e) for e in clean),
    }
    try:
        atomic_write_bytes(cache_path(store_path),
                           json.dumps(payload, separators=(",", ":")).encode("utf-8"),
                           durable=False)
    except OSError as exc:  # a read-only folder: the next process scans again, that is all
        log.debug("could not save scan verdicts beside %s: %s", store_path, exc)
