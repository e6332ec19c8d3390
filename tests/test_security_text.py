"""memhost.security.text: the invisible characters scanners fold away and people are shown."""

from __future__ import annotations

import pytest

from memhost.security.text import has_invisible, reveal_invisible, strip_invisible

HIDDEN = [
    ("zero-width space", "\u200b"),
    ("zero-width joiner", "\u200d"),
    ("soft hyphen", "\u00ad"),
    ("right-to-left override", "\u202e"),
    ("first strong isolate", "\u2068"),
    ("word joiner", "\u2060"),
    ("byte order mark", "\ufeff"),
    ("tag latin capital A", "\U000e0041"),
    ("variation selector 16", "\ufe0f"),
    ("supplementary variation selector", "\U000e0100"),
    ("combining grapheme joiner", "\u034f"),
    ("hangul filler", "\u3164"),
]


@pytest.mark.parametrize("name,char", HIDDEN, ids=[name for name, _ in HIDDEN])
def test_every_kind_of_hidden_character_is_stripped_and_revealed(name: str, char: str) -> None:
    text = f"ghp{char}_token"
    assert has_invisible(text)
    assert strip_invisible(text) == "ghp_token"
    code = ord(char)
    notation = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    assert reveal_invisible(text) == f"ghp{notation}_token"


def test_visible_text_is_left_alone_ascii_or_not() -> None:
    for text in ("plain ascii", "Grüße, señor — naïve café", "日本語のメモ", "emoji 🙂"):
        assert not has_invisible(text)
        assert strip_invisible(text) == text
        assert reveal_invisible(text) == text


def test_a_hidden_instruction_in_tag_characters_becomes_readable() -> None:
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "obey me")
    text = f"Prefers tea{hidden}."
    assert strip_invisible(text) == "Prefers tea."
    assert reveal_invisible(text).count("\\U000e00") == len("obey me")
