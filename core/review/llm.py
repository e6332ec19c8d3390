"""A small chat-model client: messages and tool schemas in, one assistant message out.

:class:`ChatModel` is the protocol the background review (and ``memhost chat``) talk to;
:class:`OpenAIChatModel` (in :mod:`memhost.review.client`, importable from here) implements it for
any server that speaks the OpenAI ``/v1/chat/completions`` protocol (llama.cpp's ``llama-server``,
vLLM, Ollama, hosted APIs), reading the server's answers with :mod:`memhost.review.wire`. This
module holds the vocabulary they share: the messages, the protocol, the errors and the URL.

httpx is imported inside the methods that send requests, so ``import memhost.review.llm`` stays
cheap. Every failure is a :class:`ModelError` whose message says what to do about it; an API key
never appears in one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from memhost import jsondoc
from memhost.errors import MemhostError

if TYPE_CHECKING:  # pragma: no cover
    from memhost.review.client import OpenAIChatModel

#: HTTP statuses worth another try after a pause.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: The longest pause a ``Retry-After`` header may ask for; a longer one ends the call instead.
MAX_RETRY_AFTER = 60.0


class ModelError(MemhostError):
    """A model call failed. ``kind`` says how: ``connection``, ``auth``, ``rate_limit``,
    ``timeout``, ``tools_unsupported``, ``not_found``, ``bad_request``, ``server``,
    ``protocol`` or ``cancelled``."""

    def __init__(self, message: str, *, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ``ValueError`` when they are not a JSON object."""
        value = jsondoc.loads(self.arguments) if self.arguments.strip() else {}
        if not isinstance(value, dict):
            raise ValueError("the arguments are not a JSON object")
        return value


@dataclass(frozen=True)
class AssistantMessage:
    """What the model answered: text, tool calls, or both."""

    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    def as_message(self) -> dict[str, Any]:
        """The OpenAI-style message to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls]
        elif message["content"] is None:
            message["content"] = ""
        return message


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer a conversation, optionally with tool calls."""

    def complete(self, messages: Sequence[dict[str, Any]],
                 tools: Sequence[dict[str, Any]] | None = None) -> AssistantMessage:
        """Send ``messages`` (OpenAI-style dicts) and the tool schemas (bare ``{name,
        description, parameters}`` or wrapped ``{type: function, function: ...}``); return the
        assistant's message. Raises :class:`ModelError`."""


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    def stream(self, messages: Sequence[dict[str, Any]],
               tools: Sequence[dict[str, Any]] | None = None, *,
               on_text: Callable[[str], None]) -> AssistantMessage:
        """Like :meth:`complete`, calling ``on_text(chunk)`` as the answer's text arrives."""


def chat_completions_url(base_url: str) -> str:
    """The endpoint for ``base_url``.

    ``http://host:8080`` and ``http://host:8080/v1`` both give ``http://host:8080/v1/chat/completions``;
    a base that already names another versioned path (``https://host/openai/v1``) gets
    ``/chat/completions`` appended; a full ``.../chat/completions`` URL is used as it is.
    """
    base = base_url.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelError(f"{base_url!r} is not a model server URL; use http://HOST:PORT or "
                         "https://HOST/PATH (for example http://127.0.0.1:8080/v1)", kind="protocol")
    if base.endswith("/chat/completions"):
        return base
    path = parts.path.rstrip("/")
    last = path.rsplit("/", 1)[-1] if path else ""
    if last[:1] == "v" and last[1:].isdigit():
        return base + "/chat/completions"
    if not path:
        return base + "/v1/chat/completions"
    return base + "/chat/completions"


def wrap_tools(tools: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Tool schemas in the ``{"type": "function", "function": {...}}`` shape the API wants."""
    wrapped = []
    for tool in tools or ():
        if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
            wrapped.append(tool)
        else:
            wrapped.append({"type": "function", "function": tool})
    return wrapped


def __getattr__(name: str) -> Any:
    # The client imports this module's vocabulary, so it is re-exported on first use.
    if name == "OpenAIChatModel":
        import importlib

        return importlib.import_module("memhost.review.client").OpenAIChatModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AssistantMessage",
    "ChatModel",
    "ModelError",
    "OpenAIChatModel",
    "StreamingChatModel",
    "ToolCall",
    "chat_completions_url",
    "wrap_tools",
]
