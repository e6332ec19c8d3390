"""What becomes of the file a write replaces (memhost.builtin_providers.replacing).

Where the platform can swap two names (Linux ``renameat2``), the write swaps its temp file with
the memory file and the next write writes over the file that was swapped out, so writes
allocate and free nothing; a reader never sees a file written over under it, and a file with
another link is never written over. Where it renames, the replaced file is held open across the
rename and closed once the lock is let go.
"""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from descriptors import needs_proc, open_files_under
from memhost.builtin_providers import commit, replacing
from memhost.builtin_providers.commit import StoreFile
from memhost.builtin_providers.entries import parse
from memhost.builtin_providers.store import MemoryStore

WRITES = {
    "add": lambda store: store.add("memory", "gamma"),
    "replace": lambda store: store.replace("memory", "alpha", "alpha two"),
    "remove": lambda store: store.remove("memory", "beta"),
    "batch": lambda store: store.apply_batch("memory", [
        {"action": "remove", "old_text": "alpha"},
        {"action": "add", "content": "delta"}]),
}

swaps = pytest.mark.skipif(not replacing.available(), reason="no renameat2 in this C library")


def _store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "home")
    assert store.apply_batch("memory", [{"action": "add", "content": "alpha"},
                                        {"action": "add", "content": "beta"}]).ok
    return store


def _kept(store: MemoryStore) -> list[Path]:
    return sorted(store.folder.glob(".MEMORY.md.*.tmp"))


@pytest.fixture
def renames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes rename, as where the platform or the filesystem cannot swap."""
    monkeypatch.setattr(commit, "swap", lambda first, second: False)


# -- swapped --------------------------------------------------------------------------------


@swaps
def test_writes_swap_two_files_back_and_forth(tmp_path: Path) -> None:
    store = _store(tmp_path)
    seen = set()
    for number in range(12):
        assert store.add("memory", f"entry {number}").ok
        [kept] = _kept(store)  # the file the write swapped out, and nothing else
        seen |= {os.stat(store.path("memory")).st_ino, kept.stat().st_ino}
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert len(seen) == 2  # the same two files all along: nothing made, nothing freed
    assert store.entries("memory") == ["alpha", "beta", *(f"entry {n}" for n in range(12))]
    store.close()
    assert _kept(store) == []


@swaps
def test_a_file_a_reader_holds_is_not_written_over(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.add("memory", "gamma").ok
    before = store.path("memory").read_bytes()
    reader = os.open(store.path("memory"), os.O_RDONLY)
    try:
        fcntl.flock(reader, fcntl.LOCK_SH)  # as memhost's readers hold it while they read
        for number in range(4):  # the first swaps it out; the next ones would write over it
            assert store.add("memory", f"later {number}").ok
        assert os.pread(reader, 1 << 16, 0) == before  # unchanged under the reader
        assert os.fstat(reader).st_nlink == 0  # let go of by the writer, left to the reader
    finally:
        os.close(reader)
    assert store.entries("memory")[-4:] == [f"later {n}" for n in range(4)]


@swaps
def test_a_file_with_another_link_is_never_written_over(tmp_path: Path) -> None:
    store = _store(tmp_path)
    backup = tmp_path / "MEMORY.md.backup"
    os.link(store.path("memory"), backup)  # a backup made with ln
    saved = backup.read_bytes()
    for number in range(3):
        assert store.add("memory", f"entry {number}").ok
    assert backup.read_bytes() == saved and backup.stat().st_nlink == 1


@swaps
def test_a_reused_file_becomes_private_again(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.path("memory").chmod(0o644)  # loosened by hand
    for number in range(3):  # swapped out, then written over and swapped back in
        assert store.add("memory", f"entry {number}").ok
        assert stat.S_IMODE(store.path("memory").stat().st_mode) == 0o600


@swaps
def test_readers_never_see_a_file_written_over_under_them(tmp_path: Path) -> None:
    """Another process writes as fast as it can while this one reads the file without the
    lock: every text read is one the writer committed, whole."""
    store = _store(tmp_path)
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from pathlib import Path
        from memhost.builtin_providers.store import MemoryStore
        store = MemoryStore(Path({str(store.home)!r}), memory_char_limit=10**7)
        for number in range(400):
            text = f"entry {{number}} " + "padding " * (number % 7 * 40)
            assert store.add("memory", text).ok
            if number % 3 == 0:
                assert store.remove("memory", text).ok
    """)])
    reads = 0
    try:
        while writer.poll() is None:
            raw = store.read_raw("memory")
            entries = parse(raw)
            assert entries[:2] == ["alpha", "beta"], raw[:200]
            for entry in entries[2:]:  # each whole, as the writer wrote it
                number = int(entry.split(" ")[1])
                assert entry == (f"entry {number} " + "padding " * (number % 7 * 40)).strip()
            reads += 1
    finally:
        writer.wait(60)
    assert writer.returncode == 0 and reads > 10


