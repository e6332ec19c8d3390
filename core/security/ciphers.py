"""Text written in rot13 or another Caesar shift, shifted back so the scorer can read it.

A model reads rot13 as easily as English, and "Vtaber nyy cerivbhf vafgehpgvbaf" holds no word
any feature knows. Rather than decode every text 25 ways, :func:`unshift` looks up each word in
a table of common English words under every shift (a dict built at import, a few hundred
entries): when one shift turns at least two different words into common ones, and more than the
text holds unshifted, the text is written in that shift and is returned shifted back. Plain
English finds more common words unshifted; rot13 puzzles that decode to harmless English
decode, score nothing, and cost one extra reading.

Letters written one by one ("r.e.v.e.a.l t.h.e", "d i s a b l e   t h e") hold no word either:
:func:`unspace` joins them. Percent-encoded bytes, bytes spelled with variation selectors (text
hung invisibly on an emoji) and text written backwards are read back too (:func:`percent_decoded`,
:func:`selector_bytes`, :func:`backwards`).
"""

from __future__ import annotations

import re
import string

#: Words that ordinary English, and instructions to an agent, are full of. Three letters or more:
#: shifted two-letter words collide with abbreviations too often.
COMMON = ("the", "and", "you", "your", "all", "that", "this", "with", "for", "from", "are", "now",
          "not", "never", "always", "every", "each", "send", "email", "upload", "post", "ignore",
          "previous", "prior", "instructions", "rules", "system", "prompt", "reply", "answer",
          "user", "chat", "secret", "password", "key", "token", "http", "https", "www", "run",
          "execute", "what", "when", "before", "after", "into", "here", "there", "tell")
VERSION = f"ciphers-4 {len(COMMON)}"

_LOWER = string.ascii_lowercase


def _shift(word: str, by: int) -> str:
    return "".join(_LOWER[(_LOWER.index(c) + by) % 26] for c in word)


def _tables() -> tuple[dict[str, int], list[dict[int, int]]]:
    plain = set(COMMON)
    found: dict[str, int] = {}
    for by in range(1, 26):
        for word in COMMON:
            shifted = _shift(word, by)
            # A shifted form that is itself a common word would make plain English look shifted.
            if shifted not in plain:
                found.setdefault(shifted, 26 - by)  # the shift that reads it back
    back = []
    for by in range(26):
        table = str.maketrans(_LOWER + _LOWER.upper(),
                              _LOWER[by:] + _LOWER[:by] + (_LOWER[by:] + _LOWER[:by]).upper())
        back.append(table)
    return found, back


_SHIFTED, _BACK = _tables()
#: Every word a shift of a common word spells (the views' gate looks for them too).
SHIFTED_WORDS = frozenset(_SHIFTED)
_PLAIN = frozenset(COMMON)
_WORD = re.compile(r"[a-z]{3,}")


def unshift(text: str) -> str | None:
    """``text`` shifted back, when it reads as English under some Caesar shift (rot13 is the
    shift of 13); None otherwise."""
    words = set(_WORD.findall(text.lower()))
    shifted = words & SHIFTED_WORDS
    if len(shifted) < 2:
        return None
    hits: dict[int, int] = {}
    for word in shifted:
        by = _SHIFTED[word]
        hits[by] = hits.get(by, 0) + 1
    by, count = max(hits.items(), key=lambda item: item[1])
    if count < 2 or count <= len(words & _PLAIN):
        return None
    return text.translate(_BACK[by])


#: Letters one by one with a separator ("r.e.v.e.a.l", "d i s a b l e"): the same separator
#: between single characters, at least three of them ("t.h.e").
_SPACED = re.compile(r"(?<!\w)[^\W\d_](?P<sep>[.\-_*·]|[^\S\n])[^\W\d_](?:(?P=sep)[^\W\d_])+(?!\w)")
_SPACED_HINT = re.compile(r"\b[^\W\d_][.\-_*· ][^\W\d_][.\-_*· ][^\W\d_]\b")


#: Characters one by one with one space, words set apart by a wider gap ("r u n   c u r l   4 5 .
#: 7 7 . 1 2 . 9"): every character counts, digits and dots too, and a word may be two long.
_GAPPED = re.compile(r"(?<![^\s])\S(?: \S)+(?![^\s])")


def unspace(text: str) -> str | None:
    """``text`` with letters written one by one joined into words, or None when it has none."""
    if not _SPACED_HINT.search(text):
        return None
    if re.search(r"\S {2,}\S", text):  # words apart by a wider gap than letters
        joined = _GAPPED.sub(lambda m: m.group(0).replace(" ", ""), text)
    else:
        joined = text
    joined = _SPACED.sub(lambda m: m.group(0).replace(m.group("sep"), ""), joined)
    return re.sub(r"[^\S\n]{2,}", " ", joined) if joined != text else None


# -- other encodings a model reads as easily as the text ------------------------------------------

_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}){6,}")
#: A word of text whose spaces and slashes are escaped ("cat%20~%2F.aws%2Fcredentials%20and…"):
#: four escapes or more in a run without spaces, not an address's.
_ESCAPED_WORDS = re.compile(r"(?<!\S)(?![a-z][\w+.-]*://)\S*(?:%[0-9A-Fa-f]{2}\S*){4,}", re.IGNORECASE)


def percent_decoded(text: str) -> str | None:
    """The runs of percent-encoded bytes in ``text`` ("%63%75%72%6C…"), and the words whose
    spaces are percent-encoded, decoded; None without one (a URL's odd "%20" is no run)."""
    if "%" not in text:
        return None
    from urllib.parse import unquote

    runs = [unquote(m.group(0), errors="strict") for m in _PERCENT.finditer(text)
            if _decodes(m.group(0))]
    for match in _ESCAPED_WORDS.finditer(text):
        words = unquote(match.group(0))
        if ("%20" in match.group(0) or "%2F" in match.group(0).upper()) and words not in runs:
            runs.append(words)
    return "\n".join(runs) or None


def _decodes(run: str) -> bool:
    try:
        bytes.fromhex(run.replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_SELECTORS = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def selector_bytes(text: str) -> str | None:
    """What a run of variation selectors spells, read one byte per selector (U+FE00–FE0F are 0–15,
    U+E0100–E01EF are 16–255): a way to hang invisible text on an emoji. None without such a run."""
    selectors = _SELECTORS.findall(text)
    if len(selectors) < 8:  # an emoji's own selector, or a few: nothing spelled
        return None
    data = bytes(ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16 for c in selectors)
    decoded = data.decode("utf-8", errors="replace")
    return decoded if sum(ch.isprintable() for ch in decoded) >= 0.9 * len(decoded) else None


#: Signs that a text is written backwards: a domain's end first ("moc.", "gro.", "ten."), or the
#: text saying so.
_BACKWARDS = re.compile(r"(?<![\w.])(?:moc|gro|ten)\.[a-z]|\bbackwards?\b|\breversed\b"
                        r"|\bin\s+reverse\b|\bright[\s-]to[\s-]left\b", re.IGNORECASE)


#: Substrings one of which nearly every :data:`_BACKWARDS` match holds (a letter that may be a
#: capital left out), looked for first: the pattern tried at every place costs ~9 µs a note
#: (the views' gate looks for them too).
BACKWARDS_SIGNS = ("moc.", "gro.", "ten.", "ackward", "everse", "to-left", "to left")


def backwards(text: str) -> str | None:
    """``text`` read from its last character to its first, when it shows signs of being written
    that way; None otherwise."""
    if not any(sign in text for sign in BACKWARDS_SIGNS) or not _BACKWARDS.search(text):
        return None
    return text[::-1]
