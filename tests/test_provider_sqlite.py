"""The bundled ``sqlite`` recall provider: the contract suite, then its own behaviour through a
real manager, real files and real processes."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from memhost import RetryableError, discovery
from memhost import recall
from memhost.testing import ProviderContract, load_folder_provider
from recall_helpers import PLUGINS, configure, manager, provider_errors, search, sync_turns, turn

#: The recall database's schema version (plugins/sqlite/migrations.py).
SCHEMA_VERSION = 3

FOLDER = PLUGINS / "sqlite"


class TestSqliteContract(ProviderContract):
    @pytest.fixture
    def provider(self) -> Any:
        return load_folder_provider(FOLDER)


@pytest.fixture
def provider(home: Path) -> Any:
    made = load_folder_provider(FOLDER)
    made.initialize(session_id="s-now", home=home, config={}, context="primary", user_id="")
    yield made
    made.shutdown()


@pytest.fixture
def recall_home(home: Path) -> Path:
    configure(home, "sqlite")
    return home


def rows(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchall()


# -- discovery and settings ------------------------------------------------------------------------


def test_it_is_a_bundled_folder_provider_found_like_any_other(home: Path) -> None:
    found = discovery.discover(home).get("sqlite")
    assert found is not None and found.source == "bundled" and found.status == "available"
    assert found.path == FOLDER.resolve()
    assert discovery.schema_path("sqlite", home) == FOLDER.resolve() / "config_schema.py"


def test_it_is_not_active_unless_chosen(home: Path) -> None:
    from memhost.manager import MemoryManager

    made = MemoryManager.from_home(home)
    try:
        assert made.status()["external_provider"] is None
    finally:
        made.shutdown()


def test_every_setting_has_a_schema_field_and_defaults_reach_the_provider(home: Path) -> None:
    from memhost.schema.settings import SettingsService

    described = SettingsService(home).describe("sqlite")
    keys = {f["key"] for f in described["fields"]}
    assert {"path", "max_chars", "max_items", "min_score", "min_coverage", "store_turns",
            "store_sessions", "busy_timeout_ms"} <= keys
    values = discovery.runtime_config("sqlite", home)
    assert values["path"] == "recall.db" and values["max_chars"] == 1500


def test_check_available_explains_a_bad_path_setting(provider: Any) -> None:
    assert provider.check_available(config={}) is None
    reason = provider.check_available(config={"path": 5})
    assert "providers.sqlite.path" in reason and "memhost config set" in reason


# -- the database file -----------------------------------------------------------------------------


def test_one_private_file_in_wal_mode_migrated_once(home: Path, provider: Any) -> None:
    db = home / "recall.db"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert rows(db, "PRAGMA journal_mode") == [("wal",)]
    assert rows(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    # Migrating again (another process starting, a restart) changes nothing.
    assert provider.store.migrate() == SCHEMA_VERSION
    assert rows(db, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    conn = provider.store.connection()
    assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (5000,)


def test_a_configured_path_is_used_relative_to_the_home(home: Path) -> None:
    made = load_folder_provider(FOLDER)
    made.initialize(session_id="s", home=home, config={"path": "data/mine.db"},
                    context="primary", user_id="")
    try:
        assert (home / "data" / "mine.db").is_file() and not (home / "recall.db").exists()
    finally:
        made.shutdown()


def test_a_file_from_a_newer_memhost_is_refused(home: Path) -> None:
    db = home / "recall.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 99")
    made = load_folder_provider(FOLDER)
    with pytest.raises(Exception, match="newer than this memhost"):
        made.initialize(session_id="s", home=home, config={}, context="primary", user_id="")


# -- storing ---------------------------------------------------------------------------------------


def test_a_completed_turn_is_stored_once_without_tool_chatter(recall_home: Path) -> None:
    made = manager(recall_home)
    messages = [{"role": "user", "content": "Which port does the billing API use?"},
                {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "x"}}]},
                {"role": "tool", "content": "TOOL OUTPUT 8443 netstat dump"},
                {"role": "assistant", "content": "The billing API listens on port 8443."}]
    made.begin_turn(messages[0]["content"])
    made.finish_turn(messages[0]["content"], messages[-1]["content"], messages=messages)
    made.flush(10)
    made.shutdown()
    found = rows(recall_home / "recall.db",
                 "SELECT kind, role, body, session_id, created_at FROM items ORDER BY id")
    # A turn is two items, the message and the reply, one after the other.
    assert [(kind, role, session) for kind, role, _, session, _ in found] == [
        ("turn", "user", "session-1"), ("turn", "assistant", "session-1")]
    assert all(abs(created - time.time()) < 60 for *_, created in found)
    assert found[0][2] == "Which port does the billing API use?"
    assert found[1][2] == "The billing API listens on port 8443."


def test_an_interrupted_turn_is_not_stored(recall_home: Path) -> None:
    made = manager(recall_home)
    made.begin_turn("Tell me about the kestrel cluster")
    made.finish_turn("Tell me about the kestrel cluster", "It has", interrupted=True)
    made.flush(10)
    made.shutdown()
    assert rows(recall_home / "recall.db", "SELECT count(*) FROM items") == [(0,)]


def test_a_replayed_write_is_stored_once(provider: Any, home: Path) -> None:
    arguments = {"user_content": "The office wifi is called heron-5",
                 "assistant_content": "Noted, heron-5.", "session_id": "s1",
                 "messages": [{"role": "user", "content": "x"}]}
    for _ in range(3):
        provider.sync_turn(**arguments)
    provider.on_subtask(task="Count the invoices", result="There are 41.",
                        child_session_id="c1", session_id="s1")
    provider.on_subtask(task="Count the invoices", result="There are 41.",
                        child_session_id="c1", session_id="s1")
    assert rows(home / "recall.db", "SELECT kind, count(*) FROM items GROUP BY kind") == [
        ("subtask", 1), ("turn", 2)]
    # The same words at another point of the conversation are another turn.
    provider.sync_turn(**{**arguments, "messages": []})
    assert rows(home / "recall.db", "SELECT count(*) FROM items WHERE kind = 'turn'") == [(4,)]


def test_session_end_and_subtasks_store_what_they_are_given(recall_home: Path) -> None:
    made = manager(recall_home)
    turn(made, "Plan the walrus migration", "Step one: freeze writes.")
    made.subtask_finished("Inventory the walrus tables", "Seven tables, two huge.", "child-1")
    made.end_session([{"role": "user", "content": "Plan the walrus migration"},
                      {"role": "tool", "content": "noise"},
                      {"role": "assistant", "content": "Step one: freeze writes."}])
    made.flush(10)
    kinds = {r["kind"]: r for r in search(made, "walrus")["results"]}
    made.shutdown()
    assert set(kinds) == {"turn", "subtask", "session"}
    assert kinds["subtask"]["text"] == "Inventory the walrus tables → Seven tables, two huge."
    assert "noise" not in kinds["session"]["text"]
    assert kinds["session"]["session_id"] == kinds["subtask"]["session_id"] == "session-1"


def test_only_primary_sessions_write(home: Path) -> None:
    made = load_folder_provider(FOLDER)
    made.initialize(session_id="s", home=home, config={}, context="subagent", user_id="")
    made.sync_turn(user_content="secret plans for zebra", assistant_content="ok then",
                   session_id="s", messages=[])
    made.on_builtin_write(action="add", target="memory", content="zebra note",
                          previous_content=None, session_id="s", origin="foreground")
    made.shutdown()
    assert rows(home / "recall.db", "SELECT count(*) FROM items") == [(0,)]


# -- builtin notes as facts ------------------------------------------------------------------------


def test_a_replaced_note_is_kept_and_marked_but_never_recalled(recall_home: Path) -> None:
    made = manager(recall_home)
    memory = {"action": "add", "target": "memory",
              "content": "The staging database runs on host osprey-3."}
    assert json.loads(made.call_tool("memory", memory))["success"]
    assert json.loads(made.call_tool("memory", {
        "action": "replace", "target": "memory", "old_text": "osprey-3",
        "content": "The staging database runs on host falcon-9."}))["success"]
    made.flush(10)
    made.start_session("session-2")
    context = made.begin_turn("Which host runs the staging database?").context
    facts = rows(recall_home / "recall.db",
                 "SELECT id, body, status, replaced_by FROM items WHERE kind = 'fact' ORDER BY id")
    made.shutdown()
    assert "falcon-9" in context and "osprey-3" not in context
    (old_id, old, old_status, by), (new_id, new, new_status, _) = facts
    assert "osprey-3" in old and old_status == "superseded" and by == new_id
    assert "falcon-9" in new and new_status == "active"


def test_a_removed_note_is_retired(provider: Any, home: Path) -> None:
    note = "The user's cat is called Pixel."
    provider.on_builtin_write(action="add", target="user", content=note, previous_content=None,
                              session_id="s", origin="foreground")
    provider.on_builtin_write(action="remove", target="user", content="",
                              previous_content=note, session_id="s", origin="foreground")
    # Replaying both (the outbox after a crash) changes nothing.
    provider.on_builtin_write(action="remove", target="user", content="",
                              previous_content=note, session_id="s", origin="foreground")
    assert rows(home / "recall.db", "SELECT body, status FROM items") == [(note, "retired")]
    assert provider.prefetch(query="what is the cat called?", session_id="s2") is None


def test_a_replace_of_a_note_never_seen_keeps_the_old_one_marked(provider: Any,
                                                                 home: Path) -> None:
    provider.on_builtin_write(action="replace", target="memory", content="Deploys on Fridays.",
                              previous_content="Deploys on Tuesdays.", session_id="s",
                              origin="background_review")
    assert sorted(rows(home / "recall.db", "SELECT body, status, origin FROM items")) == [
        ("Deploys on Fridays.", "active", "background_review"),
        ("Deploys on Tuesdays.", "superseded", "background_review")]


# -- recall ----------------------------------------------------------------------------------------


def fill(provider: Any) -> None:
    sync_turns(provider, "s-old",
               ("Remember that deployments happen on Tuesdays.",
                "Noted: deployments happen on Tuesdays."),
               ("What flour works for sourdough bread?", "Rye flour gives a tangy sourdough."))
    provider.on_builtin_write(action="add", target="user", content="User prefers short answers.",
                              previous_content=None, session_id="s-old", origin="foreground")


def test_an_on_topic_query_recalls_with_date_and_kind(provider: Any) -> None:
    fill(provider)
    text = provider.prefetch(query="What did we decide about the deployment schedule?",
                             session_id="s-now")
    assert text is not None
    # The session's date once, then the message and the reply that match, labelled U and A
    # (and the message after them, which a match lifts: an answer rarely repeats the words).
    lines = text.splitlines()
    assert lines[:3] == [f"[{recall.date_text(time.time())}]",
                         "U: Remember that deployments happen on Tuesdays.",
                         "A: Noted: deployments happen on Tuesdays."]
    assert "Rye flour" not in text and "short answers" not in text


def test_an_off_topic_query_recalls_nothing(provider: Any) -> None:
    fill(provider)
    assert provider.prefetch(query="How do I replace a bicycle chain?", session_id="s-now") is None
    assert provider.prefetch(query="Could you tell me more, please?", session_id="s-now") is None


def test_the_current_sessions_last_turn_is_not_echoed(provider: Any) -> None:
    sync_turns(provider, "s-now",
               ("The kiln reaches 1200 degrees.", "That is hot enough for stoneware."),
               ("Glaze the kiln pots with celadon.", "Celadon glaze, noted."))
    text = provider.prefetch(query="what about the kiln?", session_id="s-now")
    assert text is not None and "1200 degrees" in text and "celadon" not in text.lower()
    # Another session sees both; a compressed continuation of this one still leaves it out.
    assert "celadon" in provider.prefetch(query="what about the kiln?", session_id="other").lower()
    provider.rotate(old_session_id="s-now", new_session_id="s-now-2", reason="compress")
    assert "celadon" not in provider.prefetch(query="what about the kiln?",
                                              session_id="s-now-2").lower()


def test_results_are_best_first_ties_newest_first_and_within_budget(provider: Any) -> None:
    sync_turns(provider, "s-old",
               *[(f"Note {number}: the heron project uses gRPC.", "Understood, " + "detail " * 20)
                 for number in range(30)],
               ("The heron project moved its gRPC gateway to envoy.", "Envoy it is."))
    text = provider.prefetch(query="heron project gRPC envoy", session_id="s-now")
    assert "The heron project moved its gRPC gateway to envoy." in text
    assert len(text) <= 1500 and len(text.splitlines()) <= 1 + 20
    # The notes tie: the newest come first, and the budget is used, not left half empty.
    numbers = [int(line.split("Note ")[1].split(":")[0]) for line in text.splitlines()
               if "Note " in line]
    assert numbers == sorted(numbers) and numbers[-1] == 29 and len(numbers) >= 10
    # One session is all there is: it gets the whole budget (here, all 20 items).
    assert len(text.splitlines()) == 1 + 20
    provider.config["max_chars"] = 300
    assert len(provider.prefetch(query="heron project gRPC envoy", session_id="s-now")) <= 300


def test_no_one_session_fills_the_budget_while_others_have_something(provider: Any) -> None:
    sync_turns(provider, "s-long", *[(f"Heron status {n}: the heron build is green again.",
                                      "Good news about heron.") for n in range(40)])
    sync_turns(provider, "s-other", ("The heron rollout waits for the security review.",
                                     "Review first, then heron."))
    text = provider.prefetch(query="How is heron doing?", session_id="s-now")
    assert "The heron rollout waits for the security review." in text
    assert text.count(f"[{recall.date_text(time.time())}]") == 2


def test_pre_compress_returns_the_relevant_facts(provider: Any) -> None:
    fill(provider)
    provider.on_builtin_write(action="add", target="memory",
                              content="Deployments need a sign-off from Priya.",
                              previous_content=None, session_id="s-old", origin="foreground")
    text = provider.pre_compress(session_id="s-now", messages=[
        {"role": "user", "content": "We are about to do the deployment."},
        {"role": "assistant", "content": "Ready when you are."}])
    assert text.startswith("Stored facts relevant to this conversation:")
    assert "Priya" in text and "sourdough" not in text and "Tuesdays" not in text
    assert provider.pre_compress(session_id="s-now", messages=[]) is None


# -- tools -----------------------------------------------------------------------------------------


def test_recall_search_and_recall_forget(provider: Any, home: Path) -> None:
    fill(provider)
    answer = json.loads(provider.handle_tool_call(
        tool_name="recall_search", arguments={"query": "sourdough", "limit": 5}))
    # The message and the reply are two items; each names its role.
    assert answer["success"]
    assert [(h["role"], h["text"]) for h in answer["results"][:2]] == [
        ("user", "What flour works for sourdough bread?"),
        ("assistant", "Rye flour gives a tangy sourdough.")]
    hit = answer["results"][0]
    assert hit["kind"] == "turn" and hit["text"] == "What flour works for sourdough bread?"
    assert hit["date"] == recall.date_text(time.time())
    today = recall.date_text(time.time())
    window = {"query": "sourdough", "since": today, "until": today}
    assert json.loads(provider.handle_tool_call(
        tool_name="recall_search", arguments=window))["count"] == answer["count"]
    assert json.loads(provider.handle_tool_call(
        tool_name="recall_search", arguments={**window, "until": "2001-01-01",
                                              "since": "2000-01-01"}))["count"] == 0
    recent = json.loads(provider.handle_tool_call(tool_name="recall_search",
                                                  arguments={"query": "", "limit": 2}))
    assert recent["count"] == 2
    forgotten = json.loads(provider.handle_tool_call(tool_name="recall_forget",
                                                     arguments={"id": hit["id"]}))
    assert forgotten == {"success": True, "forgotten": {"id": hit["id"], "kind": "turn",
                                                        "was": "active"}}
    assert rows(home / "recall.db", "SELECT body, status FROM items WHERE id = ?", hit["id"]) == [
        ("", "forgotten")]
    left = json.loads(provider.handle_tool_call(tool_name="recall_search",
                                                arguments={"query": "sourdough"}))["results"]
    assert [h["text"] for h in left if "sourdough" in h["text"]] == [
        "Rye flour gives a tangy sourdough."]
    again = json.loads(provider.handle_tool_call(tool_name="recall_forget",
                                                 arguments={"id": hit["id"]}))
    assert not again["success"] and "recall_search" in again["error"]


@pytest.mark.parametrize(("tool", "arguments", "problem"), [
    ("recall_search", {"query": 5}, "query must be a string"),
    ("recall_search", {"query": "x", "limit": 0}, "limit"),
    ("recall_search", {"query": "x", "since": "last week"}, "since"),
    ("recall_search", {"query": "x", "since": "2024-05-02", "until": "2024-05-01"}, "before"),
    ("recall_forget", {"id": "twelve"}, "id must be"),
    ("recall_nothing", {}, "Unknown tool"),
])
def test_bad_tool_arguments_get_a_json_error(provider: Any, tool: str,
                                             arguments: dict[str, Any], problem: str) -> None:
    answer = json.loads(provider.handle_tool_call(tool_name=tool, arguments=arguments))
    assert answer["success"] is False and problem in answer["error"]


# -- locks and several processes -------------------------------------------------------------------


def test_a_write_locked_out_raises_retryable_error(home: Path) -> None:
    made = load_folder_provider(FOLDER)
    made.initialize(session_id="s", home=home, config={"busy_timeout_ms": 100},
                    context="primary", user_id="")
    blocker = sqlite3.connect(home / "recall.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(RetryableError, match="locked"):
            made.sync_turn(user_content="lock test", assistant_content="ok then",
                           session_id="s", messages=[])
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    made.sync_turn(user_content="lock test", assistant_content="ok then", session_id="s",
                   messages=[])
    made.shutdown()
    assert rows(home / "recall.db", "SELECT count(*) FROM items") == [(2,)]


def test_a_locked_database_keeps_the_write_in_the_outbox_until_it_lands(home: Path) -> None:
    configure(home, "sqlite", {"busy_timeout_ms": 100})
    made = manager(home)
    blocker = sqlite3.connect(home / "recall.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        turn(made, "The pelican service restarts nightly.", "Nightly restarts, noted.")
        deadline = time.monotonic() + 10
        while not made.status()["background"]["retrying"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert made.status()["background"]["retrying"]["task"] == "sync_turn"
        assert made.status()["outbox_pending"] == 1
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert made.flush(30)
    assert made.status()["outbox_pending"] == 0
    assert "retryable" in provider_errors(made)["sync_turn"]["last_error"]
    made.shutdown()
    assert rows(home / "recall.db", "SELECT count(*) FROM items") == [(2,)]


WRITER = textwrap.dedent("""
    import sys
    from memhost.manager import MemoryManager
    home, number, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    manager = MemoryManager.from_home(home)
    assert manager.status()["external_provider"] == "sqlite", manager.status()["problems"]
    manager.start_session(f"writer-{number}")
    for n in range(turns):
        text = f"writer {number} turn {n} talks about lighthouse {number * 1000 + n}"
        manager.finish_turn(text, f"reply {number}-{n}")
    report = manager.shutdown(timeout=120)
    print(report.status, report.kept_in_outbox)