@swaps
def test_a_power_cut_that_kept_the_swap_but_not_the_data_is_put_right(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.add("memory", "gamma").ok
    assert store.add("memory", "delta").ok  # written over the file the last write swapped out
    path = store.path("memory")
    found = path.stat()
    committed = path.read_bytes()
    # What a power cut can leave: the swap and the file's size and times are on disk (the
    # filesystem's journal), the written-over bytes are not (they were older text).
    path.write_bytes(b"x" * len(committed))
    os.utime(path, ns=(found.st_atime_ns, found.st_mtime_ns))
    fresh = MemoryStore(store.home)
    assert fresh.add("memory", "after the power cut").ok
    assert fresh.entries("memory") == ["alpha", "beta", "gamma", "delta", "after the power cut"]


@swaps
def test_an_edit_in_place_after_a_write_stands(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.add("memory", "gamma").ok
    assert store.add("memory", "delta").ok
    path = store.path("memory")
    with open(path, "a", encoding="utf-8") as handle:  # the same file, its time moved on
        handle.write("\n§\nadded by hand")
    fresh = MemoryStore(store.home)
    assert fresh.add("memory", "after the edit").ok
    assert fresh.entries("memory")[-2:] == ["added by hand", "after the edit"]


@swaps
def test_a_process_that_ends_leaves_no_file_behind(tmp_path: Path) -> None:
    home = tmp_path / "home"
    subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from pathlib import Path
        from memhost.builtin_providers.store import MemoryStore
        store = MemoryStore(Path({str(home)!r}))
        for text in ("alpha", "beta", "gamma"):
            assert store.add("memory", text).ok
        assert list(store.folder.glob(".MEMORY.md.*.tmp"))  # kept until the end
    """)], check=True)
    assert sorted(p.name for p in (home / "memories").iterdir() if p.name.endswith(".tmp")) == []


@swaps
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_neither_reuses_nor_removes_its_parents_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.add("memory", "gamma").ok
    [kept] = _kept(store)
    pid = os.fork()
    if pid == 0:  # the child writes, then ends as a process does
        code = 0 if store.add("memory", "from the child").ok else 1
        os._exit(code if kept.exists() else 2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert kept.exists()  # the child's exit did not remove the parent's
    assert store.add("memory", "from the parent").ok
    assert store.entries("memory")[-2:] == ["from the child", "from the parent"]


@swaps
def test_a_write_that_changes_nothing_keeps_the_file_for_the_next(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.add("memory", "gamma").ok
    [kept] = _kept(store)
    assert store.add("memory", "gamma").ok  # already saved: nothing written
    assert _kept(store) == [kept]
    inode = kept.stat().st_ino
    assert store.add("memory", "delta").ok
    assert store.path("memory").stat().st_ino == inode  # written over and swapped back in


# -- renamed --------------------------------------------------------------------------------


def _lock_is_free(store: MemoryStore) -> bool:
    fd = os.open(f"{store.path('memory')}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another open file: our own lock counts
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # releases the probe's lock, if it got it
    return True


@pytest.mark.usefixtures("renames")
@pytest.mark.skipif(os.name != "posix",
                    reason="held open only where a rename may replace an open file")
@pytest.mark.parametrize("write", list(WRITES))
def test_a_renamed_over_file_is_held_across_the_rename_and_let_go_after_the_lock(
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
    assert _kept(store) == []  # renamed: nothing kept for the next write


@needs_proc
@pytest.mark.parametrize("how", ["swap", "rename"])
@pytest.mark.parametrize("write", list(WRITES))
def test_no_replaced_file_stays_open_after_a_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str, how: str) -> None:
    if how == "rename":
        monkeypatch.setattr(commit, "swap", lambda first, second: False)
    store = _store(tmp_path)
    assert WRITES[write](store).ok
    # Only what is open under this test's folder: the process's whole table also holds what
    # other tests' threads and garbage open and close meanwhile.
    held = [p for p in open_files_under(tmp_path) if not p.endswith(".journal")]
    assert held == []


@needs_proc
@pytest.mark.parametrize("how", ["swap", "rename"])
def test_a_replacement_that_fails_leaves_nothing_open_and_the_file_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    store = _store(tmp_path)
    assert store.add("memory", "gamma").ok and store.remove("memory", "gamma").ok
    before = sorted(open_files_under(tmp_path))  # the journal; see the test above

    def refused(*args: Any) -> None:
        raise PermissionError(13, "Permission denied", os.fspath(args[-1]))

    monkeypatch.setattr(commit, "swap", refused if how == "swap" else lambda a, b: False)
    monkeypatch.setattr(commit.os, "replace", refused)
    outcome = store.add("memory", "delta")
    monkeypatch.undo()
    assert not outcome.ok and "Nothing was changed" in outcome.response["error"]
    assert store.entries("memory") == ["alpha", "beta"]
    assert sorted(open_files_under(tmp_path)) == before
    assert store.add("memory", "delta").ok  # and the next write works
    assert store.entries("memory") == ["alpha", "beta", "delta"]


def test_swap_answers_false_where_it_cannot_and_raises_for_a_missing_file(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.write_text("one")
    if not replacing.available():
        assert replacing.swap(os.fspath(first), os.fspath(second)) is False
        return
    with pytest.raises(FileNotFoundError):
        replacing.swap(os.fspath(first), os.fspath(second))
    second.write_text("two")
    assert replacing.swap(os.fspath(first), os.fspath(second)) is True
    assert (first.read_text(), second.read_text()) == ("two", "one")


# -- reading without the lock -----------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="flock")
def test_a_read_waits_while_the_file_it_opened_is_written_over(tmp_path: Path) -> None:
    """A writer writing over a file holds it exclusively: a reader that opened that file reads
    it before or after, never in between (here the file stays at its path, so after)."""
    import threading

    from memhost.files import read_current

    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"old text")
    writer = os.open(path, os.O_RDWR)
    fcntl.flock(writer, fcntl.LOCK_EX)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(read_current(path)[0]))
    reader.start()
    reader.join(0.3)
    assert reader.is_alive() and got == []  # waiting for the writer
    os.pwrite(writer, b"new text, longer", 0)
    fcntl.flock(writer, fcntl.LOCK_UN)
    os.close(writer)
    reader.join(5)
    assert got == [b"new text, longer"]


def test_a_read_of_a_file_no_longer_at_its_path_is_made_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file a reader opened was swapped out before it read it: what it read is not the
    file at the path, so it reads again."""
    from memhost import files

    path, old = tmp_path / "MEMORY.md", tmp_path / ".MEMORY.md.spare.tmp"
    path.write_bytes(b"current text")
    old.write_bytes(b"text of a file swapped out")
    real_open, opened = os.open, []

    def open_swapped_out_first(name: Any, flags: int, *args: Any) -> int:
        opened.append(name)
        return real_open(old if len(opened) == 1 else name, flags, *args)

    monkeypatch.setattr(files.os, "open", open_swapped_out_first)
    assert files.read_current(path)[0] == b"current text"
    assert len(opened) == 2
