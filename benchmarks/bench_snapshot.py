"""snapshot: starting a session (load, scan, render both blocks of 40 entries) vs reading the files.

memhost's side is what a host pays at session start for the builtin memory: the builtin
provider's ``initialize`` (read and parse both files, score every entry and adjacent pair for injected instructions, render both
framed blocks) and ``prompt_fragment``. Three cases:

* ``warm``: the process has started a session before (a gateway, a long-lived host, a
  ``rotate(new)``), so the scan results of unchanged entries come from the per-process cache.
* ``cold``: the first session start of a fresh process (modules imported and the threat patterns
  compiled, but no entry parsed, scanned or rendered yet): each round is a new process.
* ``cold, written by the tool``: the same, on files the memory tool wrote (one write per entry,
  then 40 notes added and removed again per file): their journals hold the records since the
  last checkpoint, and the session start checks that the file holds the newest.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks import corpus
from benchmarks.harness import (
    ROOT,
    Context,
    Paired,
    Row,
    Target,
    alternate,
    benchmark,
    child_env,
    timed,
)

ENTRIES = 40
TARGET = Target("ratio", "<=", 5.0)


def _seed(home: Path) -> None:
    from memhost.builtin_providers.entries import serialize
    from memhost.home import memories_dir

    folder = memories_dir(home)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(serialize(corpus.entries(ENTRIES, prefix="m", seed=1)),
                                      encoding="utf-8")
    (folder / "USER.md").write_text(serialize(corpus.entries(ENTRIES, prefix="u", seed=2)),
                                    encoding="utf-8")


@benchmark("snapshot", "session start: load, scan, render both 40-entry blocks vs reading the two files")
def snapshot(ctx: Context) -> list[Row]:
    from memhost.builtin_providers.provider import BuiltinProvider
    from memhost.builtin_providers.store import MemoryStore

    reps = ctx.size(20, 100)  # session starts per round (one start takes well under a millisecond)
    rounds = ctx.size(5, 15)
    rows: list[Row] = []
    with ctx.folder("snapshot") as root:
        home = root / "home"
        _seed(home)
        # Budgets large enough that 40 entries fit: the warning for an over-budget store is not
        # what is measured.
        store = MemoryStore(home, memory_char_limit=20_000, user_char_limit=20_000)
        provider = BuiltinProvider(store)
        files = [store.path("memory"), store.path("user")]

        def start() -> None:
            provider.initialize(session_id="s", home=home, context="primary")
            text = provider.prompt_fragment()
            assert text and "m039" in text and "u039" in text

        def read_files() -> None:
            for path in files:
                path.read_bytes().decode("utf-8")

        start()  # warm the caches and the page cache
        paired = alternate(rounds, {
            "memhost": lambda: timed(lambda: [start() for _ in range(reps)]) / reps * 1e6,
            "baseline": lambda: timed(lambda: [read_files() for _ in range(reps)]) / reps * 1e6,
        })
        m, b = paired.medians()
        rows.append(Row("snapshot", "warm", m, b, paired.ratio(), "µs", paired.rounds,
                        extra={"entries_per_block": ENTRIES}).judge(TARGET))

        # Cold: a fresh process per round, so no cache of any kind survives. Once on files
        # written by hand, once on files the memory tool wrote: their journals hold the records
        # of the writes since the last checkpoint, which a session start checks (journal.newest).
        used = root / "used-home"
        _seed_through_the_tool(used)
        for case, folder in (("cold", home), ("cold, written by the tool", used)):
            rows.append(_cold(case, folder, rounds))
    return rows


def _cold(case: str, home: Path, rounds: int) -> Row:
    cold = Paired({"memhost": [], "baseline": []})
    for number in range(rounds):
        done = subprocess.run([sys.executable, "-m", "benchmarks.bench_snapshot", str(home),
                               str(number % 2)], cwd=ROOT, env=child_env(),
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"cold session start failed: {done.stderr.strip()[-300:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        cold.sides["memhost"].append(figures["memhost"])
        cold.sides["baseline"].append(figures["baseline"])
    m, b = cold.medians()
    return Row("snapshot", case, m, b, cold.ratio(), "µs", cold.rounds,
               note="first session start of a fresh process",
               extra={"entries_per_block": ENTRIES}).judge(TARGET)


def _seed_through_the_tool(home: Path, churn: int = 40) -> None:
    """The same entries as :func:`_seed`, added one write at a time, then ``churn`` notes added
    and removed again per file (a store in use), and one session start, which saves the scores."""
    from memhost.builtin_providers.provider import BuiltinProvider
    from memhost.builtin_providers.store import MemoryStore

    store = MemoryStore(home, memory_char_limit=20_000, user_char_limit=20_000)
    for target, prefix, seed in (("memory", "m", 1), ("user", "u", 2)):
        for entry in corpus.entries(ENTRIES, prefix=prefix, seed=seed):
            assert store.add(target, entry).ok
        for number in range(churn):
            assert store.add(target, f"x{number:03d} A note kept for one task only.").ok
            assert store.remove(target, f"x{number:03d} A note").ok
    BuiltinProvider(store).initialize(session_id="seed", home=home, context="primary")
    store.close()


def _cold_child(home: Path, baseline_first: bool) -> dict[str, float]:
    """In a fresh process: time the first session start, and reading the two files."""
    from memhost.builtin_providers.provider import BuiltinProvider
    from memhost.builtin_providers.store import MemoryStore
    from memhost.security import scorer

    scorer.assess("warm up: compile the features on text that is not an entry")
    store = MemoryStore(home, memory_char_limit=20_000, user_char_limit=20_000)
    provider = BuiltinProvider(store)
    files = [store.path("memory"), store.path("user")]

    def reads() -> float:
        samples = []
        for _ in range(21):
            samples.append(timed(lambda: [p.read_bytes().decode("utf-8") for p in files]))
        return statistics.median(samples) * 1e6

    baseline = reads() if baseline_first else 0.0
    start = time.perf_counter()
    provider.initialize(session_id="s", home=home, context="primary")
    text = provider.prompt_fragment()
    memhost = (time.perf_counter() - start) * 1e6
    assert text and "m039" in text and "u039" in text
    if not baseline_first:
        baseline = reads()
    return {"memhost": memhost, "baseline": baseline}


if __name__ == "__main__":
    print(json.dumps(_cold_child(Path(sys.argv[1]), sys.argv[2] == "1")))
