"""Hybrid recall: an item's lexical score fused with how close its vector is to the query's.

Both parts are made relative to the best candidate of the query (the lexical score to the best
lexical score, the cosine to the best cosine), so neither scale dominates, and mixed by the
provider's ``semantic_weight``:

    fused = (1 - weight) * lexical / best lexical + weight * cosine / best cosine

An item without a vector of the query's model has no semantic part. Where the database can find
nearest vectors itself (sqlite-vec in SQLite, pgvector in PostgreSQL), the nearest items join the
candidates even when they share no word with the query; elsewhere the vectors re-rank the lexical
candidates (and their neighbours).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memhost.recall.embedding import cosine
from memhost.recall.items import Hit

#: How many nearest items a database that can search vectors adds to the candidates.
NEAREST = 20


@dataclass(frozen=True)
class Semantic:
    """The query's vector, the model that made it, and the semantic part's weight (0–1)."""

    vector: list[float]
    model: str
    weight: float = 0.5


def nearest(backend: Any, semantic: Semantic, filters: Any) -> list[int]:
    """The items nearest the query, when the backend can search vectors (else none)."""
    finder = getattr(backend, "nearest", None)
    if finder is None:
        return []
    return list(finder(semantic.vector, semantic.model, NEAREST, filters) or ())


class Fusion:
    """Fuses the scores of one query's candidates (and of neighbours found later)."""

    def __init__(self, backend: Any, semantic: Semantic, hits: Sequence[Hit]) -> None:
        self.backend = backend
        self.semantic = semantic
        self.best_lexical = max((h.score for h in hits), default=0.0) or 1.0
        self.closeness = self._closeness(hits)
        self.best_cosine = max(self.closeness.values(), default=0.0) or 1.0

    def _closeness(self, hits: Sequence[Hit]) -> dict[int, float]:
        vectors = self.backend.vectors([h.id for h in hits], self.semantic.model)
        return {item: max(0.0, cosine(self.semantic.vector, vector))
                for item, vector in vectors.items()}

    def apply(self, hits: Sequence[Hit]) -> None:
        """Replace each hit's (lexical) score by the fused one; both parts go in ``extra``."""
        missing = [h for h in hits if h.id not in self.closeness]
        if missing:
            self.closeness.update(self._closeness(missing))
        weight = self.semantic.weight
        for hit in hits:
            close = self.closeness.get(hit.id, 0.0)
            hit.extra["lexical"] = round(hit.score, 3)
            hit.extra["semantic"] = round(close, 3)
            hit.score = ((1 - weight) * hit.score / self.best_lexical
                         + weight * close / self.best_cosine)


__all__ = ["Fusion", "NEAREST", "Semantic", "nearest"]
