"""An embeddings server on 127.0.0.1, for tests: the OpenAI ``POST /v1/embeddings`` protocol over a
real socket, with deterministic vectors.

The default vectors are a hashed bag of words (each word, lowercased, adds 1 to one of
``dimensions`` slots; the vector is normalised), with a small table of synonyms folded to one
word first, so that "automobile" and "car" land in the same slot: texts that share no word can be
close in meaning, which is what semantic recall is for. Pass ``vectorize`` to serve another
model (the benchmarks serve a real one). Every request is logged; ``fail_next`` makes the next
requests answer 503.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SYNONYMS = {"automobile": "car", "vehicle": "car", "sedan": "car", "feline": "cat",
            "kitten": "cat", "physician": "doctor", "medic": "doctor", "attorney": "lawyer",
            "canine": "dog", "puppy": "dog"}
_WORD = re.compile(r"[a-z0-9]+")


def hashed_bag_of_words(texts: Sequence[str], dimensions: int = 64) -> list[list[float]]:
    vectors = []
    for text in texts:
        vector = [0.0] * dimensions
        for word in _WORD.findall(text.lower()):
            word = SYNONYMS.get(word, word)
            slot = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dimensions
            vector[slot] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        vectors.append([x / norm for x in vector])
    return vectors


class FakeEmbeddings:
    def __init__(self, vectorize: Callable[[Sequence[str]], list[list[float]]] | None = None,
                 *, api_key: str | None = None) -> None:
        self.vectorize = vectorize or hashed_bag_of_words
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.fail_next = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="fake-embeddings", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeEmbeddings:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.requests.append({"body": body, "headers": headers})
        if self.fail_next > 0:
            self.fail_next -= 1
            return 503, {"error": {"message": "overloaded", "type": "fake"}}
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "bad key", "type": "fake"}}
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, {"error": {"message": "input must be a string or strings", "type": "fake"}}
        vectors = self.vectorize(texts)
        return 200, {"object": "list", "model": body.get("model", "fake-embed"),
                     "data": [{"object": "embedding", "index": i, "embedding": v}
                              for i, v in enumerate(vectors)],
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "not JSON"}})
                    return
                status, answer = fake._answer(
                    body, {k.lower(): v for k, v in self.headers.items()})
                self._send(status, answer)

            def _send(self, status: int, answer: dict[str, Any]) -> None:
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
