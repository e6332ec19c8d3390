"""The durable-write primitives every stateful part of memhost uses."""

from __future__ import annotations

import os
from pathlib import Path

from memhost.builtin_providers.store import MemoryStore
from memhost.files import atomic_write_text


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
