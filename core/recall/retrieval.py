"""Searching a recall store, the same on every database: the database finds candidates, memhost
ranks them.

A backend (one per database) offers the statistics of the terms, cheap candidates from its
index, the items themselves, and an item's neighbours. Everything that decides an item's rank —
the terms of its text, its score, the floors, the neighbours' lift, the dates — happens here, in
Python, on the same terms (:mod:`memhost.recall.terms`), so the ``sqlite`` and ``postgres``
stores fed the same turns rank them the same.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from memhost.recall import hybrid, ranking, when
from memhost.recall.items import KINDS, TURN, Hit
from memhost.recall.terms import query_words, stem
from memhost.recall.terms import terms as terms_of

#: Newest items per searched term that are considered (a rarer term's items are all considered).
WINDOW = 200
#: Items whose exact score is computed, per recalled item wanted.
VERIFY_FACTOR = 2


@dataclass(frozen=True)
class Filters:
    """Which items a search may return (besides being active)."""

    kinds: tuple[str, ...] = KINDS
    exclude: tuple[int, ...] = ()
    since: float | None = None  # Unix time, inclusive
    until: float | None = None  # Unix time, exclusive

    @property
    def by_time(self) -> bool:
        return self.since is not None or self.until is not None

    def excluding(self, ids: Sequence[int]) -> Filters:
        return Filters(self.kinds, (*self.exclude, *ids), self.since, self.until)


class Backend(Protocol):
    """What a database offers :func:`search`."""

    def statistics(self, terms: Sequence[str]) -> tuple[dict[str, int], int, int]:
        """``(term -> live items holding it, live items, their summed length in terms)``."""

    def candidates(self, weights: Mapping[str, float], *, window: int, every_limit: int,
                   limit: int, filters: Filters) -> list[Hit]:
        """The ``limit`` active items passing ``filters`` with the highest *estimate*, best
        first (ties to the newer item): an item's estimate is the summed weight of the
        searched terms (``weights``) it is known to hold, an underestimate being fine. They are
        drawn from at least the newest ``window`` items holding each term and the newest
        ``every_limit`` items holding all of them (none when it is 0: a rare term's window
        already holds every item that has all the terms). A backend makes the walks, the
        estimates and the cut in the database where it can, so that only these items are
        read."""

    def fetch(self, ids: Sequence[int], filters: Filters) -> list[Hit]:
        """The active items among ``ids`` that pass ``filters``."""

    def neighbours(self, ids: Sequence[int], filters: Filters,
                   known: Mapping[int, Hit] | None = None) -> dict[int, list[Hit]]:
        """For each of ``ids`` (turn items), the active turn items just before and after it in
        its session that pass ``filters``; those in ``known`` are taken from there, not read
        again."""

    def vectors(self, ids: Sequence[int], model: str) -> dict[int, list[float]]:
        """The stored vectors of ``model`` for those of ``ids`` that have one (semantic recall;
        a backend may also offer ``nearest(vector, model, limit, filters) -> ids``)."""


def neighbour_hits(rows: Sequence[tuple[int, int | None, int | None]],
                   fetch: Callable[[Sequence[int]], list[Hit]],
                   known: Mapping[int, Hit] | None = None) -> dict[int, list[Hit]]:
    """A backend's ``neighbours`` answer from its ``(id, id before, id after)`` rows: the
    neighbours not ``known`` yet fetched in one go (``fetch`` applies the filters)."""
    near = {origin: [i for i in (before, after) if i is not None]
            for origin, before, after in rows}
    found = dict(known or {})
    missing = sorted({i for n in near.values() for i in n if i not in found})
    if missing:
        found.update((h.id, h) for h in fetch(missing))
    return {origin: [found[i] for i in wanted if i in found] for origin, wanted in near.items()}


def plan(backend: Backend, query: str, options: ranking.Ranking,
         now: float | None = None) -> ranking.QueryPlan | None:
    """The query's plan, or ``None`` when it has nothing to search for."""
    terms = list(dict.fromkeys(stem(w) for w in query_words(query)))
    if not terms:
        return None
    df, n, total_length = backend.statistics(terms)
    made = ranking.plan_query(terms, df, n, total_length=total_length,
                              asks_when=when.asks_when(query),
                              window=when.window(query, time.time() if now is None else now),
                              options=options)
    return None if made.empty else made


def score(plan: ranking.QueryPlan, hit: Hit) -> float:
    """Score ``hit`` in place (``score``, ``matched``, ``extra['coverage']``); returns the
    score."""
    made = hit.terms.split() if hit.terms is not None else terms_of(hit.body)
    counts = {t: made.count(t) for t in plan.weights}
    value, coverage = plan.score(counts, len(made))
    hit.matched = frozenset(t for t, n in counts.items() if n)
    hit.score = value * plan.boost(made, hit.created_at) if value else 0.0
    hit.extra["coverage"] = round(coverage, 3)
    return hit.score


