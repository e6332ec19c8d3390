"""snapshot: starting a session (load, scan, render both blocks of 40 entries) vs reading the files.

memhost's side is what a host pays at session start for the builtin memory: the builtin
provider's ``initialize`` (read and parse both files, score every entry and adjacent pair for injected instructions, render both
framed blocks) and ``prompt_fragment``. Two cases:

* ``warm``: the process has started a session before (a gateway, a long-lived host, a
  ``rotate(new)``), so the scan results of unchanged entries come from the per-process cache.
* ``cold``: the first session start of a fresh process (modules imported and the threat patterns
  compiled, but no entry parsed, scanned or rendered yet): each round is a new process.
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

        # Cold: a fresh process per round, so no cache of any kind survives.
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
        rows.append(Row("snapshot", "cold", m, b, cold.ratio(), "µs", cold.rounds,
                        note="first session start of a fresh process",
                        extra={"entries_per_block": ENTRIES}).judge(TARGET))
    return rows


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
