"""The recall tools (``recall_search``, ``recall_forget``): schemas, argument checks, answers,
and the helpers that read a provider's numeric settings."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from memhost.toolcalls import error_answer as error  # the manager's own failed-call answer

SEARCH_TOOL = "recall_search"
FORGET_TOOL = "recall_forget"
MAX_SEARCH_LIMIT = 50


def tool_schemas(store_label: str) -> list[dict[str, Any]]:
    return [
        {"name": SEARCH_TOOL,
         "description": (f"Search {store_label}: past conversation turns, saved notes (facts), "
                         "subtask results and session transcripts. Use it to look up what was "
                         "said or decided before. Results are best first, each with its id, "
                         "date and kind."),
         "parameters": {"type": "object", "properties": {
             "query": {"type": "string", "description": "what to look for, in plain words"},
             "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                       "description": "at most this many results (default 10)"},
             "since": {"type": "string", "description": "only items from this date on "
                                                        "(YYYY-MM-DD or an ISO date-time)"},
             "until": {"type": "string", "description": "only items before the end of this "
                                                        "date (YYYY-MM-DD or an ISO date-time)"},
         }, "required": ["query"]}},
        {"name": FORGET_TOOL,
         "description": ("Forget one stored item for good, by the id recall_search showed "
                         "(#12 → 12). Its text is erased."),
         "parameters": {"type": "object", "properties": {
             "id": {"type": "integer", "description": "the item's id"},
         }, "required": ["id"]}},
    ]


class ToolArgumentError(ValueError):
    """A tool was called with arguments it cannot use; the message says what to send."""


@dataclass(frozen=True)
class SearchArgs:
    query: str
    limit: int
    since: float | None
    until: float | None


def moment(value: Any, name: str, *, end: bool) -> float | None:
    """A ``YYYY-MM-DD`` (its start, or with ``end`` its end) or ISO date-time as a Unix time;
    ``None`` for nothing; :class:`ToolArgumentError` for anything else."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise ToolArgumentError(f"{name} must be a date like 2024-05-01 or an ISO date-time")
    text = value.strip()
    try:
        if len(text) == 10:
            day = datetime.strptime(text, "%Y-%m-%d")  # noqa: DTZ007 - a local calendar day
            return (day + timedelta(days=1) if end else day).timestamp()
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ToolArgumentError(f"{name} = {value!r} is not a date like 2024-05-01 or an ISO "
                                "date-time like 2024-05-01T14:30") from None
    return parsed.timestamp()


def search_args(arguments: dict[str, Any]) -> SearchArgs:
    query = arguments.get("query", "")
    if not isinstance(query, str):
        raise ToolArgumentError("query must be a string")
    limit = arguments.get("limit", 10)
    if isinstance(limit, str) and limit.strip().isdigit():
        limit = int(limit)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ToolArgumentError(f"limit must be a whole number from 1 to {MAX_SEARCH_LIMIT}")
    since = moment(arguments.get("since"), "since", end=False)
    until = moment(arguments.get("until"), "until", end=True)
    if since is not None and until is not None and since >= until:
        raise ToolArgumentError("since must be before until")
    return SearchArgs(query, min(limit, MAX_SEARCH_LIMIT), since, until)


def forget_id(arguments: dict[str, Any]) -> int:
    value = arguments.get("id")
    if isinstance(value, str):
        value = value.strip().lstrip("#")
        value = int(value) if value.isdigit() else value
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ToolArgumentError("id must be the whole-number id of a stored item (as shown by "
                                "recall_search, e.g. 12)")
    return value


def answer(**data: Any) -> str:
    return json.dumps({"success": True, **data}, ensure_ascii=False)


def int_setting(config: dict[str, Any], key: str, default: int, *, low: int, high: int) -> int:
    """A whole-number setting from a provider's config, clamped to ``[low, high]``."""
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return max(low, min(high, int(value)))


def float_setting(config: dict[str, Any], key: str, default: float, *, low: float,
                  high: float) -> float:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return default
    return max(low, min(high, float(value)))


__all__ = ["FORGET_TOOL", "MAX_SEARCH_LIMIT", "SEARCH_TOOL", "SearchArgs", "ToolArgumentError",
           "moment",
           "answer", "error", "float_setting", "forget_id", "int_setting", "search_args",
           "tool_schemas"]
