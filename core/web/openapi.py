"""The settings API's route entries and its OpenAPI document.

Every endpoint is one :class:`Endpoint`: the route, the handler, and what the OpenAPI document
says about it. :func:`document` builds the document from the same entries the application serves,
so it lists exactly the routes there are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from memhost.web.request import Request

OPENAPI_PATH = "/api/openapi.json"


def object_schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON Schema object with these properties (and these required)."""
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


def document(port: int, endpoints: Iterable[Endpoint]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints`` (and of itself)."""
    from memhost import __version__

    paths: dict[str, dict[str, Any]] = {
        OPENAPI_PATH: {"get": {"operationId": "openapi", "summary": "This document",
                               "tags": ["meta"],
                               "responses": {"200": {"description": "OpenAPI 3.1 document"}}}}}
    for item in endpoints:
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
                "Error": object_schema({
                    "error": {"type": "string"},
                    "fields": {"type": "object", "additionalProperties": {"type": "string"}},
                    "result": ANY_OBJECT}, ("error", "fields")),
                "ProviderSettings": object_schema({
                    "name": {"type": "string"}, "label": {"type": "string"},
                    "has_schema": {"type": "boolean"}, "active": {"type": "boolean"},
                    "fields": {"type": "array", "items": ANY_OBJECT},
                    "missing": {"type": "array", "items": {"type": "string"}},
                    "json_schema": ANY_OBJECT, "ui_schema": ANY_OBJECT}),
            },
        },
    }
