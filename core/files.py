"""Durable file primitives shared by every part of memhost that keeps state on disk.

One rule everywhere: a file is replaced whole (temp file in the same folder, fsync, atomic
rename, fsync of the folder) and is private to its owner (0600; folders 0700). A reader never
needs a lock: it sees the old file or the new one, never half of either.

Whatever the umask, a folder memhost creates (its missing parents too) is 0700 and a file 0600.
Nothing is written through a symlink someone planted: temp files are created with ``O_EXCL``,
a file is replaced by renaming over its name (which replaces a link, never its target), appends
and new files are opened with ``O_NOFOLLOW``, and a lock file that is a link is refused
(filelock opens it with ``O_NOFOLLOW``).
The one exception is asked for by name: a memory file the user linked into a dotfiles
repository stays linked (``follow_symlink=True``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost import jsondoc
from memhost.locking import FlockLock, ProcessLock, process_lock, timed_out

if TYPE_CHECKING:
    from filelock import FileLock

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


#: Whether a folder's mode lets other users change what is in it.
SHARED_WRITE = stat.S_IWGRP | stat.S_IWOTH


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents if needed, each 0700 whatever the umask (a
    mode given to mkdir is reduced by the umask; a chmod is not)."""
    if path.is_dir():
        return path
    missing = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # made by someone else meanwhile: not ours to change
        os.chmod(folder, PRIVATE_DIR)
    return path


def refuse_shared_dir(path: Path, what: str) -> None:
    """Raise :class:`ConfigError` when ``path`` (an existing folder) can be written by other
    users: they could plant a provider or a config that runs their code as this user."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode) and mode & SHARED_WRITE:
        from memhost.errors import ConfigError

        raise ConfigError(
            f"{what} {path} can be written by other users (mode {stat.S_IMODE(mode):04o}), so "
            f"anyone on this machine could put code there that memhost would run as you; "
            f"memhost refuses to use it. Make it yours alone: chmod 700 '{path}'")


def write_new_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a file that must not exist yet (0600; never through a symlink)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
        os.write(fd, data)
    finally:
        os.close(fd)


def open_append_private(path: Path) -> int:
    """A file descriptor appending to ``path`` (created 0600; a symlink is refused)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, PRIVATE_FILE)
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_mode & 0o777 != PRIVATE_FILE:
            os.fchmod(fd, PRIVATE_FILE)
    return fd


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def fsync_dir(folder: Path) -> None:
    """fsync ``folder``, so a rename or a new file in it survives a power cut."""
    with contextlib.suppress(OSError):  # not every filesystem lets a folder be opened
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True,
                       follow_symlink: bool = False) -> None:
    """Replace ``path`` with ``data``; on any failure the old file stays as it was.

    ``durable`` fsyncs the data (and the folder) so the new content survives a power loss; a
    crashed process can never leave a torn file either way. A symlink at ``path`` is replaced
    by the file (its target is left alone), unless ``follow_symlink``: then its target is
    replaced, so a memory file kept in a dotfiles repository stays linked.
    """
    if follow_symlink and path.is_symlink():
        path = Path(os.path.realpath(path))
    folder = ensure_private_dir(path.parent)
    sweep_orphaned_temp_files(folder)
    # mkstemp opens with O_EXCL (never an existing name, never through a link) and mode 0600.
    # The name says who writes it, so a later writer can tell a killed one's leftover.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{writer_id()}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), PRIVATE_FILE)
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(folder)


def sweep_orphaned_temp_files(folder: str | Path, *, held_prefix: str = "") -> int:
    """Remove the temp files in ``folder`` that killed writers left; how many went.

    An atomic write's temp file is ``.<name>.<writer>.<random>.tmp`` (:func:`writer_id`): it is
    an orphan once its writer's process is gone, since a live writer renames or removes its own.
    Every atomic write sweeps its folder first, so a folder's leftovers last until its next
    write. A temp file whose writer is alive, ran on another machine or in another container
    (its pid means nothing here), or whose name says nothing of its writer is left alone
    (``memhost doctor`` reports old ones). ``held_prefix``: the prefix of the temp files of a
    file whose lock the caller holds; every one of them goes, whatever its name says of its
    writer, since they are all written under that lock.
    """
    try:
        names = os.listdir(folder)  # cheaper than Path.glob, which compiles a pattern
    except OSError:
        return 0
    removed = 0
    shortest = len(held_prefix) + 4
    for entry in names:
        if not entry.endswith(".tmp"):
            continue
        if (held_prefix and entry.startswith(held_prefix) and len(entry) >= shortest) or (
                entry.startswith(".") and temp_writer_gone(entry)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))
                removed += 1
    return removed


