"""concurrency: P processes × M adds to one store, against the bare durable edit under the same
contention, for P = 1, 2, 4, 8; and the lost updates (entries a writer saw committed that are not
in the file afterwards), which must be 0.

Writers are long-lived processes (:mod:`benchmarks.writer`), so interpreter start-up is not
timed; each round they all wait on one start file, and throughput is P × M over the time from the
first writer's start to the last one's end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.harness import ROOT, Context, Row, Target, alternate, benchmark, child_env

RATIO_TARGET = Target("ratio", ">=", 0.7)
LOST_TARGET = Target("lost", "==", 0)


class Writers:
    def __init__(self, count: int) -> None:
        self.procs = [subprocess.Popen([sys.executable, "-m", "benchmarks.writer"], cwd=ROOT,
                                       env=child_env(), stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True)
                      for _ in range(count)]

    def run(self, commands: list[dict[str, Any]], go: Path) -> list[dict[str, Any]]:
        for proc, cmd in zip(self.procs, commands, strict=True):
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({**cmd, "go": str(go)}) + "\n")
            proc.stdin.flush()
        for proc in self.procs:
            self._read(proc)  # ready
        go.touch()
        try:
            return [self._read(proc) for proc in self.procs]
        finally:
            go.unlink()

    @staticmethod
    def _read(proc: subprocess.Popen[str]) -> dict[str, Any]:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"writer process exited with {proc.wait()}")
        return json.loads(line)

    def close(self) -> None:
        for proc in self.procs:
            try:
                assert proc.stdin is not None
                proc.stdin.write("\n")
                proc.stdin.close()
            except OSError:
                pass
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _count(path: Path, tag: str) -> int:
    from memhost.builtin_providers.entries import parse

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    return sum(1 for e in parse(text) if e.startswith(tag))


@benchmark("concurrency", "P processes × M adds vs the bare durable edit under the same contention (ops/s)")
def concurrency(ctx: Context) -> list[Row]:
    adds = ctx.size(10, 40)
    rounds = ctx.size(2, 5)
    rows: list[Row] = []
    with ctx.folder("concurrency") as root:
        for procs in (1, 2, 4, 8):
            writers = Writers(procs)
            lost = {"memhost": 0, "baseline": 0}
            failed = 0
            serial = [0]
            try:
                def side(mode: str) -> float:
                    nonlocal failed
                    serial[0] += 1
                    tag = f"p{procs}r{serial[0]}"
                    folder = root / f"{mode}-{tag}"
                    folder.mkdir()
                    home, bare_file = folder / "home", folder / "MEMORY.md"
                    commands = [{"mode": mode, "count": adds, "tag": f"{tag}w{w}", "home": str(home),
                                 "file": str(bare_file)} for w in range(procs)]
                    results = writers.run(commands, root / "go")
                    failed += sum(r["failed"] for r in results)
                    seconds = max(r["end"] for r in results) - min(r["start"] for r in results)
                    target_file = home / "memories" / "MEMORY.md" if mode == "memhost" else bare_file
                    lost[mode if mode == "memhost" else "baseline"] += procs * adds - _count(target_file, tag)
                    return procs * adds / seconds

                paired = alternate(rounds, {"memhost": lambda: side("memhost"),
                                            "baseline": lambda: side("bare")})
            finally:
                writers.close()
            m, b = paired.medians()
            row = Row("concurrency", f"P={procs}", m, b, paired.ratio(), "ops/s", paired.rounds,
                      note=f"lost {lost['memhost']} of {procs * adds * paired.rounds}"
                           + (f", {failed} refused" if failed else ""),
                      extra={"lost": lost["memhost"], "lost_baseline": lost["baseline"],
                             "failed_writes": failed, "adds_per_process": adds})
            rows.append(row.judge(RATIO_TARGET, LOST_TARGET))
    return rows
