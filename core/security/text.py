"""Invisible characters: the ones a person reviewing a memory cannot see but a model reads.

Zero-width spaces, soft hyphens, bidi controls, the tag block (U+E0000–E007F, which spells
ASCII invisibly), variation selectors, Hangul fillers and their kin can split a word so a
pattern misses it, or carry a whole hidden instruction. The set is Unicode's own:
``Default_Ignorable_Code_Point`` plus the format category ``Cf``, through the ``regex`` package,
so it follows the Unicode version that package ships instead of a list kept by hand.

Scanners and detectors look at :func:`strip_invisible` of a text; a person is shown
:func:`reveal_invisible`, where each hidden character is written out in ``\\u200b`` notation.

And half characters (lone surrogates), which a Python string can hold but UTF-8 cannot write:
:func:`half_character` finds one (what cannot be stored is refused), :func:`encodable` gives a
reader of UTF-8 the text with U+FFFD in their place, and :func:`literal_matches` runs the
literal automatons over such a text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from memhost.once import once

if TYPE_CHECKING:
    import regex


@once
def _invisible() -> regex.Pattern[str]:
    """The pattern of every invisible character. ``regex`` and its Unicode tables are imported
    the first time a text that is not ASCII is looked at (~8 ms): a process whose notes are all
    ASCII, the usual case, never pays for them."""
    import regex

    return regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}]")


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds any invisible character."""
    # ASCII has none, and most text is ASCII: skip the Unicode-property search for it.
    return not text.isascii() and _invisible().search(text) is not None


def strip_invisible(text: str) -> str:
    """``text`` without its invisible characters (the text a scanner should judge)."""
    if text.isascii():
        return text
    return _invisible().sub("", text)


def _notation(match: regex.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def reveal_invisible(text: str) -> str:
    """``text`` with each invisible character written out (``\\u200b``, ``\\U000e0041``), for
    a person to see what a model would read."""
    if text.isascii():
        return text
    return _invisible().sub(_notation, text)


_SURROGATES = re.compile("[\ud800-\udfff]")
#: What is said of a setting that holds one.
NOT_TEXT = ("holds a byte that is not UTF-8 (as a terminal passes one on) or half a character, "
            "which is not text; enter the value again as UTF-8 text")


def half_character(value: Any) -> str | None:
    """The first lone surrogate in ``value`` (a string, or one inside lists, tuples and dicts,
    keys included), or None: what no UTF-8 file can hold. ``sys.argv`` holds one for each byte
    of an argument that is not UTF-8, and JSON's ``"\\ud800"`` decodes to one."""
    if isinstance(value, str):
        found = None if value.isascii() else _SURROGATES.search(value)
        return found.group() if found else None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple)):
        return next((half for item in value if (half := half_character(item)) is not None), None)
    return None


def half_described(half: str) -> str:
    """What :func:`half_character` found, in words: a byte that is not UTF-8 where it is one
    (Python reads such a byte of an argument or a pipe as U+DC80–U+DCFF), else the code point."""
    point = ord(half)
    if 0xDC80 <= point <= 0xDCFF:
        return (f"a byte that is not UTF-8 (0x{point - 0xDC00:02X}: text in another encoding, "
                f"as a terminal or a pipe passes it on) or U+{point:04X}, half of a character")
    return f"U+{point:04X}, half of a character (a lone surrogate)"


def encodable(text: str) -> str:
    """``text`` with U+FFFD in place of each lone surrogate, for a reader of UTF-8 (the secret
    detector's engine, the literal automatons, a provider's database), which cannot be given
    one. Python strings can hold them, and a tool call or a turn can carry one (JSON's
    ``"\\ud800"`` decodes to one). The length and every other character stay as they are; a
    text without one comes back as the same object."""
    if half_character(text) is None:
        return text
    return _SURROGATES.sub("\ufffd", text)


def literal_matches(automaton: Any, text: str, *, overlapping: bool = False) -> list[Any]:
    """The matches of an ``ahocorasick_rs.AhoCorasick`` in ``text``: (pattern index, start,
    end). A text holding a lone surrogate is read as :func:`encodable` writes it: no literal
    holds a surrogate or U+FFFD, so no match is gained or lost."""
    try:
        return automaton.find_matches_as_indexes(text, overlapping=overlapping)
    except UnicodeEncodeError:
        return automaton.find_matches_as_indexes(encodable(text), overlapping=overlapping)
