"""The curator at the command line (``memhost memory stale|pin|unpin|confirm|review-after|curate``,
doctor's *Curator* section, the settings page's flags), and ``memhost memory approve`` mirroring
to a configured provider: the real console script, run as a process against a temporary home.

Entries are aged by writing them with a store whose clock is set in the past; the commands run
on the real clock."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_llm import FakeLLM, call, text_reply, tools_reply

from memhost.builtin_providers import entrymeta
from memhost.builtin_providers.store import MemoryStore
from memhost.config import update_config
from memhost.review.approval import ApprovalGate, PendingStore
from cli_runner import run_memhost

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))
DAY = 86_400


def memhost(home: Path, *args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return run_memhost(args, env={**os.environ, "MEMHOST_HOME": str(home), **(env or {})},
                       timeout=timeout)


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)


def aged(home: Path, days: float, *entries: str, target: str = "memory") -> MemoryStore:
    """Add ``entries`` as if written ``days`` ago."""
    when = time.time() - days * DAY
    store = MemoryStore(home, clock=lambda: when)
    for text in entries:
        assert store.add(target, text, origin="foreground").ok
    return store


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


# -- stale ------------------------------------------------------------------------------------


def test_stale_lists_old_entries_oldest_first_with_age_and_origin(home: Path) -> None:
    aged(home, 300, "Oldest fact")
    aged(home, 120, "User likes green tea", target="user")
    aged(home, 10, "Fresh fact")
    result = memhost(home, "memory", "stale")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    oldest = next(i for i, line in enumerate(lines) if "Oldest fact" in line)
    tea = next(i for i, line in enumerate(lines) if "green tea" in line)
    assert oldest < tea and "Fresh fact" not in result.stdout
    assert re.search(r"300d\s+memory\s+foreground\s+not updated or confirmed for 300 days",
                     result.stdout)
    assert "2 entries stale" in result.stdout

    data = as_json(memhost(home, "memory", "stale", "--json", "--older-than", "200d"))
    assert data["older_than_days"] == 200
    assert [(e["text"], e["age_days"], e["origin"]) for e in data["stale"]] == [
        ("Oldest fact", 300, "foreground")]
    assert memhost(home, "memory", "stale", "--older-than", "soon").returncode == 2


def test_stale_reports_entries_of_unknown_age(home: Path) -> None:
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("Typed in by hand", encoding="utf-8")
    result = memhost(home, "memory", "stale")
    assert result.returncode == 0
    assert "No stale entries" in result.stdout and "1 entry without metadata" in result.stdout
    data = as_json(memhost(home, "memory", "stale", "--json"))
    assert [e["text"] for e in data["age_unknown"]] == ["Typed in by hand"]


# -- marks ------------------------------------------------------------------------------------


def test_pin_unpin_confirm_and_review_after(home: Path) -> None:
    aged(home, 200, "Uses uv", "Uses uv and ruff for lint", "Deploys on Fridays")
    ambiguous = memhost(home, "memory", "pin", "Uses")
    assert ambiguous.returncode == 1
    assert "matched 2 different entries" in ambiguous.stderr
    assert "- Uses uv and ruff for lint" in ambiguous.stderr

    pinned = memhost(home, "memory", "pin", "Uses uv")  # the exact entry wins
    assert pinned.returncode == 0 and "Pinned" in pinned.stdout
    confirmed = as_json(memhost(home, "memory", "confirm", "ruff", "--json"))
    assert confirmed["success"] and confirmed["entry"] == "Uses uv and ruff for lint"
    review = as_json(memhost(home, "memory", "review-after", "Fridays", "2020-01-01", "--json"))
    assert review["success"] and review["review_after"] == "2020-01-01"
    assert memhost(home, "memory", "review-after", "Fridays", "someday").returncode == 1
    missing = memhost(home, "memory", "confirm", "nothing like this")
    assert missing.returncode == 1 and "no entry matched" in missing.stderr

    meta = dict(MemoryStore(home).metadata("memory"))
    assert meta["Uses uv"]["pinned"] is True
    assert meta["Uses uv and ruff for lint"]["confirmed_by"] == "cli"
    stale = as_json(memhost(home, "memory", "stale", "--json"))["stale"]
    assert [(e["text"], e["reason"]) for e in stale] == [
        ("Deploys on Fridays", "review date 2020-01-01 has come")]

    show = as_json(memhost(home, "memory", "show", "--json"))["stores"][0]["entries"]
    flags = {e["text"]: (e["pinned"], e["stale"], e["review_after"]) for e in show}
    assert flags == {"Uses uv": (True, False, None),
                     "Uses uv and ruff for lint": (False, False, None),
                     "Deploys on Fridays": (False, True, "2020-01-01")}
    text = memhost(home, "memory", "show").stdout
    assert "(pinned)" in text and "(stale: review date 2020-01-01 has come)" in text

    assert memhost(home, "memory", "unpin", "Uses uv").returncode == 0
    assert "pinned" not in dict(MemoryStore(home).metadata("memory"))["Uses uv"]
    cleared = memhost(home, "memory", "review-after", "Fridays", "none")
    assert cleared.returncode == 0
    assert "review_after" not in dict(MemoryStore(home).metadata("memory"))["Deploys on Fridays"]


def test_marks_never_rewrite_the_memory_file(home: Path) -> None:
    aged(home, 5, "Likes tea")
    before = (home / "memories" / "MEMORY.md").read_bytes()
    for argv in (["pin", "tea"], ["confirm", "tea"], ["review-after", "tea", "30d"]):
        assert memhost(home, "memory", *argv).returncode == 0
    assert (home / "memories" / "MEMORY.md").read_bytes() == before


# -- curate -----------------------------------------------------------------------------------


def test_curate_dry_run_then_archive_then_restore(home: Path) -> None:
    aged(home, 400, "Ancient fact one", "Ancient fact two")
    aged(home, 300, "Pinned ancient fact")
    assert memhost(home, "memory", "pin", "Pinned ancient").returncode == 0
    aged(home, 30, "Recent fact")
    before = files_under(home)

    dry = memhost(home, "memory", "curate", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "Dry run: nothing was changed" in dry.stdout and "Would archive 2 entries" in dry.stdout
    assert "Kept 1 entry: pinned." in dry.stdout
    assert files_under(home) == before

    data = as_json(memhost(home, "memory", "curate", "--json", "--max", "1"))
    assert data["success"] and [a["text"] for a in data["archived"]] == ["Ancient fact one"]
    assert [a["text"] for a in data["left_for_later"]] == ["Ancient fact two"]
    result = memhost(home, "memory", "curate", "--archive-older-than", "180d")
    assert result.returncode == 0
    assert "Archived 1 entry (older than 180 days)" in result.stdout
    archive_id = re.search(r"memhost memory restore (\w+)", result.stdout).group(1)
    assert MemoryStore(home).entries("memory") == ["Pinned ancient fact", "Recent fact"]

    history = as_json(memhost(home, "memory", "history", "--json"))["entries"]
    assert [(r["text"], r["origin"]) for r in history] == [
        ("Ancient fact two", "curator"), ("Ancient fact one", "curator")]
    assert memhost(home, "memory", "restore", archive_id).returncode == 0
    assert "Ancient fact two" in MemoryStore(home).entries("memory")
    again = memhost(home, "memory", "curate")
    assert "Nothing to archive" in again.stdout


def test_curate_under_write_approval_stages(home: Path) -> None:
    update_config(home, {("memory", "write_approval"): True})
    aged(home, 400, "Ancient fact")
    before = files_under(home / "memories")
    result = memhost(home, "memory", "curate")
    assert result.returncode == 0, result.stderr
    assert "Staged 1 entry for archiving" in result.stdout
    assert files_under(home / "memories") == before
    pending = as_json(memhost(home, "memory", "pending", "--json"))["pending"]
    assert [(p["origin"], p["payload"]["action"]) for p in pending] == [("curator", "remove")]
    assert "already waiting" in memhost(home, "memory", "curate").stdout
    assert memhost(home, "memory", "approve", "all").returncode == 0
    assert MemoryStore(home).entries("memory") == []
    assert [r.origin for r in MemoryStore(home).archive.entries()] == ["curator"]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def test_curate_merge_stages_proposals_for_approval(home: Path, llm: FakeLLM) -> None:
    update_config(home, {("review", "base_url"): llm.url, ("review", "model"): "fake-model"})
    aged(home, 20, "Tests run with pytest", "Run tests with `uv run pytest -q`",
         "Keep answers short")
    assert memhost(home, "memory", "pin", "Keep answers").returncode == 0
    llm.script(
        tools_reply(call("propose_change", {
            "target": "memory", "kind": "merge", "entries": ["Tests run", "uv run"],
            "content": "Run tests with `uv run pytest -q`."}),
            call("propose_change", {
                "target": "memory", "kind": "rewrite", "entries": ["Keep answers short"],
                "content": "Answers: short."})),
        text_reply("Done."))
    before = files_under(home / "memories")
    result = memhost(home, "memory", "curate", "--merge")
    assert result.returncode == 0, result.stderr
    assert "Merge pass: 1 proposal staged for approval." in result.stdout
    assert "refused:" in result.stdout and "pinned" in result.stdout
    assert files_under(home / "memories") == before
    [record] = PendingStore(home).list()
    assert record.origin == "curator" and record.summary.startswith("curator merge")
    assert memhost(home, "memory", "approve", record.id).returncode == 0
    assert MemoryStore(home).entries("memory") == ["Run tests with `uv run pytest -q`.",
                                                   "Keep answers short"]


def test_merge_is_off_by_default_and_needs_a_model(home: Path) -> None:
    aged(home, 400, "Ancient fact")
    assert "Merge pass" not in memhost(home, "memory", "curate", "--dry-run").stdout
    refused = memhost(home, "memory", "curate", "--merge")
    assert refused.returncode == 2 and "[review] base_url" in refused.stderr
    assert MemoryStore(home).entries("memory") == ["Ancient fact"]  # nothing ran
    update_config(home, {("curator", "merge"): True})
    assert memhost(home, "memory", "curate", "--dry-run").returncode == 2
    assert memhost(home, "memory", "curate", "--dry-run", "--no-merge").returncode == 0


# -- doctor -----------------------------------------------------------------------------------


def test_doctor_shows_stale_entries_and_the_fullness_trend(home: Path) -> None:
    update_config(home, {("memory", "memory_char_limit"): 200})
    now = time.time()
    clock = [now - 20 * DAY]
    store = MemoryStore(home, memory_char_limit=200, clock=lambda: clock[0])
    for day in range(20, 0, -2):
        clock[0] = now - day * DAY
        assert store.add("memory", f"day {day:02d}").ok
    aged(home, 100, "A stale note", target="user")
    result = memhost(home, "doctor")
    section = result.stdout.split("Curator:", 1)[1].split("\n\n")[0].split("Providers:")[0]
    assert "USER.md: 1 stale, 0 pinned" in section
    assert re.search(r"fullness: \d+% 20d ago -> \d+% now \(\+\d+ points\)", section)
    assert "MEMORY.md is filling up" in section
    assert "1 entry stale" in section

    data = as_json(memhost(home, "doctor", "--json"))
    curator = next(s for s in data["sections"] if s["name"] == "curator")
    assert curator["stale"] == 1 and curator["counts"]["user"]["stale"] == 1
    trend = curator["trends"]["memory"]
    assert trend["now_percent"] > trend["then_percent"] and trend["full_in_days"] is not None


# -- approve mirrors to the configured provider -----------------------------------------------

RECORDER = {
    "plugin.toml": 'name = "recorder"\nversion = "1.0"\nentry = "provider:Recorder"\n',
    "provider.py": textwrap.dedent('''
        import json
        import os
        import time
        from pathlib import Path

        from memhost import hookimpl


        class Recorder:
            def __init__(self):
                self.home = None

            @hookimpl
            def initialize(self, session_id, home):
                self.home = Path(home)

            @hookimpl
            def on_builtin_write(self, action, target, content, previous_content, origin):
                time.sleep(float(os.environ.get("RECORDER_DELAY", "0")))
                with open(self.home / "recorded.jsonl", "a", encoding="utf-8") as f:
                    f.write(json.dumps({"action": action, "target": target, "content": content,
                                        "previous": previous_content, "origin": origin}) + "\\n")
    '''),
}


def install_recorder(home: Path) -> Path:
    folder = home / "plugins" / "recorder"
    folder.mkdir(parents=True)
    for name, text in RECORDER.items():
        (folder / name).write_text(text, encoding="utf-8")
    update_config(home, {("memory", "provider"): "recorder"})
    return home / "recorded.jsonl"


def stage_remove(home: Path, old_text: str) -> str:
    store = MemoryStore(home)
    answer = ApprovalGate(store, home=home, enabled=True).decide(
        {"action": "remove", "target": "memory", "old_text": old_text},
        origin="background_review", session_id="s")
    assert answer and answer["staged"]
    return answer["pending_id"]


def test_approve_mirrors_to_the_configured_provider(home: Path) -> None:
    recorded = install_recorder(home)
    aged(home, 1, "Old editor: Helix")
    pending_id = stage_remove(home, "Helix")
    result = memhost(home, "memory", "approve", pending_id)
    assert result.returncode == 0, result.stderr
    assert MemoryStore(home).entries("memory") == []
    lines = [json.loads(line) for line in recorded.read_text(encoding="utf-8").splitlines()]
    assert lines == [{"action": "remove", "target": "memory", "content": "",
                      "previous": "Old editor: Helix", "origin": "background_review"}]
    assert "warning" not in result.stderr


def test_approve_reports_a_shutdown_that_did_not_drain(home: Path) -> None:
    install_recorder(home)
    update_config(home, {("memory", "shutdown_timeout"): 0.3})
    aged(home, 1, "Old editor: Helix", "Old shell: zsh")
    slow = {"RECORDER_DELAY": "3"}
    result = memhost(home, "memory", "approve", stage_remove(home, "Helix"), "--json", env=slow)
    assert result.returncode == 0, result.stderr
    data = as_json(result)
    assert data["approved"] and data["provider_shutdown"]["status"] != "drained"
    assert MemoryStore(home).entries("memory") == ["Old shell: zsh"]  # the approval is committed
    text = memhost(home, "memory", "approve", stage_remove(home, "zsh"), env=slow)
    assert text.returncode == 0
    assert "memhost: warning: mirroring the approved writes to the memory provider ended" \
        in text.stderr


def test_approve_without_a_provider_still_works(home: Path) -> None:
    aged(home, 1, "Old editor: Helix")
    pending_id = stage_remove(home, "Helix")
    assert memhost(home, "memory", "approve", pending_id).returncode == 0
    assert MemoryStore(home).entries("memory") == []


# -- the settings page's JSON API -------------------------------------------------------------

URL_LINE = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")


@pytest.fixture
def settings_server(home: Path, tmp_path: Path) -> Iterator[tuple[int, str]]:
    pytest.importorskip("starlette")
    out = tmp_path / "server.out"
    environ = {**os.environ, "MEMHOST_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    with open(out, "wb") as stdout:
        proc = subprocess.Popen([SCRIPT, "settings", "serve", "--port", "0"], env=environ,
                                stdout=stdout, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (match := URL_LINE.search(out.read_text(errors="replace"))):
            assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        yield int(match.group(1)), match.group(2)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def api_memory(port: int, token: str) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/api/memory", headers={"Host": f"127.0.0.1:{port}",
                                                    "Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        conn.close()


def test_the_settings_api_flags_pinned_and_stale_entries(
        home: Path, settings_server: tuple[int, str]) -> None:
    aged(home, 200, "Stale and unpinned", "Stale but pinned")
    aged(home, 3, "Fresh fact", "Fresh, but its review date has come")
    store = MemoryStore(home)
    store.update_metadata("memory", "Stale but pinned", pinned=True)
    store.update_metadata("memory", "Fresh, but its review date has come",
                          review_after="2020-01-01")
    data = api_memory(*settings_server)
    memory = next(s for s in data["stores"] if s["target"] == "memory")
    flags = {e["text"]: (e["pinned"], e["stale"]) for e in memory["entries"]}
    assert flags == {"Stale and unpinned": (False, True), "Stale but pinned": (True, False),
                     "Fresh fact": (False, False),
                     "Fresh, but its review date has come": (False, True)}
    # reading memory through the page refreshes nothing
    assert entrymeta.for_entry(entrymeta.load(store.path("memory")),
                               "Stale and unpinned").get("confirmed") is None
