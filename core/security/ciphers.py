"""Text written in rot13 or another Caesar shift, shifted back so the scorer can read it.

A model reads rot13 as easily as English, and "Vtaber nyy cerivbhf vafgehpgvbaf" holds no word
any feature knows. Rather than decode every text 25 ways, :func:`unshift` looks up each word in
a table of common English words under every shift (a dict built at import, a few hundred
entries): when one shift turns at least two different words into common ones, and more than the
text holds unshifted, the text is written in that shift and is returned shifted back. Plain
English finds more common words unshifted; rot13 puzzles that decode to harmless English
decode, score nothing, and cost one extra reading.

Letters written one by one ("r.e.v.e.a.l t.h.e", "d i s a b l e   t h e") hold no word either:
:func:`unspace` joins them.
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
VERSION = f"ciphers-2 {len(COMMON)}"

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
_SHIFTED_WORDS = frozenset(_SHIFTED)
_PLAIN = frozenset(COMMON)
_WORD = re.compile(r"[a-z]{3,}")


def unshift(text: str) -> str | None:
    """``text`` shifted back, when it reads as English under some Caesar shift (rot13 is the
    shift of 13); None otherwise."""
    words = set(_WORD.findall(text.lower()))
    shifted = words & _SHIFTED_WORDS
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


def unspace(text: str) -> str | None:
    """``text`` with letters written one by one joined into words, or None when it has none."""
    if not _SPACED_HINT.search(text):
        return None
    joined = _SPACED.sub(lambda m: m.group(0).replace(m.group("sep"), ""), text)
    return re.sub(r"[^\S\n]{2,}", " ", joined) if joined != text else None
