"""The benchmark runner and the soak test, run as a user runs them, in real processes.

No timing is asserted here (timing claims live in the benchmarks' own output); these tests
check that the instruments run, print every row they promise in both forms, and that the soak's
audit passes: nothing committed is lost under kills, drift, provider faults and a full store.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROW_KEYS = {"name", "case", "memhost", "baseline", "ratio", "unit", "rounds", "target", "met",
            "status", "note", "extra"}


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("MEMHOST_HOME", None)
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _json_rows(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_quick_benchmarks_print_a_table_row_and_a_json_line_per_result(tmp_path: Path) -> None:
    saved = tmp_path / "results.json"
    done = _run("-m", "benchmarks", "--quick", "--only", "snapshot,prefetch_hang,recall_sqlite",
                "--json", str(saved), "--dir", str(tmp_path), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr

    rows = _json_rows(done.stdout)
    cases = {(r["name"], r["case"]) for r in rows}
    assert {("snapshot", "warm"), ("snapshot", "cold"), ("prefetch_hang", "first turn"),
            ("prefetch_hang", "later turns")} <= cases
    for row in rows:
        assert set(row) == ROW_KEYS
    measured = [r for r in rows if r["name"] in ("snapshot", "prefetch_hang")]
    for row in measured:
        assert row["status"] == "ok"
        assert row["memhost"] > 0 and row["rounds"] > 0 and row["unit"]
        assert isinstance(row["met"], bool) and row["target"]
    # The recall rows exist whether or not the provider is installed yet, and say which.
    recall = [r for r in rows if r["name"] == "recall_sqlite"]
    assert [r["case"] for r in recall] == ["10k turns", "100k turns"] or \
        any(r["status"] == "ok" for r in recall)
    assert all(r["status"] in ("ok", "provider not installed", "provider unavailable", "skipped")
               for r in recall)

    # The table holds one line per row, and the saved file the same rows.
    table = done.stdout.split("\n{", 1)[0]
    for row in rows:
        label = f"{row['name']}[{row['case']}]" if row["case"] else row["name"]
        assert any(line.startswith(label) for line in table.splitlines()), label
    assert json.loads(saved.read_text(encoding="utf-8"))["rows"] == rows


def test_an_unknown_benchmark_name_is_a_usage_error() -> None:
    done = _run("-m", "benchmarks", "--only", "store_ad", timeout=60)
    assert done.returncode == 2
    assert "unknown benchmark(s) store_ad" in done.stderr


def test_plot_draws_every_row_with_a_target_from_a_saved_run(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    rows = [
        {"name": "store_add", "case": "", "ratio": 0.8, "target": "ratio >= 0.75", "met": True,
         "status": "ok", "extra": {}},
        {"name": "turn_overhead", "case": "one external", "ratio": 900.0,
         "target": "overhead_us < 100", "met": False, "status": "ok",
         "extra": {"overhead_us": 120.0}},
        {"name": "concurrency", "case": "P=8", "ratio": 0.71,
         "target": "ratio >= 0.7 and lost == 0", "met": True, "status": "ok",
         "extra": {"lost": 0}},
        {"name": "cold_start", "case": "--help", "ratio": 3.0, "target": "", "met": None,
         "status": "ok", "extra": {}},
        {"name": "recall_postgres", "case": "", "target": "p95_ms < 50", "met": None,
         "status": "provider unavailable", "extra": {}},
    ]
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps({"quick": True, "rows": rows}), encoding="utf-8")
    picture = tmp_path / "out" / "rows.png"
    done = _run("-m", "benchmarks", "--plot", str(picture), "--from", str(saved), timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{picture}: 3 rows against their targets" in done.stdout  # no target, no figure: left out
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _run("-m", "benchmarks", "--from", str(saved), timeout=60).returncode == 2


@pytest.mark.slow
def test_a_short_soak_injects_every_fault_and_loses_nothing(tmp_path: Path) -> None:
    # Twelve seconds: the soak's first kill, provider fault, full-store filler and drift are all
    # due within five, so every kind of fault is injected (asserted below) at a third of the cost
    # of a thirty-second run; `make soak` runs the long one.
    done = _run("-m", "benchmarks.soak", "--seconds", "12", "--dir", str(tmp_path), timeout=400)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "lost: 0" in out.splitlines()
    committed = next(int(line.split()[1]) for line in out.splitlines() if line.startswith("committed:"))
    found = next(int(line.split()[1]) for line in out.splitlines() if line.startswith("found:"))
    assert committed > 0 and found == committed
    faults = re.search(r"faults: (\d+) kills, (\d+) drifts .*?, (\d+) provider faults, "
                       r"(\d+) full-store fillers \((\d+) times the store was already full\)", out)
    assert faults, out
    kills, drifts, provider_faults, fillers, already_full = map(int, faults.groups())
    # Really injected. A store the workers had already filled when the filler came is the same
    # condition (adds refused until room is made), so it counts for the filler.
    assert kills and drifts and provider_faults and (fillers or already_full), out
    assert "soak: ok" in out
    # A passing run cleans up after itself.
    assert not any(tmp_path.iterdir())
