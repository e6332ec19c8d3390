"""The measuring kit every benchmark shares: rows, targets, the registry and paired timing.

A benchmark is a function ``run(ctx) -> list[Row]`` registered with :func:`benchmark`. It times
memhost and a baseline in the same process, alternating, for several rounds, and reports the
median of each plus the median of the per-round ratios: on a shared machine the absolute figures
drift with the load, the paired ratio much less.
"""

from __future__ import annotations

import math
import operator
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Row status values. Only ``ok`` rows carry figures; the others say why there are none.
OK = "ok"
NOT_AVAILABLE = "not available yet"
NOT_INSTALLED = "provider not installed"
UNAVAILABLE = "provider unavailable"
FAILED = "error"

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}


@dataclass(frozen=True)
class Target:
    """A pass mark: ``field op value`` over a row (``ratio >= 0.85``, ``memhost < 100``)."""

    field: str
    op: str
    value: float

    def met(self, row: Row) -> bool | None:
        actual = row.extra.get(self.field) if self.field not in ("memhost", "baseline", "ratio") \
            else getattr(row, self.field)
        if actual is None or (isinstance(actual, float) and math.isnan(actual)):
            return None
        return _OPS[self.op](actual, self.value)

    def __str__(self) -> str:
        return f"{self.field} {self.op} {self.value:g}"


@dataclass
class Row:
    """One line of the results table (and one JSON line)."""

    name: str
    case: str = ""
    memhost: float | None = None
    baseline: float | None = None
    ratio: float | None = None
    unit: str = ""
    rounds: int = 0
    target: str = ""
    met: bool | None = None
    status: str = OK
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def judge(self, *targets: Target) -> Row:
        """Set ``target`` and ``met`` from one or more pass marks (all must hold)."""
        self.target = " and ".join(str(t) for t in targets)
        verdicts = [t.met(self) for t in targets]
        self.met = None if any(v is None for v in verdicts) else all(verdicts)
        return self

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("memhost", "baseline", "ratio"):
            if isinstance(data[key], float):
                data[key] = _round(data[key])
        data["extra"] = {k: _round(v) if isinstance(v, float) else v for k, v in self.extra.items()}
        return data


def _round(value: float) -> float:
    if value == 0 or math.isnan(value) or math.isinf(value):
        return value
    digits = max(0, 4 - int(math.floor(math.log10(abs(value)))))
    return round(value, digits)


def unavailable(name: str, status: str, note: str, *, case: str = "", target: str = "") -> Row:
    """A row that has no figures, and says why (never a crash, never a silent gap)."""
    return Row(name, case, status=status, note=note, target=target)


@dataclass
class Context:
    """What a benchmark run may use: the run size and a scratch folder on a real disk."""

    quick: bool
    scratch: Path
    verbose: bool = False
    #: Benchmark-specific command-line options (``--locomo``, ``--conversations``).
    options: dict[str, Any] = field(default_factory=dict)

    def size(self, quick: Any, full: Any) -> Any:
        return quick if self.quick else full

    @contextmanager
    def folder(self, prefix: str) -> Iterator[Path]:
        path = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=self.scratch))
        try:
            yield path
        finally:
            _remove_tree(path)

    def log(self, message: str) -> None:
        if self.verbose:
            print(f"  .. {message}", flush=True)


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class Benchmark:
    name: str
    run: Callable[[Context], list[Row]]
    summary: str
    order: int


REGISTRY: dict[str, Benchmark] = {}


def benchmark(name: str, summary: str) -> Callable[[Callable[[Context], list[Row]]], Callable[[Context], list[Row]]]:
    """Register ``run`` under ``name``; the table lists benchmarks in registration order."""

    def register(run: Callable[[Context], list[Row]]) -> Callable[[Context], list[Row]]:
        if name in REGISTRY:
            raise ValueError(f"benchmark {name!r} is registered twice")
        REGISTRY[name] = Benchmark(name, run, summary, len(REGISTRY))
        return run

    return register


# -- paired timing --------------------------------------------------------------------------------


@dataclass
class Paired:
    """Per-round figures of memhost, its baseline and any extra sides, in one unit each."""

    sides: dict[str, list[float]] = field(default_factory=dict)

    @property
    def memhost(self) -> list[float]:
        return self.sides["memhost"]

    @property
    def baseline(self) -> list[float]:
        return self.sides["baseline"]

    @property
    def rounds(self) -> int:
        return len(self.memhost)

    def median(self, side: str = "memhost") -> float:
        return statistics.median(self.sides[side])

    def medians(self) -> tuple[float, float]:
        return self.median("memhost"), self.median("baseline")

    def ratio(self, side: str = "memhost", against: str = "baseline") -> float:
        """Median of the per-round ratios ``side / against``."""
        return statistics.median(m / b if b else math.inf
                                 for m, b in zip(self.sides[side], self.sides[against], strict=True))


def alternate(rounds: int, sides: dict[str, Callable[[], float]]) -> Paired:
    """Run every side once per round for ``rounds`` rounds, rotating which goes first.

    Rotation spreads warm-up and drift in the machine's load evenly over the sides, and each
    round's figures are taken close together in time, so their ratio is a fair pair.
    """
    names = list(sides)
    result = Paired({name: [] for name in names})
    for number in range(rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            result.sides[name].append(sides[name]())
    return result


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of ``fn`` takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


#: The checkout holding the ``benchmarks`` package (what subprocesses need on their path).
ROOT = Path(__file__).resolve().parent.parent


def child_env() -> dict[str, str]:
    """The environment for benchmark subprocesses: this checkout importable as ``benchmarks``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def default_scratch() -> Path:
    """Where benchmarks write: ``$MEMHOST_BENCH_DIR``, else the system temp folder.

    It must be a real disk for the store figures to mean anything: on a tmpfs an fsync is free.
    """
    return Path(os.environ.get("MEMHOST_BENCH_DIR") or tempfile.gettempdir())
