"""A writer killed (SIGKILL) at every step boundary of add, replace, remove and a batch.

Each case starts a real process that makes one write with ``MEMHOST_CRASH_AT`` naming the step
at which it kills itself (:mod:`memhost.builtin_providers.crashpoints`), then checks, from this
process, what a crash there leaves: every write reported as saved is in the file; the killed
write is all there or not there at all (there from the moment its commit record was written);
every entry that left the file is in the archive; the metadata matches the file (pins carried
over, nothing unaccounted); no temp file outlives the next write; and the next write works. The
``checkpoint-*`` steps run with a journal too full for the killed write's record, so that write
folds the journal into the archive and the sidecar first.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from memhost.builtin_providers import entrymeta, journal
from memhost.builtin_providers.crashpoints import STEPS
from memhost.builtin_providers.store import MemoryStore
from cli_runner import run_python_code

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

PAD = " — the user asked for this to be remembered across sessions, word for word" * 2
ALPHA, BETA, GAMMA = f"alpha{PAD}", f"beta{PAD}", f"gamma{PAD}"
SMALL_JOURNAL = 4096

WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from memhost.builtin_providers.store import MemoryStore

    home, op, size = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    store = MemoryStore(home, memory_char_limit=100_000, journal_bytes=size)
    pad = sys.argv[4]
    if op == "add":
        outcome = store.add("memory", "delta" + pad)
    elif op == "replace":
        outcome = store.replace("memory", "beta", "beta revised" + pad)
    elif op == "remove":
        outcome = store.remove("memory", "gamma")
    else:
        outcome = store.apply_batch("memory", [
            {"action": "remove", "old_text": "alpha"},
            {"action": "replace", "old_text": "beta", "content": "beta revised" + pad},
            {"action": "add", "content": "delta" + pad},
        ])
    print("saved" if outcome.ok else f"refused {outcome.response}", flush=True)
""")

#: What each write changes: entries it adds, entries it takes out.
EFFECTS = {
    "add": ({f"delta{PAD}"}, set()),
    "replace": ({f"beta revised{PAD}"}, {BETA}),
    "remove": (set(), {GAMMA}),
    "batch": ({f"beta revised{PAD}", f"delta{PAD}"}, {ALPHA, BETA}),
}
COMMITTED_FROM = STEPS.index("journal-written")


def _store(home: Path, size: int) -> MemoryStore:
    return MemoryStore(home, memory_char_limit=100_000, journal_bytes=size)


def _prepare(home: Path, *, full: bool) -> None:
    size = SMALL_JOURNAL if full else 1 << 20
    store = _store(home, size)
    for entry in (ALPHA, BETA, GAMMA):
        assert store.add("memory", entry).ok
    store.update_metadata("memory", BETA, pinned=True)
    if full:
        # Fill the journal with small records until the killed write's record cannot fit.
        path = journal.path_for(store.path("memory"))
        # (A record that sets the text holds only the entries it changes: ~400 bytes here.)
        while (left := (now := journal.state(path)).size - now.end) > 300:
            store.update_metadata("memory", ALPHA, review_after="2099-01-01" if left % 2 else None)
        assert journal.state(path).gen == 1


def _kill_at(home: Path, op: str, step: str, *, full: bool) -> subprocess.CompletedProcess[str]:
    # A process of its own, forked from the command server that has imported memhost (the
    # imports were most of each case's cost), or started afresh where it cannot be.
    env = {**os.environ, "MEMHOST_CRASH_AT": step}
    return run_python_code(WRITER, str(home), op, str(SMALL_JOURNAL if full else 1 << 20), PAD,
                           env=env, timeout=60)


CASES = [(op, step) for op in EFFECTS for step in STEPS]


@pytest.mark.parametrize(("op", "step"), CASES, ids=[f"{op}-{step}" for op, step in CASES])
def test_a_writer_killed_at_each_step_loses_nothing(tmp_path: Path, op: str, step: str) -> None:
    full = step.startswith("checkpoint-")
    home = tmp_path / "home"
    _prepare(home, full=full)
    result = _kill_at(home, op, step, full=full)
    assert result.returncode == -signal.SIGKILL, (result.stdout, result.stderr)
    assert "saved" not in result.stdout  # killed before it could answer

    store = _store(home, SMALL_JOURNAL if full else 1 << 20)
    # The next write works (and finishes the killed one if that one was committed).
    assert store.add("memory", "after the crash").ok, step
    entries = store.entries("memory")
    archived = [a.text for a in store.archive.entries()]
    added, taken = EFFECTS[op]
    committed = STEPS.index(step) >= COMMITTED_FROM
    if committed:
        assert added <= set(entries) and not taken & set(entries), (step, entries)
        assert taken <= set(archived), (step, archived)
    else:
        assert not added & set(entries), (step, entries)
        assert {ALPHA, BETA, GAMMA} <= set(entries), (step, entries)
    # Whatever happened: every entry ever reported saved is in the file or the archive.
    for entry in (ALPHA, BETA, GAMMA, "after the crash"):
        assert entry in entries or entry in archived, (step, entry)
    assert len(archived) == len(set(archived)), "an archived entry is listed twice"

    # Metadata matches the file: every entry has its record, the pin went where beta went.
    meta = dict(store.metadata("memory"))
    assert all(entrymeta.written_by_store(record) for record in meta.values()), meta
    pinned = [text for text, record in meta.items() if record.get("pinned")]
    assert pinned == [BETA if BETA in entries else f"beta revised{PAD}"], (step, pinned)
    assert store.metadata_problems() == []

    # Nothing half-written is left behind once the store is closed (the file the last write
    # swapped out, kept for the next one, goes too), and a checkpoint folds it all in.
    store.close()
    assert not [p for p in store.folder.iterdir() if p.name.endswith(".tmp")]
    store.checkpoint("memory")
    lines = (store.folder / "archive.jsonl").read_text("utf-8").splitlines() \
        if (store.folder / "archive.jsonl").exists() else []
    assert {json.loads(line)["text"] for line in lines} == set(archived)
    sidecar = json.loads(entrymeta.meta_path(store.path("memory")).read_text("utf-8"))
    assert set(sidecar["entries"]) == {entrymeta.entry_key(e) for e in store.entries("memory")}
    assert dict(store.metadata("memory")) == meta


def test_every_step_is_reached_by_a_write_that_checkpoints(tmp_path: Path) -> None:
    """The fault points are real: a write with a full journal passes each one, in order."""
    home = tmp_path / "home"
    _prepare(home, full=True)
    seen = []
    from memhost.builtin_providers import crashpoints

    original = crashpoints.reached
    crashpoints.reached = seen.append  # type: ignore[assignment]
    try:
        import memhost.builtin_providers.commit as commit_module
        import memhost.builtin_providers.store as store_module

        for module in (commit_module, store_module):
            assert module.crashpoints is crashpoints
        assert _store(home, SMALL_JOURNAL).add("memory", f"delta{PAD}").ok
    finally:
        crashpoints.reached = original  # type: ignore[assignment]
    assert seen == list(STEPS)
