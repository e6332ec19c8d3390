"""What every settings API handler is given and may raise, and the helpers they share.

A handler takes a :class:`Request` (home, path and query parameters, JSON body) and returns data,
or raises :class:`ApiError` for any answer other than 200.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Memory edits from the page are recorded with this origin (as the model's are with its own).
ORIGIN = "settings"
TARGETS = ("memory", "user")


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
    #: The memory shown and edited: the home's own, or (``memhost --user ID settings serve``)
    #: that user's folder under ``<home>/users/``. Config and providers are always the home's.
    memory_home: Path | None = None

    @property
    def memory(self) -> Path:
        return self.memory_home or self.home


# -- shared helpers ------------------------------------------------------------------------------


def object_body(request: Request) -> dict[str, Any]:
    """The JSON body, which must be an object (else 400)."""
    if not isinstance(request.body, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    return request.body


def home_config(home: Path) -> Any:
    """The home's config, read afresh on every request (the page may just have changed it)."""
    from memhost.config import load_config

    return load_config(home)


def memory_store(request: Request) -> Any:
    """The builtin memory store the request shows and edits."""
    from memhost.builtin_providers.store import MemoryStore

    return MemoryStore.from_settings(request.memory, home_config(request.home).memory)


def age_text(timestamp: Any, now: float) -> str:
    """How long ago, in words, as the command line says it."""
    from memhost.cli._common import age

    return age(timestamp, now)
