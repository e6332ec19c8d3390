"""What discovery reads from disk, remembered for as long as what it was read from is unchanged.

A host that opens a manager per user discovers once per manager, and ``memhost doctor`` once per
section; each discovery read every manifest and the installed distributions' metadata again
(~20 ms). The caches here are per process and keyed on what would change the answer: a manifest
file's identity (inode, size, mtime), and ``sys.path`` with each entry's mtime (installing or
removing a distribution adds or removes its metadata folder, which changes that mtime).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_every: list[Remembered[Any]] = []


def import_path_state() -> tuple[tuple[str, int | None], ...]:
    state = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


def file_identity(path: Path) -> tuple[int, int, int] | None:
    try:
        seen = os.stat(path)
    except OSError:
        return None
    return seen.st_ino, seen.st_size, seen.st_mtime_ns


class Remembered(Generic[T]):
    """Values by key, each kept with the state it was read in and read again when that moved."""

    def __init__(self) -> None:
        self._items: dict[Hashable, tuple[Hashable, T]] = {}
        self._lock = threading.Lock()
        _every.append(self)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def get(self, key: Hashable, state: Hashable, read: Callable[[], T]) -> T:
        with self._lock:
            cached = self._items.get(key)
        if cached is not None and cached[0] == state:
            return cached[1]
        value = read()
        with self._lock:
            self._items[key] = (state, value)
        return value


def forget_all() -> None:
    """Read everything again next time: for a test that fakes what is installed (a patched
    ``importlib_metadata``), which no file's state would show."""
    for remembered in _every:
        remembered.clear()
