"""Compile the suite's test modules once, before pytest-xdist starts its workers.

pytest rewrites the asserts of every test module (and ``conftest.py``) when it imports it, and
caches the result beside it (``__pycache__/<name>.<tag>-pytest-<version>.pyc``). A fresh clone
has no such cache, so every worker, all starting at the same moment, rewrote and compiled every
module itself: ~4.5 s of CPU a worker before its first test, four workers on two cores. Here it
is done once, the modules split over the cores (``make test`` runs this first), with pytest's
own rewriting helpers: ~2 s of CPU for the suite, where collecting the modules to the same end
(what is done if those helpers are not found) imported everything they import, ~5.5 s. Only
modules whose cache is missing or older than their source are compiled: on a warm tree this
does nothing.

A module that fails to compile or collect is left for the real run to report.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
#: Seconds a group may take: collecting is a few seconds; a module stuck at import is not waited
#: for here.
TIMEOUT = 300


def stale_modules() -> list[Path]:
    """The modules pytest would rewrite: those without a cache newer than their source."""
    tail = f".{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"
    stale = []
    for source in [HERE / "conftest.py", *sorted(HERE.glob("test_*.py"))]:
        cached = source.parent / "__pycache__" / (source.stem + tail)
        try:
            if cached.stat().st_mtime >= source.stat().st_mtime:
                continue
        except FileNotFoundError:
            pass
        stale.append(source)
    return stale


def split(modules: list[Path], parts: int) -> list[list[Path]]:
    """``modules`` in ``parts`` groups of about equal size in bytes (largest first, each to
    the lightest group), so the processes finish together."""
    groups: list[list[Path]] = [[] for _ in range(parts)]
    sizes = [0] * parts
    for module in sorted(modules, key=lambda m: m.stat().st_size, reverse=True):
        lightest = sizes.index(min(sizes))
        groups[lightest].append(module)
        sizes[lightest] += module.stat().st_size
    return [group for group in groups if group]


def rewrite(modules: list[Path]) -> None:
    """Rewrite and compile ``modules`` as pytest's import hook does, and cache each where the
    hook looks for it (its ``_pytest.assertion.rewrite`` helpers, with the default options: no
    assertion-pass hook), without importing them or what they import."""
    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp, get_cache_dir

    for module in modules:
        source_stat, code = _rewrite_test(module, None)  # type: ignore[arg-type]
        cache = get_cache_dir(module)
        cache.mkdir(exist_ok=True)
        pyc = cache / (module.name[:-3] + PYC_TAIL)
        partial = pyc.with_name(f"{pyc.name}.{os.getpid()}")
        with open(partial, "wb") as handle:
            _write_pyc_fp(handle, source_stat, code)
        os.replace(partial, pyc)  # complete or absent, as pytest keeps it


def rewrite_split(modules: list[Path]) -> bool:
    """:func:`rewrite` over the cores; False where pytest's helpers are not what it expects
    (another pytest), and the modules are then collected instead."""
    try:  # the names rewrite() takes: an ImportError when one is missing
        from _pytest.assertion.rewrite import (  # noqa: F401
            PYC_TAIL,
            _rewrite_test,
            _write_pyc_fp,
            get_cache_dir,
        )
    except ImportError:
        return False
    groups = split(modules, os.cpu_count() or 1)
    children = []
    for group in groups[1:]:
        pid = os.fork()
        if pid == 0:
            try:
                rewrite(group)
            finally:
                os._exit(0)
        children.append(pid)
    try:
        rewrite(groups[0])
    finally:
        for pid in children:
            os.waitpid(pid, 0)
    return True


def main() -> int:
    stale = stale_modules()
    if stale and hasattr(os, "fork"):
        try:
            if rewrite_split(stale):
                return 0
        except Exception:  # noqa: BLE001 - a module that does not parse: the run says why
            pass
    modules = [m for m in stale if m.name != "conftest.py"]
    if not modules and stale:  # conftest.py alone: collecting any module imports it
        modules = [min(HERE.glob("test_*.py"), key=lambda m: m.stat().st_size)]
    if not modules:
        return 0
    # Collecting is what imports (and so rewrites) a module; conftest.py comes with any of them.
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
               "-p", "no:cacheprovider"]
    processes = [subprocess.Popen([*command, *map(str, group)], cwd=HERE.parent,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for group in split(modules, os.cpu_count() or 1)]
    for process in processes:
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:  # the run that follows collects it, and says why
            process.kill()
            process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
