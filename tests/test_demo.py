"""``memhost demo``: the scripted walk runs, stays short, and never touches the user's home."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))


def test_demo_walks_two_sessions_on_a_temporary_home(tmp_path: Path) -> None:
    assert SCRIPT, "the memhost console script is not installed next to this Python"
    own_home = tmp_path / "own-home"
    result = subprocess.run([SCRIPT, "demo"], env={**os.environ, "MEMHOST_HOME": str(own_home)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    out = result.stdout
    lines = out.splitlines()
    assert len(lines) < 80

    # The user's own home is never touched; the temporary one is gone afterwards.
    assert not own_home.exists()
    used = Path(re.match(r"home: (\S+) \(temporary\)", lines[0]).group(1))
    assert not used.exists() and own_home not in used.parents

    # Session 1 starts empty and its snapshot stays empty after the writes.
    session1 = out.index("Session 1 starts")
    session2 = out.index("Session 2 starts")
    assert "(empty: nothing is saved yet)" in out[session1:session2]
    assert "Session 1's snapshot is unchanged (still empty)" in out[session1:session2]
    # Session 2's frozen snapshot holds the writes, with the framed header.
    full = out.index("Memory is full")
    assert "MEMORY (your personal notes) [78% — 211/270 chars]" in out[session2:full]
    assert "USER PROFILE (who the user is)" in out[session2:full]

    # Every tool answer shown is the provider's JSON, unchanged.
    answers = _answers(lines)
    assert [a["success"] for a in answers] == [True, True, False, True]
    assert "current_entries" in answers[2] and "over" not in answers[3].get("error", "")
    assert answers[3]["removed_entries"] and answers[3]["replaced_entries"]

    # The archive is listed and the removed entry comes back for the next session.
    assert "$ memhost memory history" in out and re.search(r"^\w{8}\s+\S+ \S+\s+memory\s+remove",
                                                          out, re.M)
    assert re.search(r"restored \w{8} to MEMORY.md: Entry added.", out)
    assert out[out.index("Session 3"):].count("CI runs on GitHub Actions") == 1


def _answers(lines: list[str]) -> list[dict]:
    """Re-join the wrapped ``tool  ←`` lines and parse them."""
    answers, current = [], None
    for line in lines:
        if line.startswith("tool  ← "):
            current = [line.removeprefix("tool  ← ")]
            answers.append(current)
        elif current is not None and line.startswith(" " * 8) and not line.startswith("  ═"):
            current.append(line.strip())
        else:
            current = None
    return [json.loads(" ".join(parts)) for parts in answers]
