"""The memory file format: parsing, serialising, canonical entries and the drift rule.

Round-trip, precisely:
* ``canonical_entry(text)`` is what a store keeps for ``text`` (newlines normalised to LF,
  trailing spaces on each line dropped, the whole stripped), or a ``ValueError`` when ``text``
  holds a line that is only ``§`` (it would split into several entries) or a NUL;
* for a list of distinct, non-empty canonical entries, ``parse(serialize(entries)) == entries``;
* a file that has no drift loads to canonical entries, and saving what was loaded changes nothing
  on the next load.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memhost.builtin_providers.entries import (
    DELIMITER,
    canonical_entry,
    drift_reason,
    joined_length,
    normalise,
    parse,
    serialize,
)

# Text biased towards what breaks memory files: section signs, every newline style, padding,
# and characters outside ASCII and the BMP.
_PIECES = st.sampled_from(["§", "\n", "\r\n", "\r", " ", "\t", "\n§\n", "\r\n§\r\n", " § ",
                           "é", "漢字", "🧠", "\u2028", "\x85", "a", "entry", "-"])
messy_text = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=25).map("".join)


def _valid_canonical(text: str) -> str | None:
    try:
        entry = canonical_entry(text)
    except ValueError:
        return None
    return entry or None


canonical_entries = (st.lists(messy_text.map(_valid_canonical).filter(bool), max_size=8)
                     .map(lambda items: list(dict.fromkeys(items))))


class TestFormat:
    def test_delimiter_is_a_line_holding_only_the_section_sign(self) -> None:
        assert DELIMITER == "\n§\n"
        assert serialize(["one", "two"]) == "one\n§\ntwo"
        assert serialize([]) == ""

    def test_split_on_whole_delimiter_only(self) -> None:
        raw = "costs 5 § per unit\n§\nsee §3 of the spec\n§\nline one\nline two"
        assert parse(raw) == ["costs 5 § per unit", "see §3 of the spec", "line one\nline two"]

    def test_crlf_and_trailing_whitespace_parse_like_lf(self) -> None:
        assert parse("alpha  \r\n§\r\nbeta\t\r\n") == ["alpha", "beta"]
        assert parse("alpha\n§   \nbeta") == ["alpha", "beta"]

    def test_empty_pieces_and_exact_duplicates_are_dropped_keeping_first_order(self) -> None:
        assert parse("b\n§\n\n§\na\n§\nb\n§\n  \n§\na") == ["b", "a"]
        assert parse("") == [] and parse("\n\n") == []

    def test_delimiter_at_start_or_end_of_file_is_not_glued_to_an_entry(self) -> None:
        # A hand edit that left "§" as the first or last line must not make "§" part of an
        # entry: the next rewrite would turn it into a real delimiter inside another entry.
        assert parse("alpha\n§") == ["alpha"]
        assert parse("§\nalpha") == ["alpha"]
        loaded = parse("alpha\n§")
        assert parse(serialize([*loaded, "beta"])) == ["alpha", "beta"]

    def test_budget_counts_characters_of_joined_text_including_delimiters(self) -> None:
        assert joined_length([]) == 0
        assert joined_length(["abc"]) == 3
        assert joined_length(["abc", "de"]) == 3 + 3 + 2
        assert joined_length(["漢字", "🧠"]) == 2 + 3 + 1  # characters, not bytes


class TestCanonicalEntry:
    def test_normalises_newlines_and_strips(self) -> None:
        assert canonical_entry("  first line  \r\nsecond\r\n\n") == "first line\nsecond"

    @pytest.mark.parametrize("text", ["a\n§\nb", "a\r\n§\r\nb", "§\nb", "a\n  §  \nb", "§"])
    def test_refuses_a_line_that_is_only_the_section_sign(self, text: str) -> None:
        with pytest.raises(ValueError, match="only '§'"):
            canonical_entry(text)

    def test_section_sign_inside_a_line_is_fine(self) -> None:
        assert canonical_entry("see § 4 and §5") == "see § 4 and §5"

    def test_refuses_nul(self) -> None:
        with pytest.raises(ValueError, match="NUL"):
            canonical_entry("a\x00b")


class TestRoundTrip:
    @given(messy_text)
    @example("a\r\n§\r\nb")
    @example("\ufeffx §\r\n y")
    def test_canonical_entry_reads_back_unchanged(self, text: str) -> None:
        try:
            entry = canonical_entry(text)
        except ValueError:
            normal_lines = normalise(text).split("\n")
            assert any(line.strip() == "§" for line in normal_lines) or "\x00" in text
            return
        assert canonical_entry(entry) == entry  # idempotent
        if entry:
            assert parse(serialize([entry])) == [entry]
            assert drift_reason(serialize([entry]), limit=len(entry)) is None

    @given(canonical_entries)
    def test_parse_inverts_serialize(self, entries: list[str]) -> None:
        assert parse(serialize(entries)) == entries
        assert drift_reason(serialize(entries), limit=10**9) is None

    @settings(suppress_health_check=[HealthCheck.too_slow])
    @given(messy_text)
    def test_a_clean_file_is_stable_under_load_and_save(self, raw: str) -> None:
        if drift_reason(raw, limit=10**9) is not None:
            return
        loaded = parse(raw)
        assert all(canonical_entry(e) == e for e in loaded)
        assert parse(serialize(loaded)) == loaded


class TestDrift:
    def test_empty_and_blank_files_are_clean(self) -> None:
        assert drift_reason("", 10) is None
        assert drift_reason("  \n\r\n ", 10) is None

    def test_crlf_trailing_whitespace_and_padding_are_not_drift(self) -> None:
        assert drift_reason("alpha\r\n§\r\nbeta\r\n", 100) is None
        assert drift_reason("alpha   \n§\t\nbeta  \n\n", 100) is None
        assert drift_reason("\n\nalpha\n\n§\n\nbeta\n§\n", 100) is None
        assert drift_reason("alpha\n§\nalpha", 100) is None  # duplicates are dropped, not drift

    def test_indented_section_sign_line_is_drift(self) -> None:
        reason = drift_reason("alpha\n §\nbeta", 100)
        assert reason is not None and "§" in reason

    def test_entry_longer_than_the_whole_budget_is_drift(self) -> None:
        blob = "alpha\n§\nbeta\n" + "log line\n" * 50
        reason = drift_reason(blob, 100)
        assert reason is not None and "budget" in reason
        assert drift_reason("x" * 100, 100) is None  # exactly the budget is fine

    def test_nul_bytes_are_drift(self) -> None:
        assert drift_reason("alpha\x00beta", 100) is not None


# -- the fast paths agree with the line-by-line definitions ---------------------------------------

def _normalise_line_by_line(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines)


def _parse_line_by_line(raw: str) -> list[str]:
    from memhost.builtin_providers.entries import _pieces

    return list(dict.fromkeys(e for e in (p.strip() for p in _pieces(
        _normalise_line_by_line(raw))) if e))


_FAST_PIECES = st.sampled_from(["§", "\n", "\r\n", "\r", " ", "\t", "\n§\n", "§\n", "\n§",
                                "\u3000", "\x1c", "\x85", "\u2028", "a", "entry"])
fast_path_text = st.lists(st.one_of(_FAST_PIECES, st.text(max_size=6)), max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(fast_path_text)
def test_normalise_parse_and_drift_agree_with_the_line_by_line_rules(raw: str) -> None:
    """normalise skips text that is already normal and parse splits on the whole delimiter when
    that is the same split (both at C speed); the results must be those of the line-by-line
    rules they replace."""
    assert normalise(raw) == _normalise_line_by_line(raw)
    assert parse(raw) == _parse_line_by_line(raw)
    padded = any(line != "§" and line.strip() == "§"
                 for line in _normalise_line_by_line(raw).split("\n"))
    assert (drift_reason(raw, 10**9) or "").startswith("a line holds") == (
        padded and "\x00" not in raw)
