"""The lock behind every read-modify-write (memhost.locking): what filelock guaranteed, kept.

Real lock files, real ``flock`` locks held from other threads and other processes.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from memhost import locking
from memhost.files import locked

pytestmark = pytest.mark.skipif(locking.fcntl is None, reason="needs POSIX flock")
fcntl = locking.fcntl

HOLDER = textwrap.dedent("""
    import sys, time
    from filelock import FileLock
    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("held", flush=True)
    sys.stdin.readline()
    lock.release()
""")


def _hold(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _acquire_in_thread(lock: locking.FlockLock, timeout: float) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run() -> None:
        try:
            lock.acquire(timeout)
            outcome["at"] = time.monotonic()
            outcome["inode"] = os.fstat(lock._fd).st_ino  # type: ignore[arg-type]
        except BaseException as exc:  # reported to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_held_lock_times_out_with_filelocks_exception(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        started = time.monotonic()
        with pytest.raises(Timeout):
            locking.FlockLock(str(path)).acquire(0.3)
        assert 0.3 <= time.monotonic() - started < 5
        # And through memhost.files.locked, as every store write takes it.
        with pytest.raises(Timeout), locked(tmp_path / "MEMORY.md", timeout=0.2):
            pass
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(10)
    lock = locking.FlockLock(str(path))
    lock.acquire(1)  # free again once the other process let go
    lock.release()


def _waiting(path: Path) -> tuple[int, locking.FlockLock, threading.Thread, dict]:
    """A lock held on ``path`` (its descriptor) and a FlockLock polling for it in a thread."""
    first = _hold(path)
    waiter = locking.FlockLock(str(path))
    thread, outcome = _acquire_in_thread(waiter, 10)
    time.sleep(0.1)  # the waiter is polling the first file
    return first, waiter, thread, outcome


def test_a_lock_file_replaced_while_waiting_is_not_a_false_lock(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md.lock"
    first, waiter, thread, outcome = _waiting(path)
    replacement = tmp_path / "new.lock"
    replacement.touch()
    os.replace(replacement, path)
    second = _hold(path)  # someone else holds the file now at the path
    os.close(first)  # the waiter gets the old file, and must see it is no longer the lock
    time.sleep(0.3)
    assert "at" not in outcome and thread.is_alive(), outcome
    released = time.monotonic()
    os.close(second)
    thread.join(10)
    assert outcome.get("at", 0) >= released, outcome
    assert outcome["inode"] == os.stat(path).st_ino
    waiter.release()


def test_a_lock_file_deleted_while_waiting_is_recreated(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md.lock"
    first, waiter, thread, outcome = _waiting(path)
    path.unlink()
    os.close(first)
    thread.join(10)
    assert "error" not in outcome and path.exists()
    assert outcome["inode"] == os.stat(path).st_ino  # it holds the file at the path
    other = os.open(path, os.O_RDWR)
    with pytest.raises(BlockingIOError):  # and it really excludes
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(other)
    waiter.release()


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("precious", encoding="utf-8")
    os.chmod(target, 0o644)
    link = tmp_path / "MEMORY.md.lock"
    link.symlink_to(target)
    with pytest.raises(OSError):
        locking.FlockLock(str(link)).acquire(1)
    assert target.read_text(encoding="utf-8") == "precious"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_loose_lock_file_is_tightened_to_0600(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md.lock"
    path.touch()
    os.chmod(path, 0o644)
    lock = locking.FlockLock(str(path))
    lock.acquire(1)
    lock.release()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_processes_on_filelock_and_on_flock_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md.lock"
    mine = locking.FlockLock(str(path))
    mine.acquire(1)
    try:
        with pytest.raises(Timeout):
            FileLock(str(path)).acquire(timeout=0.2)
    finally:
        mine.release()
    FileLock(str(path)).acquire(timeout=1)  # released: free for either


def test_without_flock_the_lock_is_filelocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locking, "fcntl", None)
    lock = locking.process_lock(str(tmp_path / "MEMORY.md.lock"))
    assert not isinstance(lock, locking.FlockLock)
    holder = _hold(tmp_path / "MEMORY.md.lock")  # filelock keeps it out all the same
    try:
        with pytest.raises(Timeout):
            lock.acquire(0.2)
    finally:
        os.close(holder)
    lock.acquire(1)
    lock.release()


def test_a_child_forked_while_the_lock_is_held_does_not_keep_it(tmp_path: Path) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    path = tmp_path / "MEMORY.md.lock"
    lock = locking.FlockLock(str(path))
    lock.acquire(1)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child sleeps holding a copy of the descriptor
        os.close(write)
        os.read(read, 1)
        os._exit(0)
    os.close(read)
    try:
        lock.release()
        other = locking.FlockLock(str(path))
        other.acquire(1)  # would time out if the child's copy still held the lock
        other.release()
    finally:
        os.close(write)
        os.waitpid(pid, 0)


def test_a_waiter_that_timed_out_lets_go_of_the_lock_it_gets_later(tmp_path: Path) -> None:
    """The blocking wait runs on a thread that outlives a timeout; when the lock comes to it,
    nobody wants it any more, and it must not keep it."""
    path = tmp_path / "MEMORY.md.lock"
    holder = _hold(path)
    with pytest.raises(Timeout):
        locking.FlockLock(str(path)).acquire(0.2)
    os.close(holder)  # the abandoned wait now gets the lock, and lets go of it
    other = locking.FlockLock(str(path))
    other.acquire(5)  # would time out if the abandoned wait still held it
    probe = os.open(path, os.O_RDWR)
    with pytest.raises(BlockingIOError):  # and the lock is really the new holder's
        fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(probe)
    other.release()


def test_a_waiter_is_handed_the_lock_by_the_kernel_not_by_a_poll(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Waiting never sleeps to poll: the waiting thread never calls time.sleep, and still gets
    a lock released by another process."""
    path = tmp_path / "MEMORY.md.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    sleepers: list[int] = []
    real_sleep = time.sleep

    def watched_sleep(seconds: float) -> None:
        sleepers.append(threading.get_ident())
        real_sleep(seconds)

    monkeypatch.setattr(locking.time, "sleep", watched_sleep)
    waiter = locking.FlockLock(str(path))
    thread, outcome = _acquire_in_thread(waiter, 10)
    real_sleep(0.2)  # the waiter is blocked in flock by now
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.close()
    holder.wait(10)
    thread.join(10)
    assert "error" not in outcome and "at" in outcome, outcome
    assert thread.ident not in sleepers
    waiter.release()


