"""The settings page's JSON API, and its OpenAPI document.

Every endpoint is one :class:`Endpoint` in :data:`ENDPOINTS`: the route, the handler, and what the
OpenAPI document says about it, so the document lists exactly the routes the application serves.
Handlers are plain functions run in a worker thread; they return data (sent as JSON with 200) or
raise :class:`ApiError`. Errors are always ``{"error": "...", "fields": {"key": "message"}}``.

Settings go through :class:`memhost.schema.settings.SettingsService` (secrets are write-only:
``is_set`` only); memory edits go through the same :class:`~memhost.builtin_providers.tool.MemoryTool`
the model uses (origin ``settings``), so they follow the same rules and give the same answers.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memhost.schema.model import PROVIDER_NAME

log = logging.getLogger("memhost.web")

ORIGIN = "settings"
TARGETS = ("memory", "user")
PENDING_ID = re.compile(r"^[0-9a-f]{8}$")
ARCHIVE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_ARGUMENTS = ("action", "content", "new_text", "old_text", "operations")


class ApiError(Exception):
    """An answer other than 200: ``status``, a message, per-field messages and extra data."""

    def __init__(self, status: int, message: str, fields: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.fields = dict(fields or {})
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "fields": self.fields, **self.extra}


@dataclass(frozen=True)
class Request:
    """What a handler gets: the home, path parameters, query parameters and the JSON body."""

    home: Path
    params: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None


# -- shared helpers ------------------------------------------------------------------------------


def _provider_name(request: Request) -> str:
    name = request.params.get("name", "")
    if not PROVIDER_NAME.match(name):
        raise ApiError(404, f"Unknown memory provider: {name}")
    return name


def _object_body(request: Request) -> dict[str, Any]:
    if not isinstance(request.body, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    return request.body


def _config(home: Path) -> Any:
    from memhost.config import load_config

    return load_config(home)


def _store(home: Path) -> Any:
    from memhost.builtin_providers.store import MemoryStore

    return MemoryStore.from_settings(home, _config(home).memory)


def _configured(home: Path) -> tuple[str, dict[str, Any], str | None]:
    """``memory.provider`` (``""`` for builtin only), the provider tables, and a config error."""
    from memhost.discovery import BUILTIN_ONLY
    from memhost.errors import ConfigError

    try:
        config = _config(home)
    except ConfigError as exc:
        return "", {}, str(exc)
    name = config.memory.provider.strip()
    return ("" if name.lower() in BUILTIN_ONLY else name), dict(config.providers), None


def _status(candidate: Any, home: Path, table: dict[str, Any] | None,
            configured: str) -> tuple[str, str]:
    """``active``, ``available``, ``unavailable``, ``failed`` or ``blocked``, with the reason.
    Loads the provider to ask ``check_available`` (bounded in time), as ``providers list --check``
    does."""
    from memhost.authoring.checker import availability
    from memhost.cli.progress import step

    # Loading a provider can wait on its import; a slow one is said on the server's stderr.
    with step("memhost settings", f"checking memory provider {candidate.name!r} (import, "
              "check_available)", after=1.0):
        status, reason = availability(candidate, home, table)
    if status == "available" and candidate.name == configured:
        status = "active"
    return status, reason


def _candidate_row(candidate: Any, status: str, reason: str, configured: str) -> dict[str, Any]:
    from memhost.discovery import SCHEMA_FILE

    has_schema = bool(candidate.path and (candidate.path / SCHEMA_FILE).is_file())
    return {"name": candidate.name, "source": candidate.source,
            "path": str(candidate.path) if candidate.path else None,
            "version": candidate.version, "description": candidate.description,
            "status": status, "reason": reason, "configured": candidate.name == configured,
            "has_schema": has_schema, "shadowed_by": candidate.shadowed_by or None}


def _age(timestamp: Any, now: float) -> str:
    from memhost.cli._common import age

    return age(timestamp, now)


# -- providers -------------------------------------------------------------------------------------


def list_providers(request: Request) -> dict[str, Any]:
    """Every provider found, with its status and reason, and which one is configured."""
    from memhost import discovery

    home = request.home
    configured, tables, config_error = _configured(home)
    found = discovery.discover(home, strict=False)
    rows = []
    for candidate in found.candidates:
        status, reason = _status(candidate, home, tables.get(candidate.name), configured)
        rows.append(_candidate_row(candidate, status, reason, configured))
    failures = {f.name: f.error for f in discovery.recorded_failures()}
    for row in rows:
        if row["status"] == "failed" and not row["reason"]:
            row["reason"] = failures.get(row["name"], "")
    shadowed = [_candidate_row(c, "shadowed", f"shadowed by the one from {c.shadowed_by}",
                               configured) for c in found.shadowed]
    configured_known = not configured or found.get(configured) is not None
    return {"home": str(home), "configured": configured or "builtin",
            "configured_known": configured_known, "config_error": config_error,
            "providers": rows, "shadowed": shadowed, "blocked": list(found.blocked)}


def _settings(home: Path) -> Any:
    from memhost.schema.settings import SettingsService

    return SettingsService(home)


def _known(request: Request) -> str:
    """The provider name from the path, which must be a discovered provider (else 404)."""
    from memhost import discovery

    name = _provider_name(request)
    if discovery.discover(request.home, strict=False).get(name) is None:
        raise ApiError(404, f"Unknown memory provider: {name}")
    return name


def get_provider(request: Request) -> dict[str, Any]:
    """One provider's settings: schema, JSON Schema, uiSchema and current values (secrets only as
    ``is_set``)."""
    return _settings(request.home).describe(_known(request))


def get_provider_schema(request: Request) -> dict[str, Any]:
    """One provider's settings as JSON Schema (draft 2020-12) and uiSchema."""
    described = _settings(request.home).describe(_known(request))
    return {"json_schema": described["json_schema"], "ui_schema": described["ui_schema"]}


