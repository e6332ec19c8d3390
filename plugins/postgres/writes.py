"""Writing to the recall schema, for one user: items stored once by key (a turn's items in one
statement), builtin notes applied as facts, items forgotten, vectors kept beside them. The
statistics follow the items through the schema's triggers.

Mixed into :class:`store.RecallStore` (it uses the store's ``write``, ``_q`` and ``user_id``).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from memhost import recall
from memhost.recall.terms import terms as terms_of


def lock_key(schema: str) -> int:
    """The advisory-lock key that serialises migrations of ``schema`` (a signed 64-bit int)."""
    digest = hashlib.sha256(f"memhost-recall:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class Writes:
    """``add``, ``add_many``, ``put_vectors``, ``note`` and ``forget``."""

    # Supplied by the store this is mixed into.
    write: Callable[..., Any]
    _q: Callable[[str], sql.Composed]
    user_id: str
    schema: str


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


__all__ = ["Writes", "lock_key"]
