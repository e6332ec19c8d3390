"""The recall database: one SQLite file, WAL mode, an FTS5 index of the terms memhost makes.

Each thread gets its own connection (the background writer, the prefetch thread and the host's
thread never wait on each other's statements; in WAL mode readers never wait on a writer).
Every write is one ``BEGIN IMMEDIATE`` transaction: the write lock is taken up front, so two
processes writing at once queue on ``busy_timeout`` instead of failing to upgrade a read lock.
A write still locked out after that (and a few short retries) raises
:class:`memhost.RetryableError`, and the manager's outbox retries it, in order.

Items are never updated in place except to change their state: a superseded or retired fact
stays in the table, marked, and triggers keep the full-text index holding only the ``active``
items (so nothing else can be recalled) and the ``live`` and ``length`` counts the relevance
weights use. The index holds each item's terms as :mod:`memhost.recall.terms` makes them, and
the ranking is :func:`memhost.recall.search`'s, so it is the same as on PostgreSQL.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from memhost import recall
from memhost.errors import RetryableError
from memhost.files import PRIVATE_FILE, ensure_private_dir

from .backend import HIT, Backend, conditions, hit
from .browse import Browse
from .writes import Writes
from .migrations import MIGRATIONS, SCHEMA_VERSION, TERMS_TOKENIZER, TOKENIZER

log = logging.getLogger("memhost.plugins.sqlite")

T = TypeVar("T")

#: Errors that pass: another process holds the lock, or the disk hiccuped.
_PASSING = re.compile(r"database is locked|database table is locked|busy|disk i/o error|"
                      r"database or disk is full|unable to open database file", re.I)
WRITE_ATTEMPTS = 3


class StoreError(Exception):
    """The database cannot be used (not a passing failure); the message says why."""


@cache  # the SQLite a process has loaded does not change; a hub asks at every manager it opens
def fts5_problem() -> str | None:
    """Why this Python's SQLite cannot run the store, or ``None``."""
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
            conn.execute(f"CREATE VIRTUAL TABLE u USING fts5(x, tokenize='{TERMS_TOKENIZER}')")
            conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return (f"this Python's SQLite {sqlite3.sqlite_version} has no usable FTS5 with the porter "
                f"tokenizer ({exc}); use a Python built with a newer SQLite")
    return None


def _load_sqlite_vec(conn: sqlite3.Connection) -> bool:
    """Load sqlite-vec into ``conn`` when it is installed and this Python's SQLite can load
    extensions (many builds cannot); semantic recall then re-ranks lexical candidates only."""
    if not hasattr(conn, "enable_load_extension"):
        return False
    try:
        import sqlite_vec
    except ImportError:
        return False
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
    except sqlite3.Error as exc:
        log.warning("sqlite-vec is installed but could not be loaded (%s)", exc)
        return False
    finally:
        conn.enable_load_extension(False)
    return True


