"""The baseline for every write benchmark: the bare minimum a durable, concurrent-safe edit needs.

Lock a sidecar file (a blocking ``flock``), read the file, edit the text, write a temp file in the
same folder, fsync it, atomically replace the original. Nothing else: no checks, no archive, no
metadata, no folder fsync (unless asked for, to show what that one costs).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

DELIMITER = "\n§\n"


def durable_edit(path: Path, edit: Callable[[str], str], *, fsync_folder: bool = False) -> None:
    lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        try:
            with open(path, "rb") as handle:
                old = handle.read().decode("utf-8")
        except FileNotFoundError:
            old = ""
        data = edit(old).encode("utf-8")
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        if fsync_folder:
            dir_fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    finally:
        os.close(lock_fd)  # closing the descriptor releases the flock


def append(entry: str) -> Callable[[str], str]:
    return lambda old: f"{old}{DELIMITER}{entry}" if old else entry


def replace(label: str, new: str) -> Callable[[str], str]:
    """Replace the entry that starts with ``label``."""

    def edit(old: str) -> str:
        entries = old.split(DELIMITER)
        for index, existing in enumerate(entries):
            if existing.startswith(label):
                entries[index] = new
                break
        return DELIMITER.join(entries)

    return edit


def batch(remove: str, replace_label: str, new: str, add: str) -> Callable[[str], str]:
    """Remove one entry, replace another, add a third: one write."""

    def edit(old: str) -> str:
        entries = [e for e in old.split(DELIMITER) if not e.startswith(remove)]
        entries = [new if e.startswith(replace_label) else e for e in entries]
        entries.append(add)
        return DELIMITER.join(entries)

    return edit
