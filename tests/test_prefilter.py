"""The prefilter: RE2 rules a feature out only where its own pattern cannot match.

What the scorer finds must not change with it (docs/security.md, "What screening costs"): every
test here is one way it could, made to fail if it does.
"""

from __future__ import annotations

import re

import pytest

from memhost.security import anchors, features, prefilter, prefilter_table, scorer, views
from test_scorer import BENIGN, OLD_EXAMPLES, _corpus_texts, generated_texts

re2 = pytest.importorskip("re2", reason="google-re2 has no wheel for this platform")


def _rx(pattern: str, flags: int = re.IGNORECASE) -> re2._Regexp:
    return re2.compile(prefilter_table.translate(pattern, flags | re.MULTILINE))


def test_the_shipped_table_is_current() -> None:
    # Stale entries are skipped at run time (those features lose their prefilter, not their
    # findings), so only this test says a feature changed without the table being written again.
    assert prefilter_table.main(["--check"]) == 0, \
        "run: python -m memhost.security.prefilter_table"


@pytest.mark.parametrize("pattern, flags, texts", [
    # A look-around is dropped: RE2 has none, and a dropped condition matches more.
    (r"\bsend\b(?!\s+nothing)", re.IGNORECASE, ["send nothing", "SEND it"]),
    (r"(?<!don't )\bupload", re.IGNORECASE, ["don't upload", "upload"]),
    # A back-reference becomes any run of characters.
    (r"(?P<f>\w+)\.sh\W+(?P=f)\b", re.IGNORECASE, ["run.sh && run", "a.sh b"]),
    # Case as re folds it: the Kelvin sign and the long s match k and s on ASCII text.
    ("\u212aey \u017fecret", re.IGNORECASE, ["key secret", "KEY SECRET"]),
    # re's \s also holds \x1c-\x1f and \v; RE2's does not.
    (r"ignore\s+all", re.IGNORECASE, ["ignore\x1call", "ignore\x0ball", "ignore all"]),
    # A bounded repeat becomes unbounded.
    (r"send(?:\s+\w+){0,2}\s+to", re.IGNORECASE, ["send a b to", "send a b c d to"]),
    # $ without MULTILINE matches before a final line break; ^ and $ at every line with it.
    (r"secret$", 0, ["a secret\n", "a secret\nmore"]),
    # A case-sensitive part inside a case-insensitive pattern stays case-sensitive in RE2 too.
    (r"(?-i:SYSTEM):\s+\w+", re.IGNORECASE, ["SYSTEM: hi", "system: hi"]),
])
def test_rewrites_match_wherever_re_matches(pattern: str, flags: int, texts: list[str]) -> None:
    python = re.compile(pattern, flags | re.MULTILINE)
    rx = _rx(pattern, flags)
    for text in texts:
        if python.search(text):
            assert rx.search(text.encode("ascii")) is not None, (pattern, text)


def test_a_case_sensitive_part_rules_out_the_other_case() -> None:
    # The rewrite is exact on ASCII where it can be: it is a filter, not a licence to match all.
    rx = _rx(r"(?-i:SYSTEM):\s+\w+")
    assert rx.search(b"system: hi") is None
    assert _rx(r"send\s+to").search(b"sendto") is None


def test_a_branch_that_needs_a_letter_outside_ascii_is_left_out() -> None:
    assert prefilter_table.translate("ignoriere|игнорируй", re.IGNORECASE) == "(?i)(?:ignoriere)"
    assert prefilter_table.translate("игнорируй", re.IGNORECASE) == prefilter_table.NEVER
    assert re2.compile(prefilter_table.NEVER).search(b"anything at all") is None


def _ascii_views(texts: list[str]) -> list[str]:
    found = []
    for text in texts:
        found += [body for _, body in views.views(text) if body.isascii()]
    return found


def test_no_feature_is_ruled_out_where_its_pattern_matches() -> None:
    texts = _ascii_views([t for t, _ in OLD_EXAMPLES.values()] + BENIGN + _corpus_texts()
                         + generated_texts(1_500, seed=11))
    by_id = {f.id: f for f in features.FEATURES}
    compiled = {c.feature.id: c.rx for c in scorer._compiled()}
    checked = 0
    for text in texts:
        present = anchors.present(text)
        raw = text.encode("ascii")
        for fid, literals in features.ANCHORS.items():
            if present.isdisjoint(literals):
                continue  # the anchors keep the feature from this text already
            feature = by_id[fid]
            if compiled[fid].search(text) is None:
                continue
            check = prefilter.check_for(feature)
            assert check is not None, f"{fid} has no prefilter (table stale or RE2 refused it)"
            assert check(raw), (fid, text)
            checked += 1
    assert checked > 1_000  # the texts reach the features


def test_every_feature_has_a_prefilter() -> None:
    missing = [f.id for f in features.FEATURES if prefilter.check_for(f) is None]
    assert not missing, missing


def test_a_stale_entry_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    feature = features.FEATURES[0]
    digest, pattern = prefilter._table()[feature.id]
    monkeypatch.setitem(prefilter._table(), feature.id, ("0" * 16, pattern))
    assert prefilter._build(feature) is None
    installed, current, total = prefilter.coverage()  # what memhost doctor reports
    assert installed and current == total - 1
    monkeypatch.setitem(prefilter._table(), feature.id, (digest, pattern))
    assert prefilter._build(feature) is not None


def test_without_the_prefilter_the_scorer_finds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = BENIGN + [t for t, _ in OLD_EXAMPLES.values()]
    scorer.forget()
    with_prefilter = [scorer.assess(t) for t in texts]
    monkeypatch.setattr(scorer, "USE_PREFILTER", False)  # as on a platform without google-re2
    scorer.forget()
    try:
        assert [scorer.assess(t) for t in texts] == with_prefilter
    finally:
        scorer.forget()


def test_a_check_answers_no_where_its_pattern_cannot_match() -> None:
    check = prefilter.compile_check(rb"(?i)ignore\s+previous")
    assert check is not None
    assert check(b"Please IGNORE   previous notes") is True
    assert check(b"The user prefers tabs of width four.") is False
    assert prefilter.compile_check(rb"(unclosed") is None  # RE2 refuses it: no check


def test_a_wrapper_without_its_compiled_pattern_is_asked_through_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Plain:  # a wrapper that keeps its compiled pattern elsewhere
        def __init__(self, pattern: bytes, options: object) -> None:
            self.search = original(pattern, options).search

    original = re2.compile
    monkeypatch.setattr(re2, "compile", Plain)
    check = prefilter.compile_check(rb"(?i)ignore\s+previous")
    assert check is not None
    assert check(b"ignore previous") is True
    assert check(b"a plain note") is False
