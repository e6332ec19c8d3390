"""Writing to the recall database: items stored once by key, builtin notes applied as facts,
items forgotten, vectors kept beside them, and the term statistics kept as the items change.

Mixed into :class:`store.RecallStore` (it uses the store's ``write``).
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memhost import recall
from memhost.recall.terms import terms as terms_of


class Writes:
    """``add``, ``add_many``, ``put_vectors``, ``note`` and ``forget``."""

    # Supplied by the store this is mixed into.
    write: Callable[..., Any]


    @staticmethod
    def _insert(conn: sqlite3.Connection, *, key: str, kind: str, body: str, session_id: str,
                created_at: float, target: str = "", origin: str = "", role: str = "",
                status: str = recall.ACTIVE, counted: list[set[str]] | None = None) -> int | None:
        """Insert one item; ``None`` when its key is already stored (a replayed write). The
        terms of an active item are counted at once, or added to ``counted`` for the caller to
        count with others in one statement."""
        made = terms_of(body)
        distinct = set(made)
        cursor = conn.execute(
            "INSERT INTO items (key, kind, role, body, terms, length, session_id, target, origin, "
            "created_at, status, status_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            (key, kind, role, body, " ".join(made), len(made), session_id, target, origin,
             created_at, status, None if status == recall.ACTIVE else created_at))
        if not cursor.rowcount:
            return None
        if status == recall.ACTIVE:
            if counted is None:
                _count_terms(conn, [distinct], +1)
            else:
                counted.append(distinct)
        return cursor.lastrowid

    @staticmethod
    def _set_status(conn: sqlite3.Connection, ids: Sequence[int], status: str, *,
                    at: float, by: int | None = None, erase: bool = False) -> None:
        """Change items' state; items leaving ``active`` stop counting towards their terms."""
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        leaving = [set(row[0].split()) for row in conn.execute(
            f"SELECT terms FROM items WHERE id IN ({marks}) AND status = 'active'", list(ids))]
        _count_terms(conn, leaving, -1)
        erased = ", body = '', terms = ''" if erase else ""
        conn.execute(f"UPDATE items SET status = ?, status_at = ?, replaced_by = ?{erased} "
                     f"WHERE id IN ({marks})", [status, at, by, *ids])

    def add(self, *, key: str, kind: str, body: str, session_id: str,
            created_at: float | None = None, target: str = "", origin: str = "") -> int | None:
        """Store one item once; ``None`` when that key was stored before."""
        moment = time.time() if created_at is None else created_at
        return self.write(lambda conn: self._insert(
            conn, key=key, kind=kind, body=body, session_id=session_id, created_at=moment,
            target=target, origin=origin))

    def add_many(self, items: Iterable[dict[str, Any]], *,
                 new_ids: list[int] | None = None) -> int:
        """Store many items in one transaction (a turn's two items, an import); returns how
        many were new (their ids are added to ``new_ids``). An item without ``created_at``
        gets the time of the call."""
        now = time.time()
        rows = [{**item, "created_at": item.get("created_at") or now} for item in items]

        def run(conn: sqlite3.Connection) -> int:
            counted: list[set[str]] = []
            made = [self._insert(conn, **item, counted=counted) for item in rows]
            _count_terms(conn, counted, +1)
            if new_ids is not None:
                new_ids.extend(i for i in made if i is not None)
            return sum(1 for i in made if i is not None)

        return self.write(run)

    def put_vectors(self, model: str, vectors: Sequence[tuple[int, Sequence[float]]]) -> None:
        """Store items' vectors of ``model`` (semantic recall); an item forgotten meanwhile
        gets none."""
        from memhost.recall.embedding import pack

        def run(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO vectors (item_id, model, vector) SELECT id, ?, ? FROM items "
                "WHERE id = ? AND status <> 'forgotten' ON CONFLICT (item_id) DO UPDATE SET "
                "model = excluded.model, vector = excluded.vector",
                [(model, pack(vector), item) for item, vector in vectors])

        if vectors:
            self.write(run)

    def note(self, *, action: str, target: str, content: str, previous: str | None,
             session_id: str, origin: str) -> int | None:
        """Apply a committed builtin memory write to the facts.

        ``add`` stores the note (unless the same note is already active); ``replace`` stores the
        new note and marks the old one ``superseded`` (pointing at the new one); ``remove`` marks
        it ``retired``. An old note this store never saw is stored already marked, so the
        history is complete. Each step checks the state first, so replaying a write (the outbox
        after a crash) changes nothing.
        """
        now = time.time()

        def fresh_key() -> str:
            return recall.item_key("fact", target, now, secrets.token_hex(8))

        def run(conn: sqlite3.Connection) -> int | None:
            new_id = None
            if action in ("add", "replace") and content.strip():
                row = conn.execute(
                    "SELECT id FROM items WHERE kind = 'fact' AND target = ? AND body = ? AND "
                    "status = 'active' ORDER BY id LIMIT 1", (target, content)).fetchone()
                new_id = row[0] if row else self._insert(
                    conn, key=fresh_key(), kind=recall.FACT, body=content,
                    session_id=session_id, created_at=now, target=target, origin=origin)
            if action not in ("replace", "remove") or not previous or not previous.strip() \
                    or previous == content:
                return new_id
            status = recall.SUPERSEDED if action == "replace" else recall.RETIRED
            by = new_id if action == "replace" else None
            found = conn.execute(
                "SELECT id FROM items WHERE kind = 'fact' AND target = ? AND body = ? AND "
                "status = 'active'", (target, previous)).fetchall()
            if found:
                self._set_status(conn, [row[0] for row in found], status, at=now, by=by)
            elif conn.execute("SELECT 1 FROM items WHERE kind = 'fact' AND target = ? AND "
                              "body = ?", (target, previous)).fetchone() is None:
                self._insert(conn, key=fresh_key(), kind=recall.FACT, body=previous,
                             session_id=session_id, created_at=now, target=target,
                             origin=origin, status=status)
            return new_id

        return self.write(run)

    def forget(self, item_id: int) -> dict[str, Any] | None:
        """Erase an item's text and mark it ``forgotten``; ``None`` when there is no such item."""
        def run(conn: sqlite3.Connection) -> dict[str, Any] | None:
            row = conn.execute("SELECT kind, status FROM items WHERE id = ?",
                               (item_id,)).fetchone()
            if row is None or row[1] == recall.FORGOTTEN:
                return None
            self._set_status(conn, [item_id], recall.FORGOTTEN, at=time.time(), erase=True)
            return {"id": item_id, "kind": row[0], "was": row[1]}

        return self.write(run)


def _count_terms(conn: sqlite3.Connection, items: Sequence[Sequence[str]], delta: int) -> None:
    """Add ``delta`` to the document frequency of each item's (distinct) terms."""
    counts: dict[str, int] = {}
    for distinct in items:
        for term in distinct:
            counts[term] = counts.get(term, 0) + delta
    if counts:
        conn.executemany("INSERT INTO terms (stem, df) VALUES (?, ?) ON CONFLICT (stem) "
                         "DO UPDATE SET df = df + excluded.df", sorted(counts.items()))


__all__ = ["Writes"]