def test_waits_reuse_one_waiting_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each contended wait runs on a waiting thread; one that finished is kept and takes the
    next wait, so a stream of contended writes does not start a thread for each."""
    # Counting the threads the waits ran on, not the process's threads (other tests' threads
    # come and go while this one runs) nor the waiting threads started: one an earlier test
    # handed a wait may still be finishing it, and then it joins the idle list and takes these.
    monkeypatch.setattr(locking, "_IDLE", [])
    waits: list[int] = []
    real_run = locking._BlockingWait._run

    def counted_run(job: locking._BlockingWait) -> None:
        waits.append(threading.get_ident())
        real_run(job)

    monkeypatch.setattr(locking._BlockingWait, "_run", counted_run)
    path = tmp_path / "MEMORY.md.lock"
    for _ in range(5):
        holder = _hold(path)
        waiter = locking.FlockLock(str(path))
        thread, outcome = _acquire_in_thread(waiter, 10)
        time.sleep(0.05)  # the waiter is blocked in flock by now
        os.close(holder)
        thread.join(10)
        assert "error" not in outcome and "at" in outcome, outcome
        waiter.release()
        deadline = time.monotonic() + 5
        while not locking._IDLE and time.monotonic() < deadline:
            time.sleep(0.01)  # the waiting thread goes back to the idle list after handing over
        assert locking._IDLE, "no waiting thread was kept"
    assert len(waits) == 5  # every wait was contended
    assert len(set(waits)) == 1, waits  # and all ran on one waiting thread


def test_idle_waiting_threads_are_bounded(tmp_path: Path) -> None:
    """Many waits at once start a thread each; once they are over, at most IDLE_WAITERS stay."""
    paths = [tmp_path / f"f{i}.lock" for i in range(locking.IDLE_WAITERS + 3)]
    holders = [_hold(path) for path in paths]
    waiters = [locking.FlockLock(str(path)) for path in paths]
    runs = [_acquire_in_thread(waiter, 10) for waiter in waiters]
    time.sleep(0.1)
    for fd in holders:
        os.close(fd)
    for thread, outcome in runs:
        thread.join(10)
        assert "error" not in outcome, outcome
    for waiter in waiters:
        waiter.release()
    deadline = time.monotonic() + 5
    while len(locking._IDLE) < locking.IDLE_WAITERS and time.monotonic() < deadline:
        time.sleep(0.01)  # the waiting threads hand over, then go idle or end
    time.sleep(0.1)
    assert len(locking._IDLE) == locking.IDLE_WAITERS


def test_filelock_is_imported_when_a_lock_needs_it_not_before(tmp_path: Path) -> None:
    """memhost.locking.Timeout is filelock's class, looked up on first use: a process that reads
    memory (a session start, a listing) never imports filelock (~11 ms); one whose lock times
    out gets filelock's exception, caught where memhost catches it."""
    assert locking.Timeout is Timeout
    home = tmp_path / "home"
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from memhost.builtin_providers.provider import BuiltinProvider
        from memhost.builtin_providers.store import MemoryStore
        home = Path({str(home)!r})
        (home / "memories").mkdir(parents=True)
        (home / "memories" / "MEMORY.md").write_text("Uses make\\n§\\nLikes tea", encoding="utf-8")
        provider = BuiltinProvider(MemoryStore(home))
        provider.initialize(session_id="s", home=home, context="primary")
        assert "Likes tea" in provider.prompt_fragment()
        assert "filelock" not in sys.modules, "a session start imported filelock"
        store = MemoryStore(home)
        assert store.add("memory", "Prefers short answers").ok  # a write locks: flock, still
        assert "filelock" not in sys.modules
        from memhost.files import locked
        with locked(store.path("memory")):
            import threading
            outcome = []
            def write():
                outcome.append(MemoryStore(home, lock_timeout=0.2).add("memory", "Waits"))
            thread = threading.Thread(target=write)
            thread.start()
            thread.join()
        assert not outcome[0].ok and "locked by another process" in outcome[0].response["error"]
        assert "filelock" in sys.modules
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
