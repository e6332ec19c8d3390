"""``python -m benchmarks.soak [--minutes N | --seconds S] [--workers W] [--homes H] [--seed X]``

Runs the soak (see :mod:`benchmarks.soak.harness`), then prints what it did and the audit:
``committed`` / ``found`` / ``lost`` and the delivery and file checks. Exit status 0 when
nothing was lost and every check passed, 1 otherwise. The run folder is deleted on success
unless ``--keep``; on failure it is kept and its path printed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=(
        "Worker processes run memhost sessions with random memory writes and provider syncs "
        "while faults are injected; then every write they saw committed is audited."))
    length = parser.add_mutually_exclusive_group()
    length.add_argument("--minutes", type=float, help="how long to run (default 2)")
    length.add_argument("--seconds", type=float, help="how long to run, in seconds (for CI)")
    parser.add_argument("--workers", type=int, default=4, help="worker processes (default 4)")
    parser.add_argument("--homes", type=int, default=2,
                        help="memhost homes the workers share (default 2)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: the time)")
    parser.add_argument("--dir", type=Path, help="parent folder for the run folder")
    parser.add_argument("--keep", action="store_true", help="keep the run folder")
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else 60 * (args.minutes or 2)
    if seconds <= 0 or args.workers < 1 or args.homes < 1:
        parser.error("--minutes/--seconds, --workers and --homes must be positive")
    seed = args.seed if args.seed is not None else int(time.time())

    from benchmarks.soak.harness import Soak

    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)  # a new folder named on the command line
    run = Path(tempfile.mkdtemp(prefix="memhost-soak-", dir=args.dir))
    print(f"soak: {args.workers} workers on {args.homes} home(s) for {seconds:g}s, seed {seed}, "
          f"in {run}", flush=True)
    started = time.monotonic()
    soak = Soak(run, workers=args.workers, homes=args.homes, seconds=seconds, seed=seed)
    audit = soak.go()
    stats = soak.stats
    counts = audit.counts
    print(f"ran {time.monotonic() - started:.0f}s: {counts['session']} sessions, "
          f"{counts['sync']} turns, {counts['commit']} committed writes "
          f"({counts['staged']} staged, {stats.approved} approved, {stats.rejected} rejected), "
          f"{counts['refused']} refused")
    print(f"faults: {stats.kills} kills, {stats.drifts} drifts ({stats.repairs} repaired), "
          f"{stats.provider_faults} provider faults, {stats.fillers} full-store fillers "
          f"({stats.already_full} times the store was already full)")
    print(f"deliveries: {audit.deliveries_expected} expected, {audit.delivered_once} once, "
          f"{audit.redelivered_after_kill} again after a kill in the acknowledgement window, "
          f"{audit.replayed} replayed from the outbox, {len(audit.missing)} missing, "
          f"{len(audit.duplicated)} duplicated")
    print(f"committed: {audit.committed}")
    print(f"found: {audit.found}")
    print(f"lost: {len(audit.lost)}")
    problems = [("lost", audit.lost), ("missing delivery", audit.missing),
                ("duplicated delivery", audit.duplicated), ("file", audit.file_problems),
                ("worker crash", stats.crashes)]
    failed = False
    for label, items in problems:
        for item in items[:20]:
            print(f"  {label}: {item}")
        if len(items) > 20:
            print(f"  ... and {len(items) - 20} more {label} problem(s)")
        failed = failed or bool(items)
    for item in audit.known_issues:
        print(f"  known issue (not failing the run): {item}")
    if failed:
        print(f"soak: FAILED; the run folder is kept: {run}")
        return 1
    print("soak: ok")
    if args.keep:
        print(f"run folder: {run}")
    else:
        shutil.rmtree(run, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
