"""snapshot: starting a session (load, scan, render both blocks of 40 entries) vs reading the files.

memhost's side is what a host pays at session start for the builtin memory: the builtin
provider's ``initialize`` (read and parse both files, scan every entry for threats, render both
framed blocks) and ``prompt_fragment``. Two cases:

* ``warm``: the process has started a session before (a gateway, a long-lived host, a
  ``rotate(new)``), so the scan results of unchanged entries come from the per-process cache.
* ``cold``: the first session start of a fresh process, every entry scanned (the cache is cleared
  before each start).
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import corpus
from benchmarks.harness import Context, Row, Target, alternate, benchmark, timed

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
    from memhost.builtin_providers import snapshot as snapshot_module
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

        def start(cold: bool) -> None:
            if cold:
                snapshot_module._block_reason.cache_clear()
            provider.initialize(session_id="s", home=home, context="primary")
            text = provider.prompt_fragment()
            assert text and "m039" in text and "u039" in text

        def read_files() -> None:
            for path in files:
                path.read_bytes().decode("utf-8")

        for case in ("warm", "cold"):
            start(False)  # warm the caches and the page cache
            paired = alternate(rounds, {
                "memhost": lambda: timed(lambda: [start(case == "cold") for _ in range(reps)]) / reps * 1e6,
                "baseline": lambda: timed(lambda: [read_files() for _ in range(reps)]) / reps * 1e6,
            })
            m, b = paired.medians()
            rows.append(Row("snapshot", case, m, b, paired.ratio(), "µs", paired.rounds,
                            extra={"entries_per_block": ENTRIES}).judge(TARGET))
    return rows
