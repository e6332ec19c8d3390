"""store_add, store_replace, store_batch: builtin store writes against the bare durable edit,
with the reference system's store design run beside them (reference_store); store_scale: an add
at 300 entries against an add at 40.

Every side starts every block from the same 40-entry file (reset, untimed, before each block) so
the figures are steady-state ones, not those of a file that grows through the run. memhost goes
through :class:`MemoryStore` exactly as the ``memory`` tool does: lock, checked read, drift
guard, the edit, one durable commit (the journal record carrying the new text, the archive
records of replaced or removed entries and the metadata), the atomic replace of the file. The
reference side is :class:`benchmarks.reference_store.ReferenceStore`. A fifth side makes the same
writes through a screen that refuses nothing without reading the text: the row's note gives its
ratio, what the write path costs apart from the refusal check of the new text.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path

from benchmarks import bare, corpus
from benchmarks.harness import Context, Row, Target, alternate, benchmark, timed
from benchmarks.reference_store import ReferenceStore

SEED_ENTRIES = 40
LARGE_SEED = 300
LIMIT = 1_000_000  # the budget is not what is measured here
TARGET = Target("ratio", ">=", 0.75)
#: memhost's store against the reference design: at least as fast, with its guarantees.
REFERENCE_TARGET = Target("ratio", ">=", 1.0)
#: An add at 300 entries costs at most this many times an add at 40.
SCALE_TARGET = Target("ratio", "<=", 1.2)


class _Fixture:
    """A memhost home, a bare file and a reference store holding the same seed entries,
    resettable between blocks."""

    def __init__(self, root: Path, seed_entries: int = SEED_ENTRIES) -> None:
        from memhost.builtin_providers.store import MemoryStore

        self.seed = corpus.entries(seed_entries, prefix="n")
        self.store = MemoryStore(root / "home", memory_char_limit=LIMIT)
        outcome = self.store.apply_batch("memory", [{"action": "add", "content": e} for e in self.seed])
        assert outcome.ok, outcome.response
        folder = self.store.folder
        self.saved = {p.name: p.read_bytes() for p in folder.iterdir()
                      if p.is_file() and not p.name.endswith(".lock")}
        self.bare_path = root / "bare" / "MEMORY.md"
        self.bare_path.parent.mkdir()
        self.bare_seed = bare.DELIMITER.join(self.seed).encode("utf-8")
        reference = root / "reference" / "MEMORY.md"
        reference.parent.mkdir()
        self.reference = ReferenceStore(reference)

    def reset(self) -> None:
        try:
            from memhost.builtin_providers import journal
            carried = (journal.SUFFIX,)
        except ImportError:  # a memhost from before the journal (a before/after comparison)
            carried = ()

        # The memory file goes back to its seed entries, but its journal carries on from block
        # to block as a live store's does: restoring the journal of a new home before every
        # block would put that home's first checkpoint (four fsyncs) in every block of 20
        # writes, where a store past its first few dozen writes checkpoints once per ~128. The
        # store reads the reset file as an edit made outside memhost, which it leaves alone.
        folder = self.store.folder
        for path in folder.iterdir():
            if (path.is_file() and not path.name.endswith(".lock") and path.name not in self.saved
                    and not path.name.endswith(carried)):
                path.unlink()
        for name, data in self.saved.items():
            if not name.endswith(carried):
                _write_synced(folder / name, data)
        _write_synced(self.bare_path, self.bare_seed)
        _write_synced(self.reference.path, self.bare_seed)
        for path in (folder, self.bare_path.parent, self.reference.path.parent):
            _fsync_dir(path)


def _screen_refusing_nothing() -> object:
    """A screen that answers "no refusal" without reading the text (imported here, as the
    store is, so the module loads beside any memhost)."""
    from memhost.security.screen import Screen

    class RefusesNothing(Screen):
        def refusal(self, text: str, decision: object = None) -> None:
            return None

    return RefusesNothing()


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _run(ctx: Context, name: str, memhost_op: Callable[[_Fixture, int, int], None],
         bare_op: Callable[[int, int], Callable[[str], str]],
         reference_op: Callable[[ReferenceStore, int, int], None],
         prepare: Callable[[int], object] | None = None) -> list[Row]:
    """``prepare(n)``, when given, makes what write ``n`` needs before its block is timed (a cost
    every side would otherwise pay inside it, which pulls the ratios towards 1)."""
    block = ctx.size(10, 20)  # never more than SEED_ENTRIES // 2: a batch consumes two seeds
    rounds = ctx.size(5, 21)
    counter = itertools.count()
    with ctx.folder(name) as root:
        fixture = _Fixture(root)

        def side(op: Callable[[int], None]) -> Callable[[], float]:
            def run() -> float:
                fixture.reset()
                serial = next(counter)
                if prepare is not None:
                    for k in range(block):
                        prepare(serial * 1000 + k)
                seconds = timed(lambda: [op(serial * 1000 + k) for k in range(block)])
                return block / seconds
            return run

        def memhost(n: int) -> None:
            memhost_op(fixture, n, n % 1000)

        refuses_nothing = _screen_refusing_nothing()

        def unchecked(n: int) -> None:
            # The same write with a screen that refuses nothing without reading the text: what
            # the write path costs apart from the refusal check of its new text.
            screen, fixture.store.screen = fixture.store.screen, refuses_nothing
            try:
                memhost(n)
            finally:
                fixture.store.screen = screen

        def baseline(n: int, *, folder: bool = False) -> None:
            bare.durable_edit(fixture.bare_path, bare_op(n, n % 1000), fsync_folder=folder)

        paired = alternate(rounds, {
            "memhost": side(memhost),
            "memhost_unchecked": side(unchecked),
            "baseline": side(baseline),
            "baseline_folder_fsync": side(lambda n: baseline(n, folder=True)),
            "reference": side(lambda n: reference_op(fixture.reference, n, n % 1000)),
        })
        # Sanity: the last memhost block really wrote.
        assert len(fixture.store.entries("memory")) >= SEED_ENTRIES - block
    m, b = paired.medians()
    unchecked_ratio = paired.ratio("memhost_unchecked", "baseline")
    row = Row(name, "", m, b, paired.ratio(), "ops/s", paired.rounds,
              note=f"without the refusal check of its new text: {unchecked_ratio:.2f}", extra={
        "block": block,
        "unchecked_ops": paired.median("memhost_unchecked"),
        "ratio_without_refusal_check": unchecked_ratio,
        "baseline_folder_fsync_ops": paired.median("baseline_folder_fsync"),
        "ratio_vs_folder_fsync": paired.ratio("memhost", "baseline_folder_fsync"),
        "reference_ops": paired.median("reference"),
        "reference_ratio": paired.ratio("reference", "baseline"),
    })
    reference = Row("reference_store", name.removeprefix("store_"), m, paired.median("reference"),
                    paired.ratio("memhost", "reference"), "ops/s", paired.rounds,
                    note=f"the reference design at {paired.ratio('reference', 'baseline'):.2f} of "
                         "the bare edit", extra={"reference_vs_bare": paired.ratio("reference", "baseline")})
    return [row.judge(TARGET), reference.judge(REFERENCE_TARGET)]


def _label(k: int) -> str:
    return f"n{k:03d}"


@benchmark("store_add", "builtin store add vs lock+read+append+temp+fsync+replace (ops/s)")
def store_add(ctx: Context) -> list[Row]:
    made: dict[int, str] = {}

    def text(n: int) -> str:
        # ~10 µs to make (a seeded generator), so made before the block is timed: see _run.
        if n not in made:
            made[n] = f"a{n:07d} " + corpus.entries(1, prefix="x", seed=n)[0]
        return made[n]

    def memhost(fx: _Fixture, n: int, k: int) -> None:
        outcome = fx.store.add("memory", text(n))
        assert outcome.ok and outcome.changes, outcome.response

    return _run(ctx, "store_add", memhost, lambda n, k: bare.append(text(n)),
                lambda ref, n, k: ref.add(text(n)), prepare=text)


@benchmark("store_replace", "builtin store replace vs the same bare durable edit (ops/s)")
def store_replace(ctx: Context) -> list[Row]:
    def new(n: int) -> str:
        return f"r{n:07d} The user now prefers concise answers with one worked example."

    def memhost(fx: _Fixture, n: int, k: int) -> None:
        outcome = fx.store.replace("memory", _label(k), new(n))
        assert outcome.ok, outcome.response

    return _run(ctx, "store_replace", memhost, lambda n, k: bare.replace(_label(k), new(n)),
                lambda ref, n, k: ref.replace(_label(k), new(n)))


@benchmark("store_batch", "builtin store batch (remove+replace+add) vs one bare durable edit (ops/s)")
def store_batch(ctx: Context) -> list[Row]:
    def texts(n: int) -> tuple[str, str]:
        return (f"b{n:07d} The release process is tested with pytest with xdist.",
                f"c{n:07d} The user prefers British spelling in prose.")

    def memhost(fx: _Fixture, n: int, k: int) -> None:
        new, added = texts(n)
        outcome = fx.store.apply_batch("memory", [
            {"action": "remove", "old_text": _label(2 * k)},
            {"action": "replace", "old_text": _label(2 * k + 1), "content": new},
            {"action": "add", "content": added},
        ])
        assert outcome.ok, outcome.response

    def baseline(n: int, k: int) -> Callable[[str], str]:
        new, added = texts(n)
        return bare.batch(_label(2 * k), _label(2 * k + 1), new, added)

    def reference(ref: ReferenceStore, n: int, k: int) -> None:
        new, added = texts(n)
        ref.batch(_label(2 * k), _label(2 * k + 1), new, added)

    return _run(ctx, "store_batch", memhost, baseline, reference)


@benchmark("store_scale", "builtin store add at 300 entries vs at 40 (µs/add)")
def store_scale(ctx: Context) -> list[Row]:
    """What a write costs beyond the file's size: the bare edit's own cost grows with it too
    (it reads and rewrites the file), so the row reports the bare edit's growth beside."""
    block = ctx.size(10, 20)
    rounds = ctx.size(5, 15)
    counter = itertools.count()
    with ctx.folder("store_scale") as root:
        small, large = _Fixture(root / "small"), _Fixture(root / "large", LARGE_SEED)

        def side(fixture: _Fixture, *, use_bare: bool = False) -> Callable[[], float]:
            def run() -> float:
                fixture.reset()
                serial = next(counter)

                def add(k: int) -> None:
                    text = f"s{serial:04d}{k:03d} The user prefers short answers with one example."
                    if use_bare:
                        bare.durable_edit(fixture.bare_path, bare.append(text))
                    else:
                        assert fixture.store.add("memory", text).ok

                seconds = timed(lambda: [add(k) for k in range(block)])
                return seconds / block * 1e6
            return run

        paired = alternate(rounds, {"memhost": side(large), "baseline": side(small),
                                    "bare_large": side(large, use_bare=True),
                                    "bare_small": side(small, use_bare=True)})
    row = Row("store_scale", f"add at {LARGE_SEED} vs {SEED_ENTRIES}", paired.median("memhost"),
              paired.median("baseline"), paired.ratio(), "µs/add", paired.rounds,
              note=f"the bare edit: {paired.ratio('bare_large', 'bare_small'):.2f}",
              extra={"bare_ratio": paired.ratio("bare_large", "bare_small")})
    return [row.judge(SCALE_TARGET)]
