"""What a memory-store operation answers: the committed changes and the JSON-able response.

A refusal is raised inside an operation as :class:`OpError` (its outcome is the answer) and
never reaches the caller as an exception; :func:`fail` builds the same answer directly.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SAVED_NOTE = "This update is complete; do not repeat it."
#: Ends every refusal of a batch.
NOTHING_APPLIED = " Nothing in the batch was applied (a batch is all or nothing)."


class Unreadable(Exception):
    """The file exists but its content could not be read right now."""


def decoded(data: bytes) -> str:
    """A memory file's text; :class:`Unreadable` when it is not UTF-8."""
    if data.startswith(codecs.BOM_UTF8):  # what "utf-8-sig" does, without importing that codec
        data = data[len(codecs.BOM_UTF8):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"it is not valid UTF-8 (byte {exc.start})") from None


@dataclass(frozen=True)
class Change:
    """One committed edit, as mirrored to an external provider."""

    action: str  # add, replace, remove
    target: str
    content: str  # the new entry text; "" for remove
    previous: str | None = None  # the full entry text that was replaced or removed


@dataclass
class Outcome:
    """What a store operation produced: the JSON-able response and what was committed."""

    response: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    consolidation_failure: bool = False  # counts towards the per-turn circuit breaker

    @property
    def ok(self) -> bool:
        return bool(self.response.get("success"))


Listener = Callable[[list[Change], str, str], None]


def fail(error: str, **extra: Any) -> Outcome:
    return Outcome({"success": False, "error": error, **extra})


class OpError(Exception):
    def __init__(self, error: str, *, counts: bool = True, **extra: Any) -> None:
        super().__init__(error)
        self.outcome = Outcome({"success": False, "error": error, **extra}, consolidation_failure=counts)
