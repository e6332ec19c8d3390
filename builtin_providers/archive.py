"""``<home>/memories/archive.jsonl``: every entry a write replaced or removed, so none is lost.

One JSON object per line, appended under a lock and fsynced before the store file is replaced.
A torn last line (a crash mid-append) is skipped on read and never glued to the next record.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

from memhost.files import PRIVATE_FILE, ensure_private_dir, locked

ARCHIVE_NAME = "archive.jsonl"


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

    def append(self, records: list[ArchivedEntry]) -> None:
        if not records:
            return
        ensure_private_dir(self.path.parent)
        payload = "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records)
        with locked(self.path):
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, PRIVATE_FILE)
            try:
                size = os.fstat(fd).st_size
                if size and _last_byte(self.path) != b"\n":
                    payload = "\n" + payload  # never glue a record onto a torn line
                os.write(fd, payload.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)

    def entries(self) -> list[ArchivedEntry]:
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        found: list[ArchivedEntry] = []
        for line in lines:
            try:
                data = json.loads(line)
                found.append(ArchivedEntry(**{k: data[k] for k in ArchivedEntry.__dataclass_fields__ if k in data}))
            except (ValueError, TypeError, KeyError):
                continue
        return found

    def get(self, entry_id: str) -> ArchivedEntry | None:
        for entry in reversed(self.entries()):
            if entry.id == entry_id:
                return entry
        return None


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)