def writer_id() -> str:
    """``<pid>-<where>``: this process, and a tag of the machine and pid namespace its pid is
    valid in (a home may be shared by containers or over a network filesystem)."""
    return f"{os.getpid()}-{_where()}"


@functools.cache
def _where() -> str:
    import hashlib
    import socket  # here: most processes that import memhost never replace a file

    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:  # no /proc (macOS, Windows): no pid namespaces either
        namespace = ""
    return hashlib.sha256(f"{socket.gethostname()}|{namespace}".encode()).hexdigest()[:8]


def temp_writer_gone(temp_name: str) -> bool:
    """True when the atomic write that made ``temp_name`` was killed: it ran here, and its pid
    runs no process now."""
    return _temp_writer(temp_name) is False


def temp_writer_alive(temp_name: str) -> bool:
    """True when the process that made ``temp_name`` runs here now (this one included)."""
    return _temp_writer(temp_name) is True


def _temp_writer(temp_name: str) -> bool | None:
    """Whether the writer ``temp_name`` names runs (None: it ran elsewhere, or the name says
    nothing of it)."""
    parts = temp_name.rsplit(".", 3)  # [".<name>", "<pid>-<where>", "<random>", "tmp"]
    if len(parts) != 4 or os.name == "nt":  # Windows' os.kill(pid, 0) ends the process
        return None
    pid, _, where = parts[1].partition("-")
    if not pid.isdigit() or where != _where() or int(pid) == 0:
        return None
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, someone else's
        return True
    return True


def atomic_write_text(path: Path, text: str, *, follow_symlink: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), follow_symlink=follow_symlink)


