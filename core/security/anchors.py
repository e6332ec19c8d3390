"""Which features a text can possibly fire, found in one pass before any feature runs.

Every feature names *anchors*: literals one of which every match of its patterns contains
(proved by ``tests/test_scorer.py`` from each pattern's parse tree, ``tests/anchor_proof.py``). A text holding none of
a feature's anchors cannot fire it, so the scorer runs only the features whose anchors are
present: one pass finds them all. A feature of two parts also names the second part's literals
(``ALSO_ANCHORS``, proved the same way), and runs only when the text holds one of each: an
anchor is found anywhere in a word, so one part alone ("ber", Norwegian for "asks", in "number")
would run it for nothing.

The pass is an Aho–Corasick automaton (``ahocorasick-rs``, a maintained binding of Rust's
``aho-corasick`` crate): it finds every literal in a text, overlapping ones included, in one
scan, returning them in one list, and builds from the ~5,500 literals in ~10 ms. A regular
expression built as a trie of the literals did the same job, but compiling it cost ~30 ms at the
start of every process that scores a text (every command that reads a memory file, every session
start with nothing saved), and a scan ~17 µs a note against ~5 µs. ``pyahocorasick``, used
before, built as fast but scanned a note in ~10 µs against ~2.5: it walks its trie a character
at a time and hands each match to Python.
"""

from __future__ import annotations

from typing import Any

from memhost.once import once
from memhost.security import features
from memhost.security.text import literal_matches


@once
def _anchor_finder() -> tuple[Any, list[frozenset[str]]]:
    """The automaton of every anchor literal, case-folded (:func:`fold`), and for each of its
    patterns (by index) the set of original literals that fold to it."""
    import ahocorasick_rs

    originals: dict[str, set[str]] = {}
    for lits in (*features.ANCHORS.values(), *features.ALSO_ANCHORS.values()):
        for lit in lits:
            originals.setdefault(fold(lit), set()).add(lit)
    return (ahocorasick_rs.AhoCorasick(list(originals)),
            [frozenset(lits) for lits in originals.values()])


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
    automaton, originals = _anchor_finder()
    found: set[str] = set()
    for index, _, _ in literal_matches(automaton, fold(text), overlapping=True):
        found |= originals[index]
    return found
