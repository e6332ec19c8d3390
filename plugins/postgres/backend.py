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
        """Pin access to index scans for the rest of this transaction, once: no sequential
        scan and no sort, so a path that reads rows some other way and sorts them by id is
        never taken (a table filled a moment ago has no statistics yet, and the planner's
        guesses then cost a hundredfold). Bitmap scans stay: they are the only scan a GIN
        index offers. A sort that no other path can avoid (the cut to the best candidates)
        still happens, but its cost now counts the planner's "disabled" penalty, which would
        send the statement to JIT compilation (a second and more, for a few hundred rows):
        JIT is off too."""
        if not self.pinned:
            self.conn.execute("SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off; "
                              "SET LOCAL jit = off")
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
        estimate, in one statement: the walks, the estimates and the cut happen in the server,
        and only the chosen rows come back. ``every_limit`` needs no walk of its own: an item
        holding every term is among the newest or holds a rare term, or is as far back as the
        windows of the common ones."""
        terms = list(weights)
        rare = [t for t in terms if self.df.get(t, 0) <= window * 2]
        params: dict[str, Any] = {
            "user": self.store.user_id, "since": filters.since, "until": filters.until,
            "terms": terms, "rare": rare,
            "recent": window * 2, "rare_limit": window * 2 * max(1, len(rare)),
            "kinds": list(filters.kinds), "exclude": list(filters.exclude), "limit": limit}
        # Conditions written so that no B-tree index applies to them (``|| ''``): they narrow
        # rows the GIN index or the newest-first walk found.
        when = time_clauses(filters) + (" AND (kind || '') = ANY(%(kinds)s) "
                                        "AND NOT (id = ANY(%(exclude)s))")
        # An item's estimate, term by term (a per-row subquery over the terms costs more).
        for number, term in enumerate(terms):
            params[f"t{number}"], params[f"w{number}"] = [term], weights[term]
        estimate = "(" + " + ".join(
            f"CASE WHEN lexemes @> %(t{n})s::text[] THEN %(w{n})s::float8 ELSE 0 END"
            for n in range(len(terms))) + ")"
        # 1. The newest rows by the (user_id, id) index, in order, that hold a searched term.
        walks = [f"SELECT id, {estimate} AS estimate FROM (SELECT id, lexemes FROM {{s}}.items "
                 f"WHERE user_id = %(user)s {when} ORDER BY id DESC LIMIT %(recent)s) AS newest "
                 "WHERE lexemes && %(terms)s::text[]"]
        # 2. Every item of the rare terms through the GIN index (a bitmap scan);
        #    ``user_id || ''`` keeps the B-tree indexes on user_id out of it.
        if rare:
            walks.append(f"SELECT id, {estimate} FROM {{s}}.items WHERE (user_id || '') = "
                         f"%(user)s {when} AND lexemes && %(rare)s::text[] LIMIT %(rare_limit)s")
        self.pin()
        rows = self.conn.execute(self.store._q(
            f"WITH walked AS ({' UNION ALL '.join(f'({w})' for w in walks)}), "
            "best AS MATERIALIZED (SELECT id, max(estimate) AS estimate FROM walked GROUP BY id "
            "ORDER BY estimate DESC, id DESC LIMIT %(limit)s) "
            f"SELECT {HIT} FROM best JOIN {{s}}.items AS i ON i.id = best.id "
            "ORDER BY best.estimate DESC, best.id DESC"), params).fetchall()
        return [hit(row) for row in rows]

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
        # Two probes of the (user_id, session_id, kind, id) index per item, the active turns
        # just before and after it in its session, and those rows read in the same statement
        # (those already ``known`` are not).
        known = known or {}
        self.pin()
        probe = ("(SELECT {a}.id FROM {{s}}.items AS {a} WHERE {a}.user_id = s.user_id "
                 "AND {a}.session_id = s.session_id AND {a}.kind = 'turn' "
                 "AND {a}.id {op} s.id AND ({a}.status || '') = 'active' "
                 "ORDER BY {a}.id {order} LIMIT 1)")
        rows = self.conn.execute(self.store._q(
            f"WITH s AS MATERIALIZED (SELECT s.id AS origin, "
            f"{probe.format(a='p', op='<', order='DESC')} AS before, "
            f"{probe.format(a='n', op='>', order='ASC')} AS after FROM {{s}}.items AS s "
            "WHERE s.id = ANY(%(ids)s) AND (s.user_id || '') = %(user)s), "
            "near AS (SELECT origin, before AS id FROM s WHERE before IS NOT NULL "
            "UNION ALL SELECT origin, after FROM s WHERE after IS NOT NULL) "
            f"SELECT near.origin, near.id, {HIT} FROM near LEFT JOIN {{s}}.items AS i "
            "ON i.id = near.id AND NOT (near.id = ANY(%(known)s)) "
            "AND (i.user_id || '') = %(user)s AND (i.status || '') = 'active' "
            "AND (i.kind || '') = ANY(%(kinds)s) AND NOT (i.id = ANY(%(exclude)s)) "
            + time_clauses(filters, "i.") + " ORDER BY near.origin, near.id"),
            {"ids": list(ids), "user": self.store.user_id, "known": list(known),
             "kinds": list(filters.kinds), "exclude": list(filters.exclude),
             "since": filters.since, "until": filters.until}).fetchall()
        found: dict[int, list[recall.Hit]] = {origin: [] for origin in ids}
        for origin, item, *columns in rows:
            near = known.get(item) or (hit(columns) if columns[0] is not None else None)
            if near is not None:
                found[origin].append(near)
        return found

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
