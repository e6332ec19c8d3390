"""The durable-write primitives every stateful part of memhost uses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

from memhost.builtin_providers.store import MemoryStore
from memhost.files import atomic_write_text, locked, sweep_orphaned_temp_files, writer_id
from memhost.outbox import Outbox


def test_atomic_write_replaces_whole_file_private(tmp_path: Path) -> None:
    target = tmp_path / "a" / "file.txt"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]  # no temp file left


# A writer killed between writing its temp file and renaming it over the target.
KILLED_MID_WRITE = """
import os, signal, sys
from pathlib import Path
from memhost import files
files.os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
files.atomic_write_text(Path(sys.argv[1]), "the write that never landed")
"""


def _killed_mid_write(target: Path) -> Path:
    writer = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE, str(target)])
    assert writer.wait(timeout=60) == -signal.SIGKILL
    [temp] = [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    assert temp.name.startswith(f".{target.name}.{writer.pid}-")  # the name says whose it is
    return temp


def test_the_next_write_removes_what_a_killed_writer_left(tmp_path: Path) -> None:
    target = tmp_path / "state" / "health.json"
    atomic_write_text(target, "before")
    orphan = _killed_mid_write(target)
    alive = target.parent / f".{target.name}.{writer_id()}.inflight.tmp"  # this process: alive
    alive.write_text("a write in progress")
    unnamed = target.parent / f".{target.name}.nopid.tmp"  # no pid: nobody can tell, so kept
    unnamed.write_text("?")
    here = writer_id().partition("-")[2]
    other = target.parent / f".other.json.999999999-{here}.x.tmp"  # another file's, writer gone
    other.write_text("?")
    # A pid taken on another machine or in another container means nothing here: kept.
    elsewhere = target.parent / f".{target.name}.999999999-0badf00d.x.tmp"
    elsewhere.write_text("a write in progress elsewhere")

    assert target.read_text() == "before"
    atomic_write_text(target, "after")
    assert target.read_text() == "after"
    assert not orphan.exists() and not other.exists()
    assert alive.exists() and unnamed.exists() and elsewhere.exists()
    assert sweep_orphaned_temp_files(target.parent) == 0


def test_a_host_starting_clears_what_a_killed_host_left_in_its_outbox(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "home", "ext")
    record = outbox.folder / "health.json"
    orphan = _killed_mid_write(record)
    parked = _killed_mid_write(outbox.folder / "failed" / "0badf00d.json")
    assert outbox.claim_orphans() == []
    assert not orphan.exists() and not record.exists() and not parked.exists()


def test_a_memory_write_clears_what_a_killed_writer_left_beside_the_store(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "First fact.").ok
    history = _killed_mid_write(store.folder / "usage-history.json")  # written once a day
    alive = store.folder / f".usage-history.json.{writer_id()}.inflight.tmp"
    alive.write_text("a write in progress")
    # Swept by a store's first write (here a later process's), then after each checkpoint.
    assert MemoryStore(tmp_path / "home").add("memory", "Second fact.").ok
    assert not history.exists() and alive.exists()


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
    # The temp file made beside the link before the lock was not the one the text went to.
    assert not list((home / "memories").glob("*.tmp")) and not list(dotfiles.glob("*.tmp"))


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


def test_on_windows_no_temp_file_is_judged_by_its_pid(monkeypatch: pytest.MonkeyPatch) -> None:
    # There os.kill(pid, 0) does not ask whether a process runs: it ends it.
    from memhost import files

    name = f".health.json.999999999-{writer_id().partition('-')[2]}.x.tmp"
    assert files.temp_writer_gone(name)
    monkeypatch.setattr(files.os, "name", "nt")
    monkeypatch.setattr(files.os, "kill", lambda *args: pytest.fail("os.kill was called"))
    assert not files.temp_writer_gone(name)


def test_a_temp_file_names_whether_its_writer_runs() -> None:
    from memhost import files

    here = writer_id().partition("-")[2]
    ours = f".MEMORY.md.{os.getpid()}-{here}.ab12.tmp"  # this process keeps it
    dead = f".MEMORY.md.999999999-{here}.ab12.tmp"
    elsewhere = f".MEMORY.md.{os.getpid()}-another-machine.ab12.tmp"
    unnamed = ".MEMORY.md.ab12cd34ef.tmp"
    assert files.temp_writer_alive(ours) and not files.temp_writer_gone(ours)
    assert files.temp_writer_gone(dead) and not files.temp_writer_alive(dead)
    for name in (elsewhere, unnamed):  # nothing can be said of these
        assert not files.temp_writer_alive(name) and not files.temp_writer_gone(name)


def test_a_json_document_holding_half_a_character_reads_back_exactly(tmp_path: Path) -> None:
    import json

    from memhost.files import atomic_write_json

    data = {"text": "fine \udcff reply", "plain": "ünïcode"}
    atomic_write_json(tmp_path / "doc.json", data)
    assert json.loads((tmp_path / "doc.json").read_text(encoding="ascii")) == data
    atomic_write_json(tmp_path / "plain.json", {"plain": "ünïcode"})
    assert "ünïcode" in (tmp_path / "plain.json").read_text(encoding="utf-8")  # kept readable
