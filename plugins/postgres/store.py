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
from memhost.recall import ranking

from .migrations import BOOTSTRAP, MIGRATIONS, SCHEMA_VERSION, TS_CONFIG

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


class RecallStore:
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
                for statement in statements:
                    conn.execute(self._q(statement))
                conn.execute(self._q("INSERT INTO {s}.recall_migrations (version) VALUES (%s)"),
                             (version,))
                log.info("PostgreSQL recall schema %s migrated to version %d", self.schema,
                         version)

    # -- writes -----------------------------------------------------------------------------------

    def _insert(self, conn: psycopg.Connection[Any], *, key: str, kind: str, body: str,
                session_id: str, target: str = "", origin: str = "",
                status: str = ranking.ACTIVE, created_at: float | None = None) -> int | None:
        row = conn.execute(self._q(
            "INSERT INTO {s}.items (user_id, key, kind, body, session_id, target, origin, "
            "created_at, status, status_at) VALUES (%s, %s, %s, %s, %s, %s, %s, "
            "coalesce(to_timestamp(%s), now()), %s, CASE WHEN %s <> 'active' THEN now() END) "
            "ON CONFLICT (user_id, key) DO NOTHING RETURNING id"),
            (self.user_id, key, kind, body, session_id, target, origin, created_at, status,
             status)).fetchone()
        return row[0] if row else None

    def add(self, *, key: str, kind: str, body: str, session_id: str, target: str = "",
            origin: str = "", created_at: float | None = None) -> int | None:
        """Store one item once; ``None`` when that key was stored before."""
        return self.write(lambda conn: self._insert(
            conn, key=key, kind=kind, body=body, session_id=session_id, target=target,
            origin=origin, created_at=created_at))

    def add_many(self, items: Sequence[dict[str, Any]]) -> int:
        """Store many items in one transaction (bulk import, benchmarks)."""
        return self.write(lambda conn: sum(
            1 for item in items if self._insert(conn, **item) is not None))

    def note(self, *, action: str, target: str, content: str, previous: str | None,
             session_id: str, origin: str) -> None:
        """Apply a committed builtin memory write to the facts (see the sqlite provider: the
        same rules). Each step checks the state first, so a replay changes nothing."""
        def fresh_key() -> str:
            return ranking.item_key("fact", target, time.time(), secrets.token_hex(8))

        def run(conn: psycopg.Connection[Any]) -> None:
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
                    conn, key=fresh_key(), kind=ranking.FACT, body=content,
                    session_id=session_id, target=target, origin=origin)
            if action not in ("replace", "remove") or not previous or not previous.strip() \
                    or previous == content:
                return
            status = ranking.SUPERSEDED if action == "replace" else ranking.RETIRED
            by = new_id if action == "replace" else None
            changed = conn.execute(self._q(
                "UPDATE {s}.items SET status = %s, status_at = now(), replaced_by = %s "
                "WHERE user_id = %s AND kind = 'fact' AND target = %s AND body = %s AND "
                "status = 'active'"), (status, by, self.user_id, target, previous)).rowcount
            if changed:
                return
            seen = conn.execute(self._q(
                "SELECT 1 FROM {s}.items WHERE user_id = %s AND kind = 'fact' AND target = %s "
                "AND body = %s LIMIT 1"), (self.user_id, target, previous)).fetchone()
            if seen is None:
                self._insert(conn, key=fresh_key(), kind=ranking.FACT, body=previous,
                             session_id=session_id, target=target, origin=origin, status=status)

        self.write(run)

    def forget(self, item_id: int) -> dict[str, Any] | None:
        """Erase an item's text and mark it ``forgotten``; ``None`` when this user has no such
        item."""
        def run(conn: psycopg.Connection[Any]) -> dict[str, Any] | None:
            row = conn.execute(self._q(
                "UPDATE {s}.items AS i SET status = 'forgotten', body = '', status_at = now() "
                "FROM (SELECT id, status FROM {s}.items WHERE id = %s AND user_id = %s "
                "AND status <> 'forgotten' FOR UPDATE) AS old "
                "WHERE i.id = old.id RETURNING i.kind, old.status"),
                (item_id, self.user_id)).fetchone()
            return {"id": item_id, "kind": row[0], "was": row[1]} if row else None

        return self.write(run)

    # -- reads ------------------------------------------------------------------------------------

    def search(self, query: str, *, filters: ranking.Filters = ranking.Filters(),
               limit: int = 10, min_score: float = 0.0, min_coverage: float = 0.0,
               timeout_ms: int | None = None) -> list[ranking.Hit]:
        """Items relevant to ``query``, best first (see :func:`memhost.recall.ranking.search`)."""
        return self.read(lambda conn: ranking.search(
            _Backend(self, conn), query, filters=filters, limit=limit, min_score=min_score,
            min_coverage=min_coverage), timeout_ms=timeout_ms)

    def recent(self, *, since: float | None = None, until: float | None = None,
               limit: int = 10) -> list[ranking.Hit]:
        def run(conn: psycopg.Connection[Any]) -> list[ranking.Hit]:
            rows = conn.execute(self._q(
                "SELECT id, kind, body, extract(epoch FROM created_at)::float8, session_id "
                "FROM {s}.items WHERE user_id = %s AND status = 'active' "
                "AND created_at >= coalesce(to_timestamp(%s), '-infinity') "
                "AND created_at < coalesce(to_timestamp(%s), 'infinity') "
                "ORDER BY created_at DESC, id DESC LIMIT %s"),
                (self.user_id, since, until, limit)).fetchall()
            return [ranking.Hit(*row) for row in rows]

        return self.read(run)

    def _newest_turn(self, conn: psycopg.Connection[Any], sessions: Sequence[str]) -> int | None:
        """The newest stored turn of these sessions: one index probe per session (a session
        may hold a hundred thousand turns; sorting them is not an option)."""
        if not sessions:
            return None
        row = conn.execute(self._q(
            "SELECT max((SELECT max(id) FROM {s}.items WHERE user_id = %s AND "
            "session_id = s.id AND kind = 'turn')) FROM unnest(%s::text[]) AS s (id)"),
            (self.user_id, list(sessions))).fetchone()
        return row[0] if row else None

    def last_turn(self, session_ids: Sequence[str], *, timeout_ms: int | None = None) -> int | None:
        """The id of the newest stored turn of these sessions (the one a recall must not echo)."""
        if not session_ids:
            return None

        def run(conn: psycopg.Connection[Any]) -> int | None:
            return self._newest_turn(conn, session_ids)

        return self.read(run, timeout_ms=timeout_ms)

    def prefetch(self, query: str, *, sessions: Sequence[str], filters: ranking.Filters,
                 limit: int, min_score: float, min_coverage: float,
                 timeout_ms: int) -> list[ranking.Hit]:
        """A turn's recall in one pooled connection: leave out the sessions' newest turn, then
        search."""
        def run(conn: psycopg.Connection[Any]) -> list[ranking.Hit]:
            exclude = list(filters.exclude)
            newest = self._newest_turn(conn, sessions)
            if newest is not None:
                exclude.append(newest)
            scoped = ranking.Filters(filters.kinds, tuple(exclude), filters.since, filters.until)
            return ranking.search(_Backend(self, conn), query, filters=scoped, limit=limit,
                                 min_score=min_score, min_coverage=min_coverage)

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


