"""Tool schemas from providers: one accepted shape, and names providers may not take.

Providers hand in schemas in the bare function shape ``{"name", "description", "parameters"}``.
The OpenAI request shape ``{"type": "function", "function": {...}}`` is unwrapped (however deep)
because a host that wraps again would send a nameless tool, which strict backends reject along
with the whole request.
"""

from __future__ import annotations

import re
from typing import Any

#: Names of tools a host's core owns; a provider tool with one of these names is refused, since
#: core tools must always win. Hosts add their own with ``[memory] reserved_tools`` in config.
RESERVED_TOOL_NAMES = frozenset({
    "memory", "clarify", "delegate_task", "terminal", "todo", "read_file", "write_file", "patch",
    "search_files", "web_search", "web_fetch", "session_search", "execute_code", "send_message",
    "skills_list", "skill_view", "skill_manage", "browser_navigate", "browser_click",
    "browser_type", "browser_snapshot", "vision_analyze", "image_generate", "text_to_speech",
    "cronjob", "process",
})


# What the chat-completion APIs accept as a function name. A provider tool outside it would make
# a strict backend reject the whole request, every tool included, so it is dropped here instead.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class SchemaProblem(ValueError):
    """Why a schema was dropped; the message is shown in logs and status."""


def normalise_tool_schema(schema: Any) -> dict[str, Any]:
    """The bare function shape of ``schema``, or :class:`SchemaProblem`."""
    depth = 0
    while isinstance(schema, dict) and schema.get("type") == "function" and "function" in schema:
        schema, depth = schema["function"], depth + 1
        if depth > 4:
            raise SchemaProblem("schema is wrapped in 'function' more than four times")
    if not isinstance(schema, dict):
        raise SchemaProblem(f"schema is a {type(schema).__name__}, not an object")
    name = schema.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SchemaProblem("schema has no string 'name'")
    if not TOOL_NAME.match(name.strip()):
        raise SchemaProblem(f"tool name {name!r} is not accepted by model APIs; use 1-64 "
                            "letters, digits, '_' or '-'")
    parameters = schema.get("parameters", {"type": "object", "properties": {}})
    # Function parameters are always an object schema; anything else is rejected upstream.
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise SchemaProblem(f"tool {name!r}: 'parameters' must be an object schema")
    description = schema.get("description", "")
    if not isinstance(description, str):
        raise SchemaProblem(f"tool {name!r}: 'description' must be a string")
    return {"name": name.strip(), "description": description, "parameters": parameters}


#: The shapes :func:`shape_tool_schema` produces, by the API that wants them.
TOOL_FORMATS = ("bare", "openai", "anthropic")


def shape_tool_schema(schema: dict[str, Any], format: str) -> dict[str, Any]:
    """A bare schema in the shape a model API takes in its request's ``tools`` list:
    ``bare`` as is, ``openai`` wrapped as ``{"type": "function", "function": ...}`` (chat
    completions), ``anthropic`` as ``{"name", "description", "input_schema"}`` (messages)."""
    if format == "bare":
        return schema
    if format == "openai":
        return {"type": "function", "function": schema}
    if format == "anthropic":
        return {"name": schema["name"], "description": schema["description"],
                "input_schema": schema["parameters"]}
    raise ValueError(f"format must be one of {', '.join(TOOL_FORMATS)}, not {format!r}")