def update_provider(request: Request) -> dict[str, Any]:
    """Change the fields sent, and nothing else; refused as a whole (nothing written) when any
    value is invalid."""
    name = _known(request)
    values = _object_body(request).get("values")
    if not isinstance(values, dict):
        raise ApiError(400, 'Send {"values": {"field_key": value, ...}}.')
    return _settings(request.home).update(name, values)


def clear_secret(request: Request) -> dict[str, Any]:
    """Remove one secret from the env store."""
    name = _known(request)
    key = _object_body(request).get("key")
    if not isinstance(key, str) or not key:
        raise ApiError(400, 'Send {"key": "field_key"} naming the secret to clear.')
    return _settings(request.home).clear_secret(name, key)


def set_active(request: Request) -> dict[str, Any]:
    """Make a provider the external provider (``builtin`` for none); validated against the
    providers found."""
    from memhost import discovery
    from memhost.config import update_config
    from memhost.errors import ConfigError

    wanted = _object_body(request).get("provider")
    if not isinstance(wanted, str):
        raise ApiError(400, 'Send {"provider": "NAME"} ("builtin" for no external provider).',
                       {"provider": "must be a provider name"})
    home = request.home
    try:
        name = discovery.validate_provider_name(wanted, home)
    except ConfigError as exc:
        raise ApiError(422, str(exc), {"provider": str(exc)}) from None
    update_config(home, {("memory", "provider"): name or None})
    if not name:
        return {"configured": "builtin", "status": "active", "reason": "",
                "message": "Only the builtin memory is active."}
    candidate = discovery.discover(home, strict=False).get(name)
    if candidate is None:  # removed since it was validated a moment ago
        status, reason = "failed", "it is no longer found"
    else:
        _, tables, _ = _configured(home)
        status, reason = _status(candidate, home, tables.get(name), name)
    message = (f"{name} is the memory provider." if status == "active" else
               f"{name} is selected, but it is {status}: {reason}. Until that is fixed only the "
               "builtin memory is active.")
    return {"configured": name, "status": status, "reason": reason, "message": message}


# -- memory ----------------------------------------------------------------------------------------


