"""memhost's benchmarks: ``python -m benchmarks`` (or ``make bench``) and the soak test
``python -m benchmarks.soak`` (or ``make soak``). See docs/performance.md."""

from __future__ import annotations

import importlib

from benchmarks.harness import REGISTRY

#: Benchmark modules, in the order their rows are printed.
MODULES = (
    "bench_store",
    "bench_snapshot",
    "bench_turns",
    "bench_scrubber",
    "bench_concurrency",
    "bench_cold_start",
    "bench_recall",
    "bench_redaction",
    "bench_injection",
    "bench_locomo",
)


def load_all() -> None:
    for module in MODULES:
        importlib.import_module(f"benchmarks.{module}")


__all__ = ["MODULES", "REGISTRY", "load_all"]
