"""Tool calls as each model API sends them back, read into a name and arguments.

``MemoryManager.call_tool`` takes whatever the host got from its model API, unchanged:

- an OpenAI chat-completions ``tool_call`` (``{"id", "type": "function", "function": {"name",
  "arguments": "<JSON text>"}}``), as a dict or as the SDK's object;
- an Anthropic ``tool_use`` content block (``{"type": "tool_use", "id", "name", "input": {...}}``),
  as a dict or as the SDK's object;
- an OpenAI Responses ``function_call`` item, or any ``{"name", "arguments"}`` object;
- or, as before, a tool name and its arguments (a dict, or JSON text).
"""

from __future__ import annotations

import json
from typing import Any

from memhost import jsondoc


class ToolCallShapeError(ValueError):
    """What was passed is not a tool call memhost can read; the message says what is."""


SHAPES = ("an OpenAI tool_call ({'function': {'name', 'arguments'}}), an Anthropic tool_use "
          "block ({'name', 'input'}), {'name', 'arguments'}, or a tool name and its arguments")


def _field(item: Any, key: str) -> Any:
    """``item[key]`` for a mapping, else ``item.key`` (SDK objects), else ``None``."""
    if isinstance(item, dict):
        return item.get(key)
    return getattr(item, key, None)


def read_tool_call(call: Any, arguments: Any = None) -> tuple[str, Any]:
    """The tool name and the (not yet parsed) arguments of ``call``."""
    if isinstance(call, str):
        return call, arguments
    if arguments is not None:
        raise ToolCallShapeError(f"pass either a tool call object or a tool name and its "
                                 f"arguments, not both; memhost reads {SHAPES}")
    function = _field(call, "function")
    if function is not None and _field(function, "name") is not None:
        return str(_field(function, "name")), _field(function, "arguments")
    name = _field(call, "name")
    if isinstance(name, str):
        if _field(call, "type") == "tool_use" or _field(call, "input") is not None:
            return name, _field(call, "input")
        return name, _field(call, "arguments")
    raise ToolCallShapeError(f"cannot read a tool call from a {type(call).__name__}; memhost "
                             f"reads {SHAPES}")


def parse_arguments(name: str, arguments: Any) -> dict[str, Any]:
    """The arguments of a call to tool ``name`` as a dict: a JSON string is parsed, nothing is
    an empty dict; anything else raises :class:`ToolCallShapeError` saying what was wrong."""
    if isinstance(arguments, str):
        try:
            arguments = jsondoc.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            raise ToolCallShapeError(f"The arguments for {name!r} are not valid JSON ({exc}).") from None
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise ToolCallShapeError(f"The arguments for {name!r} must be a JSON object.")
    return arguments


def error_answer(message: str) -> str:
    """A tool call's answer that it failed, and why (JSON text, as every answer is)."""
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)
