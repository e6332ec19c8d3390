"""The recall store on PostgreSQL: psycopg 3, a connection pool, one schema shared by many users.

Every statement is scoped to one ``user_id``: users sharing the database never see each other's
rows. Connections carry a ``statement_timeout``; a recall (the turn is waiting) gets a shorter one,
below the manager's ``memory.prefetch_timeout``. A write that fails for a passing reason (the
server restarted, the connection dropped, a lock or statement timeout) raises
:class:`memhost.RetryableError`, so the manager's outbox retries it, in order; writes carry a
unique key per user, so a write retried after it had in fact committed is stored once.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from memhost.errors import RetryableError
from memhost import recall
from memhost.recall.terms import terms as terms_of

from .backend import Backend, hit
from .browse import Browse
from .migrations import BOOTSTRAP, MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger("memhost.plugins.postgres")

T = TypeVar("T")

#: Failures that pass: the server went away or restarted, a timeout, a lock, a serialisation
#: conflict, no pooled connection in time.
PASSING = (psycopg.OperationalError, psycopg.InterfaceError)


class StoreError(Exception):
    """The store cannot be used (not a passing failure); the message says why."""


def lock_key(schema: str) -> int:
    """The advisory-lock key that serialises migrations of ``schema`` (a signed 64-bit int)."""
    digest = hashlib.sha256(f"memhost-recall:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def drop_schema(dsn: str, schema: str, *, connect_timeout: float = 5.0) -> None:
    """Drop ``schema`` and everything in it (a scratch schema of ``memhost providers check``).
    A failure is logged, never raised: the check's result stands either way."""
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=int(connect_timeout)) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    except psycopg.Error as exc:
        log.warning("could not drop the scratch schema %s: %s; drop it by hand", schema, exc)


