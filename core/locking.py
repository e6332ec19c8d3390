"""The lock file behind every read-modify-write: ``flock`` on POSIX, ``filelock`` elsewhere.

A memory write is about one millisecond, and ``filelock``'s ``FileLock`` took a quarter of it:
each acquire and release of its 3.x releases runs ~500 Python calls (a failing exclusive
create, a re-open, a failing ``mkdir``, a path walk, ~30 ``getpid`` calls), ~230 µs here
against ~15 µs for opening the lock file, ``flock`` and closing it. Where ``fcntl.flock``
exists this module does the latter and keeps what ``filelock`` guaranteed:

* a **timeout**: a blocking ``flock`` on a thread of its own, waited for until the deadline, then
  ``filelock.Timeout`` (the same exception, so callers need not care which lock they got); a
  negative timeout waits for ever. The kernel hands a released lock to a blocked waiter at once,
  where polling (``filelock`` polls every 50 ms) left it idle until the next poll;
* a lock file **replaced or deleted while waiting** does not give a false lock: once ``flock``
  succeeds, the open descriptor is checked against the file now at the path (device and inode),
  and a mismatch closes it and starts over on the file that is there;
* the lock file is opened with ``O_NOFOLLOW`` (a symlink is refused, its target untouched) and
  created 0600 (a looser mode left by an older version is tightened while held);
* **platforms without ``flock``** (Windows) get ``filelock.FileLock`` as before.

Both lock the same file the same way on POSIX (``filelock`` uses ``flock`` there too), so a
process still on ``filelock`` and one on this module exclude each other.
"""

from __future__ import annotations

import _thread
import os
import stat
import time
from typing import Any, Protocol


try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

PRIVATE_FILE = 0o600
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class ProcessLock(Protocol):
    def acquire(self, timeout: float) -> object: ...

    def release(self) -> None: ...


class FlockLock:
    """An exclusive ``flock`` on ``lock_file``, held from :meth:`acquire` to :meth:`release`.

    Not re-entrant and not thread-safe on its own: :func:`memhost.files.locked` puts a thread
    lock in front of it.
    """

    __slots__ = ("_fd", "lock_file")

    def __init__(self, lock_file: str) -> None:
        self.lock_file = lock_file
        self._fd: int | None = None

    def acquire(self, timeout: float) -> FlockLock:
        deadline = None if timeout < 0 else time.monotonic() + timeout
        while True:
            fd = os.open(self.lock_file, _OPEN_FLAGS, PRIVATE_FILE)
            try:
                _wait_for(fd, self.lock_file, deadline)
                held = os.fstat(fd)
                try:
                    there = os.stat(self.lock_file, follow_symlinks=False)
                except FileNotFoundError:
                    there = None
            except BaseException:
                os.close(fd)
                raise
            if there is not None and (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino):
                if stat.S_IMODE(held.st_mode) != PRIVATE_FILE:
                    try:
                        os.fchmod(fd, PRIVATE_FILE)
                    except OSError:
                        pass
                self._fd = fd
                return self
            # The file we locked was replaced or deleted while we waited: whoever holds the
            # file at the path now is who we must wait for.
            os.close(fd)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                # Unlock explicitly: a child forked while the lock was held shares this open
                # file, and closing our descriptor alone would leave the lock with the child.
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    @property
    def is_locked(self) -> bool:
        return self._fd is not None