def _entry_flags(store: Any, target: str, entries: list[dict[str, Any]], stale_days: int,
                 now: float) -> None:
    """``pinned`` and ``stale`` for entries whose description lacks them: pinned from the
    sidecar, stale when neither written nor confirmed within ``stale_days`` (never when pinned).
    Flags the store's own description already gives are kept as they are."""
    from memhost.builtin_providers import entrymeta

    meta = entrymeta.load(store.path(target))
    for entry in entries:
        record = entrymeta.for_entry(meta, entry["text"])
        entry.setdefault("pinned", bool(record.get("pinned")))
        entry.setdefault("confirmed", record.get("confirmed"))
        if "stale" not in entry:
            touched = [t for t in (record.get("updated"), record.get("confirmed"),
                                   record.get("created"))
                       if isinstance(t, int | float) and not isinstance(t, bool)]
            entry["stale"] = bool(touched) and not entry["pinned"] and \
                now - max(touched) > stale_days * 86_400
        entry["updated_age"] = _age(entry.get("updated"), now) if entry.get("updated") else None


def _describe_store(store: Any, config: Any, target: str) -> dict[str, Any]:
    """``memhost memory show``'s description of one store (with the curator's stale window when
    that description takes one)."""
    import inspect

    from memhost.cli.memory import describe_store

    options: dict[str, Any] = {}
    if "stale_after_days" in inspect.signature(describe_store).parameters:
        options["stale_after_days"] = config.curator.stale_after_days
    return describe_store(store, config.memory, target, **options)


def memory(request: Request) -> dict[str, Any]:
    """Both stores: usage, limits, whether enabled, and the entries with their index, age and
    flags (pinned, stale, withheld by threat scanning)."""
    from memhost.builtin_providers.store import MemoryStore
    from memhost.review.approval import PendingStore

    config = _config(request.home)
    store = MemoryStore.from_settings(request.home, config.memory)
    now = time.time()
    stores = []
    for target in TARGETS:
        info = _describe_store(store, config, target)
        _entry_flags(store, target, info["entries"], config.curator.stale_after_days, now)
        stores.append(info)
    return {"stores": stores, "pending": PendingStore(request.home).count(),
            "stale_after_days": config.curator.stale_after_days}


def write_memory(request: Request) -> dict[str, Any]:
    """Add, replace or remove entries with the ``memory`` tool's arguments (``action``,
    ``content``, ``old_text``, or an ``operations`` batch): the same rules and answers as the
    model's tool. A failed write is 422 with the tool's answer in ``result``."""
    from memhost.builtin_providers.tool import MemoryTool

    target = request.params.get("target", "")
    if target not in TARGETS:
        raise ApiError(404, f"Unknown memory store {target!r}; use 'memory' or 'user'.")
    body = _object_body(request)
    arguments = {key: body[key] for key in TOOL_ARGUMENTS if key in body}
    arguments["target"] = target
    try:
        response = MemoryTool(_store(request.home), origin=ORIGIN).call(arguments)
    except OSError as exc:
        raise ApiError(500, f"Could not save the change: {exc.strerror or exc}. The memory file "
                            "was not changed; `memhost doctor` checks the files.") from None
    if not response.get("success"):
        raise ApiError(422, str(response.get("error") or "The change was refused."),
                       result=response)
    return response


# -- approvals -------------------------------------------------------------------------------------


def list_pending(request: Request) -> dict[str, Any]:
    """Memory writes waiting for approval, oldest first."""
    from memhost.review.approval import PendingStore

    pending = PendingStore(request.home)
    now = time.time()
    records = []
    for record in pending.list():
        data = record.as_dict()
        data.update(target=record.target, action=record.action, age=_age(record.created_at, now))
        records.append(data)
    return {"pending": records,
            "unreadable": [{"path": p, "reason": why} for p, why in pending.unreadable]}


def _pending_id(request: Request) -> str:
    pending_id = request.params.get("id", "")
    if not PENDING_ID.match(pending_id):
        raise ApiError(404, f"No pending write has the id {pending_id!r}.")
    return pending_id


def approve_pending(request: Request) -> dict[str, Any]:
    """Apply a staged write (to exactly the entries it was staged against); 409 when it cannot
    apply any more (it is kept)."""
    from memhost.review.approval import PendingStore, approve

    _object_body(request)
    pending_id = _pending_id(request)
    if PendingStore(request.home).get(pending_id) is None:
        raise ApiError(404, f"No pending write has the id {pending_id!r}.")
    try:
        response = approve(_store(request.home), pending_id, home=request.home)
    except OSError as exc:
        raise ApiError(500, f"Could not apply the write: {exc.strerror or exc}.") from None
    if not response.get("success"):
        status = 409 if response.get("kept") else 404
        raise ApiError(status, str(response.get("error")), result=response)
    return response


