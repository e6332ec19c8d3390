"""Looking through the recall database by hand: ``memhost recall list|show|forget|export`` and the
settings page's recall tab.

Mixed into :class:`store.RecallStore` (it uses the store's ``read`` and ``write``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from memhost import recall

from .backend import HIT, Backend, hit

#: Rows read per query while exporting.
EXPORT_BATCH = 500


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class Browse:
    """``listing``, ``item``, ``around``, ``forget_many`` and ``export``."""

    # Supplied by the store this is mixed into.
    read: Callable[..., Any]
    write: Callable[..., Any]
    _set_status: Callable[..., None]

    def listing(self, *, session: str | None = None, since: float | None = None,
                until: float | None = None, match: str | None = None,
                kinds: Sequence[str] = recall.KINDS, limit: int | None = 50) -> list[recall.Hit]:
        """Active items, newest first: of one ``session``, in a time window, holding the text
        ``match`` (any case)."""
        clauses, params = ["i.status = 'active'"], []
        if session is not None:
            clauses.append("i.session_id = ?")
            params.append(session)
        if since is not None:
            clauses.append("i.created_at >= ?")
            params.append(since)
        if until is not None:
            clauses.append("i.created_at < ?")
            params.append(until)
        if match:
            clauses.append("i.body LIKE ? ESCAPE '\\'")  # LIKE ignores ASCII case
            params.append(_like(match))
        if set(kinds) != set(recall.KINDS):
            clauses.append(f"i.kind IN ({','.join('?' * len(kinds))})")
            params += list(kinds)
        sql = (f"SELECT {HIT} FROM items AS i WHERE {' AND '.join(clauses)} "
               "ORDER BY i.id DESC")
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = self.read(lambda conn: conn.execute(sql, params).fetchall())
        found = [hit(row) for row in rows]
        if match and not match.isascii():  # LIKE folds ASCII letters only
            found = [h for h in found if match.casefold() in h.body.casefold()]
        return found

    def item(self, item_id: int) -> dict[str, Any] | None:
        """Everything stored about one item (whatever its state), or ``None``."""
        def run(conn: sqlite3.Connection) -> dict[str, Any] | None:
            conn.row_factory = sqlite3.Row
            try:
                row = conn.execute("SELECT * FROM items WHERE id = ?", (item_id,)).fetchone()
            finally:
                conn.row_factory = None
            return dict(row) if row else None

        return self.read(run)

    def around(self, item_id: int) -> list[recall.Hit]:
        """The active turns just before and after a turn in its session."""
        return self.read(lambda conn: Backend(conn).neighbours(
            [item_id], recall.Filters()).get(item_id, []))

    def forget_many(self, ids: Sequence[int]) -> int:
        """Forget these items (text erased, marked ``forgotten``) in one transaction; how many
        were not forgotten already."""
        wanted = sorted(set(ids))

        def run(conn: sqlite3.Connection) -> int:
            live = [row[0] for row in conn.execute(
                f"SELECT id FROM items WHERE id IN ({','.join('?' * len(wanted))}) "
                "AND status <> 'forgotten'", wanted)]
            self._set_status(conn, live, recall.FORGOTTEN, at=time.time(),
                             erase=True)
            return len(live)

        return self.write(run) if wanted else 0

    def export(self) -> Iterator[dict[str, Any]]:
        """Every item that still has its text (forgotten ones have none), oldest first."""
        return recall.exchange.paged(lambda after: self.read(lambda conn: conn.execute(
            "SELECT id, kind, role, body, session_id, target, origin, created_at, status "
            "FROM items WHERE id > ? AND status <> 'forgotten' ORDER BY id LIMIT ?",
            (after, EXPORT_BATCH)).fetchall()))


__all__ = ["Browse"]
