"""200 users x 5 concurrent turns through one MemoryHub, on sqlite and on a real PostgreSQL.

Each user's five turns run at the same time (16 threads take the users in order, so a user's
turns overlap each other and the next users'), with at most 32 managers open, so managers are
closed to make room while others work. Afterwards every user's store holds exactly their own
turns and memory notes, every user recalls their own turns and never another user's, nothing
is left in an outbox, and (postgres) the connections the hub opened never outnumbered the pool.
"""

from __future__ import annotations

import json
import sqlite3
import string
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memhost import MemoryHub
from postgres_server import drop_run_schemas, execute, new_schema, require_postgres
from recall_helpers import configure

USERS = 200
TURNS = 5
MAX_OPEN = 32
THREADS = 16
POOL_SIZE = 4

pytestmark = pytest.mark.slow


def user_id(index: int) -> str:
    return f"user-{index:03d}"


def codeword(index: int) -> str:
    """A word only this user's turns contain (letters only, so no tokenizer splits it)."""
    letters = string.ascii_lowercase
    return "zq" + letters[index // 26 % 26] + letters[index % 26] + "vok"


def run_turn(hub: MemoryHub, index: int, number: int) -> str:
    memory = hub.manager(user_id(index))
    word = codeword(index)
    text = f"Turn {number}: the {word} service listens on port {9000 + number}."
    turn = memory.begin_turn(text)
    answer = json.loads(memory.call_tool("memory", {
        "action": "add", "target": "memory", "content": f"{word} note {number}"}))
    assert answer["success"], answer
    memory.finish_turn(text, f"Port {9000 + number} for {word}, noted.")
    return turn.recall


def drive(home: Path) -> tuple[dict[str, Any], list[str]]:
    """Every user's session, then all turns; returns the close reports and the recall states."""
    hub = MemoryHub(home, max_open=MAX_OPEN)
    hub.min_idle = 0.05
    try:
        for index in range(USERS):
            hub.manager(user_id(index)).start_session(f"chat-{user_id(index)}")
        with ThreadPoolExecutor(THREADS) as pool:
            futures = [pool.submit(run_turn, hub, index, number)
                       for index in range(USERS) for number in range(TURNS)]
            recalls = [future.result(timeout=300) for future in futures]
        assert hub.closed_to_make_room > 0, "the bound never closed a manager"
    finally:
        reports = hub.close()
    return {user: report.as_dict() for user, report in reports.items()}, recalls


def check_reports(reports: dict[str, Any]) -> None:
    for user, report in reports.items():
        assert report["status"] == "drained", (user, report)
        assert report["kept_in_outbox"] == 0, (user, report)


def check_memory_files(home: Path) -> None:
    from memhost.builtin_providers.entries import parse

    for index in range(USERS):
        path = home / "users" / user_id(index) / "memories" / "MEMORY.md"
        entries = parse(path.read_text(encoding="utf-8"))
        word = codeword(index)
        assert sorted(entries) == sorted(f"{word} note {n}" for n in range(TURNS)), user_id(index)
    assert not (home / "memories" / "MEMORY.md").exists()  # the home's own memory untouched


def check_recall(home: Path) -> None:
    """Each user recalls their own turns, and another user's word recalls nothing."""
    with MemoryHub(home, max_open=MAX_OPEN) as hub:
        for index in range(USERS):
            memory = hub.manager(user_id(index))
            memory.start_session(f"check-{user_id(index)}")
            own = memory.begin_turn(f"Which port does the {codeword(index)} service use?")
            assert own.recall == "ok" and codeword(index) in own.context, (index, own)
            other = codeword((index + 1) % USERS)
            stranger = memory.begin_turn(f"Which port does the {other} service use?")
            assert other not in stranger.context, (index, stranger)
            found = json.loads(memory.call_tool("recall_search", {"query": other}))
            assert found["count"] == 0, (index, found)
            memory.finish_turn("check", "done", interrupted=True)
            memory.finish_turn("check", "done", interrupted=True)


def check_rows(rows: dict[str, list[tuple[str, str]]]) -> None:
    """``rows``: user -> [(kind, body)]; each user's own 5 turns and 5 notes, nobody else's."""
    assert sorted(rows) == sorted(user_id(i) for i in range(USERS))
    words = {codeword(i) for i in range(USERS)}
    for index in range(USERS):
        stored = rows[user_id(index)]
        kinds = sorted(kind for kind, _ in stored)
        # Each turn is kept as two recall items (the message and the reply).
        assert kinds == sorted(["turn"] * 2 * TURNS + ["fact"] * TURNS), (index, kinds)
        for _, body in stored:
            assert codeword(index) in body, (index, body)
            assert not (words - {codeword(index)}) & set(body.replace(".", " ").split())


# -- sqlite ---------------------------------------------------------------------------------------

def test_sqlite_two_hundred_users(home: Path) -> None:
    configure(home, "sqlite")
    reports, recalls = drive(home)
    check_reports(reports)
    assert len(recalls) == USERS * TURNS
    check_memory_files(home)
    rows: dict[str, list[tuple[str, str]]] = {}
    for index in range(USERS):
        database = home / "users" / user_id(index) / "recall.db"
        with sqlite3.connect(database) as conn:
            rows[user_id(index)] = conn.execute("SELECT kind, body FROM items").fetchall()
    check_rows(rows)
    assert not (home / "recall.db").exists()
    check_recall(home)


# -- postgres -------------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def _drop_schemas_afterwards() -> Iterator[None]:
    yield
    drop_run_schemas()


class ConnectionCounter:
    """Samples how many server connections carry ``application_name``, until stopped."""

    def __init__(self, application_name: str) -> None:
        self.application_name = application_name
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        from postgres_server import DSN

        with psycopg.connect(DSN, autocommit=True) as conn:
            while not self._stop.wait(0.02):
                row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE "
                                   "application_name = %s", (self.application_name,)).fetchone()
                self.samples.append(int(row[0]) if row else 0)

    def __enter__(self) -> ConnectionCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


@pytest.mark.postgres
def test_postgres_two_hundred_users(home: Path) -> None:
    dsn = require_postgres()
    schema = new_schema("hub")
    configure(home, "postgres", {"dsn": dsn, "schema": schema, "pool_size": POOL_SIZE})
    with ConnectionCounter(f"memhost-hub {schema}") as connections:
        reports, recalls = drive(home)
    check_reports(reports)
    assert len(recalls) == USERS * TURNS
    assert connections.samples and max(connections.samples) >= 1, "no connection was seen"
    assert max(connections.samples) <= POOL_SIZE, max(connections.samples)
    check_memory_files(home)
    rows: dict[str, list[tuple[str, str]]] = {}
    for owner, kind, body in execute(f'SELECT user_id, kind, body FROM "{schema}".items'):
        rows.setdefault(owner, []).append((kind, body))
    check_rows(rows)
    check_recall(home)
