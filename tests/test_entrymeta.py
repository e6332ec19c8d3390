"""Entry metadata kept by the journal and the sidecar: corruption is loud and kept, old homes
migrate on first open.

A corrupt ``MEMORY.md.meta.json`` used to be read as empty and overwritten by the next write:
pins and review dates lost with no backup while doctor said ok. These tests reproduce that.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import MemoryStore
from cli_runner import run_memhost

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))


def _doctor(home: Path) -> tuple[int, dict]:
    assert SCRIPT
    result = run_memhost(["doctor", "--json"], env={**os.environ, "MEMHOST_HOME": str(home)})
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def _store_problems(data: dict) -> list[str]:
    section = next(s for s in data["sections"] if s["name"] == "store.memory")
    return section["problems"]


def test_a_corrupt_sidecar_is_reported_kept_and_never_overwritten(tmp_path: Path) -> None:
    from memhost.config import validate
    from memhost.home import config_path
    from memhost.manager import MemoryManager

    home = tmp_path / "home"
    store = MemoryStore(home)
    assert store.add("memory", "The deploy runs on Tuesdays").ok
    assert store.add("memory", "Staging is read-only").ok
    store.update_metadata("memory", "The deploy runs on Tuesdays", pinned=True,
                          review_after="2031-01-01")
    store.checkpoint("memory")  # the pin and the review date now live in the sidecar alone
    sidecar = entrymeta.meta_path(store.path("memory"))
    torn = sidecar.read_bytes()[: len(sidecar.read_bytes()) // 2]  # a write cut short
    sidecar.write_bytes(torn)

    # Detected: not silently empty. doctor and status() both say so.
    assert any("corrupt" in p for p in store.metadata_problems())
    code, data = _doctor(home)
    assert code == 1 and not data["ok"]
    assert any("meta.json is corrupt" in p for p in _store_problems(data)), data
    manager = MemoryManager(home, validate({}, config_path(home)))
    try:
        problems = [p["problem"] for p in manager.status()["problems"]]
    finally:
        manager.shutdown(5)
    assert any("meta.json is corrupt" in p for p in problems), problems

    # The next write keeps the corrupt bytes (moved aside, never overwritten) and says where.
    assert store.add("memory", "The wiki moved to Notion").ok
    [kept] = entrymeta.set_aside(store.path("memory"))
    assert kept.read_bytes() == torn
    assert any(str(kept) in p for p in store.metadata_problems())
    store.checkpoint("memory")  # a new sidecar is written; the kept copy is left alone
    assert json.loads(sidecar.read_text("utf-8"))["version"] == 1
    assert kept.read_bytes() == torn
    code, data = _doctor(home)
    assert code == 1 and any(str(kept) in p for p in _store_problems(data))
    # Entries never depended on it.
    assert store.entries("memory") == ["The deploy runs on Tuesdays", "Staging is read-only",
                                       "The wiki moved to Notion"]
    # Once the person has recovered what they need and deleted the copy, all is quiet again.
    kept.unlink()
    assert store.metadata_problems() == []


def test_an_unreadable_sidecar_is_reported_but_not_moved(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    store.add("memory", "alpha")
    store.checkpoint("memory")
    sidecar = entrymeta.meta_path(store.path("memory"))
    sidecar.unlink()
    sidecar.mkdir()  # cannot be read as a file: a fault to report, not corruption to set aside
    assert any("cannot be read" in p for p in store.metadata_problems())
    assert store.add("memory", "beta").ok
    assert sidecar.is_dir() and entrymeta.set_aside(store.path("memory")) == []


def test_an_existing_sidecar_and_archive_migrate_on_first_open(tmp_path: Path) -> None:
    """A home written before the journal: MEMORY.md, MEMORY.md.meta.json and archive.jsonl as
    that version left them. They are read as they are, then kept up to date."""
    folder = tmp_path / "home" / "memories"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("alpha fact\n§\nbeta fact", encoding="utf-8")
    alpha = entrymeta.entry_key("alpha fact")
    (folder / "MEMORY.md.meta.json").write_text(json.dumps({"version": 1, "entries": {
        alpha: {"created": 100.0, "updated": 100.0, "origin": "cli", "session": "",
                "pinned": True, "review_after": "2035-06-01"}}}), encoding="utf-8")
    (folder / "archive.jsonl").write_text(json.dumps({
        "id": "0badc0de", "time": 50.0, "target": "memory", "action": "remove",
        "text": "gone fact", "session": "s0", "origin": "foreground"}) + "\n", encoding="utf-8")

    store = MemoryStore(tmp_path / "home", clock=lambda: 200.0)
    assert dict(store.metadata("memory"))["alpha fact"]["pinned"] is True
    assert [(a.id, a.text) for a in store.archive.entries()] == [("0badc0de", "gone fact")]
    assert store.replace("memory", "alpha", "alpha fact, revised").ok
    record = dict(store.metadata("memory"))["alpha fact, revised"]
    assert (record["created"], record["pinned"], record["review_after"]) == (100.0, True,
                                                                              "2035-06-01")
    assert [a.text for a in store.archive.entries()] == ["gone fact", "alpha fact"]
    assert store.restore("0badc0de").ok
    store.checkpoint("memory")
    lines = [json.loads(x) for x in (folder / "archive.jsonl").read_text("utf-8").splitlines()]
    assert [x["text"] for x in lines] == ["gone fact", "alpha fact"]
    sidecar = json.loads((folder / "MEMORY.md.meta.json").read_text("utf-8"))["entries"]
    # Every entry the store wrote has its record; the one added by hand still has none.
    assert set(sidecar) == {entrymeta.entry_key(e) for e in store.entries("memory")
                            if e != "beta fact"}
    assert sidecar[entrymeta.entry_key("alpha fact, revised")]["pinned"] is True
