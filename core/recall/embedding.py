"""Semantic recall, as an option: an embedder turns text into vectors, and the ranking fuses
how close an item's vector is to the query's with its lexical score.

The ``embedder`` setting of a recall provider chooses one:

- ``none`` (the default): lexical recall only, nothing more to install;
- ``openai``: any OpenAI-compatible ``/v1/embeddings`` endpoint over httpx (Ollama, llama.cpp's
  server, vLLM, text-embeddings-inference, OpenAI itself): ``embedder_url`` is the API's base
  (ending in ``/v1``), ``embedder_model`` the model, ``embedder_key`` an optional API key (a
  secret, kept in ``.env``);
- ``sentence-transformers``: a model the user names (``embedder_model``: a name in the local
  Hugging Face cache, or a folder), run in process. Needs ``pip install
  'memhost[sentence-transformers]'``; memhost never downloads a model (``local_files_only``).

Vectors are stored beside the items, in the same database, tagged with the model that made them
(a vector of another model is never compared).
"""

from __future__ import annotations

import logging
import math
from array import array
from collections.abc import Sequence
from typing import Any, Protocol

from memhost import jsondoc

log = logging.getLogger("memhost.recall")

NONE, OPENAI, SENTENCE_TRANSFORMERS = "none", "openai", "sentence-transformers"
EMBEDDERS = (NONE, OPENAI, SENTENCE_TRANSFORMERS)
#: Texts sent in one request.
BATCH = 64
#: An item's text is embedded up to this many characters.
MAX_TEXT = 2000


class EmbedderError(Exception):
    """The embedder could not embed (unreachable, refused, a malformed answer)."""


class Embedder(Protocol):
    #: Tags the stored vectors: ``openai:<model>``, ``sentence-transformers:<model>``.
    name: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""


class OpenAIEmbeddings:
    """An OpenAI-compatible ``POST {base}/embeddings``."""

    def __init__(self, url: str, model: str, api_key: str | None = None, *,
                 timeout: float = 10.0) -> None:
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model
        self.name = f"{OPENAI}:{model}"
        # Imported here: httpx costs ~40 ms to import, and most homes never embed over HTTP
        # (the default embedder is none), yet every recall provider imports this module.
        import httpx

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http_error, self._status_error = httpx.HTTPError, httpx.HTTPStatusError
        self.client = httpx.Client(timeout=timeout, headers=headers)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            chunk = [t[:MAX_TEXT] for t in texts[start:start + BATCH]]
            try:
                answer = self.client.post(self.url, json={"model": self.model, "input": chunk})
                answer.raise_for_status()
                data = sorted(jsondoc.loads(answer.content)["data"],
                              key=lambda d: d.get("index", 0))
                made = [[float(x) for x in d["embedding"]] for d in data]
            except self._status_error as exc:
                raise EmbedderError(f"{self.url} answered {exc.response.status_code}") from None
            except self._http_error as exc:
                raise EmbedderError(f"{self.url}: {type(exc).__name__}: {exc}") from None
            except (ValueError, KeyError, TypeError) as exc:
                raise EmbedderError(f"{self.url} sent no embeddings ({exc})") from None
            if len(made) != len(chunk):
                raise EmbedderError(f"{self.url} sent {len(made)} embeddings for {len(chunk)} "
                                    "texts")
            vectors += made
        return vectors

    def close(self) -> None:
        self.client.close()


class SentenceTransformerEmbeddings:
    """A sentence-transformers model from the local cache or a folder, run in process."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderError("embedder = 'sentence-transformers' needs pip install "
                                f"'memhost[sentence-transformers]' ({exc})") from None
        try:
            self.model = SentenceTransformer(model, local_files_only=True)
        except Exception as exc:  # the library raises many kinds for a missing model
            raise EmbedderError(f"cannot load the sentence-transformers model {model!r} from "
                                f"this machine ({exc}); download it first, or name a folder "
                                "that holds it") from None
        self.name = f"{SENTENCE_TRANSFORMERS}:{model}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        made = self.model.encode([t[:MAX_TEXT] for t in texts], normalize_embeddings=True)
        return [list(map(float, row)) for row in made]

    def close(self) -> None:
        pass


def from_settings(config: dict[str, Any]) -> Embedder | None:
    """The embedder a provider's settings choose, or ``None`` (``embedder = "none"``)."""
    kind = str(config.get("embedder") or NONE).strip().lower()
    if kind == NONE:
        return None
    model = str(config.get("embedder_model") or "").strip()
    if not model:
        raise EmbedderError(f"embedder = {kind!r} needs embedder_model (the model's name)")
    if kind == OPENAI:
        url = str(config.get("embedder_url") or "").strip()
        if not url.startswith(("http://", "https://")):
            raise EmbedderError("embedder = 'openai' needs embedder_url, the API's base such as "
                                "http://127.0.0.1:11434/v1")
        return OpenAIEmbeddings(url, model, str(config.get("embedder_key") or "") or None)
    if kind == SENTENCE_TRANSFORMERS:
        return SentenceTransformerEmbeddings(model)
    raise EmbedderError(f"embedder = {kind!r} is not one of {', '.join(EMBEDDERS)}")


def pack(vector: Sequence[float]) -> bytes:
    """A vector as little-endian float32 bytes (what sqlite-vec reads, too)."""
    made = array("f", vector)
    return made.tobytes()


def unpack(blob: bytes) -> list[float]:
    made = array("f")
    made.frombytes(blob)
    return made.tolist()


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


__all__ = ["EMBEDDERS", "Embedder", "EmbedderError", "OpenAIEmbeddings",
           "SentenceTransformerEmbeddings", "cosine", "from_settings", "pack", "unpack"]
