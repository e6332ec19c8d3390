"""How a memory write's temp file takes the memory file's place, and what becomes of the file
it replaces.

A plain rename over the memory file drops the old file's last link, and the kernel frees its
inode and blocks inside ``rename``: most of the rename's cost, on every write, under the lock.
Where it can, the write **swaps** the two names instead (Linux ``renameat2`` with
``RENAME_EXCHANGE``, :func:`swap`): the old file takes the temp file's name and stays
allocated, and the writer's next write overwrites it and swaps it back
(:func:`memhost.builtin_providers.tempfiles.reuse`), so a write allocates and frees nothing.
Where it renames, the replaced file is held open across the rename (:func:`hold`) and closed
once the lock is let go.

Python has no call for the swap, so it goes through ``ctypes`` to the C library, loaded on the
first swap (a process that never writes does not import ``ctypes``). Where it is missing (not Linux,
an older C library) or the filesystem refuses it (some network filesystems), :func:`swap`
returns False and the caller renames as before.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
#: What a filesystem or kernel answers when it cannot swap: the caller renames instead.
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})

_call: Any = None  # the C function, once looked up; False where there is none


def _renameat2() -> Any:
    global _call
    if _call is None:
        _call = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                function = ctypes.CDLL(None, use_errno=True).renameat2
            except (OSError, AttributeError):  # a C library without it (glibc before 2.28)
                return _call
            function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                 ctypes.c_uint]
            function.restype = ctypes.c_int
            _call = function
    return _call


def available() -> bool:
    """Whether this platform's C library has the call (a filesystem may still refuse it)."""
    return bool(_renameat2())


def swap(first: str, second: str) -> bool:
    """Give ``first`` the file at ``second`` and ``second`` the file at ``first``, atomically:
    a reader of either name sees one file or the other, never neither. False, with nothing
    changed, where the platform or the filesystem cannot; ``OSError`` for any other failure
    (``FileNotFoundError`` when either name is missing)."""
    function = _renameat2()
    if not function:
        return False
    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
                _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), second)


_HOLD_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def hold(path: str | os.PathLike[str]) -> int:
    """An open descriptor of the file at ``path`` that a rename is about to replace (-1 where
    there is none, or on Windows, which refuses to replace an open file).

    A rename over a file drops that file's last link, and the kernel frees its blocks inside
    ``rename``: ~70 µs of the rename's ~78 here, all of it under the memory file's lock. Held
    open, the file outlives the rename, and its blocks are freed as it is closed, after the
    lock is let go (:meth:`memhost.builtin_providers.commit.StoreFile.let_go`): the work is
    the same, but other writers no longer wait for it. (On NFS the client keeps the replaced
    file under a ``.nfs…`` name until then.)"""
    if os.name != "posix":
        return -1
    try:
        return os.open(path, _HOLD_FLAGS)
    except OSError:  # none yet (a first write), or unreadable: the rename frees it as before
        return -1
