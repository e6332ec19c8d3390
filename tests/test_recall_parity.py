"""The two bundled recall providers rank alike, and each migrates a version-1 store to the
two-item turns and memhost's own terms without losing anything.

The PostgreSQL half runs against the real server (skipped without one, failed under CI).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memhost import recall
from memhost.testing import load_folder_provider
from postgres_server import drop_run_schemas, execute, new_schema, require_postgres
from recall_helpers import PLUGINS

# The same turns for both stores: several sessions, repeated words, a reply that answers a
# question without repeating it.
TURNS = [
    ("s1", "We moved the billing API to port 8443 last week.", "Port 8443 for billing, noted."),
    ("s1", "Which team owns the billing service?", "The payments team owns billing."),
    ("s2", "My sister Ana is visiting in May.", "Lovely, how long is Ana staying?"),
    ("s2", "Two weeks, she loves hiking.", "Two weeks of hiking with Ana then."),
    ("s3", "The staging database runs on falcon-9.", "falcon-9 for staging."),
    ("s3", "Remind me what port billing uses.", "Billing listens on 8443."),
    ("s4", "I painted a lake at sunrise yesterday.", "A sunrise over a lake sounds calm."),
    ("s4", "What should I paint next?", "Maybe the mountains you hike with Ana."),
]
QUERIES = ["Which port does billing use?", "When is Ana visiting?", "What did I paint?",
           "Who owns billing?", "Where does staging run?", "hiking with my sister"]


def _feed(provider: Any) -> None:
    for session, user, reply in TURNS:
        provider.sync_turn(user_content=user, assistant_content=reply, session_id=session,
                           messages=[])


def _ranking(provider: Any, query: str) -> list[tuple[str, float]]:
    answer = json.loads(provider.handle_tool_call(tool_name="recall_search",
                                                  arguments={"query": query, "limit": 20}))
    return [(hit["text"], hit["score"]) for hit in answer["results"]]


@pytest.fixture(scope="module", autouse=True)
def _drop_schemas_afterwards() -> Any:
    yield
    drop_run_schemas()


@pytest.mark.postgres
def test_both_providers_rank_the_same_turns_the_same(tmp_path: Path) -> None:
    dsn = require_postgres()
    lite = load_folder_provider(PLUGINS / "sqlite")
    lite.initialize(session_id="now", home=tmp_path / "lite", config={}, context="primary",
                    user_id="")
    pg = load_folder_provider(PLUGINS / "postgres")
    pg.initialize(session_id="now", home=tmp_path / "pg", context="primary",
                  config={"dsn": dsn, "schema": new_schema("parity"), "user_id": "parity"},
                  user_id="")
    try:
        _feed(lite)
        _feed(pg)
        for query in QUERIES:
            ours = _ranking(lite, query)
            assert ours, query
            assert _ranking(pg, query) == ours, query
            assert pg.prefetch(query=query, session_id="now") == \
                lite.prefetch(query=query, session_id="now"), query
        # A reply that shares no word with the question is found beside it.
        assert "Billing listens on 8443." in lite.prefetch(query="Remind me what port billing "
                                                                 "uses", session_id="other")
    finally:
        lite.shutdown()
        pg.shutdown()


# -- migrating a version-1 store -------------------------------------------------------------------

V1_PAIR = "\n\x1e\n"


def _v1_sqlite(path: Path) -> None:
    from importlib import import_module

    loaded = load_folder_provider(PLUGINS / "sqlite")
    migrations = import_module(type(loaded).__module__.rsplit(".", 1)[0] + ".migrations")
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in migrations.V1:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    now = time.time()
    rows = [("k1", "turn", f"The kiln reaches 1200 degrees.{V1_PAIR}Hot enough for stoneware.",
             "old", now, "active"),
            ("k2", "turn", "", "old", now, "forgotten"),
            ("k3", "fact", "The glaze is celadon.", "old", now, "active")]
    conn.executemany("INSERT INTO items (key, kind, body, session_id, created_at, status) "
                     "VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.close()


def test_a_version_1_sqlite_store_is_migrated_without_loss(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    _v1_sqlite(home / "recall.db")
    made = load_folder_provider(PLUGINS / "sqlite")
    made.initialize(session_id="now", home=home, config={}, context="primary", user_id="")
    try:
        conn = sqlite3.connect(home / "recall.db")
        found = conn.execute("SELECT key, kind, role, body, status FROM items ORDER BY id").fetchall()
        assert conn.execute("PRAGMA user_version").fetchone() == (3,)
        assert found == [
            ("k3", "fact", "", "The glaze is celadon.", "active"),
            ("k1/user", "turn", "user", "The kiln reaches 1200 degrees.", "active"),
            ("k1/assistant", "turn", "assistant", "Hot enough for stoneware.", "active"),
            ("k2/user", "turn", "user", "", "forgotten"),
            ("k2/assistant", "turn", "assistant", "", "forgotten")]
        counts = dict(conn.execute("SELECT name, value FROM counts").fetchall())
        assert counts["live"] == 3 and counts["length"] > 0
        assert conn.execute("SELECT df FROM terms WHERE stem = 'kiln'").fetchone() == (1,)
        conn.close()
        text = made.prefetch(query="How hot does the kiln get?", session_id="now")
        assert "U: The kiln reaches 1200 degrees." in text and "A: Hot enough" in text
        # A forgotten turn replayed by the outbox stays forgotten.
        assert made.store.add_many(recall.turn_items("k2", "secret", "reply", "old")) == 0
    finally:
        made.shutdown()


@pytest.mark.postgres
def test_a_version_1_postgres_store_is_migrated_without_loss(tmp_path: Path) -> None:
    from importlib import import_module

    dsn = require_postgres()
    import psycopg  # here, not at the top: only this test uses it, and require_postgres checks it

    schema = new_schema("v1")
    loaded = load_folder_provider(PLUGINS / "postgres")
    migrations = import_module(type(loaded).__module__.rsplit(".", 1)[0] + ".migrations")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in (*migrations.BOOTSTRAP, *migrations.V1):
            conn.execute(statement.replace("{s}", f'"{schema}"'))
        conn.execute(f'INSERT INTO "{schema}".recall_migrations (version) VALUES (1)')
        for owner in ("ann", "bob"):
            conn.execute(
                f'INSERT INTO "{schema}".items (user_id, key, kind, body, session_id) VALUES '
                "(%s, 'k1', 'turn', %s, 'old')",
                (owner, f"The {owner} kiln reaches 1200 degrees.{V1_PAIR}Hot enough."))
        conn.execute(f'INSERT INTO "{schema}".items (user_id, key, kind, body, session_id, '
                     "status) VALUES ('ann', 'k2', 'turn', '', 'old', 'forgotten')")
    made = load_folder_provider(PLUGINS / "postgres")
    made.initialize(session_id="now", home=tmp_path, context="primary",
                    config={"dsn": dsn, "schema": schema, "user_id": "ann"}, user_id="")
    try:
        assert execute(f'SELECT key, role, body, status FROM "{schema}".items WHERE '
                       "user_id = 'ann' ORDER BY id") == [
            ("k1/user", "user", "The ann kiln reaches 1200 degrees.", "active"),
            ("k1/assistant", "assistant", "Hot enough.", "active"),
            ("k2/user", "user", "", "forgotten"),
            ("k2/assistant", "assistant", "", "forgotten")]
        assert execute(f'SELECT lexeme, df FROM "{schema}".terms WHERE user_id = %s AND '
                       "lexeme IN ('', 'kiln', 'ann') ORDER BY lexeme", "ann") == [
            ("", 2), ("ann", 1), ("kiln", 1)]
        text = made.prefetch(query="How hot does the kiln get?", session_id="now")
        assert "The ann kiln" in text and "bob" not in text
        # New writes keep the statistics the migration built.
        made.sync_turn(user_content="The kiln needs a new element.", assistant_content="Noted.",
                       session_id="now", messages=[])
        assert execute(f'SELECT df FROM "{schema}".terms WHERE user_id = %s AND lexeme = %s',
                       "ann", "kiln") == [(2,)]
    finally:
        made.shutdown()
