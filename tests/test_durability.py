"""Durability with real processes and real files: concurrent writers and writers killed mid-write.

Each test starts fresh Python processes that use the store exactly as a host would; nothing is
mocked. Writers talk back over stdout, one flushed line per committed write.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.entries import drift_reason, parse
from memhost.builtin_providers.store import MemoryStore

LIMIT = 10_000_000

CONCURRENT_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from memhost.builtin_providers.store import MemoryStore

    home, worker, count, go = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    store = MemoryStore(home, memory_char_limit=int(sys.argv[5]), lock_timeout=120)
    deadline = time.monotonic() + 60
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.002)
    for i in range(count):
        outcome = store.add("memory", f"worker {worker} entry {i}")
        if not outcome.ok:
            sys.exit(f"add failed: {outcome.response}")
""")

KILLED_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from memhost.builtin_providers.store import MemoryStore

    home, run = Path(sys.argv[1]), int(sys.argv[2])
    store = MemoryStore(home, memory_char_limit=int(sys.argv[3]))
    print("ready", flush=True)
    padding = "lorem ipsum dolor sit amet " * 12
    i = 0
    while True:
        if i % 4 == 3:  # a replace also writes the archive and the metadata sidecar
            store.add("memory", f"scratch {run}")
            outcome = store.replace("memory", f"scratch {run}", f"scratch {run} v{i}")
        else:
            entry = f"run {run} entry {i} {padding}"
            outcome = store.add("memory", entry)
            if outcome.ok:
                print(f"committed {i}", flush=True)
        i += 1
""")


def _spawn(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _temp_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_concurrent_adds_from_eight_processes_lose_nothing(tmp_path: Path) -> None:
    home, go = tmp_path / "home", tmp_path / "go"
    workers, per_worker = 8, 50
    procs = [_spawn(CONCURRENT_WRITER, home, w, per_worker, go, LIMIT) for w in range(workers)]
    time.sleep(0.3)  # let them all import and wait on the start line, for maximum contention
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err

    store = MemoryStore(home, memory_char_limit=LIMIT)
    raw = store.read_raw("memory")
    assert drift_reason(raw, LIMIT) is None
    entries = parse(raw)
    expected = {f"worker {w} entry {i}" for w in range(workers) for i in range(per_worker)}
    assert len(entries) == workers * per_worker and set(entries) == expected
    for w in range(workers):  # each writer's own entries stay in the order it added them
        mine = [e for e in entries if e.startswith(f"worker {w} ")]
        assert mine == [f"worker {w} entry {i}" for i in range(per_worker)]
    assert all(meta.get("created") for _, meta in store.metadata("memory"))
    assert _temp_files(home / "memories") == []


@pytest.mark.slow
def test_writer_killed_at_random_moments_never_tears_the_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    committed: set[str] = set()
    padding = "lorem ipsum dolor sit amet " * 12
    for run in range(20):
        proc = _spawn(KILLED_WRITER, home, run, LIMIT)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()  # type: ignore[union-attr]
        first = proc.stdout.readline()  # the writer is in its loop: kill it somewhere in there
        time.sleep(rng.uniform(0.0, 0.1))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        committed |= {f"run {run} entry {line.split()[1]} {padding}".strip()
                      for line in (first + out).splitlines() if line.startswith("committed ")}

        path = home / "memories" / "MEMORY.md"
        raw = path.read_bytes().decode("utf-8")  # strict: a torn multi-byte write would fail
        context = f"run {run}, seed {seed}"
        assert drift_reason(raw, LIMIT) is None, context
        entries = parse(raw)
        missing = committed - set(entries)
        assert not missing, f"{context}: lost {sorted(missing)[:3]}"
        for entry in entries:
            assert entry.startswith(("run ", "scratch ")), f"{context}: foreign text {entry[:60]!r}"
        # The sidecar and the archive are written atomically / appended whole, never torn.
        meta_file = entrymeta.meta_path(path)
        if meta_file.exists():
            assert isinstance(json.loads(meta_file.read_text("utf-8")), dict), context
        archive = home / "memories" / "archive.jsonl"
        if archive.exists():
            for line in archive.read_text("utf-8").splitlines():
                assert json.loads(line)["text"].startswith("scratch "), context

    assert len(committed) >= 20
    # The store is fully usable afterwards: the lock was released with the dead process.
    store = MemoryStore(home, memory_char_limit=LIMIT, lock_timeout=5)
    assert store.add("memory", "after the crashes").ok
    assert store.remove("memory", "after the crashes").ok
    assert store.archive.entries()
    store.close()  # and with it the file its last write kept for the next one
    assert _temp_files(home / "memories") == []  # what killed writers left behind is swept


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs POSIX processes")
def test_concurrent_replace_and_remove_archive_every_loss(tmp_path: Path) -> None:
    """Writers that replace and remove each other's entries: nothing vanishes unarchived."""
    home, go = tmp_path / "home", tmp_path / "go"
    seed_store = MemoryStore(home, memory_char_limit=LIMIT)
    for i in range(40):
        assert seed_store.add("memory", f"shared entry {i}").ok
    script = textwrap.dedent("""
        import sys, time
        from pathlib import Path
        from memhost.builtin_providers.store import MemoryStore
        home, worker, go = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
        store = MemoryStore(home, memory_char_limit=10_000_000, lock_timeout=120)
        while not go.exists():
            time.sleep(0.002)
        for i in range(worker, 40, 4):
            if i % 2:
                store.remove("memory", f"shared entry {i}")
            else:
                store.replace("memory", f"shared entry {i}", f"rewritten {i} by {worker}")
    """)
    procs = [_spawn(script, home, w, go) for w in range(4)]
    time.sleep(0.3)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    entries = MemoryStore(home, memory_char_limit=LIMIT).entries("memory")
    archived = {r.text for r in seed_store.archive.entries()}
    assert sorted(entries) == sorted(f"rewritten {i} by {i % 4}" for i in range(0, 40, 2))
    assert archived == {f"shared entry {i}" for i in range(40)}
    assert _temp_files(home / "memories") == []


