"""Looking through one user's recall items by hand: ``memhost recall list|show|forget|export``
and the settings page's recall tab.

Mixed into :class:`store.RecallStore` (it uses the store's ``read``, ``write`` and ``_q``); every
statement is scoped to the store's ``user_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg

from memhost import recall

from .backend import HIT, Backend, hit

#: Rows read per query while exporting.
EXPORT_BATCH = 500


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class Browse:
    """``listing``, ``item``, ``around``, ``forget_many`` and ``export``."""

    # Supplied by the store this is mixed into.
    user_id: str
    read: Callable[..., Any]
    write: Callable[..., Any]
    _q: Callable[[str], Any]

    def listing(self, *, session: str | None = None, since: float | None = None,
                until: float | None = None, match: str | None = None,
                kinds: Sequence[str] = recall.KINDS, limit: int | None = 50) -> list[recall.Hit]:
        """Active items, newest first: of one ``session``, in a time window, holding the text
        ``match`` (any case)."""
        clauses = ["i.user_id = %(user)s", "i.status = 'active'", "i.kind = ANY(%(kinds)s)"]
        params: dict[str, Any] = {"user": self.user_id, "kinds": list(kinds),
                                  "session": session, "since": since, "until": until,
                                  "match": _like(match or ""), "limit": limit}
        if session is not None:
            clauses.append("i.session_id = %(session)s")
        if since is not None:
            clauses.append("i.created_at >= to_timestamp(%(since)s)")
        if until is not None:
            clauses.append("i.created_at < to_timestamp(%(until)s)")
        if match:
            clauses.append("i.body ILIKE %(match)s")
        sql = (f"SELECT {HIT} FROM {{s}}.items AS i WHERE {' AND '.join(clauses)} "
               "ORDER BY i.id DESC" + (" LIMIT %(limit)s" if limit is not None else ""))
        rows = self.read(lambda conn: conn.execute(self._q(sql), params).fetchall())
        return [hit(row) for row in rows]

    def item(self, item_id: int) -> dict[str, Any] | None:
        """Everything stored about one of this user's items (whatever its state), or ``None``."""
        def run(conn: psycopg.Connection[Any]) -> dict[str, Any] | None:
            cursor = conn.execute(self._q(
                "SELECT id, key, kind, role, body, terms, length, session_id, target, origin, "
                "extract(epoch FROM created_at)::float8 AS created_at, status, "
                "extract(epoch FROM status_at)::float8 AS status_at, replaced_by "
                "FROM {s}.items WHERE id = %s AND user_id = %s"), (item_id, self.user_id))
            row = cursor.fetchone()
            return dict(zip([c.name for c in cursor.description], row, strict=True)) \
                if row else None

        return self.read(run)

    def around(self, item_id: int) -> list[recall.Hit]:
        """The active turns just before and after a turn in its session."""
        return self.read(lambda conn: Backend(self, conn).neighbours(
            [item_id], recall.Filters()).get(item_id, []))

    def forget_many(self, ids: Sequence[int]) -> int:
        """Forget these items (text erased, marked ``forgotten``) in one transaction; how many
        were not forgotten already."""
        wanted = sorted(set(ids))
        if not wanted:
            return 0
        return self.write(lambda conn: conn.execute(self._q(
            "UPDATE {s}.items SET status = 'forgotten', body = '', terms = '', "
            "status_at = now() WHERE id = ANY(%s) AND user_id = %s AND status <> 'forgotten'"),
            (wanted, self.user_id)).rowcount)

    def export(self) -> Iterator[dict[str, Any]]:
        """Every item of this user that still has its text, oldest first."""
        return recall.exchange.paged(lambda after: self.read(lambda conn: conn.execute(self._q(
            "SELECT id, kind, role, body, session_id, target, origin, "
            "extract(epoch FROM created_at)::float8, status FROM {s}.items "
            "WHERE user_id = %s AND id > %s AND status <> 'forgotten' ORDER BY id LIMIT %s"),
            (self.user_id, after, EXPORT_BATCH)).fetchall()))


__all__ = ["Browse"]
