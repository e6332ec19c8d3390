"""The temp file a memory write's new text goes to before it is renamed over the file.

Made by :func:`temp_file` (private, ``O_EXCL``, one random draw), its blocks allocated by
:func:`preallocate` before the text is written, and, under contention, made before the write
takes the lock (:class:`Prepared`, :meth:`memhost.builtin_providers.commit.StoreFile.prepare`).
"""

from __future__ import annotations

import contextlib
import os
import secrets

from memhost.files import PRIVATE_FILE

_TEMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOFOLLOW", 0))


def temp_file(folder: str, prefix: str) -> tuple[int, str]:
    """A new private (0600) file ``<folder>/<prefix><random>.tmp``: what ``tempfile.mkstemp``
    makes, with one random draw instead of eight."""
    while True:
        name = f"{folder}{os.sep}{prefix}{secrets.token_hex(5)}.tmp"
        try:
            return os.open(name, _TEMP_FLAGS, PRIVATE_FILE), name
        except FileExistsError:
            continue


def new_temp(folder: str, prefix: str) -> tuple[int, str, int]:
    """:func:`temp_file`, with its inode number (what the journal record names)."""
    fd, name = temp_file(folder, prefix)
    try:
        return fd, name, os.fstat(fd).st_ino
    except OSError:
        _remove(fd, name)
        raise


def preallocate(fd: int, size: int) -> None:
    """Allocate the temp file's blocks before its text is written.

    Renaming a file over another makes ext4 (``auto_da_alloc``) allocate and start writing the
    new file's delayed-allocation blocks inside ``rename``, which made the rename cost as much
    as a third of the write. Blocks allocated up front leave nothing for it to do, and the text
    reaches the disk with the next writeback, or never if the next write replaces the file
    first: the journal record holds it until a checkpoint fsyncs the file. A filesystem
    without the call (or one that refuses it) just skips it.
    """
    if size and _FALLOCATE is not None:
        try:
            _FALLOCATE(fd, 0, size)
        except OSError:
            pass


_FALLOCATE = getattr(os, "posix_fallocate", None)


class Prepared:
    """A temp file made before the lock
    (:meth:`~memhost.builtin_providers.commit.StoreFile.prepare`): the commit takes it, or
    :meth:`discard` removes it."""

    __slots__ = ("fd", "name")

    def __init__(self, fd: int, name: str) -> None:
        self.fd, self.name = fd, name

    def take(self, folder: str, prefix: str) -> tuple[int, str, int] | None:
        """The descriptor, name and inode number, when the file is still there and where the
        write needs it (the memory file may have become a link meanwhile); else None, the file
        removed."""
        fd, name, self.fd = self.fd, self.name, -1
        if fd < 0:
            return None
        try:
            if name.startswith(f"{folder}{os.sep}{prefix}"):
                found = os.fstat(fd)
                if found.st_nlink:
                    return fd, name, found.st_ino
        except OSError:
            pass
        _remove(fd, name)
        return None

    def discard(self) -> None:
        """Remove the file unless a commit took it."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            _remove(fd, self.name)


def _remove(fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
