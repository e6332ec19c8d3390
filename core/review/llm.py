"""A small chat-model client: messages and tool schemas in, one assistant message out.

:class:`ChatModel` is the protocol the background review (and ``memhost chat``) talk to;
:class:`OpenAIChatModel` implements it for any server that speaks the OpenAI
``/v1/chat/completions`` protocol (llama.cpp's ``llama-server``, vLLM, Ollama, hosted APIs).

httpx is imported inside the methods that send requests, so ``import memhost.review.llm`` stays
cheap. Every failure is a :class:`ModelError` whose message says what to do about it; an API key
never appears in one.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from memhost.errors import MemhostError
from memhost.security.redact import redact

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from memhost.config import ChatSettings, ReviewSettings

log = logging.getLogger(__name__)

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
        value = json.loads(self.arguments) if self.arguments.strip() else {}
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


class OpenAIChatModel:
    """A client for an OpenAI-compatible ``/v1/chat/completions`` endpoint.

    ``api_key`` is used as is; otherwise ``api_key_env`` names the secret, read from the process
    environment or ``<home>/.env`` on every call (so a key set after start is picked up). A
    server that needs no key (a local llama.cpp or Ollama) works without one.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 api_key_env: str | None = None, home: Path | None = None,
                 timeout: float = 60.0, connect_timeout: float = 10.0, max_retries: int = 3,
                 backoff: float = 0.5, max_backoff: float = 20.0, temperature: float | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 extra_body: dict[str, Any] | None = None, table: str = "review") -> None:
        #: The config table these settings come from, named in every error that says what to fix.
        self.table = table
        if not model.strip():
            raise ModelError(f"no model name is set; set [{table}] model in config.toml (or pass "
                             "--model), for example the name the server lists at /v1/models",
                             kind="protocol")
        self.base_url = base_url
        self.url = chat_completions_url(base_url)
        self.model = model
        self.api_key_env = api_key_env
        self.home = home
        self.timeout = timeout
        self.connect_timeout = min(connect_timeout, timeout)
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.extra_body = dict(extra_body or {})
        self._api_key = api_key
        self._sleep = sleep
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: ReviewSettings | ChatSettings, home: Path, *,
                      table: str = "review", **overrides: Any) -> OpenAIChatModel:
        """Build from the ``[review]`` (or ``[chat]``: ``table``) settings; ``overrides``
        (base_url, model, ...) win."""
        options: dict[str, Any] = {
            "base_url": settings.base_url, "model": settings.model,
            "api_key_env": settings.api_key_env, "timeout": settings.timeout,
            "max_retries": settings.max_retries, "home": home, "table": table,
        }
        options.update({k: v for k, v in overrides.items() if v is not None})
        base_url = options.pop("base_url")
        model = options.pop("model")
        if not str(base_url).strip():
            raise ModelError(f"no model server is set; set [{table}] base_url in config.toml (or "
                             "pass --base-url), for example http://127.0.0.1:8080/v1",
                             kind="protocol")
        return cls(base_url, model, **options)

    # -- the two calls ---------------------------------------------------------------------------

    def complete(self, messages: Sequence[dict[str, Any]],
                 tools: Sequence[dict[str, Any]] | None = None) -> AssistantMessage:
        body = self._body(messages, tools, stream=False)
        data = self._with_retries(lambda client, headers: self._post_json(client, headers, body))
        return _parse_completion(data, self.url)

    def stream(self, messages: Sequence[dict[str, Any]],
               tools: Sequence[dict[str, Any]] | None = None, *,
               on_text: Callable[[str], None]) -> AssistantMessage:
        body = self._body(messages, tools, stream=True)
        started = [False]

        def attempt(client: httpx.Client, headers: dict[str, str]) -> AssistantMessage:
            return self._post_stream(client, headers, body, on_text, started)

        return self._with_retries(attempt, retry_allowed=lambda: not started[0])

    def close(self) -> None:
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- machinery -------------------------------------------------------------------------------

    def _body(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None,
              *, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        wrapped = wrap_tools(tools)
        if wrapped:
            body["tools"] = wrapped
            body["tool_choice"] = "auto"
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if stream:
            body["stream"] = True
        body.update(self.extra_body)
        return body

    def _key(self) -> str | None:
        if self._api_key:
            return self._api_key
        if self.api_key_env and self.home is not None:
            from memhost.schema.envstore import EnvStore

            return EnvStore(self.home).get(self.api_key_env)
        if self.api_key_env:
            import os

            return os.environ.get(self.api_key_env) or None
        return None

    def _http(self) -> httpx.Client:
        import httpx

        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=httpx.Timeout(
                    self.timeout, connect=self.connect_timeout))
            return self._client

    def _with_retries(self, attempt: Callable[[httpx.Client, dict[str, str]], Any], *,
                      retry_allowed: Callable[[], bool] = lambda: True) -> Any:
        import httpx

        key = self._key()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        client = self._http()
        tries = 0
        while True:
            tries += 1
            try:
                return attempt(client, headers)
            except _Retry as retry:
                if tries > self.max_retries or not retry_allowed():
                    raise retry.final from None
                wait = retry.wait if retry.wait is not None else self._backoff(tries)
                if wait > MAX_RETRY_AFTER:
                    raise retry.final from None
                log.info("model server %s: %s; retrying in %.1fs (attempt %d of %d)", self.url,
                         retry.final.kind, wait, tries + 1, self.max_retries + 1)
                self._sleep(wait)
            except httpx.ConnectError as exc:
                raise self._connect_error(exc) from None
            except httpx.TimeoutException as exc:
                raise self._timeout_error(exc) from None
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if tries > self.max_retries or not retry_allowed():
                    raise ModelError(f"The model server at {self.url} dropped the connection "
                                     f"({exc}). Check the server's log; it may have crashed or "
                                     "run out of memory.", kind="server") from None
                self._sleep(self._backoff(tries))
            except httpx.HTTPError as exc:
                raise ModelError(f"The request to {self.url} failed: {exc}. Check [{self.table}] "
                                 "base_url in config.toml.", kind="connection") from None

    def _backoff(self, tries: int) -> float:
        delay = min(self.max_backoff, self.backoff * (2 ** (tries - 1)))
        return delay * (0.75 + random.random() / 2)

    def _post_json(self, client: httpx.Client, headers: dict[str, str],
                   body: dict[str, Any]) -> dict[str, Any]:
        response = client.post(self.url, headers=headers, json=body)
        if response.status_code >= 400:
            self._raise_for(response.status_code, response.text, response.headers)
        try:
            data = response.json()
        except ValueError:
            raise ModelError(f"The server at {self.url} did not answer with JSON (HTTP "
                             f"{response.status_code}: {_snippet(response.text)}). Is base_url "
                             "pointing at an OpenAI-compatible API?", kind="protocol") from None
        if not isinstance(data, dict):
            raise ModelError(f"The server at {self.url} answered with JSON that is not a chat "
                             "completion.", kind="protocol")
        return data

    def _post_stream(self, client: httpx.Client, headers: dict[str, str], body: dict[str, Any],
                     on_text: Callable[[str], None], started: list[bool]) -> AssistantMessage:
        headers = {**headers, "Accept": "text/event-stream"}
        with client.stream("POST", self.url, headers=headers, json=body) as response:
            if response.status_code >= 400:
                response.read()
                self._raise_for(response.status_code, response.text, response.headers)
            if "text/event-stream" not in response.headers.get("content-type", ""):
                # Some servers ignore "stream": true; take the whole answer at once.
                response.read()
                try:
                    message = _parse_completion(response.json(), self.url)
                except ValueError:
                    raise ModelError(f"The server at {self.url} did not answer with JSON or an "
                                     "event stream.", kind="protocol") from None
                if message.content:
                    started[0] = True
                    on_text(message.content)
                return message
            assembler = _StreamAssembler(self.url)
            for data in _sse_data(response.iter_lines()):
                text = assembler.feed(data)
                if text:
                    started[0] = True
                    on_text(text)
            return assembler.result()

    def _raise_for(self, status: int, text: str, headers: Any) -> None:
        detail = self._clean(_error_detail(text))
        where = f"The model server at {self.url}"
        if status in (401, 403):
            env = self.api_key_env or "the API key variable"
            if self._key() is None:
                raise ModelError(
                    f"{where} needs an API key (HTTP {status}: {detail}) and none is set. Put it "
                    f"in the environment variable {env}, or in {self._env_file()} as "
                    f"{env}=...; never in config.toml.", kind="auth", status=status)
            raise ModelError(
                f"{where} rejected the API key from {env} (HTTP {status}: {detail}). Check that "
                f"{env} holds a valid key for this server (process environment first, then "
                f"{self._env_file()}).", kind="auth", status=status)
        if status == 429:
            raise _Retry(_retry_after(headers), ModelError(
                f"{where} kept answering 'too many requests' (HTTP 429: {detail}) after "
                f"{self.max_retries + 1} attempts. Wait a while, raise your rate limit, or review "
                "less often ([memory] nudge_interval).", kind="rate_limit", status=status))
        if status in RETRY_STATUSES or status >= 500:
            raise _Retry(_retry_after(headers), ModelError(
                f"{where} failed with HTTP {status} ({detail}) after {self.max_retries + 1} "
                "attempts. Check the server's log.", kind="server", status=status))
        lowered = detail.lower()
        if status in (400, 404, 422, 501) and ("tool" in lowered or "function" in lowered):
            raise ModelError(
                f"The model {self.model!r} at {self.url} does not accept tool calls (HTTP {status}: "
                f"{detail}). memhost needs function calling: pick a model that supports tools, or "
                "enable it on the server (llama.cpp: start llama-server with --jinja; vLLM: "
                "--enable-auto-tool-choice with a --tool-call-parser).",
                kind="tools_unsupported", status=status)
        if status == 404:
            if "model" in lowered:
                raise ModelError(f"{where} does not know the model {self.model!r} (HTTP 404: "
                                 f"{detail}). Set [{self.table}] model (or --model) to a name the "
                                 "server lists at /v1/models.", kind="not_found", status=status)
            raise ModelError(f"No chat-completions endpoint at {self.url} (HTTP 404). Check "
                             f"[{self.table}] base_url: it should be the server's "
                             "OpenAI-compatible API, usually ending in /v1.", kind="not_found",
                             status=status)
        raise ModelError(f"{where} refused the request (HTTP {status}: {detail}).",
                         kind="bad_request", status=status)

    def _connect_error(self, exc: Exception) -> ModelError:
        text = str(exc)
        if "refused" in text.lower() or "errno 111" in text.lower() or "errno 61" in text.lower():
            return ModelError(
                f"Could not connect to the model server at {self.url}: connection refused. The "
                "server is not running (or listens on another port): start it, or fix "
                f"[{self.table}] base_url in config.toml.", kind="connection")
        return ModelError(f"Could not connect to the model server at {self.url} ({text}). Check "
                          f"the host name in [{self.table}] base_url and your network.",
                          kind="connection")

    def _timeout_error(self, exc: Exception) -> ModelError:
        import httpx

        if isinstance(exc, httpx.ConnectTimeout):
            return ModelError(f"Could not connect to the model server at {self.url} within "
                              f"{self.connect_timeout:g}s. Check that the host in "
                              f"[{self.table}] base_url is reachable.", kind="timeout")
        return ModelError(
            f"The model server at {self.url} did not answer within {self.timeout:g}s. A local "
            "model may still be loading or be too slow for this prompt: raise "
            f"[{self.table}] timeout in config.toml, or use a smaller model.", kind="timeout")

    def _env_file(self) -> str:
        return str(self.home / ".env") if self.home is not None else "<home>/.env"

    def _clean(self, text: str) -> str:
        """Server text for a message: secrets masked, our own key never echoed."""
        key = self._key()
        if key:
            text = text.replace(key, "[redacted]")
        return redact(text)


class _Retry(Exception):
    def __init__(self, wait: float | None, final: ModelError) -> None:
        super().__init__(str(final))
        self.wait = wait
        self.final = final


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
        data = json.loads(text)
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
            event = json.loads(data)
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
