"""``python -m benchmarks [--quick] [--json PATH] [--only NAME,...] [--list] [--plot FILE]``.

Runs each registered benchmark, prints one table line per result as it lands, then one JSON line
per result (``name``, ``case``, ``memhost``, ``baseline``, ``ratio``, ``unit``, ``rounds``,
``target``, ``met``, ``status``, ``note``, ``extra``). A benchmark that crashes becomes an
``error`` row; the run goes on. Exit status: 0 when every benchmark ran (targets missed or not),
1 when one crashed, 2 on bad arguments. ``--plot FILE`` draws every row against its target
(:mod:`benchmarks.plot`, needs the ``plot`` extra); with ``--from JSON`` it draws a saved run
instead of running the benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

from benchmarks import REGISTRY, load_all
from benchmarks.harness import FAILED, Context, Row, default_scratch

COLUMNS = (("benchmark", 34), ("memhost", 12), ("baseline", 12), ("ratio", 8), ("unit", 10),
           ("rounds", 6), ("target", 30), ("met", 5), ("notes", 0))


def _figure(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _line(row: Row) -> str:
    label = f"{row.name}[{row.case}]" if row.case else row.name
    if row.status != "ok":
        return f"{label:<34} {row.status}: {row.note}"
    met = {True: "yes", False: "NO", None: "-"}[row.met]
    cells = [label, _figure(row.memhost), _figure(row.baseline), _figure(row.ratio), row.unit,
             str(row.rounds), row.target or "-", met, row.note]
    return " ".join(f"{cell:<{width}}" if i == 0 or i >= 4 else f"{cell:>{width}}"
                    for i, (cell, (_, width)) in enumerate(zip(cells, COLUMNS, strict=True))).rstrip()


def _header() -> str:
    return " ".join(f"{name:<{w}}" if i == 0 or i >= 4 else f"{name:>{w}}"
                    for i, (name, w) in enumerate(COLUMNS)).rstrip()


def main(argv: list[str] | None = None) -> int:
    load_all()
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=(
        "memhost against its baselines, side by side in one process; the ratios are what count "
        "on a shared machine."))
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller inputs")
    parser.add_argument("--json", metavar="PATH", type=Path, help="also save the results here")
    parser.add_argument("--only", metavar="NAME,...", help="run only these benchmarks")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--dir", type=Path, help="scratch folder on the disk to measure "
                        "(default: $MEMHOST_BENCH_DIR or the system temp folder)")
    parser.add_argument("--locomo", metavar="PATH", type=Path, help="recall_locomo: the LoCoMo "
                        "data (data/locomo10.json, or a folder of its per-conversation files)")
    parser.add_argument("--conversations", metavar="ID,...", help="recall_locomo: which "
                        "conversations (default: the development set 26,30,41,42,43)")
    parser.add_argument("--embedder", choices=("wordllama", "hashed"), help="recall_locomo: "
                        "also measure hybrid recall with this embedding model (see "
                        "benchmarks/bench_locomo.py)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print progress notes")
    parser.add_argument("--plot", metavar="FILE", type=Path,
                        help="draw every row against its target to FILE (a .png; needs "
                             "matplotlib: pip install 'memhost[plot]')")
    parser.add_argument("--from", dest="source", metavar="JSON", type=Path,
                        help="with --plot: draw the rows saved by --json instead of running")
    args = parser.parse_args(argv)
    if args.source is not None:
        if args.plot is None:
            parser.error("--from only goes with --plot")
        from benchmarks.plot import plot

        try:
            saved = json.loads(args.source.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            parser.error(f"cannot read {args.source}: {exc}")
        drawn = plot(saved.get("rows", []), args.plot, title=_title(saved))
        print(f"{args.plot}: {drawn} rows against their targets")
        return 0

    if args.list:
        for bench in REGISTRY.values():
            print(f"{bench.name:<18} {bench.summary}")
        return 0
    selected = list(REGISTRY.values())
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in REGISTRY]
        if unknown:
            parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(REGISTRY)}")
        selected = [REGISTRY[n] for n in names]

    # Providers and memhost log their expected complaints (a hanging prefetch, an unreachable
    # server) as warnings; the rows say what matters. -v shows them.
    import logging

    handler = logging.StreamHandler()
    handler.setLevel(logging.WARNING if args.verbose else logging.CRITICAL)
    handler.setFormatter(logging.Formatter("  log: %(name)s: %(levelname)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    scratch = args.dir or default_scratch()
    scratch.mkdir(parents=True, exist_ok=True)
    options: dict[str, object] = {"locomo": args.locomo, "embedder": args.embedder}
    if args.conversations:
        options["conversations"] = tuple(c.strip() for c in args.conversations.split(",") if c.strip())
    ctx = Context(quick=args.quick, scratch=scratch, verbose=args.verbose, options=options)
    print(f"memhost benchmarks ({'quick' if args.quick else 'full'} run) on {platform.node()}: "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, scratch {scratch}",
          flush=True)
    print(_header())
    print("-" * len(_header()), flush=True)

    rows: list[Row] = []
    crashed = False
    started = time.monotonic()
    for bench in selected:
        began = time.monotonic()
        try:
            produced = bench.run(ctx)
        except Exception as exc:  # a broken benchmark must not hide the others
            crashed = True
            if args.verbose:
                traceback.print_exc()
            produced = [Row(bench.name, status=FAILED, note=f"{type(exc).__name__}: {exc}")]
        for row in produced:
            row.extra.setdefault("seconds", round(time.monotonic() - began, 2))
            rows.append(row)
            print(_line(row), flush=True)
    total = time.monotonic() - started
    print("-" * len(_header()))
    missed = [r for r in rows if r.met is False]
    print(f"{len(rows)} rows in {total:.0f}s; targets missed: "
          f"{', '.join(f'{r.name}[{r.case}]' if r.case else r.name for r in missed) or 'none'}")
    for row in rows:
        print(json.dumps(row.as_dict(), ensure_ascii=False, sort_keys=True))
    result = {
        "quick": args.quick, "seconds": round(total, 1), "machine": {
            "host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load_average": list(os.getloadavg())},
        "rows": [r.as_dict() for r in rows]}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    if args.plot:
        from benchmarks.plot import plot

        drawn = plot(result["rows"], args.plot, title=_title(result))
        print(f"{args.plot}: {drawn} rows against their targets")
    return 1 if crashed else 0


def _title(result: dict) -> str:
    if result.get("title"):  # a saved result may say what it is
        return str(result["title"])
    machine = result.get("machine") or {}
    return (f"memhost benchmarks ({'quick' if result.get('quick') else 'full'} run, "
            f"{machine.get('cpus', '?')} CPUs, Python {machine.get('python', '?')})")


if __name__ == "__main__":
    sys.exit(main())
