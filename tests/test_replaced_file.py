"""The file a write replaces is held open across the rename and closed once the lock is let go,
so the kernel's freeing of its blocks happens outside the lock (commit._hold, StoreFile.let_go)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from memhost.builtin_providers import commit
from memhost.builtin_providers.commit import StoreFile
from memhost.builtin_providers.store import MemoryStore

WRITES = {
    "add": lambda store: store.add("memory", "gamma"),
    "replace": lambda store: store.replace("memory", "alpha", "alpha two"),
    "remove": lambda store: store.remove("memory", "beta"),
    "batch": lambda store: store.apply_batch("memory", [
        {"action": "remove", "old_text": "alpha"},
        {"action": "add", "content": "delta"}]),
}


def _store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "home")
    assert store.apply_batch("memory", [{"action": "add", "content": "alpha"},
                                        {"action": "add", "content": "beta"}]).ok
    return store


def _lock_is_free(store: MemoryStore) -> bool:
    fd = os.open(f"{store.path('memory')}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another open file: our own lock counts
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # releases the probe's lock, if it got it
    return True


@pytest.mark.skipif(os.name != "posix", reason="held open only where a rename may replace an open file")
@pytest.mark.parametrize("write", list(WRITES))
def test_the_replaced_file_is_held_across_the_rename_and_let_go_after_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str) -> None:
    store = _store(tmp_path)
    replaced_inode = os.stat(store.path("memory")).st_ino
    seen: list[dict[str, Any]] = []
    real_let_go = StoreFile.let_go

    def watched(self: StoreFile) -> None:
        held = [os.fstat(fd) for fd in self._replaced if fd >= 0]
        seen.append({"lock_free": _lock_is_free(store), "held": held})
        real_let_go(self)
        assert self._replaced == []

    monkeypatch.setattr(StoreFile, "let_go", watched)
    outcome = WRITES[write](store)
    assert outcome.ok, outcome.response
    [call] = [s for s in seen if s["held"]]
    assert call["lock_free"], "the replaced file was let go while the lock was still held"
    [held] = call["held"]
    # The very file the write replaced, kept alive by the descriptor alone until it is closed.
    assert held.st_ino == replaced_inode and held.st_nlink == 0
    assert os.stat(store.path("memory")).st_ino != replaced_inode


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists descriptors via /proc")
@pytest.mark.parametrize("write", list(WRITES))
def test_no_replaced_file_stays_open_after_a_write(tmp_path: Path, write: str) -> None:
    store = _store(tmp_path)
    assert WRITES[write](store).ok
    assert _deleted_files_open_under(store.folder) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists descriptors via /proc")
def test_a_rename_that_fails_leaves_nothing_open_and_the_file_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path)
    before = sorted(os.listdir("/proc/self/fd"))

    def refused(src: Any, dst: Any) -> None:
        raise PermissionError(13, "Permission denied", os.fspath(dst))

    monkeypatch.setattr(commit.os, "replace", refused)
    outcome = store.add("memory", "gamma")
    monkeypatch.undo()
    assert not outcome.ok and "Nothing was changed" in outcome.response["error"]
    assert store.entries("memory") == ["alpha", "beta"]
    assert sorted(os.listdir("/proc/self/fd")) == before
    assert store.add("memory", "gamma").ok  # and the next write works
    assert store.entries("memory") == ["alpha", "beta", "gamma"]


def _deleted_files_open_under(folder: Path) -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, already closed
            continue
        if target.startswith(os.fspath(folder)) and target.endswith("(deleted)"):
            found.append(target)
    return found