def atomic_write_json(path: Path, data: Any) -> None:
    """``data`` as readable JSON, escaped where a lone surrogate makes UTF-8 impossible."""
    try:
        encoded = (json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
    except UnicodeEncodeError:
        encoded = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("ascii")
    atomic_write_bytes(path, encoded)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``: a regular file takes it whole, but a signal can cut a
    write short."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_file(path: str | Path) -> tuple[bytes, os.stat_result]:
    """A file's bytes, and its status as it was read: one open, ``fstat`` and read.
    ``Path.read_bytes`` builds a buffered file object around the same calls, about twice the
    cost for the small files a session start reads. ``OSError`` as ``open`` raises it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        found = os.fstat(fd)
        data = _read_all(fd, found.st_size)
    finally:
        os.close(fd)
    return data, found


def read_current(path: str | Path) -> tuple[bytes, os.stat_result]:
    """:func:`read_file` for a memory file read without its lock: the bytes of the file that is
    at ``path``, never of one being written over.

    A write may leave the file it replaced under a temp name and write over it later
    (:mod:`memhost.builtin_providers.replacing`), so a reader that opened the old file could
    see it change under it. The reader holds a shared ``flock`` while it reads, which the
    writer asks for exclusively and does without when refused; and it checks that the file it
    read is still the one at ``path``, else reads again.
    """
    if _flock is None:  # Windows: a write there always renames, nothing is written over
        return read_file(path)
    for attempt in range(_READ_ATTEMPTS):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            try:  # the last attempt waits for a writer writing over the file opened
                _flock(fd, _SHARED if attempt == _READ_ATTEMPTS - 1 else _SHARED | _NOWAIT)
            except BlockingIOError:
                continue  # being written over: no longer the file at path
            except OSError:
                pass  # a filesystem without locks (a writer there cannot take it either)
            found = os.fstat(fd)
            data = _read_all(fd, found.st_size)
        finally:
            os.close(fd)
        try:
            there = os.stat(path)
        except FileNotFoundError:
            there = None
        if there is None or (there.st_ino, there.st_dev) == (found.st_ino, found.st_dev):
            return data, found
    return data, found


_READ_ATTEMPTS = 8
try:
    from fcntl import LOCK_NB as _NOWAIT
    from fcntl import LOCK_SH as _SHARED
    from fcntl import flock as _flock
except ImportError:  # pragma: no cover - Windows
    _flock = None  # type: ignore[assignment]


def _read_all(fd: int, size: int) -> bytes:
    data = os.read(fd, size + 1)
    if len(data) > size:  # it grew since the fstat: read the rest
        chunks = [data]
        while chunk := os.read(fd, 65_536):
            chunks.append(chunk)
        data = b"".join(chunks)
    return data


def read_json_or(path: Path, default: Any) -> Any:
    """Read a JSON file, or return ``default`` when it is missing or not valid JSON."""
    try:
        return jsondoc.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def lock_for(path: Path, timeout: float = 30.0) -> FileLock:
    """A new lock on ``path``'s sidecar lock file (``<name>.lock``, mode 0600).

    For read-modify-write use :func:`locked`, which reuses one lock per path in a process.
    """
    from filelock import FileLock

    ensure_private_dir(path.parent)
    return FileLock(str(path) + ".lock", timeout=timeout, mode=PRIVATE_FILE)


class _PathLock:
    """This process's lock on one lock file: a thread lock, then the lock on the file
    (:mod:`memhost.locking`: ``flock`` on POSIX, ``filelock`` elsewhere).

    Each lock file has one while any thread holds or waits for it. The thread lock in front
    lets one thread at a time in, and the file lock keeps other processes (and other lock
    objects) out. Neither is re-entrant: a thread that takes a lock it holds waits for its
    timeout.
    """

    __slots__ = ("__weakref__", "file", "thread")

    def __init__(self, lock_file: str) -> None:
        self.thread = threading.Lock()
        self.file: ProcessLock = process_lock(lock_file)


# Weak: a lock is kept while a thread holds or waits for it (the one lock object per file that
# the thread lock needs), then let go. Kept for the life of the process, a lock per file ever
# written grew without end in a process serving many users (two files per user).
_PATH_LOCKS: weakref.WeakValueDictionary[str, _PathLock] = weakref.WeakValueDictionary()
_PATH_LOCKS_GUARD = threading.Lock()


def _path_lock(lock_file: str) -> _PathLock:
    lock = _PATH_LOCKS.get(lock_file)
    if lock is None:
        with _PATH_LOCKS_GUARD:
            lock = _PATH_LOCKS.get(lock_file)
            if lock is None:
                lock = _PATH_LOCKS[lock_file] = _PathLock(lock_file)
    return lock


def _forget_path_locks() -> None:
    # A forked child starts with its own locks: a thread lock copied while another thread of the
    # parent held it would never be released in the child.
    global _PATH_LOCKS_GUARD
    _PATH_LOCKS.clear()
    _PATH_LOCKS_GUARD = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_path_locks)


@contextlib.contextmanager
def locked(path: Path, timeout: float = 30.0) -> Iterator[None]:
    """Hold ``path``'s lock (``<name>.lock``) for a read-modify-write; ``Timeout`` after
    ``timeout`` seconds (a negative timeout waits for ever)."""
    lock_file = str(path) + ".lock"
    lock = _path_lock(lock_file)
    if not isinstance(lock.file, FlockLock):
        ensure_private_dir(path.parent)  # filelock may make a missing folder with a looser mode
    deadline = time.monotonic() + timeout
    if not lock.thread.acquire(timeout=-1 if timeout < 0 else timeout):
        raise timed_out(lock_file)
    try:
        try:
            lock.file.acquire(timeout if timeout < 0 else max(0.0, deadline - time.monotonic()))
        except FileNotFoundError:
            # The folder is missing (a first write): make it, private, and lock again. Checking
            # for it before every lock cost a stat and a few path objects on every write.
            ensure_private_dir(path.parent)
            lock.file.acquire(timeout if timeout < 0 else max(0.0, deadline - time.monotonic()))
        try:
            yield
        finally:
            lock.file.release()
    finally:
        lock.thread.release()
