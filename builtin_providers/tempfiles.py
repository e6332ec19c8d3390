"""The temp file a memory write's new text goes to before it replaces the file.

Made by :func:`temp_file` (private, ``O_EXCL``, one random draw), its blocks allocated by
:func:`preallocate` before the text is written, and, under contention, made before the write
takes the lock (:class:`Prepared`, :meth:`memhost.builtin_providers.commit.StoreFile.prepare`).
Where the write swapped it with the memory file (:mod:`memhost.builtin_providers.replacing`),
the file it replaced is left under the temp file's name: the writer's next write takes that
one again (:func:`reuse`) instead of making a new one.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import secrets
import stat

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no swaps there, so nothing is reused
    fcntl = None  # type: ignore[assignment]

from memhost.files import PRIVATE_FILE, write_all, writer_id

_TEMP_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
               | getattr(os, "O_NOFOLLOW", 0))
_REUSE_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def temp_file(folder: str, prefix: str) -> tuple[int, str]:
    """A new private (0600) file ``<folder>/<prefix><writer>.<random>.tmp``: what
    ``tempfile.mkstemp`` makes, with one random draw instead of eight, and named by its writer
    (:func:`memhost.files.writer_id`), so ``memhost doctor`` can tell a file a running process
    keeps for its next write (:func:`reuse`) from one a killed writer left."""
    writer = writer_id()
    while True:
        name = f"{folder}{os.sep}{prefix}{writer}.{secrets.token_hex(5)}.tmp"
        try:
            return os.open(name, _TEMP_FLAGS, PRIVATE_FILE), name
        except FileExistsError:
            continue


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


def fill(fd: int, data: bytes, held: int) -> os.stat_result:
    """Write ``data`` to the temp file ``fd`` (``held``: the bytes a reused one holds, see
    :func:`reuse`) and return its status as written: its inode, size and modification time
    are what the journal record names it by (:meth:`StoreFile.settle
    <memhost.builtin_providers.commit.StoreFile.settle>`)."""
    if len(data) > held:
        preallocate(fd, len(data))
    write_all(fd, data)
    if held > len(data):
        os.ftruncate(fd, len(data))
    return os.fstat(fd)


#: The files this process's swaps left for its next writes (:func:`keep`); removed at exit.
_KEPT: set[str] = set()


def keep(name: str) -> None:
    """Note ``name`` as a file a swap left for this process's next write to :func:`reuse`."""
    if not _KEPT:
        _watch_exit()
    _KEPT.add(name)


def drop(name: str) -> None:
    """Remove a kept file that will not be reused (its store is closing)."""
    try:
        _KEPT.remove(name)
    except KeyError:
        return  # already taken, or kept by the process this one was forked from
    _unlink(name)


@functools.cache
def _watch_exit() -> None:
    # A process that ends normally leaves none behind; one killed leaves its last for the next
    # writer's sweep (StoreFile.sweep). A child forked from a writer keeps none of its files.
    atexit.register(lambda: [_unlink(name) for name in list(_KEPT)])
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_KEPT.clear)


def reuse(name: str) -> Prepared | None:
    """The file a swap left at ``name`` (the previous memory file), ready to be written over:
    open, locked (an exclusive ``flock``) and made private again; None, and the name removed,
    when it cannot be. None, and the file left alone, for a name this process does not keep
    (its parent's, in a child forked after a write, or one another thread took first).

    A process that read the memory file may still hold that file open. memhost's readers hold
    a shared ``flock`` while they read (:func:`memhost.files.read_current`), so the exclusive
    one is refused while any of them reads, and the write makes a new temp file instead: no
    reader ever sees a file rewritten under it. A file with another link (a backup made with
    ``ln``) is never written over either.
    """
    try:
        _KEPT.remove(name)  # one taker (a thread of this process), never a forked child
    except KeyError:
        return None
    try:
        fd = os.open(name, _REUSE_FLAGS)
    except OSError:  # swept by another writer meanwhile, or not ours to write
        _unlink(name)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_nlink != 1:
            raise OSError("not a file of its own")
        if stat.S_IMODE(found.st_mode) != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)  # it may have been a memory file made by hand
    except OSError:
        _remove(fd, name)
        return None
    return Prepared(fd, name, found.st_size, reused=True)


class Prepared:
    """A temp file made, or taken again (:func:`reuse`), before the lock
    (:meth:`~memhost.builtin_providers.commit.StoreFile.prepare`): the commit takes it, or
    :meth:`discard` removes it (a reused one is handed back, to be kept again). ``size``:
    the bytes a reused file holds (0 for a new one)."""

    __slots__ = ("fd", "name", "reused", "size")

    def __init__(self, fd: int, name: str, size: int = 0, *, reused: bool = False) -> None:
        self.fd, self.name, self.size, self.reused = fd, name, size, reused

    def take(self, folder: str, prefix: str) -> tuple[int, str, int] | None:
        """The descriptor, name and size (see :class:`Prepared`), when the file is still there
        and where the write needs it (the memory file may have become a link meanwhile); else
        None, the file removed."""
        fd, name, self.fd = self.fd, self.name, -1
        if fd < 0:
            return None
        try:
            if name.startswith(f"{folder}{os.sep}{prefix}") and os.fstat(fd).st_nlink == 1:
                return fd, name, self.size
        except OSError:
            pass
        _remove(fd, name)
        return None

    def discard(self) -> str | None:
        """Remove the file unless a commit took it; a reused one is left as it was (nothing was
        written to it) and its name returned, for the caller to :func:`keep` again."""
        fd, self.fd = self.fd, -1
        if fd < 0:
            return None
        if self.reused:
            os.close(fd)
            return self.name
        _remove(fd, self.name)
        return None


def _remove(fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
    _unlink(name)


def _unlink(name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name)
