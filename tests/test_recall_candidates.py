"""The candidates a recall scores are chosen in the database (sqlite's FTS5 walks): the best by
estimated weight, cut there, filters honoured, and the walk for items holding every searched
term bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memhost import recall
from memhost.plugins.sqlite.backend import EVERY_POSTINGS, Backend
from memhost.plugins.sqlite.store import RecallStore


@pytest.fixture
def store(tmp_path: Path) -> Any:
    made = RecallStore(tmp_path / "recall.db")
    made.migrate()
    yield made
    made.close()


def add(store: RecallStore, *bodies: str, kind: str = recall.FACT) -> list[int]:
    ids: list[int] = []
    store.add_many([{"key": f"k{n}-{body}", "kind": kind, "body": body, "session_id": "s"}
                    for n, body in enumerate(bodies)], new_ids=ids)
    return ids


def candidates(store: RecallStore, weights: dict[str, float], **options: Any) -> list[int]:
    def run(conn: Any) -> list[int]:
        backend = Backend(conn)
        backend.statistics(list(weights))
        found = backend.candidates(weights, **{"window": 200, "every_limit": 0, "limit": 10,
                                               "filters": recall.Filters(), **options})
        return [h.id for h in found]

    return store.read(run)


def test_only_the_best_estimates_leave_the_database_best_first(store: RecallStore) -> None:
    one, both, other, neither = add(store, "walrus ledger", "walrus ledger pelican",
                                    "pelican ledger", "ledger only")
    weights = {"walrus": 3.0, "pelican": 2.0}
    assert candidates(store, weights) == [both, one, other]
    assert candidates(store, weights, limit=2) == [both, one]
    assert neither not in candidates(store, {"walrus": 3.0, "pelican": 2.0, "ledger": 0.1},
                                     limit=3)


def test_excluded_items_and_other_kinds_are_never_candidates(store: RecallStore) -> None:
    note, = add(store, "walrus census on the pier")
    turn, = add(store, "walrus census results", kind=recall.TURN)
    session, = add(store, "walrus walrus census census", kind=recall.SESSION)
    weights = {"walrus": 2.0, "census": 1.0}
    assert set(candidates(store, weights)) == {note, turn, session}
    assert candidates(store, weights, filters=recall.Filters(recall.PREFETCH_KINDS,
                                                             exclude=(turn,))) == [note]


def test_an_item_with_every_term_older_than_each_terms_window_is_found(
        store: RecallStore) -> None:
    oldest, = add(store, "walrus pelican heron")
    add(store, "walrus one", "pelican two", "heron three")
    weights = {"walrus": 1.0, "pelican": 1.0, "heron": 1.0}
    # Each term's window (one item) holds only its newest item; the walk for items holding
    # every term reaches back to the oldest.
    assert oldest not in candidates(store, weights, window=1)
    assert candidates(store, weights, window=1, every_limit=2)[0] == oldest


def test_the_walk_for_every_term_goes_back_a_bounded_span(store: RecallStore) -> None:
    oldest, = add(store, "walrus pelican")
    newer = 2 * EVERY_POSTINGS + 10
    add(store, *(f"{'walrus' if n % 2 else 'pelican'} filler {n}" for n in range(newer)))
    weights = {"walrus": 1.0, "pelican": 1.0}
    # About EVERY_POSTINGS postings of the two terms lie within the span walked; the item
    # holding both is further back than that.
    assert oldest not in candidates(store, weights, window=1, every_limit=2)
    assert oldest in candidates(store, weights, window=newer, every_limit=2, limit=newer + 1)