def _time_clauses(filters: ranking.Filters, prefix: str = "") -> str:
    """``AND`` conditions for the time filters that are set (none when none is: a condition
    that is always true still makes the planner prefer the time index)."""
    clauses = []
    if filters.since is not None:
        clauses.append(f"AND {prefix}created_at >= to_timestamp(%(since)s)")
    if filters.until is not None:
        clauses.append(f"AND {prefix}created_at < to_timestamp(%(until)s)")
    return " ".join(clauses)


class _Backend:
    """:class:`memhost.recall.ranking.Backend` over one connection."""

    def __init__(self, store: RecallStore, conn: psycopg.Connection[Any]) -> None:
        self.store = store
        self.conn = conn
        self.df: dict[str, int] = {}
        self.live = 0

    def analyse(self, words: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, int], int]:
        store = self.store
        rows = self.conn.execute(store._q(
            f"WITH w AS (SELECT word, lexeme FROM unnest(%(words)s::text[]) AS word, "
            f"unnest(tsvector_to_array(to_tsvector('{TS_CONFIG}', word))) AS lexeme) "
            "SELECT w.word, w.lexeme, coalesce(t.df, 0) FROM w LEFT JOIN {s}.terms AS t "
            "ON t.user_id = %(user)s AND t.lexeme = w.lexeme "
            "UNION ALL SELECT '', '', coalesce((SELECT df FROM {s}.terms WHERE "
            "user_id = %(user)s AND lexeme = ''), 0)"),
            {"words": list(words), "user": store.user_id}).fetchall()
        stems: dict[str, list[str]] = {}
        df: dict[str, int] = {}
        live = 0
        for word, lexeme, count in rows:
            if not word:
                live = int(count)
                continue
            stems.setdefault(word, []).append(lexeme)
            df[lexeme] = int(count)
        order = {w: i for i, w in enumerate(words)}
        self.df, self.live = df, live
        return dict(sorted(stems.items(), key=lambda kv: order[kv[0]])), df, live

    def candidates(self, plan: ranking.QueryPlan, words_of: dict[str, list[str]], *,
                   window: int, every_limit: int,
                   filters: ranking.Filters) -> dict[int, set[str]]:
        """The newest ``2 * window`` items (by the ``(user_id, id)`` index) that hold any
        searched stem, and every item of the stems that :attr:`df` says are rare (at most
        ``2 * window`` items each, through the GIN index); each then tested against every
        stem."""
        stems = list(words_of)
        rare = [s for s in stems if self.df.get(s, 0) <= window * 2]
        params: dict[str, Any] = {
            "user": self.store.user_id, "since": filters.since, "until": filters.until,
            "any": " or ".join(w for s in stems for w in words_of[s]),
            "rare": " or ".join(w for s in rare for w in words_of[s]),
            "recent": window * 2, "rare_limit": window * 2 * max(1, len(rare))}
        when = _time_clauses(filters)
        flags = []
        for number, stem in enumerate(stems):
            params[f"q{number}"] = " or ".join(words_of[stem])
            flags.append(f"tsv @@ websearch_to_tsquery('{TS_CONFIG}', %(q{number})s)")
        tested = ", ".join(flags)
        conn = self.conn
        # Each access path is pinned (for this transaction only): a table filled a moment ago
        # has no statistics yet, and the planner's guesses then cost a hundredfold.
        # 1. The newest rows by the (user_id, id) index, in order: no sort, no bitmap.
        conn.execute("SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off; "
                     "SET LOCAL enable_seqscan = off")
        rows = conn.execute(self.store._q(
            f"SELECT id, {tested} FROM (SELECT id, tsv FROM {{s}}.items "
            f"WHERE user_id = %(user)s {when} ORDER BY id DESC LIMIT %(recent)s) AS newest "
            f"WHERE tsv @@ websearch_to_tsquery('{TS_CONFIG}', %(any)s)"), params).fetchall()
        # 2. Every item of the rare stems through the GIN index: no sequential scan, and
        #    ``user_id || ''`` keeps the B-tree indexes on user_id out of it.
        conn.execute("SET LOCAL enable_sort = on; SET LOCAL enable_bitmapscan = on")
        if rare:
            rows += conn.execute(self.store._q(
                f"SELECT id, {tested} FROM {{s}}.items WHERE (user_id || '') = %(user)s {when} "
                f"AND tsv @@ websearch_to_tsquery('{TS_CONFIG}', %(rare)s) "
                "LIMIT %(rare_limit)s"), params).fetchall()
        conn.execute("SET LOCAL enable_seqscan = on")
        return {row[0]: {stem for stem, hit in zip(stems, row[1:], strict=True) if hit}
                for row in rows}

    def fetch(self, ids: Sequence[int], stems: Sequence[str],
              filters: ranking.Filters) -> list[ranking.Hit]:
        # By primary key only (the other conditions are written so that no other index
        # applies): a handful of rows, whatever the planner knows about the table.
        rows = self.conn.execute(self.store._q(
            "WITH c AS MATERIALIZED (SELECT unnest(%(ids)s::bigint[]) AS id) "
            "SELECT i.id, i.kind, i.body, extract(epoch FROM i.created_at)::float8, "
            "i.session_id, ARRAY(SELECT unnest(tsvector_to_array(i.tsv)) INTERSECT "
            "SELECT unnest(%(stems)s::text[])) FROM c JOIN {s}.items AS i ON i.id = c.id "
            "WHERE (i.user_id || '') = %(user)s AND (i.status || '') = 'active' "
            "AND (i.kind || '') = ANY(%(kinds)s) AND NOT (i.id = ANY(%(exclude)s)) "
            + _time_clauses(filters, "i.")),
            {"stems": list(stems), "user": self.store.user_id, "ids": list(ids),
             "kinds": list(filters.kinds), "exclude": list(filters.exclude),
             "since": filters.since, "until": filters.until}).fetchall()
        return [ranking.Hit(r[0], r[1], r[2], r[3], r[4], frozenset(r[5] or ())) for r in rows]


__all__ = ["RecallStore", "StoreError", "lock_key"]
