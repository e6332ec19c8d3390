"""How relevant a stored item is to a query: BM25 weighed by coverage, with floors relative to the
query, the neighbours of a good item lifted, and dates taken into account.

- **Weights.** Each query term weighs its inverse document frequency among the live items
  (BM25's smoothed IDF: a rare term weighs 5 to 9, a term in half the items under 1).
- **Score.** An item's BM25 score (term frequency saturating with ``k1``, normalised by the item's
  length against the average with ``b``) times its *coverage*, the share of the query's weight its
  terms hold. BM25 alone lets one rare word repeated outrank an item that has every word of the
  question; coverage alone (the old score) lets a long item that gathered words outrank a short
  precise one, and cannot tell two items with the same words apart.
- **Floors.** An item must hold at least ``min_coverage`` of the query's weight and score at least
  ``min_relative`` of the best item's score: both relative to the query, so a question whose one
  content word is common still recalls, and a long question sharing one word with an item does
  not. Query words no item contains count half in the query's weight (a message about something
  never discussed should not recall whatever shares its one common word). ``min_score`` is an
  absolute floor, off by default.
- **Neighbours.** The turn next to a good item gets ``neighbour_weight`` of its score on top of
  its own: an answer rarely repeats the question's words ("What port does billing use?" — "8443").
- **Dates.** A question asking *when* lifts items that say when (dates, weekdays, "last week");
  one naming a time ("last month", "in May") lifts items from then (:mod:`memhost.recall.when`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from memhost.recall.terms import stem

#: Below this many live items document frequencies say little, so weights are computed as if the
#: store held this many (a word in one of three items is not "common").
MIN_CORPUS = 100
#: Terms in more than this share of the live items are not searched for on their own: they
#: match too much to mean anything, and their long posting lists make the search slow.
COMMON_SHARE = 0.5
#: At most this many of a query's terms (the rarest) are searched for.
MAX_SEARCH_TERMS = 8
#: A query term no item holds counts this much of its weight in the query's total.
UNKNOWN_SHARE = 0.5

#: Words that say when something happened (as terms, see :mod:`memhost.recall.terms`).
_WHEN_WORDS = frozenset(stem(w) for w in """
yesterday today tonight tomorrow ago last next week weekend month year since recently earlier
later morning evening night monday tuesday wednesday thursday friday saturday sunday january
february march april june july august september october november december jan feb mar apr
jun jul aug sep sept oct nov dec am pm
""".split())
#: A year (1900–2099) or a time of day such as ``3pm``.
_WHEN_NUMBER = re.compile(r"(?:19|20)\d\d|\d{1,2}(?:am|pm)")


@dataclass(frozen=True)
class Ranking:
    """The knobs of relevance (a provider's settings fill them in)."""

    min_coverage: float = 0.15
    min_relative: float = 0.1
    min_score: float = 0.0
    neighbour_weight: float = 0.5
    #: No one session may hold more than this share of the results (or of the recall budget)
    #: while others have something.
    session_share: float = 0.5
    #: How much a date-aware match multiplies a score.
    date_boost: float = 1.5
    k1: float = 1.2
    b: float = 0.3


def idf(df: int, n: int) -> float:
    """The weight of a term found in ``df`` of ``n`` live items (never negative; a term no item
    has weighs the most)."""
    n_eff = max(n, MIN_CORPUS)
    df = max(0, min(df, n_eff))
    return math.log(1.0 + (n_eff - df + 0.5) / (df + 0.5))


def says_when(terms: Collection[str]) -> bool:
    """Whether an item with these terms mentions a time (a date, a weekday, a month, "last
    week"...)."""
    return not _WHEN_WORDS.isdisjoint(terms) or any(
        t[0].isdigit() and _WHEN_NUMBER.fullmatch(t) for t in terms)


@dataclass(frozen=True)
class QueryPlan:
    """A query, ready to search: which terms to look for and what each weighs."""

    #: term -> weight, for the query's terms that some item holds.
    weights: dict[str, float]
    #: The terms to search for (the informative ones), rarest first.
    search_terms: tuple[str, ...]
    #: The query's total weight (terms no item holds count :data:`UNKNOWN_SHARE`).
    total: float
    #: The average length (in terms) of a live item.
    average_length: float = 1.0
    #: The question asks when something happened.
    asks_when: bool = False
    #: A time the query names, as ``(since, until)`` Unix times.
    window: tuple[float, float] | None = None
    options: Ranking = field(default_factory=Ranking)

    #: How many live items hold each searched term.
    df: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.search_terms

    def has_rare(self, window: int) -> bool:
        """Whether some searched term is in at most ``window`` items (so a walk of its items
        sees every item that holds all the searched terms)."""
        return any(self.df.get(t, 0) <= window for t in self.search_terms)

    def estimate(self, matched: Iterable[str]) -> float:
        """The summed weight of the query terms an item is known to hold (cheap; no text)."""
        return sum(self.weights.get(term, 0.0) for term in set(matched))

    def score(self, counts: Mapping[str, int], length: int) -> tuple[float, float]:
        """``(score, coverage)`` of an item with these term ``counts`` (of the query's terms,
        at least) and ``length``."""
        k1, b = self.options.k1, self.options.b
        norm = k1 * (1 - b + b * length / max(self.average_length, 1.0))
        bm25 = held = 0.0
        for term, weight in self.weights.items():
            tf = counts.get(term, 0)
            if tf:
                bm25 += weight * tf * (k1 + 1) / (tf + norm)
                held += weight
        coverage = held / self.total if self.total else 0.0
        return bm25 * coverage, coverage

    def boost(self, terms: Collection[str], created_at: float) -> float:
        """The date-aware factor for an item with these ``terms``."""
        factor = 1.0
        if self.asks_when and says_when(terms):
            factor *= self.options.date_boost
        if self.window is not None and self.window[0] <= created_at < self.window[1]:
            factor *= self.options.date_boost
        return factor


def plan_query(terms: Iterable[str], df: dict[str, int], n: int, *, total_length: int = 0,
               asks_when: bool = False, window: tuple[float, float] | None = None,
               options: Ranking = Ranking(), max_terms: int = MAX_SEARCH_TERMS) -> QueryPlan:
    """Weigh the ``terms`` of a query and choose what to search for.

    ``df`` maps each term to the number of live items holding it, ``n`` is the number of live
    items and ``total_length`` their summed length. Terms no item holds are not searched for;
    nor are those in more than :data:`COMMON_SHARE` of the items once the store holds
    :data:`MIN_CORPUS` of them (they still count when an item is scored).
    """
    unique = list(dict.fromkeys(terms))
    weights = {t: idf(df[t], n) for t in unique if df.get(t, 0) > 0}
    unknown = sum(idf(0, n) for t in unique if df.get(t, 0) <= 0)
    usable = [t for t in weights if not (n >= MIN_CORPUS and df[t] > COMMON_SHARE * n)]
    usable.sort(key=lambda t: (-weights[t], t))
    chosen = tuple(usable[:max_terms])
    return QueryPlan(weights, chosen, sum(weights.values()) + UNKNOWN_SHARE * unknown,
                     total_length / n if n and total_length else 1.0, asks_when, window,
                     options, {t: df[t] for t in chosen})


__all__ = ["COMMON_SHARE", "MAX_SEARCH_TERMS", "MIN_CORPUS", "QueryPlan", "Ranking", "idf",
           "plan_query", "says_when"]
