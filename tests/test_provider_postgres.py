"""The bundled ``postgres`` recall provider, against the real server (see
:mod:`postgres_server`: skipped when it is missing, failed instead under CI)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memhost import RetryableError, discovery
from memhost.testing import ProviderContract, load_folder_provider
from postgres_server import (
    drop_run_schemas,
    execute,
    new_schema,
    require_postgres,
    terminate,
)
from recall_helpers import PLUGINS, configure, manager, provider_errors, search, sync_turns, turn

FOLDER = PLUGINS / "postgres"

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module", autouse=True)
def _drop_schemas_afterwards() -> Any:
    yield
    drop_run_schemas()


@pytest.fixture
def dsn() -> str:
    return require_postgres()


@pytest.fixture(scope="module")
def schema() -> str:
    return new_schema("m")


def unique_user() -> str:
    return f"user-{secrets.token_hex(4)}"


@pytest.fixture
def settings(dsn: str, schema: str) -> dict[str, Any]:
    return {"dsn": dsn, "schema": schema, "user_id": unique_user()}


@pytest.fixture
def provider(home: Path, settings: dict[str, Any]) -> Any:
    made = load_folder_provider(FOLDER)
    made.initialize(session_id="s-now", home=home, config=settings, context="primary", user_id="")
    yield made
    made.shutdown()


def items(schema: str, user: str, where: str = "TRUE", *params: Any) -> list[tuple[Any, ...]]:
    return execute(f'SELECT kind, body, status FROM "{schema}".items WHERE user_id = %s '
                   f"AND {where} ORDER BY id", user, *params)


class TestPostgresContract(ProviderContract):
    @pytest.fixture
    def provider(self, dsn: str) -> Any:
        return load_folder_provider(FOLDER)

    @pytest.fixture
    def provider_config(self, dsn: str, schema: str) -> dict[str, Any]:
        return {"dsn": dsn, "schema": schema, "user_id": unique_user()}


# -- without the server ----------------------------------------------------------------------------


def test_discovery_says_how_to_install_the_driver_when_it_is_missing(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib_metadata

    real = importlib_metadata.version

    def version(name: str) -> str:
        if name.lower().startswith("psycopg"):
            raise importlib_metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib_metadata, "version", version)
    found = discovery.discover(home).get("postgres")
    assert found.status == "unavailable"
    assert "psycopg[binary]>=3.1" in found.reason and "pip install" in found.reason
    configure(home, "postgres")
    from memhost.manager import MemoryManager

    made = MemoryManager.from_home(home)
    try:
        problems = made.status()["problems"]
    finally:
        made.shutdown()
    assert problems and "pip install" in problems[0]["problem"]


def test_importing_memhost_does_not_import_psycopg() -> None:
    code = ("import sys, memhost, memhost.manager, memhost.recall, memhost.cli; "
            "print(sorted(m for m in sys.modules if m.startswith('psycopg')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_check_available_explains_what_is_missing() -> None:
    made = load_folder_provider(FOLDER)
    reason = made.check_available(config={})
    assert "memhost config set providers.postgres.dsn" in reason
    assert "MEMHOST_POSTGRES_DSN" in reason
    bad_schema = made.check_available(config={"dsn": "host=x", "schema": "a-b; drop"})
    assert "providers.postgres.schema" in bad_schema
    assert made.check_available(config={"dsn": "host=127.0.0.1 dbname=test"}) is None


def test_the_dsn_is_a_secret_kept_in_the_env_store(home: Path) -> None:
    from memhost.schema.settings import SettingsService

    secret = "postgresql://memhost:hunter2-pw@db.example:5432/memory"
    configure(home, "postgres", {"dsn": secret, "schema": "team_memory"})
    assert "hunter2" not in (home / "config.toml").read_text(encoding="utf-8")
    assert "MEMHOST_POSTGRES_DSN" in (home / ".env").read_text(encoding="utf-8")
    described = {f["key"]: f for f in SettingsService(home).describe("postgres")["fields"]}
    assert described["dsn"]["is_set"] and "value" not in described["dsn"]
    values = discovery.runtime_config("postgres", home)
    assert values["dsn"] == secret and values["schema"] == "team_memory"


def test_an_unreachable_server_fails_initialize_and_keeps_writes_for_later(home: Path) -> None:
    made = load_folder_provider(FOLDER)
    config = {"dsn": "host=127.0.0.1 port=1 dbname=test user=postgres", "connect_timeout": 1,
              "schema": "nowhere"}
    # initialize fails (memhost then reports the provider unavailable for the session), and the
    # pool is closed rather than left reconnecting in the background
    with pytest.raises(RetryableError):
        made.initialize(session_id="s", home=home, config=config, context="primary", user_id="")
    assert made.store is None
    try:
        with pytest.raises(RetryableError):
            made.sync_turn(user_content="the albatross report", assistant_content="done",
                           session_id="s", messages=[])
    finally:
        made.shutdown()


# -- against the server ----------------------------------------------------------------------------


def test_the_schema_is_migrated_once_with_a_gin_index(provider: Any, settings: dict[str, Any]) -> None:
    schema = settings["schema"]
    versions = [(1,), (2,), (3,), (4,)]
    assert execute(f'SELECT version FROM "{schema}".recall_migrations') == versions
    indexes = dict(execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s",
                           schema))
    assert "USING gin (lexemes)" in indexes["items_lexemes"]
    # Without a pending list (fastupdate): a search never reads one from end to end.
    assert "WITH (fastupdate=off)" in indexes["items_lexemes"]
    provider.store._ready = False
    provider.store.open()  # migrating again changes nothing
    assert execute(f'SELECT version FROM "{schema}".recall_migrations') == versions


def test_two_hosts_starting_at_once_migrate_once(dsn: str, tmp_path: Path) -> None:
    fresh = new_schema("race")
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def host(number: int) -> None:
        made = load_folder_provider(FOLDER)
        try:
            barrier.wait()
            made.initialize(session_id=f"s{number}", home=tmp_path,
                            config={"dsn": dsn, "schema": fresh, "user_id": "u"},
                            context="primary", user_id="")
            made.sync_turn(user_content=f"host {number} reporting on the magpie rollout",
                           assistant_content="ok", session_id=f"s{number}", messages=[])
        except BaseException as exc:
            errors.append(exc)
        finally:
            made.shutdown()

    threads = [threading.Thread(target=host, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert execute(f'SELECT version FROM "{fresh}".recall_migrations') == [(1,), (2,), (3,), (4,)]
    assert execute(f'SELECT count(*) FROM "{fresh}".items') == [(8,)]  # two items a turn


def test_statements_time_out_before_the_manager_stops_waiting(home: Path,
                                                              settings: dict[str, Any]) -> None:
    configure(home, "postgres", memory={"prefetch_timeout": 1.0})
    made = load_folder_provider(FOLDER)
    made.initialize(session_id="s", home=home, config=settings, context="primary", user_id="")
    try:
        assert made.recall_timeout_ms == 500
        with made.store.pool.connection() as conn:
            assert conn.execute("SHOW statement_timeout").fetchone() == ("5s",)
        with made.store._connection(made.recall_timeout_ms) as conn:
            assert conn.execute("SHOW statement_timeout").fetchone() == ("500ms",)
    finally:
        made.shutdown()


def test_two_hosts_share_memory_and_another_user_sees_none_of_it(
        tmp_path: Path, dsn: str, schema: str) -> None:
    shared = {"dsn": dsn, "schema": schema, "user_id": unique_user()}
    laptop, server, stranger = (tmp_path / n for n in ("laptop", "server", "stranger"))
    configure(laptop, "postgres", shared)
    configure(server, "postgres", shared)
    configure(stranger, "postgres", {**shared, "user_id": unique_user()})

    first = manager(laptop, "laptop-1")
    assert json.loads(first.call_tool("memory", {
        "action": "add", "target": "memory",
        "content": "The nightly backup job runs on host kestrel-7."}))["success"]
    turn(first, "Our release codename this quarter is Bluefin.", "Bluefin it is.")
    assert first.flush(30)
    first.shutdown()

    second = manager(server, "server-1")
    other = manager(stranger, "stranger-1")
    try:
        codename = second.begin_turn("What is the release codename this quarter?").context
        backup = second.begin_turn("Which host runs the nightly backup?").context
        assert "Bluefin" in codename and "kestrel-7" in backup
        assert "Note: The nightly backup job runs on host kestrel-7." in backup
        assert "U: Our release codename this quarter is Bluefin." in codename
        assert other.begin_turn("What is the release codename this quarter?").context == ""
        assert other.begin_turn("Which host runs the nightly backup?").context == ""
        assert search(other, "Bluefin")["count"] == 0
        assert search(second, "Bluefin")["count"] == 2  # the message and the reply
        stolen = search(second, "Bluefin")["results"][0]["id"]
        assert not json.loads(other.call_tool("recall_forget", {"id": stolen}))["success"]
    finally:
        second.shutdown()
        other.shutdown()
    assert items(schema, shared["user_id"], "body LIKE %s", "%Bluefin%")[0][2] == "active"


def test_a_dropped_connection_is_retried_from_the_outbox_and_stored_once(
        home: Path, settings: dict[str, Any]) -> None:
    configure(home, "postgres", settings)
    made = manager(home)
    application = f"memhost-recall {settings['user_id']}"
    try:
        turn(made, "The heron cluster has nine nodes.", "Nine nodes, noted.")
        assert made.flush(30)
        made.begin_turn("How many nodes does the heron cluster have?")
        # The pooled connections die between the recall and the write, as in a server restart.
        assert terminate(application) >= 1
        made.finish_turn("Add a tenth node to the heron cluster.", "Ten nodes then.")
        assert made.flush(60)
        errors = provider_errors(made)
        assert errors["sync_turn"]["errors"] >= 1
        assert "retryable" in errors["sync_turn"]["last_error"]
        assert made.status()["outbox_pending"] == 0
        # The write that failed and was retried is there, once; so is the turn before it.
        stored = items(settings["schema"], settings["user_id"], "kind = 'turn'")
        assert [body for _, body, _ in stored] == [
            "The heron cluster has nine nodes.", "Nine nodes, noted.",
            "Add a tenth node to the heron cluster.", "Ten nodes then."]
        made.start_session("session-2")
        assert "tenth node" in made.begin_turn("What about the heron cluster nodes?").context
    finally:
        made.shutdown()


def test_a_write_retried_after_it_committed_is_stored_once(provider: Any,
                                                          settings: dict[str, Any]) -> None:
    arguments = {"user_content": "The wifi is called heron-5", "assistant_content": "Noted.",
                 "session_id": "s1", "messages": [{"role": "user", "content": "x"}]}
    for _ in range(3):
        provider.sync_turn(**arguments)
    provider.session_end(session_id="s1", messages=[{"role": "user", "content": "bye now"}])
    provider.session_end(session_id="s1", messages=[{"role": "user", "content": "bye now"}])
    # The turn's two items and the session, each once.
    assert [k for k, _, _ in items(settings["schema"], settings["user_id"])] == [
        "turn", "turn", "session"]


def test_relevance_on_topic_off_topic_and_no_echo(provider: Any) -> None:
    sync_turns(provider, "s-old",
               ("Remember that deployments happen on Tuesdays.",
                "Noted: deployments happen on Tuesdays."),
               ("Which flour suits sourdough bread?", "Rye flour gives a tangy sourdough."))
    text = provider.prefetch(query="What did we decide about the deployment schedule?",
                             session_id="s-now")
    # The matching message and reply (and, lifted by them, the message after them), not the
    # sourdough answer.
    assert text is not None and "Rye flour" not in text
    assert "\nU: Remember that deployments happen on Tuesdays.\nA: Noted:" in text
    assert provider.prefetch(query="How do I replace a bicycle chain?", session_id="s-now") is None
    # The current session's newest turn is still in the context: never echoed back.
    sync_turns(provider, "s-now",
               ("The deployment window moved to Thursday evenings.", "Thursday evenings, noted."))
    mine = provider.prefetch(query="deployment window?", session_id="s-now")
    assert "Thursday" not in mine and "Tuesdays" in mine
    assert "Thursday" in provider.prefetch(query="deployment window?", session_id="elsewhere")


def test_a_replaced_note_is_kept_and_marked_but_never_recalled(
        home: Path, settings: dict[str, Any]) -> None:
    configure(home, "postgres", settings)
    made = manager(home)
    try:
        assert json.loads(made.call_tool("memory", {
            "action": "add", "target": "user", "content": "The user's editor is Emacs."}))["success"]
        assert json.loads(made.call_tool("memory", {
            "action": "replace", "target": "user", "old_text": "Emacs",
            "content": "The user's editor is Helix."}))["success"]
        assert made.flush(30)
        made.start_session("session-2")
        context = made.begin_turn("Which editor does the user use?").context
        assert "Helix" in context and "Emacs" not in context
        text = made.pre_compress([{"role": "user", "content": "set up my editor please"}])
        assert "Helix" in text and "Emacs" not in text
    finally:
        made.shutdown()
    facts = items(settings["schema"], settings["user_id"], "kind = 'fact'")
    assert facts == [("fact", "The user's editor is Emacs.", "superseded"),
                     ("fact", "The user's editor is Helix.", "active")]
    superseded_by = execute(f'SELECT replaced_by FROM "{settings["schema"]}".items WHERE '
                            "user_id = %s AND status = 'superseded'", settings["user_id"])
    newest = execute(f'SELECT id FROM "{settings["schema"]}".items WHERE user_id = %s AND '
                     "status = 'active' AND kind = 'fact'", settings["user_id"])
    assert superseded_by == newest


def test_recall_search_forget_and_stats(provider: Any, settings: dict[str, Any],
                                        home: Path) -> None:
    provider.on_subtask(task="Audit the pelican invoices", result="Two were duplicates.",
                        child_session_id="c1", session_id="s-now")
    found = json.loads(provider.handle_tool_call(tool_name="recall_search",
                                                 arguments={"query": "pelican invoices"}))
    assert found["count"] == 1 and found["results"][0]["kind"] == "subtask"
    item = found["results"][0]["id"]
    early = json.loads(provider.handle_tool_call(tool_name="recall_search", arguments={
        "query": "pelican", "until": "2001-01-01"}))
    assert early["count"] == 0
    assert json.loads(provider.handle_tool_call(tool_name="recall_forget",
                                                arguments={"id": item}))["success"]
    assert items(settings["schema"], settings["user_id"]) == [("subtask", "", "forgotten")]
    terms = execute(f'SELECT df FROM "{settings["schema"]}".terms WHERE user_id = %s AND '
                    "lexeme IN ('', 'pelican')", settings["user_id"])
    assert terms == [(0,), (0,)]
    stats = provider.maintenance(home, settings, "stats")
    assert stats["counts"] == {"subtask": {"forgotten": 1}} and stats["live"] == 0


def test_memhost_recall_stats_for_postgres(home: Path, settings: dict[str, Any],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from memhost.cli import main

    configure(home, "postgres", settings)
    made = manager(home)
    turn(made, "The osprey dashboard refreshes every minute.", "Every minute, noted.")
    made.shutdown()
    assert main(["--home", str(home), "recall", "stats", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["provider"] == "postgres" and data["user_id"] == settings["user_id"]
    assert data["counts"] == {"turn": {"active": 2}}
    assert main(["--home", str(home), "recall", "vacuum"]) == 0
    assert "vacuumed" in capsys.readouterr().out

