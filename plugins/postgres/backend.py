""":class:`memhost.recall.Backend` on PostgreSQL: term statistics, candidates from the GIN index
of the active items' terms, the items themselves and their neighbours, for one user.

The ranking is :func:`memhost.recall.search`'s, on the terms memhost made of each item (the
``terms`` column), exactly as in the ``sqlite`` provider.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from memhost import recall

if TYPE_CHECKING:  # pragma: no cover
    from .store import RecallStore

#: The columns a :class:`memhost.recall.Hit` is made of, on ``items AS i``.
HIT = ("i.id, i.kind, i.body, extract(epoch FROM i.created_at)::float8, i.session_id, i.role, "
       "i.terms")


def hit(row: Sequence[Any]) -> recall.Hit:
    return recall.Hit(row[0], row[1], row[2], row[3], row[4], role=row[5], terms=row[6])


def time_clauses(filters: recall.Filters, prefix: str = "") -> str:
    """``AND`` conditions for the time filters that are set (none when none is: a condition
    that is always true still makes the planner prefer the time index)."""
    clauses = []
    if filters.since is not None:
        clauses.append(f"AND {prefix}created_at >= to_timestamp(%(since)s)")
    if filters.until is not None:
        clauses.append(f"AND {prefix}created_at < to_timestamp(%(until)s)")
    return " ".join(clauses)


class Backend:
    """:class:`memhost.recall.Backend` over one connection."""

    def __init__(self, store: RecallStore, conn: psycopg.Connection[Any]) -> None:
        self.store = store
        self.conn = conn
        self.df: dict[str, int] = {}
        self.pinned = False

    def pin(self) -> None:
        """Pin access to plain index scans for the rest of this transaction (no sort, no
        bitmap, no sequential scan), once."""
        if not self.pinned:
            self.conn.execute("SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off; "
                              "SET LOCAL enable_seqscan = off")
            self.pinned = True

    def statistics(self, terms: Sequence[str]) -> tuple[dict[str, int], int, int]:
        rows = self.conn.execute(self.store._q(
            "SELECT lexeme, df FROM {s}.terms WHERE user_id = %s AND lexeme = ANY(%s)"),
            (self.store.user_id, [*terms, "", " length"])).fetchall()
        counts = {lexeme: int(df) for lexeme, df in rows}
        live, total = counts.pop("", 0), counts.pop(" length", 0)
        self.df = counts
        return counts, live, total

    def candidates(self, weights: Mapping[str, float], *, window: int, every_limit: int,
                   limit: int, filters: recall.Filters) -> list[recall.Hit]:
        """From the newest ``2 * window`` items (by the ``(user_id, id)`` index) that hold any
        searched term, and every item of the terms that :attr:`df` says are rare (at most
        ``2 * window`` items each, through the GIN index), the ``limit`` with the highest
        estimate. ``every_limit`` needs no walk of its own: an item holding every term is among
        the newest or holds a rare term, or is as far back as the windows of the common ones."""
        terms = list(weights)
        rare = [t for t in terms if self.df.get(t, 0) <= window * 2]
        params: dict[str, Any] = {
            "user": self.store.user_id, "since": filters.since, "until": filters.until,
            "any": terms, "rare": rare, "recent": window * 2,
            "rare_limit": window * 2 * max(1, len(rare)), "kinds": list(filters.kinds),
            "exclude": list(filters.exclude)}
        flags = []
        for number, term in enumerate(terms):
            params[f"t{number}"] = [term]
            flags.append(f"lexemes @> %(t{number})s::text[]")
        tested = ", ".join(flags)
        # Conditions written so that no B-tree index applies to them (``|| ''``): they narrow
        # rows the GIN index or the newest-first walk found.
        when = time_clauses(filters) + (" AND (kind || '') = ANY(%(kinds)s) "
                                        "AND NOT (id = ANY(%(exclude)s))")
        conn, q = self.conn, self.store._q
        # 1. Every item of the rare terms through the GIN index (a bitmap scan, the only kind a
        #    GIN index offers; no sequential scan); ``user_id || ''`` keeps the B-tree indexes
        #    on user_id out of it.
        rows = []
        if rare:
            conn.execute("SET LOCAL enable_seqscan = off")
            rows += conn.execute(q(
                f"SELECT id, {tested} FROM {{s}}.items WHERE (user_id || '') = %(user)s {when} "
                "AND lexemes && %(rare)s::text[] LIMIT %(rare_limit)s"), params).fetchall()
        # 2. The newest rows by the (user_id, id) index, in order. From here on the access
        #    paths are pinned to indexes, for the rest of this read: a table filled a moment
        #    ago has no statistics yet, and the planner's guesses then cost a hundredfold
        #    (here, and in fetch and neighbours, which find rows by primary key and by the
        #    session index).
        self.pin()
        rows += conn.execute(q(
            f"SELECT id, {tested} FROM (SELECT id, lexemes FROM {{s}}.items "
            f"WHERE user_id = %(user)s {when} ORDER BY id DESC LIMIT %(recent)s) AS newest "
            "WHERE lexemes && %(any)s::text[]"), params).fetchall()
        found = {row[0]: [term for term, held in zip(terms, row[1:], strict=True) if held]
                 for row in rows}
        best = recall.retrieval.best_by_estimate(found, weights, limit)
        order = {item: rank for rank, item in enumerate(best)}
        return sorted(self.fetch(best, filters), key=lambda h: order[h.id])

    def fetch(self, ids: Sequence[int], filters: recall.Filters) -> list[recall.Hit]:
        if not ids:
            return []
        # By primary key only (the other conditions are written so that no other index
        # applies, and access is pinned): a handful of rows, whatever the planner knows about
        # the table.
        self.pin()
        rows = self.conn.execute(self.store._q(
            f"WITH c AS MATERIALIZED (SELECT unnest(%(ids)s::bigint[]) AS id) SELECT {HIT} "
            "FROM c JOIN {s}.items AS i ON i.id = c.id "
            "WHERE (i.user_id || '') = %(user)s AND (i.status || '') = 'active' "
            "AND (i.kind || '') = ANY(%(kinds)s) AND NOT (i.id = ANY(%(exclude)s)) "
            + time_clauses(filters, "i.")),
            {"user": self.store.user_id, "ids": list(ids), "kinds": list(filters.kinds),
             "exclude": list(filters.exclude), "since": filters.since,
             "until": filters.until}).fetchall()
        return [hit(row) for row in rows]

    def neighbours(self, ids: Sequence[int], filters: recall.Filters,
                   known: Mapping[int, recall.Hit] | None = None) -> dict[int, list[recall.Hit]]:
        # Two probes of the (user_id, session_id, kind, id) index per item: the active turns
        # just before and after it in its session (pinned: no other index, one that would
        # need a sort by id, may be chosen on a table without statistics).
        self.pin()
        probe = ("(SELECT {a}.id FROM {{s}}.items AS {a} WHERE {a}.user_id = s.user_id "
                 "AND {a}.session_id = s.session_id AND {a}.kind = 'turn' "
                 "AND {a}.id {op} s.id AND ({a}.status || '') = 'active' "
                 "ORDER BY {a}.id {order} LIMIT 1)")
        rows = self.conn.execute(self.store._q(
            f"SELECT s.id, {probe.format(a='p', op='<', order='DESC')}, "
            f"{probe.format(a='n', op='>', order='ASC')} FROM {{s}}.items AS s "
            "WHERE s.id = ANY(%s) AND (s.user_id || '') = %s"),
            (list(ids), self.store.user_id)).fetchall()
        return recall.retrieval.neighbour_hits(rows, lambda wanted: self.fetch(wanted, filters),
                                               known)

    def vectors(self, ids: Sequence[int], model: str) -> dict[int, list[float]]:
        if not ids:
            return {}
        rows = self.conn.execute(self.store._q(
            "SELECT item_id, vector FROM {s}.vectors WHERE item_id = ANY(%s) AND model = %s "
            "AND (user_id || '') = %s"), (list(ids), model, self.store.user_id)).fetchall()
        return {item: list(vector) for item, vector in rows}

    def nearest(self, vector: Sequence[float], model: str, limit: int,
                filters: recall.Filters) -> list[int] | None:
        """The active items whose vectors are closest, by pgvector's cosine distance on the
        stored float arrays; ``None`` where the database has no pgvector (the vectors then
        re-rank the lexical candidates only)."""
        if not self.store.pgvector:
            return None
        rows = self.conn.execute(self.store._q(
            "SELECT v.item_id FROM {s}.vectors AS v JOIN {s}.items AS i ON i.id = v.item_id "
            "WHERE v.user_id = %(user)s AND v.model = %(model)s AND i.status = 'active' "
            "AND i.kind = ANY(%(kinds)s) AND NOT (i.id = ANY(%(exclude)s)) "
            + time_clauses(filters, "i.")
            + " ORDER BY v.vector::vector <=> %(vector)s::vector LIMIT %(limit)s"),
            {"user": self.store.user_id, "model": model, "kinds": list(filters.kinds),
             "exclude": list(filters.exclude), "since": filters.since,
             "until": filters.until, "vector": list(vector), "limit": limit}).fetchall()
        return [row[0] for row in rows]



__all__ = ["Backend", "hit", "time_clauses"]
