"""A scripted chat-completions server on 127.0.0.1, for tests.

It is a real HTTP server (``http.server`` on a thread) speaking the OpenAI
``/v1/chat/completions`` protocol, tool calls and server-sent-event streaming included. Each
request takes the next scripted answer from a queue; a ``classify(body)`` function picks the
queue, so a chat model and a background review sharing one server get their own scripts. Every
request is logged (path, headers, JSON body) for the test to inspect.

A scripted answer is a dict:

* ``{"content": "text"}`` and/or ``{"tool_calls": [call("memory", {...}), ...]}``
* ``{"status": 429, "error": "slow down", "headers": {"Retry-After": "0"}}`` for an HTTP error
* ``{"delay": 3.0, ...}``: wait that long before answering
* a callable ``f(body) -> dict`` to compute the answer from the request

It can also be run on its own (``python tests/fake_llm.py SCRIPT.json``) for a person trying
``memhost chat`` without a model: it prints its URL and answers from the script, then
"Nothing to save.".
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]

_ids = itertools.count(1)


def call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    """One scripted tool call."""
    return {"id": call_id or f"call_{next(_ids)}", "name": name,
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}


def tools_reply(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"content": content, "tool_calls": list(calls)}


def text_reply(content: str) -> dict[str, Any]:
    return {"content": content}


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    queue: str

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.body.get("tools", [])]

    def text(self) -> str:
        """Everything the request carried, as one string (for "never contains" checks)."""
        return json.dumps(self.body, ensure_ascii=False)


class FakeLLM:
    def __init__(self, classify: Callable[[dict[str, Any]], str] | None = None,
                 default: dict[str, dict[str, Any]] | None = None) -> None:
        self.classify = classify or (lambda body: "default")
        self.default = default or {}
        self.requests: list[Request] = []
        self._scripts: dict[str, deque[Reply]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="fake-llm", daemon=True)

    # -- control ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def script(self, *replies: Reply, queue: str = "default") -> None:
        with self._lock:
            self._scripts.setdefault(queue, deque()).extend(replies)

    def left(self, queue: str = "default") -> int:
        with self._lock:
            return len(self._scripts.get(queue, ()))

    def log(self, queue: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if queue is None or r.queue == queue]

    def wait_for_requests(self, count: int, queue: str | None = None, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.log(queue)) >= count:
                return True
            time.sleep(0.02)
        return False

    # -- serving ---------------------------------------------------------------------------------

    def _next(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> dict[str, Any]:
        queue = self.classify(body)
        with self._lock:
            self.requests.append(Request(path, headers, body, queue))
            pending = self._scripts.get(queue)
            reply: Reply | None = pending.popleft() if pending else self.default.get(queue)
        if reply is None:
            return {"status": 500, "error": f"fake server: no scripted answer left for {queue!r}"}
        return reply(body) if callable(reply) else reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models, for completeness
                self._send(200, {"object": "list", "data": [{"id": "fake-model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = fake._next(body, self.path, {k.lower(): v for k, v in self.headers.items()})
                if reply.get("delay"):
                    time.sleep(float(reply["delay"]))
                status = int(reply.get("status", 200))
                try:
                    if status >= 400:
                        self._send(status, {"error": {"message": reply.get("error", "error"),
                                                      "type": "fake"}}, reply.get("headers"))
                    elif body.get("stream"):
                        self._stream(body, reply)
                    else:
                        self._send(200, _completion(body, reply))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _send(self, status: int, data: dict[str, Any],
                      headers: dict[str, str] | None = None) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for event in _chunks(body, reply):
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler


def _message(reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    calls = reply.get("tool_calls") or []
    if calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for c in calls]
    return message


def _completion(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    calls = reply.get("tool_calls") or []
    return {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": _message(reply),
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def _chunks(body: dict[str, Any], reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer as streamed deltas: text in small pieces, each tool call's arguments in two."""
    base = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": body.get("model", "fake-model")}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    text = reply.get("content") or ""
    for start in range(0, len(text), 7):
        events.append({**base, "choices": [{"index": 0, "delta": {"content": text[start:start + 7]}}]})
    for index, c in enumerate(reply.get("tool_calls") or []):
        half = len(c["arguments"]) // 2
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"][:half]}}]}}]})
        events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": c["arguments"][half:]}}]}}]})
    finish = "tool_calls" if reply.get("tool_calls") else "stop"
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return events


if __name__ == "__main__":  # pragma: no cover - a manual aid
    import sys

    server = FakeLLM(default={"default": text_reply("Nothing to save.")})
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as handle:
            server.script(*json.load(handle))
    server.start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