def rank(hits: Sequence[Hit]) -> list[Hit]:
    """Best first: by score, ties (to a thousandth) broken by recency, then by id."""
    return sorted(hits, key=lambda h: (-round(h.score, 3), -h.created_at, -h.id))


def search(backend: Backend, query: str, *, filters: Filters = Filters(), limit: int = 10,
           options: ranking.Ranking = ranking.Ranking(), window: int = WINDOW,
           now: float | None = None, semantic: hybrid.Semantic | None = None) -> list[Hit]:
    """The items most relevant to ``query``, best first, at most ``limit``.

    Ranking every item that shares a word with the query does not scale (a common word is in
    tens of thousands of them), so candidates come from cheap newest-first walks of the index:
    for each searched term its newest ``window`` items (all of a rare term's items), plus the
    newest items holding every searched term. The database keeps the best of those by
    estimated weight (:meth:`Backend.candidates`); only they are read, scored exactly and held
    to the floors, and the turns next to the best get their lift. With
    ``semantic`` (the query's vector), scores are fused with closeness (:mod:`hybrid`).
    """
    made = plan(backend, query, options, now)
    if made is None:
        return []
    wanted_count = max(limit, 1)
    # Estimates can only fall short (a term outside its window is not counted), so nothing is
    # dropped on them: they only choose which items get an exact score.
    found = backend.candidates({t: made.weights[t] for t in made.search_terms}, window=window,
                               every_limit=0 if made.has_rare(window) else wanted_count * 2,
                               limit=wanted_count * VERIFY_FACTOR, filters=filters)
    near = set(hybrid.nearest(backend, semantic, filters)) if semantic else set()
    near.difference_update(filters.exclude)
    unread = near.difference(h.id for h in found)
    if unread:
        found += backend.fetch(sorted(unread), filters)
    hits = [h for h in found
            if (score(made, h) > 0 and h.extra["coverage"] >= options.min_coverage)
            or h.id in near]
    if not hits:
        return []
    fusion = hybrid.Fusion(backend, semantic, hits) if semantic else None
    if fusion is not None:
        fusion.apply(hits)
    by_id = {h.id: h for h in hits}
    if options.neighbour_weight > 0 and TURN in filters.kinds:
        _lift_neighbours(backend, made, rank(hits)[:wanted_count], by_id, filters, fusion)
    best = max(h.score for h in by_id.values())
    floor = max(options.min_score, options.min_relative * best)
    return diversify(rank([h for h in by_id.values() if h.score >= floor and h.score > 0]),
                     limit, options.session_share)


def diversify(ranked: list[Hit], limit: int, share: float) -> list[Hit]:
    """The best ``limit`` of ``ranked``, no session holding more than ``share`` of them while
    other sessions have hits left; still best first."""
    quota = max(1, int(limit * share))
    chosen: list[Hit] = []
    held: list[Hit] = []
    per_session: dict[str, int] = {}
    for hit in ranked:
        key = hit.session_id or f"#{hit.id}"
        if per_session.get(key, 0) < quota:
            per_session[key] = per_session.get(key, 0) + 1
            chosen.append(hit)
        else:
            held.append(hit)
        if len(chosen) >= limit:
            break
    chosen += held[: max(0, limit - len(chosen))]
    return rank(chosen)


def _lift_neighbours(backend: Backend, made: ranking.QueryPlan, top: list[Hit],
                     by_id: dict[int, Hit], filters: Filters,
                     fusion: hybrid.Fusion | None) -> None:
    """Give the turns next to the ``top`` turns a share of their score (found or not)."""
    turns = [h for h in top if h.kind == TURN]
    if not turns:
        return
    weight = made.options.neighbour_weight
    source = {h.id: h.score for h in turns}
    base: dict[int, float] = {}
    for origin, near in backend.neighbours(list(source), filters, by_id).items():
        for hit in near:
            if hit.id in filters.exclude:
                continue
            known = by_id.get(hit.id)
            if known is None:
                score(made, hit)
                if fusion is not None:
                    fusion.apply([hit])
                known = by_id[hit.id] = hit
            own = base.setdefault(hit.id, known.score)
            known.score = max(known.score, own + weight * source[origin])


__all__ = ["Backend", "Filters", "VERIFY_FACTOR", "WINDOW", "diversify", "neighbour_hits", "plan",
           "rank", "score", "search"]
