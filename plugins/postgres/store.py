"""The recall store on PostgreSQL: psycopg 3, a connection pool, one schema shared by many users.

Every statement is scoped to one ``user_id``: users sharing the database never see each other's
rows. Connections carry a ``statement_timeout``; a recall (the turn is waiting) gets a shorter one,
below the manager's ``memory.prefetch_timeout``. A write that fails for a passing reason (the
server restarted, the connection dropped, a lock or statement timeout) raises
:class:`memhost.RetryableError`, so the manager's outbox retries it, in order; writes carry a
unique key per user, so a write retried after it had in fact committed is stored once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from memhost.errors import RetryableError
from memhost import recall

from . import pools
from .backend import Backend, hit
from .browse import Browse
from .writes import Writes, lock_key
from .migrations import BOOTSTRAP, MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger("memhost.plugins.postgres")

T = TypeVar("T")

#: Failures that pass: the server went away or restarted, a timeout, a lock, a serialisation
#: conflict, no pooled connection in time.
PASSING = (psycopg.OperationalError, psycopg.InterfaceError)


class StoreError(Exception):
    """The store cannot be used (not a passing failure); the message says why."""


def drop_schema(dsn: str, schema: str, *, connect_timeout: float = 5.0) -> None:
    """Drop ``schema`` and everything in it (a scratch schema of ``memhost providers check``).
    A failure is logged, never raised: the check's result stands either way."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=int(connect_timeout)) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    except psycopg.Error as exc:
        log.warning("could not drop the scratch schema %s: %s; drop it by hand", schema, exc)


