"""Which features a text can possibly fire, found in one pass before any feature runs.

Every feature names *anchors*: literals one of which every match of its patterns contains
(checked by ``tests/test_scorer.py`` on texts generated from the patterns). A text holding none of
a feature's anchors cannot fire it, so the scorer runs only the features whose anchors are
present: one pattern finds them all.
"""

from __future__ import annotations

import re
from functools import cache

from memhost.security import features


@cache
def _anchor_finder(ascii_only: bool) -> tuple[re.Pattern[str], dict[str, frozenset[str]]]:
    """One pattern finding every anchor literal present, and for each match the literals inside
    it (a match is the longest literal starting at a place; the shorter ones inside it are
    present too). Literals are matched case-folded (:func:`fold`). An ASCII text cannot hold
    the other languages' literals: its pattern leaves them out."""
    originals: dict[str, set[str]] = {}
    for lits in features.ANCHORS.values():
        for lit in lits:
            if lit.isascii() or not ascii_only:
                originals.setdefault(fold(lit), set()).add(lit)
    literals = sorted(originals, key=len, reverse=True)
    finder = re.compile(f"(?=({_trie(literals)}))")
    # A literal's sub-literals from its own substrings (a few dozen each), not by testing every
    # literal against every other (hundreds squared, most of this function's cost at start-up).
    inside = {m: frozenset(o for i in range(len(m)) for j in range(i + 1, len(m) + 1)
                           for o in originals.get(m[i:j], ())) for m in literals}
    return finder, inside


#: The patterns ignore case as ``re`` does, a character at a time, which makes more letters
#: equal than ``str.lower`` does: "I", "İ" and "ı" all match "i" (a Turkish word in capitals),
#: "ſ" matches "s", the Kelvin sign "k", "ς" matches "σ", "µ" matches "μ". ``casefold`` joins all
#: of those but the Turkish ones, done here; it also writes "ß" as "ss", in the anchors too.
_FOLD_UPPER = str.maketrans({"İ": "i"})
_FOLD_LOWER = str.maketrans({"ı": "i"})


def fold(text: str) -> str:
    return text.translate(_FOLD_UPPER).casefold().translate(_FOLD_LOWER)


def _trie(words: list[str]) -> str:
    """A regex matching any of ``words``, the longest where several start at one place (one
    pass, no backtracking over alternatives that share a prefix)."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and "" not in node else f"(?:{'|'.join(branches)})"
        return body + ("?" if "" in node else "")

    return emit(root)


def present(text: str) -> set[str]:
    ascii_only = text.isascii()
    # ASCII holds none of the letters fold() translates, and casefold is lower for it.
    lowered = text.lower() if ascii_only else fold(text)
    finder, inside = _anchor_finder(ascii_only or lowered.isascii())
    found: set[str] = set()
    for literal in finder.findall(lowered):
        found |= inside[literal]
    return found