class RecallStore(Writes, Browse):
    """One recall database file, shared by every thread of the process (and other processes)."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 5000,
                 read_timeout_ms: int = 1000) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.read_timeout_ms = min(read_timeout_ms, busy_timeout_ms)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._closed = False
        #: sqlite-vec is loaded: the nearest vectors can be searched in SQL.
        self.vector_search = False

    # -- connections ------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        ensure_private_dir(self.path.parent)
        if not self.path.exists():
            # Conversation text is private: create the file 0600 before SQLite does (its -wal
            # and -shm files take the database file's permissions).
            with suppress(FileExistsError):
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE))
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000,
                               isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            # WAL: readers (prefetch) never wait for the writer, and a commit appends to the log
            # instead of rewriting pages. synchronous=FULL fsyncs the log on every commit: the
            # manager's outbox drops a write as soon as the provider returns, so a commit must
            # survive a power cut, not only a crash of this process (NORMAL would only promise
            # the latter in WAL mode). The cost is one fsync per write, on the background worker.
            self._retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL"))
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA temp_store = MEMORY")
            self.vector_search = _load_sqlite_vec(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened, and the schema migrated, on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError(f"{self.path}: the recall store is closed")
            conn = self._passing(self._connect)
            self._local.conn = conn
            with self._guard:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        self._closed = True
        with self._guard:
            connections, self._connections = self._connections, []
        for conn in connections:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    # -- failures ---------------------------------------------------------------------------------

    @staticmethod
    def _is_passing(exc: sqlite3.Error) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and bool(_PASSING.search(str(exc)))

    def _passing(self, fn: Callable[[], T]) -> T:
        """Run ``fn``; a passing failure becomes :class:`RetryableError`."""
        try:
            return fn()
        except sqlite3.Error as exc:
            if self._is_passing(exc):
                raise RetryableError(f"recall database {self.path}: {exc}") from exc
            raise

    def _retry_locked(self, fn: Callable[[], T], attempts: int = WRITE_ATTEMPTS) -> T:
        for attempt in range(attempts):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not self._is_passing(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one ``BEGIN IMMEDIATE`` transaction. Still locked after
        ``busy_timeout`` and :data:`WRITE_ATTEMPTS` tries: :class:`RetryableError`."""
        conn = self.connection()

        def attempt() -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            return result

        return self._passing(lambda: self._retry_locked(attempt))

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self.connection()
        return self._passing(lambda: fn(conn))

    # -- schema -----------------------------------------------------------------------------------

    def migrate(self) -> int:
        """Bring the file to :data:`SCHEMA_VERSION`; returns the version found before. Safe to
        run from several processes at once (the check and the changes are one IMMEDIATE
        transaction) and to run again (a migrated file is left alone)."""
        def run(conn: sqlite3.Connection) -> int:
            found = conn.execute("PRAGMA user_version").fetchone()[0]
            if found > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has recall schema version {found}, newer than this "
                                 f"memhost understands ({SCHEMA_VERSION}); upgrade memhost")
            for version, script in MIGRATIONS:
                if version > found:
                    for step in script:
                        if callable(step):
                            step(conn)
                        else:
                            conn.execute(step)
                    conn.execute(f"PRAGMA user_version = {int(version)}")
            return found

        conn = self.connection()
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return SCHEMA_VERSION
        before = self.write(run)
        if before != SCHEMA_VERSION:
            log.info("recall database %s migrated from schema %d to %d", self.path, before,
                     SCHEMA_VERSION)
        return before

    # -- reads ------------------------------------------------------------------------------------

    def search(self, query: str, *, filters: recall.Filters = recall.Filters(),
               limit: int = 10, options: recall.Ranking = recall.Ranking(),
               semantic: Any = None) -> list[recall.Hit]:
        """Items relevant to ``query``, best first (see :func:`memhost.recall.search`)."""
        return self.read(lambda conn: recall.search(
            Backend(conn, vector_search=self.vector_search), query, filters=filters,
            limit=limit, options=options, semantic=semantic))

    def recent(self, *, kinds: Sequence[str] = recall.KINDS, since: float | None = None,
               until: float | None = None, limit: int = 10) -> list[recall.Hit]:
        """The newest active items (a search without words)."""
        def run(conn: sqlite3.Connection) -> list[recall.Hit]:
            where, params = conditions(recall.Filters(tuple(kinds), (), since, until))
            rows = conn.execute(
                f"SELECT {HIT} FROM items AS i WHERE i.status = 'active' {where} "
                "ORDER BY i.created_at DESC, i.id DESC LIMIT ?", [*params, limit]).fetchall()
            return [hit(row) for row in rows]

        return self.read(run)

    def newest_exchange(self, session_ids: Sequence[str]) -> list[int]:
        """The ids of the newest stored turn of these sessions (its user message and reply:
        what a recall must not echo, the host still has it)."""
        if not session_ids:
            return []

        def run(conn: sqlite3.Connection) -> list[int]:
            # One index probe per session (a session may hold a hundred thousand turns).
            newest = [conn.execute("SELECT id, role FROM items WHERE session_id = ? AND "
                                   "kind = 'turn' ORDER BY id DESC LIMIT 2",
                                   (session,)).fetchall() for session in session_ids]
            return recall.newest_exchange(max(newest, key=lambda rows: rows[0][0] if rows
                                              else -1))

        return self.read(run)

    def prefetch(self, query: str, *, sessions: Sequence[str], filters: recall.Filters,
                 limit: int, options: recall.Ranking = recall.Ranking(),
                 semantic: Any = None) -> list[recall.Hit]:
        """A turn's recall: leave out the sessions' newest turn, then search."""
        return self.search(query, filters=filters.excluding(self.newest_exchange(sessions)),
                           limit=limit, options=options, semantic=semantic)

    # -- maintenance ------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        def run(conn: sqlite3.Connection) -> dict[str, Any]:
            counts: dict[str, dict[str, int]] = {}
            for kind, status, count in conn.execute(
                    "SELECT kind, status, count(*) FROM items GROUP BY kind, status"):
                counts.setdefault(kind, {})[status] = count
            first, last = conn.execute("SELECT min(created_at), max(created_at) FROM items "
                                       "WHERE status = 'active'").fetchone()
            pragma = {name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in (
                "user_version", "journal_mode", "page_size", "page_count", "freelist_count")}
            live = conn.execute("SELECT value FROM counts WHERE name = 'live'").fetchone()[0]
            return {"counts": counts, "live": live, "first": first, "last": last, **pragma}

        data = self.read(run)
        files = {suffix or "db": _size(Path(f"{self.path}{suffix}"))
                 for suffix in ("", "-wal", "-shm")}
        return {"path": str(self.path), "schema_version": data.pop("user_version"),
                "bytes": files, **data}

    def vacuum(self) -> dict[str, Any]:
        """Merge the full-text index, checkpoint the log into the file, and rebuild the file."""
        before = sum(_size(Path(f"{self.path}{s}")) for s in ("", "-wal"))
        self.write(lambda conn: conn.execute(
            "INSERT INTO items_terms (items_terms) VALUES ('optimize')"))
        conn = self.connection()
        self._passing(lambda: self._retry_locked(lambda: conn.execute("VACUUM")))
        self._passing(lambda: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())
        after = sum(_size(Path(f"{self.path}{s}")) for s in ("", "-wal"))
        return {"path": str(self.path), "bytes_before": before, "bytes_after": after}


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


__all__ = ["RecallStore", "SCHEMA_VERSION", "StoreError", "fts5_problem"]
