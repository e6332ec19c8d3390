"""Reading what an OpenAI-compatible server sends back: a completion, a server-sent event stream
assembled into one message, an error body, a ``Retry-After`` header."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Iterator
from typing import Any

from memhost import jsondoc
from memhost.review.llm import AssistantMessage, ModelError, ToolCall

def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_detail(text: str) -> str:
    """The server's own error message, from the usual JSON shapes or the raw text."""
    try:
        data = jsondoc.loads(text)
    except ValueError:
        return _snippet(text) or "no details"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or error.get("msg")
            if isinstance(message, str) and message.strip():
                return _snippet(message)
        elif isinstance(error, str) and error.strip():
            return _snippet(error)
        if isinstance(data.get("detail"), str):
            return _snippet(data["detail"])
    return _snippet(text) or "no details"


def _parse_completion(data: Any, url: str) -> AssistantMessage:
    try:
        choice = data["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelError(f"The server at {url} answered without a choice: "
                         f"{_snippet(json.dumps(data))}", kind="protocol") from None
    calls = []
    for number, raw in enumerate(message.get("tool_calls") or ()):
        function = raw.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        calls.append(ToolCall(str(raw.get("id") or f"call_{number}"),
                              str(function.get("name") or ""), arguments))
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return AssistantMessage(content or "", tuple(calls), choice.get("finish_reason"),
                            data.get("usage") or {})


def _sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The ``data:`` payloads of a server-sent event stream, up to ``[DONE]``."""
    buffer: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            buffer.append(line[5:].lstrip())
        elif not line.strip() and buffer:
            data = "\n".join(buffer)
            buffer = []
            if data.strip() == "[DONE]":
                return
            yield data
    if buffer and "\n".join(buffer).strip() != "[DONE]":
        yield "\n".join(buffer)


class _StreamAssembler:
    """Builds one assistant message from streamed deltas (text and tool-call fragments)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}

    def feed(self, data: str) -> str:
        try:
            event = jsondoc.loads(data)
        except ValueError:
            raise ModelError(f"The server at {self.url} sent a stream event that is not JSON: "
                             f"{_snippet(data)}", kind="protocol") from None
        if isinstance(event, dict) and event.get("error"):
            raise ModelError(f"The model server at {self.url} failed mid-answer: "
                             f"{_error_detail(json.dumps(event))}", kind="server")
        if isinstance(event, dict) and event.get("usage"):
            self.usage = event["usage"]
        choices = event.get("choices") if isinstance(event, dict) else None
        if not choices:
            return ""
        choice = choices[0]
        self.finish_reason = choice.get("finish_reason") or self.finish_reason
        delta = choice.get("delta") or {}
        for raw in delta.get("tool_calls") or ():
            index = raw.get("index", len(self.calls))
            call = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
            if raw.get("id"):
                call["id"] = raw["id"]
            function = raw.get("function") or {}
            if function.get("name"):
                call["name"] += function["name"]
            if function.get("arguments"):
                call["arguments"] += function["arguments"]
        text = delta.get("content") or ""
        if text:
            self.text.append(text)
        return text

    def result(self) -> AssistantMessage:
        calls = tuple(ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
                      for i, c in sorted(self.calls.items()))
        return AssistantMessage("".join(self.text), calls, self.finish_reason, self.usage)

