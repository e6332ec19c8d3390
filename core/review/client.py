"""``OpenAIChatModel``: the :class:`~memhost.review.llm.ChatModel` for any server that speaks the
OpenAI ``/v1/chat/completions`` protocol, with retries, timeouts and errors that say what to do.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memhost import jsondoc
from memhost.review.llm import (
    MAX_RETRY_AFTER,
    RETRY_STATUSES,
    AssistantMessage,
    ModelError,
    chat_completions_url,
    wrap_tools,
)
from memhost.review.wire import (
    _error_detail,
    _parse_completion,
    _retry_after,
    _snippet,
    _sse_data,
    _StreamAssembler,
)
from memhost.security.redact import redact

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from memhost.config import ChatSettings, ReviewSettings

log = logging.getLogger(__name__)

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
            data = jsondoc.loads(response.content)
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
                    message = _parse_completion(jsondoc.loads(response.content), self.url)
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
                             "OpenAI-compatible API, usually ending in /v1.", kind="not_found", status=status)
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
