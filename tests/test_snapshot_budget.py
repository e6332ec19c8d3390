"""The snapshot budget: the prompt never carries more than a store's budget, whatever is in the
file; a limit below the current usage is said out loud; refused writes keep one backup."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from memhost.builtin_providers.entries import DELIMITER
from memhost.builtin_providers.store import MemoryStore
from memhost.manager import MemoryManager
from cli_runner import run_memhost

#: The one line about withheld entries may go past the budget; nothing else may.
NOTE_ALLOWANCE = 400


def run(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
    return run_memhost(args, env=env, input=stdin)


def write_memory(home: Path, text: str, target: str = "MEMORY.md") -> Path:
    folder = home / "memories"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / target
    path.write_text(text, encoding="utf-8")
    return path


def memory_part(prompt: str) -> str:
    """The MEMORY block of a system prompt, from its title on."""
    return prompt[prompt.index("MEMORY (your personal notes)"):]


def pasted_notes(count: int, width: int = 60) -> str:
    """A hand-pasted markdown file: a heading, then bullets, blank lines between groups."""
    lines = ["# Notes about the user", ""]
    for index in range(count):
        lines.append(f"- fact number {index}: " + "x" * width)
        if index % 5 == 4:
            lines.append("")
    return "\n".join(lines)


def test_a_pasted_blob_never_goes_whole_into_the_prompt(home: Path):
    blob = pasted_notes(240)  # about 17,000 characters, no '§' anywhere
    write_memory(home, blob)
    manager = MemoryManager.from_home(home)
    manager.start_session("s1")

    prompt = manager.system_prompt()

    assert len(blob) > 8 * 2200
    assert len(memory_part(prompt)) <= 2200 + NOTE_ALLOWANCE
    assert "withheld" in prompt and "memhost memory fix" in prompt
    problems = [p["problem"] for p in manager.status()["problems"]]
    assert any("MEMORY.md is over its budget" in p and "memhost memory fix" in p
               for p in problems)
    manager.shutdown()


def test_an_over_budget_file_contributes_the_entries_that_fit(home: Path):
    entries = [f"entry {i}: " + "y" * 200 for i in range(20)]  # about 4,400 chars
    write_memory(home, DELIMITER.join(entries))
    store = MemoryStore(home)

    block = store.snapshot().memory

    shown = [e for e in entries if e in block]
    assert shown == entries[: len(shown)] and 8 <= len(shown) <= 10
    assert f"{len(entries) - len(shown)} more entries of MEMORY.md" in block
    assert len(block) <= 2200 + NOTE_ALLOWANCE


def test_a_huge_file_gives_a_small_prompt(home: Path):
    # Half a megabyte of short entries: each one alone passes every check.
    write_memory(home, DELIMITER.join(f"note {i}: " + "z" * 90 for i in range(5000)))
    manager = MemoryManager.from_home(home)
    manager.start_session("s1")

    assert len(manager.system_prompt()) < 2200 + 1375 + 3000
    manager.shutdown()


def test_doctor_reports_withheld_entries(home: Path):
    write_memory(home, pasted_notes(100))

    result = run(home, "doctor", "--json")

    memory = next(s for s in json.loads(result.stdout)["sections"] if s["name"] == "store.memory")
    assert any("withheld from the prompt" in p and "memhost memory fix" in p
               for p in memory["problems"])


def test_a_limit_below_current_usage_warns_and_says_what_will_happen(home: Path):
    store = MemoryStore(home)
    for fact in ("User prefers tea over coffee.", "User works on memhost.",
                 "User lives in Lisbon and cycles to work."):
        assert store.add("memory", fact).ok

    result = run(home, "config", "set", "memory.memory_char_limit", "40")

    assert result.returncode == 0, result.stderr
    assert "over the new limit" in result.stderr and "withheld" in result.stderr
    assert "memhost memory fix" in result.stderr
    shown = run(home, "memory", "show", "--target", "memory")
    assert "0% —" not in shown.stdout and "over budget" in shown.stdout
    assert "withheld" in run(home, "config", "show").stdout
    zero = run(home, "config", "set", "memory.memory_char_limit", "0")
    assert "over the new limit" in zero.stderr
    assert "over budget — 97/0 chars" in run(home, "memory", "show", "--target", "memory").stdout


def test_an_add_to_a_full_file_only_a_person_can_fix_says_so(home: Path):
    """The usual refusal of an add over budget asks for a replace or a remove in the same turn;
    on a pasted blob both would be refused, so the model is told to hand it to the user."""
    write_memory(home, pasted_notes(240))
    answer = MemoryStore(home).add("memory", "The user prefers tea.").response
    assert not answer["success"]
    assert "memhost memory fix" in answer["error"] and "do not retry" in answer["error"]
    assert "'replace'" not in answer["error"]
    clean = home / "clean"
    write_memory(clean, "a" * 2000)
    answer = MemoryStore(clean).add("memory", "b" * 300).response
    assert "'replace'" in answer["error"] and "memory fix" not in answer["error"]


def test_an_answer_shows_what_the_prompt_shows_of_an_over_budget_file(home: Path):
    """A refusal lists the entries that fit the budget and a line for the rest, not the whole
    file: 5,000 hand-added notes came back in every refused write (138 KB of context)."""
    write_memory(home, "\n§\n".join(f"note {i} about item{i}" for i in range(5000)))
    store = MemoryStore(home)
    answer = store.add("memory", "A new fact.").response
    shown = answer["current_entries"]
    assert not answer["success"] and 1 < len(shown) < 200
    assert "withheld" in shown[-1] and "memhost memory fix" in shown[-1]
    assert len("\n§\n".join(shown[:-1])) <= 2200
    ambiguous = store.remove("memory", "note 1").response
    assert len(ambiguous["matches"]) == 11 and ambiguous["matches"][-1] == "[and 1,101 more]"


def test_repeated_refused_writes_keep_one_backup(home: Path):
    path = write_memory(home, "alpha\n §\nbeta")  # a hand edit the store will not rewrite
    store = MemoryStore(home)

    answers = [store.remove("memory", "alpha").response for _ in range(5)]

    assert all(not a["success"] for a in answers)
    assert len(list(path.parent.glob("MEMORY.md.bak.*"))) == 1
    assert {a["drift_backup"] for a in answers} == {str(next(path.parent.glob("MEMORY.md.bak.*")))}
    # A different content is a different backup.
    path.write_text("alpha\n §\ngamma", encoding="utf-8")
    store.remove("memory", "alpha")
    assert len(list(path.parent.glob("MEMORY.md.bak.*"))) == 2


# -- memhost memory fix -------------------------------------------------------------------------


def test_fix_splits_a_blob_trims_to_budget_with_preview_backup_and_archive(home: Path):
    blob = pasted_notes(60)
    path = write_memory(home, blob)

    preview = run(home, "memory", "fix")  # stdin is not a terminal: preview only
    assert preview.returncode == 1
    assert "--yes" in preview.stderr and "keep [1] fact number 0" in preview.stdout
    assert path.read_text(encoding="utf-8") == blob

    fixed = run(home, "memory", "fix", "--yes", "--json")
    assert fixed.returncode == 0, fixed.stderr
    data = json.loads(fixed.stdout)
    assert data["applied"] is True
    entries = MemoryStore(home).entries("memory")
    assert entries[0] == "fact number 0: " + "x" * 60
    assert sum(len(e) for e in entries) + 3 * (len(entries) - 1) <= 2200
    backup = Path(data["results"][0]["backup"])
    assert backup.read_text(encoding="utf-8") == blob
    # Nothing is lost: what did not fit is in the archive, and can be restored.
    history = json.loads(run(home, "memory", "history", "--json").stdout)["entries"]
    archived = {h["text"] for h in history}
    assert blob.strip() in archived
    assert "fact number 59: " + "x" * 60 in archived
    assert "drift" not in run(home, "memory", "show").stdout
    assert MemoryStore(home).drift("memory") is None


def test_fix_on_a_clean_file_changes_nothing(home: Path):
    store = MemoryStore(home)
    store.add("memory", "User likes tea.")
    before = store.path("memory").read_bytes()

    result = run(home, "memory", "fix", "--yes")

    assert result.returncode == 0 and "Nothing to fix" in result.stdout
    assert store.path("memory").read_bytes() == before


def test_fix_refuses_a_file_it_cannot_repair_and_changes_nothing(home: Path):
    path = write_memory(home, "alpha\x00beta\n\ngamma")
    before = path.read_bytes()

    result = run(home, "memory", "fix", "--yes")

    assert result.returncode == 2 and "NUL" in result.stderr
    assert path.read_bytes() == before
    assert not list(path.parent.glob("MEMORY.md.bak.*"))