def reject_pending(request: Request) -> dict[str, Any]:
    """Discard a staged write; nothing in memory changes."""
    from memhost.review.approval import reject

    _object_body(request)
    response = reject(request.home, _pending_id(request))
    if not response.get("success"):
        raise ApiError(404, str(response.get("error")), result=response)
    return response


# -- archive ---------------------------------------------------------------------------------------


def list_archive(request: Request) -> dict[str, Any]:
    """Entries that writes replaced or removed, newest first (``?target=memory|user``,
    ``?limit=N``)."""
    from dataclasses import asdict

    target = request.query.get("target") or None
    if target is not None and target not in TARGETS:
        raise ApiError(400, "target must be 'memory' or 'user'", {"target": "unknown store"})
    limit_text = request.query.get("limit")
    limit = None
    if limit_text:
        if not limit_text.isdigit():
            raise ApiError(400, "limit must be a whole number", {"limit": "not a number"})
        limit = int(limit_text)
    archive = _store(request.home).archive
    try:
        records = archive.entries()
    except OSError as exc:
        raise ApiError(500, f"{archive.path} cannot be read ({exc.strerror or exc}).") from None
    records = [r for r in reversed(records) if target is None or r.target == target]
    if limit is not None:
        records = records[:limit]
    now = time.time()
    return {"path": str(archive.path),
            "entries": [{**asdict(r), "age": _age(r.time, now)} for r in records]}


def restore_archived(request: Request) -> dict[str, Any]:
    """Put an archived entry back into its store (as an ``add``: budget and scanning apply)."""
    from memhost.builtin_providers.store import FILENAMES

    _object_body(request)
    archive_id = request.params.get("id", "")
    store = _store(request.home)
    record = store.archive.get(archive_id) if ARCHIVE_ID.match(archive_id) else None
    if record is None:
        raise ApiError(404, f"No archived entry has the id {archive_id!r}.")
    if not store.enabled.get(record.target, False):
        raise ApiError(422, f"Entry {archive_id} belongs to {FILENAMES[record.target]}, which is "
                            "disabled under [memory] in config.toml; enable it first.")
    try:
        response = store.restore(archive_id, origin=ORIGIN).response
    except OSError as exc:
        raise ApiError(500, f"Could not restore the entry: {exc.strerror or exc}.") from None
    if not response.get("success"):
        raise ApiError(422, str(response.get("error")), result=response)
    return response


# -- the route table and the OpenAPI document ------------------------------------------------------


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


ANY_OBJECT: dict[str, Any] = {"type": "object"}
ERROR_REF = {"$ref": "#/components/schemas/Error"}
DESCRIBED_REF = {"$ref": "#/components/schemas/ProviderSettings"}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    handler: Callable[[Request], Any]
    summary: str
    tag: str
    body: dict[str, Any] | None = None
    result: dict[str, Any] = field(default_factory=lambda: dict(ANY_OBJECT))
    errors: dict[int, str] = field(default_factory=dict)
    query: tuple[tuple[str, str], ...] = ()

    @property
    def operation_id(self) -> str:
        return self.handler.__name__