def test_threads_of_one_process_writing_and_reading_at_once_lose_nothing(tmp_path: Path) -> None:
    """Writer threads share one store, others open their own on the same home, and reader
    threads list, render and read the metadata meanwhile: every entry is saved once, and the
    journal this process followed is the one a new process reads."""
    import threading

    from memhost.builtin_providers import journal

    home = tmp_path / "home"
    shared = MemoryStore(home, memory_char_limit=LIMIT)
    errors: list[BaseException] = []
    writing = threading.Event()

    def guarded(work: Any) -> Any:
        def run() -> None:
            try:
                work()
            except BaseException as exc:  # noqa: BLE001 - reported by the test below
                errors.append(exc)
        return run

    def writer(number: int, store: MemoryStore) -> None:
        for i in range(25):
            outcome = store.add("memory", f"thread {number} entry {i}")
            assert outcome.ok, outcome.response

    def reader() -> None:
        own = MemoryStore(home, memory_char_limit=LIMIT)
        while writing.is_set():
            entries = own.entries("memory")
            assert len(entries) == len(set(entries))
            own.snapshot()
            own.metadata("memory")

    writers = [threading.Thread(target=guarded(lambda n=n: writer(
        n, shared if n % 2 else MemoryStore(home, memory_char_limit=LIMIT)))) for n in range(6)]
    readers = [threading.Thread(target=guarded(reader)) for _ in range(2)]
    writing.set()
    for thread in [*readers, *writers]:
        thread.start()
    for thread in writers:
        thread.join(120)
    writing.clear()
    for thread in readers:
        thread.join(120)
    assert errors == []
    expected = {f"thread {n} entry {i}" for n in range(6) for i in range(25)}
    assert set(shared.entries("memory")) == expected
    path = journal.path_for(shared.path("memory"))
    seen = journal.state(path)
    journal.forget(path)
    fresh = journal.state(path)
    assert (seen.records, seen.end) == (fresh.records, fresh.end)
    assert fresh.committed.text() in (None, shared.path("memory").read_text("utf-8"))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from pathlib import Path
        from memhost.builtin_providers.store import MemoryStore
        print(len(MemoryStore(Path({str(home)!r})).entries("memory")))
    """)], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == str(len(expected))
