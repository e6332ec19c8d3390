"""The temp file a write's text goes to, made before the write takes the lock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memhost.builtin_providers.commit import StoreFile
from memhost.builtin_providers.store import MemoryStore
from memhost.builtin_providers.tempfiles import Prepared, temp_file


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_prepared_file_is_taken_where_the_write_needs_it(tmp_path: Path) -> None:
    folder = os.fspath(tmp_path)
    prepared = Prepared(*temp_file(folder, ".MEMORY.md."))
    taken = prepared.take(folder, ".MEMORY.md.")
    assert taken is not None and os.fstat(taken[0]).st_nlink == 1
    assert taken[2] == 0  # a new file: nothing in it to write over
    assert prepared.discard() is None  # taken: the commit owns it now
    assert os.path.exists(taken[1])
    os.close(taken[0])


@pytest.mark.parametrize("change", ["swept", "elsewhere"])
def test_a_prepared_file_that_is_gone_or_elsewhere_is_not_taken(tmp_path: Path,
                                                                 change: str) -> None:
    folder = os.fspath(tmp_path)
    prepared = Prepared(*temp_file(folder, ".MEMORY.md."))
    if change == "swept":  # another process's sweep under the lock deleted it by its name
        os.unlink(prepared.name)
        assert prepared.take(folder, ".MEMORY.md.") is None
    else:  # the memory file became a link to another folder while the write waited
        assert prepared.take(os.fspath(tmp_path / "dotfiles"), ".MEMORY.md.") is None
    assert _temps(tmp_path) == []


def test_a_write_whose_prepared_file_was_swept_makes_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    real = StoreFile.prepare

    def swept_while_waiting(self: StoreFile) -> Prepared:
        prepared = real(self)
        os.unlink(prepared.name)
        return prepared

    monkeypatch.setattr(StoreFile, "prepare", swept_while_waiting)
    assert store.add("memory", "beta").ok
    assert store.add("memory", "gamma").ok  # its prepared file is the one the last swap left
    assert store.entries("memory") == ["alpha", "beta", "gamma"]
    store.close()
    assert _temps(store.folder) == []


def test_a_write_that_changes_nothing_leaves_no_temp_file(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    assert store.add("memory", "alpha").ok
    assert store.add("memory", "alpha").ok  # already saved: nothing is written
    assert not store.replace("memory", "no such entry", "x").ok
    assert _temps(store.folder) == []


def test_a_first_write_in_a_new_home_makes_its_temp_file_under_the_lock(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")  # no folder yet: nothing can be made before the lock
    assert store._files["memory"].prepare().fd == -1
    assert store.add("memory", "alpha").ok and _temps(store.folder) == []
