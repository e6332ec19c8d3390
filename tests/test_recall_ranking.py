"""The database-independent parts of recall: terms, scores, floors, dates and packing."""

from __future__ import annotations

import time
from datetime import datetime

from memhost import recall
from memhost.recall import ranking, render, terms, when
from memhost.recall.items import Hit


def test_terms_are_folded_stemmed_and_without_function_words() -> None:
    assert terms.terms("The Café's paintings were PAINTED") == ["cafe", "paint", "paint"]
    assert terms.query_words("Can you remember what I said about the café?") == ["cafe"]
    assert terms.terms("v2 of the 2024 plan") == ["v2", "2024", "plan"]
    assert terms.index_text("Painting, painted.") == "paint paint"


def _plan(df: dict[str, int], n: int = 1000, total: int = 10_000, **kwargs: object) -> \
        ranking.QueryPlan:
    return ranking.plan_query(list(df), df, n, total_length=total, **kwargs)  # type: ignore[arg-type]


def test_a_short_precise_item_beats_a_long_one_that_gathered_the_words() -> None:
    plan = _plan({"paint": 30, "lake": 10})
    short, _ = plan.score({"paint": 1, "lake": 1}, 6)
    long, _ = plan.score({"paint": 1, "lake": 1}, 60)
    one_word, coverage = plan.score({"paint": 3}, 6)
    assert short > long > 0
    assert short > one_word and 0 < coverage < 1


def test_unknown_query_words_count_half_and_common_ones_are_not_searched() -> None:
    plan = _plan({"paint": 30, "melani": 600, "zzz": 0})
    assert plan.search_terms == ("paint",)  # melani is in over half the items
    known = plan.weights["paint"] + plan.weights["melani"]
    assert plan.total == known + 0.5 * ranking.idf(0, 1000)
    assert plan.has_rare(400)


def test_a_when_question_lifts_items_that_say_when() -> None:
    plan = _plan({"support": 5, "group": 9}, asks_when=when.asks_when("When did she join?"))
    assert plan.boost(terms.terms("I went yesterday"), 0) == plan.options.date_boost
    assert plan.boost(terms.terms("I went there"), 0) == 1.0
    assert not when.asks_when("What did she join?")


def test_time_words_in_a_query_name_a_window() -> None:
    now = datetime(2024, 6, 15, 12).timestamp()
    since, until = when.window("what did we say yesterday?", now)
    assert datetime.fromtimestamp(since) == datetime(2024, 6, 14)
    assert datetime.fromtimestamp(until) == datetime(2024, 6, 15)
    since, until = when.window("the plan from last month", now)
    assert since < datetime(2024, 5, 15).timestamp() < until <= now
    since, until = when.window("in March", now)
    assert (datetime.fromtimestamp(since), datetime.fromtimestamp(until)) == (
        datetime(2024, 3, 1), datetime(2024, 4, 1))
    assert when.window("in December", now)[0] == datetime(2023, 12, 1).timestamp()
    assert when.window("what port does billing use", now) is None


def _hit(number: int, session: str, text: str, role: str = "user") -> Hit:
    return Hit(number, "turn", text, time.time(), session, role=role)


def test_packing_says_each_sessions_date_once_and_keeps_the_budget() -> None:
    hits = [_hit(5, "b", "Second session, best item."), _hit(1, "a", "First session."),
            _hit(6, "b", "Reply in the second.", "assistant")]
    text = render.pack(hits, max_chars=200)
    today = f"[{recall.date_text(time.time())}]"
    assert text == (f"{today}\nU: Second session, best item.\nA: Reply in the second.\n"
                    f"{today}\nU: First session.")
    many = [_hit(n, f"s{n}", f"Item {n} " + "word " * 30) for n in range(40)]
    packed = render.pack(many, max_chars=800)
    assert len(packed) <= 800 and packed.count("Item") == len(packed.splitlines()) // 2


def test_a_long_item_is_shown_by_its_most_relevant_part() -> None:
    text = ("We talked about the weather for a long time. " * 8
            + "The heron cluster has nine nodes. " + "Then lunch. " * 20)
    cut = render.snippet(text, {terms.stem("heron")}, 120)
    assert len(cut) <= 120 and "heron cluster has nine nodes" in cut
    assert cut.startswith("…") and cut.endswith("…")
    assert render.snippet("short", set(), 120) == "short"


def test_results_are_spread_over_sessions_while_others_have_hits() -> None:
    ranked = [_hit(n, "long", f"x{n}") for n in range(10)] + [_hit(99, "other", "y")]
    for position, hit in enumerate(ranked):
        hit.score = 10.0 - position * 0.5
    # The other session's one hit gets in although ten "long" ones score better; the rest of
    # the places go back to "long", best first.
    chosen = recall.retrieval.diversify(ranked, 4, 0.5)
    assert [h.id for h in chosen] == [0, 1, 2, 99]
    assert len(recall.retrieval.diversify(ranked[:10], 4, 0.5)) == 4  # nothing else: no gap
