"""Which features a text can possibly fire, found in one pass before any feature runs.

Every feature names *anchors*: literals one of which every match of its patterns contains
(proved by ``tests/test_scorer.py`` from each pattern's parse tree, ``tests/anchor_proof.py``). A text holding none of
a feature's anchors cannot fire it, so the scorer runs only the features whose anchors are
present: one pass finds them all. A feature of two parts also names the second part's literals
(``ALSO_ANCHORS``, proved the same way), and runs only when the text holds one of each: an
anchor is found anywhere in a word, so one part alone ("ber", Norwegian for "asks", in "number")
would run it for nothing.

The pass is an Aho–Corasick automaton (``pyahocorasick``, a maintained C implementation): it
finds every literal in a text, overlapping ones included, in one scan, and builds from the
~930 literals in about 2 ms. A regular expression built as a trie of the literals did the
same job, but compiling it cost ~30 ms at the start of every process that scores a text (every
command that reads a memory file, every session start with nothing saved), and a scan
~17 µs a note against ~5 µs.
"""

from __future__ import annotations

from typing import Any

from memhost.once import once
from memhost.security import features


@once
def _anchor_finder() -> Any:
    """The automaton of every anchor literal, case-folded (:func:`fold`); each literal's value
    is the set of original literals that fold to it."""
    import ahocorasick

    originals: dict[str, set[str]] = {}
    for lits in (*features.ANCHORS.values(), *features.ALSO_ANCHORS.values()):
        for lit in lits:
            originals.setdefault(fold(lit), set()).add(lit)
    automaton = ahocorasick.Automaton()
    for folded, lits in originals.items():
        automaton.add_word(folded, frozenset(lits))
    automaton.make_automaton()
    return automaton


#: The patterns ignore case as ``re`` does, a character at a time, which makes more letters
#: equal than ``str.lower`` does: "I", "İ" and "ı" all match "i" (a Turkish word in capitals),
#: "ſ" matches "s", the Kelvin sign "k", "ς" matches "σ", "µ" matches "μ". ``casefold`` joins all
#: of those but the Turkish ones, done here; it also writes "ß" as "ss", in the anchors too.
_FOLD_UPPER = str.maketrans({"İ": "i"})
_FOLD_LOWER = str.maketrans({"ı": "i"})


def fold(text: str) -> str:
    if text.isascii():  # none of the letters translated, and casefold is lower for ASCII
        return text.lower()
    return text.translate(_FOLD_UPPER).casefold().translate(_FOLD_LOWER)


def present(text: str) -> set[str]:
    """The anchor literals ``text`` holds, case-folded as ``re`` folds case."""
    lowered = fold(text)
    found: set[str] = set()
    for _, literals in _anchor_finder().iter(lowered):
        found |= literals
    return found
