"""The LoCoMo recall benchmark runs end to end on a small conversation in LoCoMo's format (made
here: the real data is never in the repository), in a real process, and scores what it should."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import locomo  # noqa: E402

CONVERSATION = {
    "speaker_a": "Ana", "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten called Miso yesterday."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! What does Miso like to eat?"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Tuna, mostly, and a little chicken."},
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [
        {"speaker": "Ben", "dia_id": "D2:1", "text": "I started pottery classes on Tuesday."},
        {"speaker": "Ana", "dia_id": "D2:2", "text": "Pottery sounds fun. Did you make a bowl?"},
        {"speaker": "Ben", "dia_id": "D2:3", "text": "A blue bowl for my sister's birthday."},
    ],
    "qa": [
        {"question": "When did Ana adopt Miso?", "answer": "7 May 2023", "evidence": ["D1:1"],
         "category": 2},
        {"question": "What does Miso eat?", "answer": "tuna", "evidence": ["D1:3"],
         "category": 4},
        {"question": "What did Ben make in pottery class?", "answer": "a blue bowl",
         "evidence": ["D2:1; D2:3"], "category": 1},
        {"question": "What is Ana's favourite film?", "evidence": ["D1:2"], "category": 5},
    ],
}


def test_the_loader_reads_both_layouts_and_only_the_conversations_asked_for(tmp_path: Path) -> None:
    (tmp_path / "7.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    (tmp_path / "8.json").write_text("not json: never read", encoding="utf-8")
    [folder] = locomo.load(tmp_path, ["conv-7"])
    assert [q.evidence for q in folder.questions] == [("D1:1",), ("D1:3",), ("D2:1", "D2:3")]
    assert folder.sessions[1].when is not None and folder.sessions[1].when.month == 6
    whole = tmp_path / "locomo10.json"
    whole.write_text(json.dumps([{"sample_id": "conv-7", "conversation": CONVERSATION,
                                  "qa": CONVERSATION["qa"]}]), encoding="utf-8")
    [listed] = locomo.load(whole, ["7"])
    assert listed.questions == folder.questions
    with pytest.raises(ValueError, match="no conversation 9"):
        locomo.load(whole, ["9"])
    turns = folder.turns
    assert locomo.found(("D1:1", "D1:3"), turns, "x Ana: I adopted a grey kitten called Miso "
                        "yesterday.\n y") == 0.5
    assert locomo.recall_at(("D1:1",), ["D1:3", "D1:1"], 1) == 0.0


def test_the_benchmark_scores_memhost_and_fts5_on_the_same_turns(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "7.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MEMHOST_HOME", None)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "recall_locomo", "--locomo",
         str(tmp_path / "data"), "--conversations", "7", "--dir", str(tmp_path),
         "--json", str(tmp_path / "out.json")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(r["name"], r["case"]): r for r in json.loads(
        (tmp_path / "out.json").read_text(encoding="utf-8"))["rows"]}
    overall = rows[("recall_locomo", "sqlite evidence@1500")]
    assert overall["status"] == "ok" and overall["rounds"] == 3  # category 5 is not scored
    assert 0 < overall["memhost"] <= 1 and 0 < overall["baseline"] <= 1
    assert overall["target"] == "memhost >= 0.65"
    assert overall["extra"]["longest_recall_chars"] <= 1500
    assert rows[("recall_locomo", "sqlite multi-hop")]["rounds"] == 1
    assert rows[("recall_locomo", "sqlite prefetch p50")]["extra"]["p95_ms"] > 0
    assert rows[("recall_locomo", "sqlite ingest")]["memhost"] > 0
    assert rows[("recall_locomo", "postgres evidence@1500")]["status"] in (
        "ok", "provider unavailable")


def test_without_data_the_benchmark_says_how_to_get_it(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "recall_locomo",
                           "--dir", str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0
    assert "pass --locomo PATH" in done.stdout
