"""The durable-write primitives every stateful part of memhost uses."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from memhost.builtin_providers.store import MemoryStore
from memhost.files import atomic_write_text, locked


def test_atomic_write_replaces_whole_file_private(tmp_path: Path) -> None:
    target = tmp_path / "a" / "file.txt"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]  # no temp file left


def test_symlinked_memory_file_stays_a_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "MEMORY.md"
    real.write_text("Kept in a dotfiles repo", encoding="utf-8")
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    (home / "memories" / "MEMORY.md").symlink_to(real)

    store = MemoryStore(home)
    assert store.add("memory", "User works from two laptops").ok

    link = home / "memories" / "MEMORY.md"
    assert link.is_symlink(), "the write replaced the link with a plain file"
    assert real.read_text(encoding="utf-8") == "Kept in a dotfiles repo\n§\nUser works from two laptops"


def test_locked_lets_one_thread_of_a_process_in_at_a_time(tmp_path: Path) -> None:
    # The lock object is reused across calls and threads; it must still exclude threads.
    counter = tmp_path / "counter"
    counter.write_text("0")

    def bump() -> None:
        for _ in range(50):
            with locked(counter):
                value = int(counter.read_text())
                time.sleep(0)  # invite a switch inside the read-modify-write
                counter.write_text(str(value + 1))

    threads = [threading.Thread(target=bump) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.read_text() == "400"


def test_locked_is_not_reentrant_and_times_out(tmp_path: Path) -> None:
    path = tmp_path / "file"
    with locked(path):
        started = time.monotonic()
        with pytest.raises(Timeout), locked(path, timeout=0.1):
            pass
        assert time.monotonic() - started < 5
    usable_again(path)


def usable_again(path: Path) -> None:
    """The lock is free again and taken at once. Not with ``timeout=0``: the waiter that timed
    out still has a blocking ``flock`` queued (``flock`` cannot be cancelled), which the kernel
    grants on release and which lets go an instant later, so a try at that very instant may
    find it held, as it would find another process's hold."""
    started = time.monotonic()
    with locked(path, timeout=10):
        pass
    assert time.monotonic() - started < 2


def test_locked_waits_for_a_lock_held_through_another_lock_object(tmp_path: Path) -> None:
    path = tmp_path / "file"
    with locked(path):
        pass  # the reused lock object now exists
    with FileLock(str(path) + ".lock"):
        with pytest.raises(Timeout), locked(path, timeout=0.1):
            pass
    usable_again(path)
