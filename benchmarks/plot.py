"""``python -m benchmarks --plot FILE``: every row's figure against its target, in one picture.

Each row with a target is one horizontal bar: its figure divided by the target's value, so 1.0
is the pass mark for every row alike and the bars compare at a glance. For a "higher is better"
target (``ratio >= 0.75``) the bar is figure / target; for a "lower is better" one
(``overhead_us < 100``) it is target / figure, so on both kinds a bar past the line is a target
met. Green bars met their target, red ones missed it; the label says the figure and the target.

matplotlib is an optional extra (``pip install memhost[plot]``); it is imported only here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

_MARK = {">=": 1, ">": 1, "<=": -1, "<": -1}


def _score(row: dict[str, Any]) -> tuple[float, str] | None:
    """How far past its pass mark a row is (1.0 = just met), and its label."""
    if row.get("status") != "ok":
        return None
    # A compound target ("ratio >= 0.7 and lost == 0") is drawn by its first part; the colour
    # says whether the whole of it was met.
    parts = (row.get("target") or "").split(" and ")[0].split()
    if len(parts) != 3 or parts[1] not in _MARK:
        return None
    field, op, value = parts[0], parts[1], float(parts[2])
    actual = row.get(field) if field in ("memhost", "baseline", "ratio") else \
        (row.get("extra") or {}).get(field)
    if not isinstance(actual, int | float) or math.isnan(actual) or value <= 0 or actual <= 0:
        return None
    score = actual / value if _MARK[op] > 0 else value / actual
    name = row["name"] + (f"[{row['case']}]" if row.get("case") else "")
    return score, f"{name}: {field} {actual:.3g} (target {op} {value:g})"


def plot(rows: list[dict[str, Any]], path: Path, *, title: str = "") -> int:
    """Draw ``rows`` (as in the JSON output) to ``path``; returns how many bars were drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'memhost[plot]'") from None
    scored = [(s, label, row.get("met")) for row in rows if (found := _score(row))
              for s, label in [found]]
    if not scored:
        raise SystemExit("--plot: none of these rows has a target to plot against")
    height = 0.4 * len(scored) + 1.2
    figure, axes = plt.subplots(figsize=(10, height))
    labels = [label for _, label, _ in scored]
    values = [score for score, _, _ in scored]
    colours = ["#2e7d32" if met else "#c62828" for _, _, met in scored]
    positions = range(len(scored))
    axes.barh(list(positions), values, color=colours)
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_yticks(list(positions), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlim(min(0.1, min(values) * 0.8), max(10.0, max(values) * 1.25))
    axes.set_xlabel("figure ÷ target (≥ 1 means met; log scale)")
    axes.set_title(title or "memhost benchmarks against their targets", fontsize=9, loc="left")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return len(scored)
