"""Durable file primitives shared by every part of memhost that keeps state on disk.

One rule everywhere: a file is replaced whole (temp file in the same folder, fsync, atomic
rename, fsync of the folder) and is private to its owner (0600; folders 0700). A reader never
needs a lock: it sees the old file or the new one, never half of either.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed; a folder memhost creates is 0700."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    return path


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a folder be opened
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data``; on any failure the old file stays as it was.

    ``durable`` fsyncs the data (and the folder) so the new content survives a power loss; a
    crashed process can never leave a torn file either way. A symlink is followed: its target
    is replaced, so a memory file kept in a dotfiles repository stays linked.
    """
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    folder = ensure_private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, PRIVATE_FILE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(folder)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def read_json_or(path: Path, default: Any) -> Any:
    """Read a JSON file, or return ``default`` when it is missing or not valid JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def lock_for(path: Path, timeout: float = 30.0) -> FileLock:
    """The sidecar lock guarding read-modify-write of ``path`` (``<name>.lock``, mode 0600)."""
    ensure_private_dir(path.parent)
    return FileLock(str(path) + ".lock", timeout=timeout, mode=PRIVATE_FILE)


@contextlib.contextmanager
def locked(path: Path, timeout: float = 30.0) -> Iterator[None]:
    lock = lock_for(path, timeout)
    with lock:
        # filelock creates the file with the umask applied; tighten it while we hold it.
        with contextlib.suppress(OSError):
            os.chmod(lock.lock_file, PRIVATE_FILE)
        yield