_NAME_404 = {404: "invalid or unknown provider name"}

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", "/api/providers", list_providers, "List providers with their status",
             "providers"),
    Endpoint("PUT", "/api/active", set_active, "Choose the external provider", "providers",
             body=_obj({"provider": {"type": "string",
                                     "description": "a provider name, or 'builtin' for none"}},
                       ("provider",)),
             errors={400: "bad body", 422: "unknown provider name"}),
    Endpoint("GET", "/api/providers/{name}", get_provider, "One provider's settings",
             "providers", result=DESCRIBED_REF, errors=_NAME_404),
    Endpoint("GET", "/api/providers/{name}/schema", get_provider_schema,
             "One provider's JSON Schema and uiSchema", "providers",
             result=_obj({"json_schema": ANY_OBJECT, "ui_schema": ANY_OBJECT}), errors=_NAME_404),
    Endpoint("PUT", "/api/providers/{name}/config", update_provider,
             "Change some of a provider's settings", "providers",
             body=_obj({"values": {"type": "object", "description": (
                 "field key -> value; only these fields change; a blank non-secret goes back "
                 "to its default; a blank secret is left as it is")}}, ("values",)),
             result=DESCRIBED_REF,
             errors={**_NAME_404, 400: "bad body", 422: "invalid values (per field)"}),
    Endpoint("POST", "/api/providers/{name}/clear-secret", clear_secret,
             "Remove one of a provider's secrets", "providers",
             body=_obj({"key": {"type": "string"}}, ("key",)), result=DESCRIBED_REF,
             errors={**_NAME_404, 400: "bad body", 422: "not a secret field"}),
    Endpoint("GET", "/api/memory", memory, "Both memory stores with their entries", "memory"),
    Endpoint("POST", "/api/memory/{target}", write_memory,
             "Add, replace or remove entries (the memory tool's rules)", "memory",
             body=_obj({"action": {"enum": ["add", "replace", "remove"]},
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
)


def openapi(port: int) -> dict[str, Any]:
    """The OpenAPI 3.1 document of :data:`ENDPOINTS` (and of itself)."""
    from memhost import __version__

    paths: dict[str, dict[str, Any]] = {
        OPENAPI_PATH: {"get": {"operationId": "openapi", "summary": "This document",
                               "tags": ["meta"],
                               "responses": {"200": {"description": "OpenAPI 3.1 document"}}}}}
    for item in ENDPOINTS:
        operation: dict[str, Any] = {
            "operationId": item.operation_id, "summary": item.summary, "tags": [item.tag],
            "description": (item.handler.__doc__ or "").strip(),
        }
        parameters = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}}
                      for p in re.findall(r"{(\w+)}", item.path)]
        parameters += [{"name": q, "in": "query", "required": False, "description": text,
                        "schema": {"type": "string"}} for q, text in item.query]
        if parameters:
            operation["parameters"] = parameters
        if item.body is not None:
            operation["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": item.body}}}
        responses: dict[str, Any] = {"200": {"description": "OK", "content": {
            "application/json": {"schema": item.result}}}}
        for code, text in sorted({401: "no valid token", **item.errors}.items()):
            responses[str(code)] = {"description": text,
                                    "content": {"application/json": {"schema": ERROR_REF}}}
        if item.method != "GET":
            responses["403"] = {"description": "Origin is not this page",
                                "content": {"application/json": {"schema": ERROR_REF}}}
            responses["415"] = {"description": "body is not JSON",
                                "content": {"application/json": {"schema": ERROR_REF}}}
        operation["responses"] = responses
        paths.setdefault(item.path, {})[item.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "memhost settings API", "version": __version__, "description": (
            "The JSON API of `memhost settings serve`. Every request needs this start's token "
            "(the session cookie, or Authorization: Bearer TOKEN); every POST/PUT needs "
            f"Origin: http://127.0.0.1:{port} (or http://localhost:{port}) and Content-Type: "
            "application/json. Errors are {\"error\": message, \"fields\": {key: message}}.")},
        "servers": [{"url": f"http://127.0.0.1:{port}"}],
        "security": [{"bearer": []}, {"cookie": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie",
                           "name": f"memhost_settings_{port}"},
            },
            "schemas": {
                "Error": _obj({"error": {"type": "string"},
                               "fields": {"type": "object",
                                          "additionalProperties": {"type": "string"}},
                               "result": ANY_OBJECT}, ("error", "fields")),
                "ProviderSettings": _obj({
                    "name": {"type": "string"}, "label": {"type": "string"},
                    "has_schema": {"type": "boolean"}, "active": {"type": "boolean"},
                    "fields": {"type": "array", "items": ANY_OBJECT},
                    "missing": {"type": "array", "items": {"type": "string"}},
                    "json_schema": ANY_OBJECT, "ui_schema": ANY_OBJECT}),
            },
        },
    }


OPENAPI_PATH = "/api/openapi.json"

# The recall tab's endpoints live in their own module (it imports the names above).
from memhost.web.recall_api import ENDPOINTS as _RECALL_ENDPOINTS  # noqa: E402

ENDPOINTS += _RECALL_ENDPOINTS
