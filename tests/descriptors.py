"""What this process holds open, read from /proc (the tests that use it skip without /proc)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: For the tests that list descriptors.
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                                reason="lists descriptors via /proc")


def open_files_under(folder: Path) -> list[str]:
    """The paths of the files this process holds open under ``folder`` (a deleted one ends in
    " (deleted)")."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, already closed
            continue
        if target.startswith(os.fspath(folder)):
            found.append(target)
    return found
