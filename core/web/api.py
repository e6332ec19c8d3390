"""The settings page's JSON API: its route table and its OpenAPI document.

Every endpoint is one :class:`Endpoint` in :data:`ENDPOINTS`: the route, the handler, and what the
OpenAPI document says about it, so the document lists exactly the routes the application serves.
Handlers are plain functions run in a worker thread; they return data (sent as JSON with 200) or
raise :class:`ApiError`. Errors are always ``{"error": "...", "fields": {"key": "message"}}``.

The handlers live by what they serve: :mod:`memhost.web.providers_api` (providers and their
settings), :mod:`memhost.web.memory_api` (memory, approvals, archive) and
:mod:`memhost.web.recall_api` (the recall tab); :mod:`memhost.web.request` holds what they share
and :mod:`memhost.web.openapi` the entries' shape and the document.
"""

from __future__ import annotations

from typing import Any

from memhost.web.memory_api import (approve_pending, list_archive, list_pending, memory,
                                    reject_pending, restore_archived, write_memory)
from memhost.web.openapi import (ANY_OBJECT, DESCRIBED_REF, OPENAPI_PATH, Endpoint, document,
                                 object_schema)
from memhost.web.providers_api import (clear_secret, get_provider, get_provider_schema,
                                       list_providers, set_active, update_provider)
from memhost.web.recall_api import ENDPOINTS as _RECALL_ENDPOINTS
from memhost.web.request import ApiError, Request


__all__ = ["ENDPOINTS", "OPENAPI_PATH", "ApiError", "Endpoint", "Request", "openapi"]

_NAME_404 = {404: "invalid or unknown provider name"}

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", "/api/providers", list_providers, "List providers with their status",
             "providers"),
    Endpoint("PUT", "/api/active", set_active, "Choose the external provider", "providers",
             body=object_schema({"provider": {
                 "type": "string", "description": "a provider name, or 'builtin' for none"}},
                 ("provider",)),
             errors={400: "bad body", 422: "unknown provider name"}),
    Endpoint("GET", "/api/providers/{name}", get_provider, "One provider's settings",
             "providers", result=DESCRIBED_REF, errors=_NAME_404),
    Endpoint("GET", "/api/providers/{name}/schema", get_provider_schema,
             "One provider's JSON Schema and uiSchema", "providers",
             result=object_schema({"json_schema": ANY_OBJECT, "ui_schema": ANY_OBJECT}),
             errors=_NAME_404),
    Endpoint("PUT", "/api/providers/{name}/config", update_provider,
             "Change some of a provider's settings", "providers",
             body=object_schema({"values": {"type": "object", "description": (
                 "field key -> value; only these fields change; a blank non-secret goes back "
                 "to its default; a blank secret is left as it is")}}, ("values",)),
             result=DESCRIBED_REF,
             errors={**_NAME_404, 400: "bad body", 422: "invalid values (per field)"}),
    Endpoint("POST", "/api/providers/{name}/clear-secret", clear_secret,
             "Remove one of a provider's secrets", "providers",
             body=object_schema({"key": {"type": "string"}}, ("key",)), result=DESCRIBED_REF,
             errors={**_NAME_404, 400: "bad body", 422: "not a secret field"}),
    Endpoint("GET", "/api/memory", memory, "Both memory stores with their entries", "memory"),
    Endpoint("POST", "/api/memory/{target}", write_memory,
             "Add, replace or remove entries (the memory tool's rules)", "memory",
             body=object_schema({
                 "action": {"enum": ["add", "replace", "remove"]},
                 "content": {"type": "string"}, "old_text": {"type": "string"},
                 "operations": {"type": "array", "items": ANY_OBJECT}}),
             errors={400: "bad body", 404: "unknown store", 422: "refused by the tool's rules"}),
    Endpoint("GET", "/api/pending", list_pending, "Memory writes waiting for approval",
             "approvals"),
    Endpoint("POST", "/api/pending/{id}/approve", approve_pending, "Apply a staged write",
             "approvals", body=ANY_OBJECT,
             errors={404: "no such pending write", 409: "could not apply; kept"}),
    Endpoint("POST", "/api/pending/{id}/reject", reject_pending, "Discard a staged write",
             "approvals", body=ANY_OBJECT, errors={404: "no such pending write"}),
    Endpoint("GET", "/api/archive", list_archive, "Archived (replaced or removed) entries",
             "archive", query=(("target", "memory or user"), ("limit", "at most this many")),
             errors={400: "bad query"}),
    Endpoint("POST", "/api/archive/{id}/restore", restore_archived,
             "Put an archived entry back", "archive", body=ANY_OBJECT,
             errors={404: "no such archived entry", 422: "refused (budget, disabled store)"}),
) + _RECALL_ENDPOINTS


def openapi(port: int) -> dict[str, Any]:
    """The OpenAPI 3.1 document of :data:`ENDPOINTS` (and of itself)."""
    return document(port, ENDPOINTS)