class RecallStore(Browse):
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
        self.pool = ConnectionPool(
            conninfo=dsn, min_size=1, max_size=max(1, pool_size), open=False,
            name=f"memhost-recall-{schema}", timeout=connect_timeout,
            # prepare_threshold=None: never prepare server-side. A prepared statement gets a
            # generic plan that cannot see which words are rare, and a walk of a common word's
            # whole posting list instead of the newest rows costs a hundred times more.
            kwargs={"connect_timeout": max(1, int(connect_timeout)),
                    "application_name": application_name[:63], "prepare_threshold": None},
            configure=self._configure, reconnect_timeout=300.0)
        self._opened = False
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
                    # after the pool has retried for connect_timeout seconds.
                    psycopg.connect(self.pool.conninfo, **self.pool.kwargs).close()
                    self.pool.open(wait=False)
                    self._opened = True
                self._migrate()
            except PASSING as exc:
                raise RetryableError(f"PostgreSQL recall store ({self.schema}): {exc}") from exc
            self._ready = True

    def close(self) -> None:
        with self._lock:
            self._ready = False
            if self._opened:
                self.pool.close(timeout=2.0)
                self._opened = False
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

    # -- writes -----------------------------------------------------------------------------------

    def _insert(self, conn: psycopg.Connection[Any], *, key: str, kind: str, body: str,
                session_id: str, target: str = "", origin: str = "", role: str = "",
                status: str = recall.ACTIVE, created_at: float | None = None) -> int | None:
        return self._insert_many(conn, [{
            "key": key, "kind": kind, "body": body, "session_id": session_id, "target": target,
            "origin": origin, "role": role, "status": status, "created_at": created_at}])[0]

    def _insert_many(self, conn: psycopg.Connection[Any],
                     items: Sequence[dict[str, Any]]) -> list[int | None]:
        """Insert items in one statement (the statistics' trigger then runs once); each item's
        new id, or ``None`` where its key was stored before (a replayed write)."""
        rows = []
        for item in items:
            made = terms_of(item["body"])
            status = item.get("status", recall.ACTIVE)
            rows.append((self.user_id, item["key"], item["kind"], item.get("role", ""),
                         item["body"], " ".join(made), len(made), item["session_id"],
                         item.get("target", ""), item.get("origin", ""),
                         item.get("created_at"), status, status))
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                            "coalesce(to_timestamp(%s), now()), %s, "
                            "CASE WHEN %s <> 'active' THEN now() END)"] * len(rows))
        found = dict(conn.execute(self._q(
            "INSERT INTO {s}.items (user_id, key, kind, role, body, terms, length, session_id, "
            f"target, origin, created_at, status, status_at) VALUES {values} "
            "ON CONFLICT (user_id, key) DO NOTHING RETURNING key, id"),
            [value for row in rows for value in row]).fetchall())
        return [found.get(item["key"]) for item in items]

    def add(self, *, key: str, kind: str, body: str, session_id: str, target: str = "",
            origin: str = "", created_at: float | None = None) -> int | None:
        """Store one item once; ``None`` when that key was stored before."""
        return self.write(lambda conn: self._insert(
            conn, key=key, kind=kind, body=body, session_id=session_id, target=target,
            origin=origin, created_at=created_at))

    def add_many(self, items: Sequence[dict[str, Any]], *,
                 new_ids: list[int] | None = None) -> int:
        """Store many items in one transaction (a turn's two items, an import); returns how
        many were new (their ids are added to ``new_ids``). An item without ``created_at``
        gets the transaction's time."""
        if not items:
            return 0
        made = self.write(lambda conn: self._insert_many(conn, items))
        if new_ids is not None:
            new_ids.extend(i for i in made if i is not None)
        return sum(1 for i in made if i is not None)

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, Sequence[float]]]) -> None:
        """Store items' vectors of ``model`` (semantic recall); an item forgotten meanwhile
        gets none."""
        def run(conn: psycopg.Connection[Any]) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(self._q(
                    "INSERT INTO {s}.vectors (item_id, user_id, model, vector) SELECT id, "
                    "user_id, %s, %s FROM {s}.items WHERE id = %s AND user_id = %s AND "
                    "status <> 'forgotten' ON CONFLICT (item_id) DO UPDATE SET "
                    "model = EXCLUDED.model, vector = EXCLUDED.vector"),
                    [(model, list(vector), item, self.user_id) for item, vector in vectors])

        if vectors:
            self.write(run)

    def note(self, *, action: str, target: str, content: str, previous: str | None,
             session_id: str, origin: str) -> int | None:
        """Apply a committed builtin memory write to the facts (see the sqlite provider: the
        same rules). Each step checks the state first, so a replay changes nothing."""
        def fresh_key() -> str:
            return recall.item_key("fact", target, time.time(), secrets.token_hex(8))

        def run(conn: psycopg.Connection[Any]) -> int | None:
            # One writer per user and note target at a time: the check-then-insert below must
            # not race a second host applying the same note.
            conn.execute("SELECT pg_advisory_xact_lock(%s)",
                         (lock_key(f"{self.schema}:{self.user_id}:{target}"),))
            new_id = None
            if action in ("add", "replace") and content.strip():
                row = conn.execute(self._q(
                    "SELECT id FROM {s}.items WHERE user_id = %s AND kind = 'fact' AND "
                    "target = %s AND body = %s AND status = 'active' ORDER BY id LIMIT 1"),
                    (self.user_id, target, content)).fetchone()
                new_id = row[0] if row else self._insert(
                    conn, key=fresh_key(), kind=recall.FACT, body=content,
                    session_id=session_id, target=target, origin=origin)
            if action not in ("replace", "remove") or not previous or not previous.strip() \
                    or previous == content:
                return new_id
            status = recall.SUPERSEDED if action == "replace" else recall.RETIRED
            by = new_id if action == "replace" else None
            changed = conn.execute(self._q(
                "UPDATE {s}.items SET status = %s, status_at = now(), replaced_by = %s "
                "WHERE user_id = %s AND kind = 'fact' AND target = %s AND body = %s AND "
                "status = 'active'"), (status, by, self.user_id, target, previous)).rowcount
            if changed:
                return new_id
            seen = conn.execute(self._q(
                "SELECT 1 FROM {s}.items WHERE user_id = %s AND kind = 'fact' AND target = %s "
                "AND body = %s LIMIT 1"), (self.user_id, target, previous)).fetchone()
            if seen is None:
                self._insert(conn, key=fresh_key(), kind=recall.FACT, body=previous,
                             session_id=session_id, target=target, origin=origin, status=status)
            return new_id

        return self.write(run)

    def forget(self, item_id: int) -> dict[str, Any] | None:
        """Erase an item's text and mark it ``forgotten``; ``None`` when this user has no such
        item."""
        def run(conn: psycopg.Connection[Any]) -> dict[str, Any] | None:
            row = conn.execute(self._q(
                "UPDATE {s}.items AS i SET status = 'forgotten', body = '', terms = '', "
                "status_at = now() "
                "FROM (SELECT id, status FROM {s}.items WHERE id = %s AND user_id = %s "
                "AND status <> 'forgotten' FOR UPDATE) AS old "
                "WHERE i.id = old.id RETURNING i.kind, old.status"),
                (item_id, self.user_id)).fetchone()
            return {"id": item_id, "kind": row[0], "was": row[1]} if row else None

        return self.write(run)

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