def _wait_for(fd: int, lock_file: str, deadline: float | None) -> None:
    """Take the ``flock`` on ``fd``, waiting until ``deadline`` (``None``: for ever)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    if deadline <= time.monotonic():
        raise timed_out(lock_file)
    _BlockingWait(fd).wait(lock_file, deadline)


class _BlockingWait:
    """A blocking ``flock`` on its own thread, waited for at most until a deadline.

    The kernel hands a released lock to a blocked waiter at once; polling a non-blocking
    ``flock`` (what ``filelock`` does, every 50 ms) left the lock idle until the next poll, which
    under contention cost more than the writes themselves. ``flock`` takes no timeout, so the
    blocking call runs on a thread of its own (a :class:`_Waiter`, only when the lock is
    taken), on a duplicate of the descriptor: the lock belongs to the open file both share. A
    caller that stops waiting abandons it; the thread then lets go of the lock as soon as it
    gets it.
    """

    __slots__ = ("abandoned", "done", "error", "fd", "finished")

    def __init__(self, fd: int) -> None:
        self.fd = os.dup(fd)  # the thread's own: the caller may close its descriptor any time
        self.finished = _thread.allocate_lock()
        self.finished.acquire()
        self.done = self.abandoned = False
        self.error: OSError | None = None
        try:
            _Waiter.take(self)
        except BaseException:
            os.close(self.fd)
            raise

    def _run(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as exc:
            self.error = exc
        with _WAITS:
            self.done = True
            abandoned = self.abandoned
        if abandoned and self.error is None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)  # nobody waits for it any more
        os.close(self.fd)
        self.finished.release()

    def wait(self, lock_file: str, deadline: float) -> None:
        got = False
        try:
            self.finished.acquire(True, max(0.0, deadline - time.monotonic()))
            with _WAITS:
                if not self.done:
                    self.abandoned = True
                    raise timed_out(lock_file)
            if self.error is not None:
                raise self.error
            got = True
        finally:
            if not got:
                # Given up (timed out, or interrupted): a lock the thread gets later is let go
                # there; one it already got goes with the caller's descriptor, closed on this
                # way out.
                with _WAITS:
                    self.abandoned = True


class _Waiter:
    """A daemon thread that runs blocking waits (:meth:`_BlockingWait._run`) one after another.

    Starting a thread for each wait cost ~55 µs of CPU, handing a wait to an idle thread ~12:
    under contention nearly every write waits, and eight processes writing at once spent that
    on the two cores the lock holder needed. Up to :data:`IDLE_WAITERS` idle threads are kept; a
    thread finding that many ends.
    """

    __slots__ = ("_job", "_ready")

    def __init__(self) -> None:
        self._job: _BlockingWait | None = None
        self._ready = _thread.allocate_lock()
        self._ready.acquire()
        _thread.start_new_thread(self._loop, ())

    @staticmethod
    def take(job: _BlockingWait) -> None:
        """Run ``job`` on an idle waiter, or on a new one (``RuntimeError`` when no thread can
        start)."""
        with _WAITS:
            waiter = _IDLE.pop() if _IDLE else None
        if waiter is None:
            waiter = _Waiter()
        waiter._job = job
        waiter._ready.release()

    def _loop(self) -> None:
        while True:
            self._ready.acquire()
            job, self._job = self._job, None
            if job is not None:
                job._run()
            with _WAITS:
                if len(_IDLE) >= IDLE_WAITERS:
                    return
                _IDLE.append(self)


#: Idle :class:`_Waiter` threads kept for the next waits.
IDLE_WAITERS = 4
_IDLE: list[_Waiter] = []
_WAITS = _thread.allocate_lock()


def _after_fork() -> None:
    # A child copied _WAITS as it was, and the list of idle waiters, whose threads do not exist
    # there.
    global _WAITS, _IDLE
    _WAITS = _thread.allocate_lock()
    _IDLE = []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class _FallbackLock:
    """``filelock.FileLock`` behind the same two calls, where there is no ``flock``."""

    __slots__ = ("_lock",)

    def __init__(self, lock_file: str) -> None:
        from filelock import FileLock

        self._lock = FileLock(lock_file, mode=PRIVATE_FILE, thread_local=False)

    def acquire(self, timeout: float) -> object:
        held = self._lock.acquire(timeout=timeout)
        # filelock leaves a looser file an older version made as it was: tighten it while held
        # (a stat first: a chmod on every acquire would dirty the inode on every write).
        try:
            if stat.S_IMODE(os.stat(self._lock.lock_file).st_mode) != PRIVATE_FILE:
                os.chmod(self._lock.lock_file, PRIVATE_FILE)
        except OSError:
            pass
        return held

    def release(self) -> None:
        self._lock.release()


def process_lock(lock_file: str) -> ProcessLock:
    """A lock on ``lock_file`` that keeps other processes out (see the module docstring)."""
    if fcntl is not None and hasattr(fcntl, "flock"):
        return FlockLock(lock_file)
    return _FallbackLock(lock_file)


def timed_out(lock_file: str) -> Exception:
    """The exception a lock that timed out raises: ``filelock.Timeout``, whichever lock it was."""
    from filelock import Timeout

    return Timeout(lock_file)


def __getattr__(name: str) -> Any:
    # ``Timeout`` is filelock's class, looked up when it is first needed (an ``except
    # locking.Timeout`` that an exception reaches, a lock that times out): importing filelock
    # takes ~11 ms, which a process that only reads memory (a session start, most commands)
    # need not pay.
    if name == "Timeout":
        from filelock import Timeout

        return Timeout
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FlockLock", "ProcessLock", "Timeout", "process_lock", "timed_out"]
