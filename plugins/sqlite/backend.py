""":class:`memhost.recall.Backend` on SQLite: term statistics, candidates from the FTS5 index of
the active items' terms, the items themselves and their neighbours.

The ranking is :func:`memhost.recall.search`'s, on the terms memhost made of each item (the
``terms`` column), exactly as in the ``postgres`` provider.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from memhost import recall


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


#: How many postings (in windows) the walk for the items holding every searched term reads.
EVERY_POSTINGS = 10

#: The columns a :class:`memhost.recall.Hit` is made of, on ``items AS i``.
HIT = "i.id, i.kind, i.body, i.created_at, i.session_id, i.role, i.terms"


def hit(row: Sequence[Any]) -> recall.Hit:
    return recall.Hit(row[0], row[1], row[2], row[3], row[4], role=row[5], terms=row[6])


def conditions(filters: recall.Filters, *, kinds: bool = True) -> tuple[str, list[Any]]:
    """SQL conditions (each starting with ``AND``, on ``items AS i``) for ``filters``. The
    unary ``+`` keeps them from choosing an index: they only ever narrow rows found by id or by
    the full-text index (without it, SQLite may walk a whole index to test them)."""
    clauses, params = [], []
    if kinds and set(filters.kinds) != set(recall.KINDS):
        clauses.append(f"AND +i.kind IN ({','.join('?' * len(filters.kinds))})")
        params += list(filters.kinds)
    if filters.exclude:
        clauses.append(f"AND +i.id NOT IN ({','.join('?' * len(filters.exclude))})")
        params += list(filters.exclude)
    if filters.since is not None:
        clauses.append("AND +i.created_at >= ?")
        params.append(filters.since)
    if filters.until is not None:
        clauses.append("AND +i.created_at < ?")
        params.append(filters.until)
    return " ".join(clauses), params


class Backend:
    """:class:`memhost.recall.Backend` over one connection of a :class:`RecallStore`."""

    def __init__(self, conn: sqlite3.Connection, *, vector_search: bool = False) -> None:
        self.conn = conn
        self.vector_search = vector_search
        #: What :meth:`statistics` read (the candidates' walks are sized by it).
        self.df: dict[str, int] = {}
        self.live = 0

    def statistics(self, terms: Sequence[str]) -> tuple[dict[str, int], int, int]:
        conn = self.conn
        marks = ",".join("?" * len(terms))
        df = dict(conn.execute(f"SELECT stem, df FROM terms WHERE stem IN ({marks})",
                               list(terms)).fetchall())
        counts = dict(conn.execute("SELECT name, value FROM counts").fetchall())
        self.df, self.live = df, counts.get("live", 0)
        return df, self.live, counts.get("length", 0)

    def _window(self, term_match: str, limit: int, filters: recall.Filters, columns: str,
                span: int | None = None) -> tuple[str, list[Any]]:
        """A subquery giving ``columns`` for the newest ``limit`` active items matching
        ``term_match``: a walk of the index's doclists in rowid order that stops at ``limit``
        (with time filters, of the items in that time), or, with ``span``, at the item
        ``span`` ids older than the newest."""
        where, params = conditions(recall.Filters(since=filters.since, until=filters.until),
                                   kinds=False)
        if span is not None:
            where += " AND items_terms.rowid > (SELECT max(id) FROM items) - ?"
            params.append(span)
        joined = "JOIN items AS i ON i.id = items_terms.rowid " if filters.by_time else ""
        return (f"SELECT * FROM (SELECT {columns} FROM items_terms {joined}"
                f"WHERE items_terms MATCH ? {where} ORDER BY items_terms.rowid DESC LIMIT ?)",
                [term_match, *params, limit])

    def candidates(self, weights: Mapping[str, float], *, window: int, every_limit: int,
                   limit: int, filters: recall.Filters) -> list[recall.Hit]:
        # One statement: each term's window (rows of id and the term's weight) and the window
        # of the items holding every term (their estimate is the whole weight), summed per item
        # in SQLite, filtered, cut to ``limit``; only those rows reach Python.
        walks, params = [], []
        for term, weight in weights.items():
            sql, values = self._window(_quote(term), window, filters,
                                       "items_terms.rowid AS id, ? AS w, 0 AS every")
            walks.append(sql)
            params += [weight, *values]
        if len(weights) > 1 and every_limit > 0:
            # FTS5 walks an AND newest first by stepping through every term's doclist, so an
            # AND of common terms that few items satisfy would read all their postings (tens
            # of milliseconds at 100,000 turns). The walk goes back over as many items as hold
            # about EVERY_POSTINGS of the terms' postings between them.
            postings = sum(self.df.get(t, 0) for t in weights) or 1
            span = max(window, EVERY_POSTINGS * window * self.live // postings)
            sql, values = self._window(" AND ".join(map(_quote, weights)), every_limit, filters,
                                       "items_terms.rowid AS id, 0 AS w, 1 AS every", span)
            walks.append(sql)
            params += values
        if not walks:
            return []
        # The cut sorts ids and estimates only (reading each walked item's row to test the
        # kind would cost more than the walks); the chosen rows are read, and filtered, after it.
        exclude = ",".join("?" * len(filters.exclude))
        where, more = conditions(recall.Filters(filters.kinds))
        rows = self.conn.execute(
            f"WITH walked AS ({' UNION ALL '.join(walks)}), "
            "best AS (SELECT id, CASE WHEN max(every) = 1 THEN ? ELSE sum(w) END AS estimate "
            f"FROM walked WHERE id NOT IN ({exclude}) GROUP BY id "
            "ORDER BY estimate DESC, id DESC LIMIT ?) "
            f"SELECT {HIT} FROM best JOIN items AS i ON i.id = best.id "
            f"WHERE +i.status = 'active' {where} ORDER BY best.estimate DESC, best.id DESC",
            [*params, sum(weights.values()), *filters.exclude, limit, *more]).fetchall()
        return [hit(row) for row in rows]

    def fetch(self, ids: Sequence[int], filters: recall.Filters) -> list[recall.Hit]:
        if not ids:
            return []
        where, params = conditions(filters)
        rows = self.conn.execute(
            f"SELECT {HIT} FROM items AS i WHERE i.id IN ({','.join('?' * len(ids))}) "
            f"AND +i.status = 'active' {where}", [*ids, *params]).fetchall()
        return [hit(row) for row in rows]

    def neighbours(self, ids: Sequence[int], filters: recall.Filters,
                   known: Mapping[int, recall.Hit] | None = None) -> dict[int, list[recall.Hit]]:
        # Two probes of the (session_id, kind) index per item: the active turns just before
        # and after it in its session.
        rows = self.conn.execute(
            "SELECT s.id, (SELECT max(p.id) FROM items AS p WHERE p.session_id = s.session_id "
            "AND p.kind = 'turn' AND p.id < s.id AND +p.status = 'active'), "
            "(SELECT min(n.id) FROM items AS n WHERE n.session_id = s.session_id "
            "AND n.kind = 'turn' AND n.id > s.id AND +n.status = 'active') "
            f"FROM items AS s WHERE s.id IN ({','.join('?' * len(ids))})", list(ids)).fetchall()
        return recall.retrieval.neighbour_hits(rows, lambda wanted: self.fetch(wanted, filters),
                                               known)

    def vectors(self, ids: Sequence[int], model: str) -> dict[int, list[float]]:
        from memhost.recall.embedding import unpack

        if not ids:
            return {}
        rows = self.conn.execute(
            f"SELECT item_id, vector FROM vectors WHERE item_id IN ({','.join('?' * len(ids))}) "
            "AND model = ?", [*ids, model]).fetchall()
        return {item: unpack(blob) for item, blob in rows}

    def nearest(self, vector: Sequence[float], model: str, limit: int,
                filters: recall.Filters) -> list[int] | None:
        """The active items whose vectors are closest (sqlite-vec's cosine distance); ``None``
        without sqlite-vec (the vectors then re-rank the lexical candidates only)."""
        from memhost.recall.embedding import pack

        if not self.vector_search:
            return None
        where, params = conditions(filters)
        rows = self.conn.execute(
            "SELECT v.item_id FROM vectors AS v JOIN items AS i ON i.id = v.item_id "
            f"WHERE v.model = ? AND i.status = 'active' {where} "
            "ORDER BY vec_distance_cosine(v.vector, ?) LIMIT ?",
            [model, *params, pack(vector), limit]).fetchall()
        return [row[0] for row in rows]



__all__ = ["HIT", "Backend", "conditions", "hit"]