class RecallStore(Writes, Browse):
    """One user's view of the recall schema in one database."""

    def __init__(self, dsn: str, *, schema: str, user_id: str, pool_size: int = 4,
                 connect_timeout: float = 5.0, statement_timeout_ms: int = 5000,
                 read_timeout_ms: int = 2000, application_name: str = "memhost-recall") -> None:
        self.schema = schema
        self.user_id = user_id
        self.statement_timeout_ms = statement_timeout_ms
        self.read_timeout_ms = min(read_timeout_ms, statement_timeout_ms)
        self.connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._ready = False
        # Stores that connect the same way share one pool (see pools.py): a MemoryHub's users
        # then hold at most pool_size connections between them.
        self._pool_key = (dsn, max(1, pool_size), connect_timeout, statement_timeout_ms,
                          application_name[:63])
        self.pool = pools.borrow(self._pool_key, lambda: ConnectionPool(
            conninfo=dsn, min_size=1, max_size=max(1, pool_size), open=False,
            name=f"memhost-recall-{schema}", timeout=connect_timeout,
            # prepare_threshold=None: never prepare server-side. A prepared statement gets a
            # generic plan that cannot see which words are rare, and a walk of a common word's
            # whole posting list instead of the newest rows costs a hundred times more.
            kwargs={"connect_timeout": max(1, int(connect_timeout)),
                    "application_name": application_name[:63], "prepare_threshold": None},
            configure=self._configure, reconnect_timeout=300.0))
        self._opened = False
        self._returned = False
        #: The database has pgvector: the nearest vectors can be searched in SQL.
        self.pgvector = False

    # -- connections ------------------------------------------------------------------------------

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(sql.SQL("SET statement_timeout = {}").format(
            sql.Literal(int(self.statement_timeout_ms))))
        conn.commit()

    def _q(self, text: str) -> sql.Composed:
        """``text`` with ``{s}`` replaced by the quoted schema name."""
        return sql.SQL(text.replace("{s}", "{schema}")).format(schema=sql.Identifier(self.schema))

    def open(self) -> None:
        """Open the pool and migrate; a passing failure raises :class:`RetryableError`."""
        with self._lock:
            if self._ready:
                return
            try:
                if not self._opened:
                    # One direct attempt first: a refused or unknown server fails at once, not
                    # after the pool has retried for connect_timeout seconds. Once per shared
                    # pool, so the stores sharing it stay within its bound.
                    pools.open_once(self._pool_key, self.pool, lambda: psycopg.connect(
                        self.pool.conninfo, **self.pool.kwargs).close())
                    self._opened = True
                self._migrate()
            except PASSING as exc:
                raise RetryableError(f"PostgreSQL recall store ({self.schema}): {exc}") from exc
            self._ready = True

    def close(self) -> None:
        with self._lock:
            self._ready = False
            self._opened = False
            if not self._returned:
                self._returned = True
                pools.give_back(self._pool_key, self.pool, timeout=2.0)
        #: The database has pgvector: the nearest vectors can be searched in SQL.
        self.pgvector = False

    @contextmanager
    def _connection(self, timeout_ms: int | None = None):  # type: ignore[no-untyped-def]
        with self.pool.connection(timeout=self.connect_timeout) as conn:
            if timeout_ms is not None:
                conn.execute(sql.SQL("SET LOCAL statement_timeout = {}").format(
                    sql.Literal(int(timeout_ms))))
            yield conn

    def write(self, fn: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run ``fn`` in one transaction; a passing failure raises :class:`RetryableError`."""
        self.open()
        try:
            with self._connection() as conn:
                return fn(conn)
        except PASSING as exc:
            raise RetryableError(f"PostgreSQL recall store ({self.schema}): "
                                 f"{type(exc).__name__}: {exc}") from exc

    def read(self, fn: Callable[[psycopg.Connection[Any]], T], *,
             timeout_ms: int | None = None) -> T:
        """Run ``fn`` in a read transaction, once more on a fresh connection if the pooled one
        turned out dead (a server restart closes every idle connection)."""
        self.open()
        limit = self.read_timeout_ms if timeout_ms is None else timeout_ms
        for attempt in (1, 2):
            try:
                with self._connection(limit) as conn:
                    return fn(conn)
            except psycopg.errors.QueryCanceled as exc:
                raise RetryableError(f"PostgreSQL recall store ({self.schema}): the query took "
                                     f"longer than {limit} ms") from exc
            except PASSING as exc:
                if attempt == 2:
                    raise RetryableError(f"PostgreSQL recall store ({self.schema}): "
                                         f"{type(exc).__name__}: {exc}") from exc
        raise AssertionError("unreachable")

    # -- schema -----------------------------------------------------------------------------------

    def _migrate(self) -> None:
        with self.pool.connection(timeout=self.connect_timeout) as conn:
            # Waiting for another host's migration may take longer than a statement should.
            conn.execute("SET LOCAL statement_timeout = 0")
            conn.execute("SET LOCAL lock_timeout = '60s'")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(self.schema),))
            for statement in BOOTSTRAP:
                conn.execute(self._q(statement))
            applied = {row[0] for row in conn.execute(
                self._q("SELECT version FROM {s}.recall_migrations"))}
            newest = max(applied, default=0)
            if newest > SCHEMA_VERSION:
                raise StoreError(f"schema {self.schema!r} has recall version {newest}, newer "
                                 f"than this memhost understands ({SCHEMA_VERSION}); upgrade "
                                 "memhost")
            for version, statements in MIGRATIONS:
                if version in applied:
                    continue
                for step in statements:
                    if callable(step):
                        step(conn, self._q)
                    else:
                        conn.execute(self._q(step))
                conn.execute(self._q("INSERT INTO {s}.recall_migrations (version) VALUES (%s)"),
                             (version,))
                log.info("PostgreSQL recall schema %s migrated to version %d", self.schema,
                         version)
            self.pgvector = conn.execute(
                "SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None

    # -- reads ------------------------------------------------------------------------------------

    def search(self, query: str, *, filters: recall.Filters = recall.Filters(),
               limit: int = 10, options: recall.Ranking = recall.Ranking(),
               timeout_ms: int | None = None, semantic: Any = None) -> list[recall.Hit]:
        """Items relevant to ``query``, best first (see :func:`memhost.recall.search`)."""
        return self.read(lambda conn: recall.search(
            Backend(self, conn), query, filters=filters, limit=limit, options=options,
            semantic=semantic), timeout_ms=timeout_ms)

    def recent(self, *, since: float | None = None, until: float | None = None,
               limit: int = 10) -> list[recall.Hit]:
        def run(conn: psycopg.Connection[Any]) -> list[recall.Hit]:
            rows = conn.execute(self._q(
                "SELECT id, kind, body, extract(epoch FROM created_at)::float8, session_id, "
                "role, terms FROM {s}.items WHERE user_id = %s AND status = 'active' "
                "AND created_at >= coalesce(to_timestamp(%s), '-infinity') "
                "AND created_at < coalesce(to_timestamp(%s), 'infinity') "
                "ORDER BY created_at DESC, id DESC LIMIT %s"),
                (self.user_id, since, until, limit)).fetchall()
            return [hit(row) for row in rows]

        return self.read(run)

    def _newest_exchange(self, conn: psycopg.Connection[Any],
                         sessions: Sequence[str]) -> list[int]:
        """The newest stored turn of these sessions (its user message and reply): one index
        probe per session (a session may hold a hundred thousand turns)."""
        newest: list[list[tuple[int, str]]] = []
        for session in sessions:
            newest.append(conn.execute(self._q(
                "SELECT id, role FROM {s}.items WHERE user_id = %s AND session_id = %s AND "
                "kind = 'turn' ORDER BY id DESC LIMIT 2"), (self.user_id, session)).fetchall())
        return recall.newest_exchange(max(newest, key=lambda rows: rows[0][0] if rows else -1,
                                          default=[]))

    def newest_exchange(self, session_ids: Sequence[str], *,
                        timeout_ms: int | None = None) -> list[int]:
        """The ids of the newest stored turn of these sessions (what a recall must not echo)."""
        if not session_ids:
            return []
        return self.read(lambda conn: self._newest_exchange(conn, session_ids),
                         timeout_ms=timeout_ms)

    def prefetch(self, query: str, *, sessions: Sequence[str], filters: recall.Filters,
                 limit: int, options: recall.Ranking = recall.Ranking(),
                 timeout_ms: int | None = None, semantic: Any = None) -> list[recall.Hit]:
        """A turn's recall in one pooled connection: leave out the sessions' newest turn, then
        search."""
        def run(conn: psycopg.Connection[Any]) -> list[recall.Hit]:
            scoped = filters.excluding(self._newest_exchange(conn, sessions))
            return recall.search(Backend(self, conn), query, filters=scoped, limit=limit,
                                 options=options, semantic=semantic)

        return self.read(run, timeout_ms=timeout_ms)

    # -- maintenance ------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        def run(conn: psycopg.Connection[Any]) -> dict[str, Any]:
            counts: dict[str, dict[str, int]] = {}
            for kind, status, count in conn.execute(self._q(
                    "SELECT kind, status, count(*) FROM {s}.items WHERE user_id = %s "
                    "GROUP BY kind, status"), (self.user_id,)):
                counts.setdefault(kind, {})[status] = count
            first, last = conn.execute(self._q(
                "SELECT extract(epoch FROM min(created_at))::float8, "
                "extract(epoch FROM max(created_at))::float8 FROM {s}.items "
                "WHERE user_id = %s AND status = 'active'"), (self.user_id,)).fetchone()
            live = conn.execute(self._q(
                "SELECT df FROM {s}.terms WHERE user_id = %s AND lexeme = ''"),
                (self.user_id,)).fetchone()
            size = conn.execute("SELECT pg_total_relation_size(%s)",
                                (f"{sql.Identifier(self.schema).as_string(conn)}.items",)
                                ).fetchone()[0]
            version = conn.execute(self._q("SELECT max(version) FROM {s}.recall_migrations")
                                   ).fetchone()[0]
            return {"schema": self.schema, "user_id": self.user_id, "schema_version": version,
                    "counts": counts, "live": live[0] if live else 0, "first": first,
                    "last": last, "table_bytes_all_users": size}

        return self.read(run, timeout_ms=self.statement_timeout_ms)

    def vacuum(self) -> dict[str, Any]:
        """``VACUUM (ANALYZE)`` the recall tables (they are shared by every user)."""
        self.open()
        try:
            with psycopg.connect(self.pool.conninfo, autocommit=True,
                                 connect_timeout=max(1, int(self.connect_timeout))) as conn:
                for table in ("items", "terms"):
                    conn.execute(self._q(f"VACUUM (ANALYZE) {{s}}.{table}"))
        except PASSING as exc:
            raise RetryableError(f"PostgreSQL recall store ({self.schema}): {exc}") from exc
        return {"schema": self.schema, "vacuumed": ["items", "terms"]}


__all__ = ["RecallStore", "StoreError", "lock_key"]