""")


@pytest.mark.slow
def test_several_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "recall.db"
    writers, turns = 4, 40
    procs = []
    for number in range(writers):
        home = tmp_path / f"home-{number}"
        configure(home, "sqlite", {"path": str(shared), "busy_timeout_ms": 200})
        env = {**os.environ, "MEMHOST_HOME": str(home), "MEMHOST_DISABLE_ENTRYPOINTS": "1"}
        procs.append(subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), str(number), str(turns)], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.split() == ["drained", "0"], (out, err)
    found = rows(shared, "SELECT session_id, count(*), count(DISTINCT body) FROM items "
                        "GROUP BY session_id ORDER BY session_id")
    assert found == [(f"writer-{n}", 2 * turns, 2 * turns) for n in range(writers)]
    assert rows(shared, "SELECT value FROM counts WHERE name = 'live'") == [(2 * writers * turns,)]
    assert rows(shared, "SELECT df FROM terms WHERE stem = 'lighthous'") == [(writers * turns,)]


# -- maintenance command ---------------------------------------------------------------------------


def test_memhost_recall_stats_and_vacuum(recall_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memhost.cli import main

    made = manager(recall_home)
    turn(made, "The otter queue drains hourly.", "Hourly, noted.")
    made.shutdown()
    assert main(["--home", str(recall_home), "recall", "stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["provider"] == "sqlite" and data["path"] == str(recall_home / "recall.db")
    assert data["counts"] == {"turn": {"active": 2}} and data["journal_mode"] == "wal"
    assert main(["--home", str(recall_home), "recall", "stats"]) == 0
    assert "recall.db" in capsys.readouterr().out
    assert main(["--home", str(recall_home), "recall", "vacuum"]) == 0
    assert "vacuumed" in capsys.readouterr().out
    assert rows(recall_home / "recall.db", "SELECT count(*) FROM items") == [(2,)]


def test_memhost_recall_stats_without_a_database_says_so(home: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from memhost.cli import main

    assert main(["--home", str(home), "recall", "stats"]) == 1
    assert "no recall database" in capsys.readouterr().err
    assert not (home / "recall.db").exists()


def test_a_turn_holding_half_a_character_is_stored_and_nothing_stays_in_the_outbox(
        home: Path) -> None:
    """A lone surrogate (JSON's "\\ud800" decodes to one) cannot be written to SQLite: the turn
    reaches the provider with U+FFFD in its place, is stored and found, and shutdown drains."""
    configure(home, "sqlite")
    made = manager(home)
    turn(made, "the zqfrob service \ud800 listens on 9000", "noted \udcff: zqfrob on 9000")
    assert made.flush(10)
    found = search(made, "zqfrob \udc80")
    assert found["count"] == 2, found
    assert {r["text"] for r in found["results"]} == {
        "the zqfrob service \ufffd listens on 9000", "noted \ufffd: zqfrob on 9000"}
    assert provider_errors(made) == {}
    report = made.shutdown()
    assert report.status == "drained" and report.kept_in_outbox == 0, report
