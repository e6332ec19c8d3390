"""A small implementation of the reference system's store design, for the side-by-side rows.

Written from the behaviour reference (../shared/reference/hermes-memory-behaviour.md, sections
2.5 and 2.6), not from its code: one lock file per store (``<file>.lock``, opened ``O_NOFOLLOW``,
mode 0600, ``flock(LOCK_EX)``) held across the whole read-modify-write; a checked read (a file
that exists but cannot be read refuses the write); parse and de-duplicate; the edit; the whole
file rewritten through a temp file in the same folder (``.mem_*.tmp``), flushed and fsynced
once, then atomically renamed over the original. Before any of that, the new text of an add or
a replace goes through the design's threat scan (:mod:`benchmarks.reference_scan`), as it does
there. No folder fsync, no archive of replaced entries, no per-entry metadata, no drift guard:
what it lacks is what memhost's store adds, and the rows show what that costs.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.reference_scan import scan

DELIMITER = "\n§\n"


class ReferenceStore:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _entries(self) -> list[str]:
        try:
            raw = self.path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return []
        # An unreadable file raises here: the write is refused rather than wiping the file.
        seen: dict[str, None] = {}
        for piece in raw.split(DELIMITER):
            entry = piece.strip()
            if entry:
                seen.setdefault(entry)
        return list(seen)

    def _mutate(self, edit: Callable[[list[str]], list[str]]) -> None:
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.fchmod(fd, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                entries = edit(self._entries())
                self._write(DELIMITER.join(entries))
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _write(self, text: str) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".mem_", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(text.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    @staticmethod
    def _scanned(content: str) -> str:
        """``content`` stripped, once the threat scan found nothing in it (ValueError if it did)."""
        blocked = scan(content)
        if blocked is not None:
            raise ValueError(blocked)
        return content.strip()

    def add(self, content: str) -> None:
        entry = self._scanned(content)
        self._mutate(lambda entries: entries if entry in entries else [*entries, entry])

    def replace(self, old_text: str, content: str) -> None:
        new = self._scanned(content)

        def edit(entries: list[str]) -> list[str]:
            hits = [i for i, e in enumerate(entries) if old_text in e]
            if len(hits) != 1:
                raise ValueError(f"{old_text!r} matched {len(hits)} entries")
            entries[hits[0]] = new
            return entries

        self._mutate(edit)

    def remove(self, old_text: str) -> None:
        def edit(entries: list[str]) -> list[str]:
            hits = [i for i, e in enumerate(entries) if old_text in e]
            if len(hits) != 1:
                raise ValueError(f"{old_text!r} matched {len(hits)} entries")
            del entries[hits[0]]
            return entries

        self._mutate(edit)

    def batch(self, remove: str, old_text: str, content: str, add: str) -> None:
        """One remove, one replace and one add in one locked write (what a batch does); every
        new text is scanned before the lock, and one finding rejects the whole batch."""
        new, added = self._scanned(content), self._scanned(add)

        def edit(entries: list[str]) -> list[str]:
            entries = [e for e in entries if remove not in e]
            entries = [new if old_text in e else e for e in entries]
            return entries if added in entries else [*entries, added]

        self._mutate(edit)
