"""``<home>/memories/archive.jsonl``: every entry a write replaced or removed, so none is lost.

A write puts the archive records of what it replaces or removes in its commit record, in the
memory file's journal (:mod:`memhost.builtin_providers.commit`), so an entry is archived durably
before it leaves the file, with the write's one sync. A checkpoint appends the journal's records
here (one JSON object per line, fsynced) before the journal starts over. The archive a reader
sees is this file and the records still in the journals, in time order; a record written by a
checkpoint that a crash interrupted can be in both, and is listed once (by its id).

A torn last line (a crash mid-append) is skipped on read and never glued to the next record.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.builtin_providers import journal
from memhost.files import ensure_private_dir, locked, open_append_private

ARCHIVE_NAME = "archive.jsonl"
#: The memory files whose journals hold archive records not yet checkpointed here.
STORE_FILES = ("MEMORY.md", "USER.md")


@dataclass(frozen=True)
class ArchivedEntry:
    id: str
    time: float
    target: str
    action: str  # replace, remove, archive (curator), restore-replaced, set-aside (memory fix)
    text: str
    session: str = ""
    origin: str = ""


def new_id() -> str:
    return secrets.token_hex(4)


class Archive:
    def __init__(self, folder: Path) -> None:
        self.path = folder / ARCHIVE_NAME
        self.journals = tuple(journal.path_for(folder / name) for name in STORE_FILES)

    def append(self, records: list[ArchivedEntry]) -> None:
        """Append ``records`` to the file and fsync it."""
        self.append_records([asdict(r) for r in records])

    def append_records(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        ensure_private_dir(self.path.parent)
        payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        # Both memory files' checkpoints append here, each under its own lock: this one too.
        with locked(self.path):
            fd = open_append_private(self.path)
            try:
                size = os.fstat(fd).st_size
                if size and _last_byte(self.path) != b"\n":
                    payload = "\n" + payload  # never glue a record onto a torn line
                os.write(fd, payload.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)

    def entries(self) -> list[ArchivedEntry]:
        """Every archived entry, oldest first."""
        found: dict[str, ArchivedEntry] = {}
        for data in [*self._file_records(), *self._journal_records()]:
            try:
                entry = ArchivedEntry(**{k: data[k] for k in ArchivedEntry.__dataclass_fields__
                                         if k in data})
            except TypeError:
                continue
            found.setdefault(entry.id, entry)
        return sorted(found.values(), key=_time)

    def get(self, entry_id: str) -> ArchivedEntry | None:
        for entry in reversed(self.entries()):
            if entry.id == entry_id:
                return entry
        return None

    def journaled(self) -> int:
        """How many records are still in the journals, not yet in the file."""
        return len(self._journal_records())

    def _file_records(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        records = []
        for line in lines:
            try:
                data = jsondoc.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                records.append(data)
        return records

    def _journal_records(self) -> list[dict[str, Any]]:
        return [r for path in self.journals for r in journal.state(path).archive]


def _time(entry: ArchivedEntry) -> float:
    return entry.time if isinstance(entry.time, int | float) else 0.0


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)
