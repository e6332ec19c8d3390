"""The settings page's recall tab: search the recall store of the configured recall provider
(``sqlite`` or ``postgres``) and forget items, through the same provider code as
``memhost recall search|list|forget``."""

from __future__ import annotations

from typing import Any

from memhost.web.openapi import Endpoint, object_schema
from memhost.web.request import ApiError, Request

PROVIDERS = ("sqlite", "postgres")
MAX_LIMIT = 100


def _provider(request: Request) -> str:
    from memhost.config import load_config

    name = load_config(request.home).memory.provider.strip()
    if name not in PROVIDERS:
        raise ApiError(409, "No recall store: choose the sqlite or postgres provider first.")
    return name


def _limit(request: Request, default: int) -> int:
    raw = request.query.get("limit", "") or str(default)
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise ApiError(400, f"limit must be a whole number from 1 to {MAX_LIMIT}.")
    return int(raw)


def recall_search(request: Request) -> dict[str, Any]:
    """The items most relevant to ``query``, as recall ranks them; without a query, the newest
    items. Each with its id, kind, role, date, session and text."""
    from memhost.cli.recall_items import opened
    from memhost.errors import MemhostError, RetryableError
    from memhost.recall import Filters
    from memhost.security.redact import redact

    name = _provider(request)
    # Masked like every text handed to a provider: the query may reach an embedding server
    # (semantic recall), and the answer echoes it. Stored items are masked too, so a secret
    # typed here could never be found in clear anyway.
    query = redact(request.query.get("query", "").strip())
    limit = _limit(request, 20)
    try:
        with opened(name, request.home, **_user(request)) as (plugin, store):
            if query:
                hits = store.search(query, limit=limit, filters=Filters(),
                                    options=plugin.ranking(), semantic=plugin.semantic(query))
            else:
                hits = store.listing(limit=limit)
    except MemhostError as exc:
        raise ApiError(404, str(exc)) from None
    except RetryableError as exc:
        raise ApiError(503, f"The {name} recall store cannot be reached: {exc}") from None
    return {"provider": name, "query": query, "results": [h.as_dict() for h in hits]}


def _user(request: Request) -> dict[str, Any]:
    """With ``memhost --user ID settings serve``: that user's recall store, as a MemoryHub opens
    it (the memory folder is ``<home>/users/<ID>/``, so its name is the id)."""
    if request.memory_home is None:
        return {}
    return {"user_id": request.memory_home.name, "memory_home": request.memory_home}


def recall_forget(request: Request) -> dict[str, Any]:
    """Forget one item for good: its text (and its vector) are erased; it stays as a marker."""
    from memhost.cli.recall_items import opened
    from memhost.errors import MemhostError, RetryableError

    raw = request.params.get("id", "")
    if not raw.isdigit():
        raise ApiError(404, f"No stored item has id {raw}.")
    name = _provider(request)
    try:
        with opened(name, request.home, **_user(request)) as (_plugin, store):
            forgotten = store.forget_many([int(raw)])
    except MemhostError as exc:
        raise ApiError(404, str(exc)) from None
    except RetryableError as exc:
        raise ApiError(503, f"The {name} recall store cannot be reached: {exc}") from None
    if not forgotten:
        raise ApiError(404, f"No stored item has id {raw} (or it was forgotten already).")
    return {"forgotten": int(raw)}


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", "/api/recall", recall_search, "Search the recall store", "recall",
             query=(("query", "what to look for (empty: the newest items)"),
                    ("limit", f"at most this many (1-{MAX_LIMIT})")),
             result=object_schema({"provider": {"type": "string"}, "query": {"type": "string"},
                                   "results": {"type": "array", "items": {"type": "object"}}}),
             errors={400: "bad query", 404: "no recall store yet", 409: "no recall provider",
                     503: "the database cannot be reached"}),
    Endpoint("POST", "/api/recall/{id}/forget", recall_forget, "Forget a recalled item",
             "recall", body={"type": "object"},
             errors={404: "no such item", 409: "no recall provider",
                     503: "the database cannot be reached"}),
)
