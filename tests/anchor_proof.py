"""A proof, from a regular expression's parse tree, that every match holds one of some literals.

The scorer runs a feature only when the text holds one of the feature's anchors
(:mod:`memhost.security.anchors`), so every match of the feature's pattern must hold one. Texts
generated from the patterns can only sample that; this walks the pattern instead and follows
every path through it, keeping for each path only what can still matter:

* ``ANCHORED``: the path so far already holds an anchor (nothing after it can undo that);
* ``(head, tail, exact)``: the literal text at the path's start and at its end, as far as an
  anchor could reach into it from a neighbour (one character less than the longest anchor), and
  whether the whole path is that one literal.

Anything that is not a known literal (a class like ``\\w``, ``.``, a negated or wide set, a back
reference, a repeat beyond a few copies) is a *break*: no anchor is credited across it. That only
ever makes the proof fail where it could have passed, never the other way round. Literals are
case-folded as :func:`memhost.security.anchors.fold` folds the text the anchors are looked for in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import product

try:  # Python 3.11 renamed the module; the old name still works there, with a warning.
    from re import _constants as c
    from re import _parser as parser
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as c  # type: ignore[no-redef]
    import sre_parse as parser  # type: ignore[no-redef]

import ahocorasick_rs

from memhost.security.anchors import fold

ANCHORED = "anchored"
#: Copies of a repeated group followed exactly; more are a break.
COPIES = 3
#: A set of at most this many literal characters is followed character by character.
SMALL_SET = 6
#: Paths kept at once before the proof gives up (a pattern too wide to follow).
MAX_STATES = 50_000


class Unproven(AssertionError):
    pass


class Proof:
    def __init__(self, anchors: Iterable[str]) -> None:
        self.anchors = sorted({fold(a) for a in anchors})
        if not self.anchors or not all(self.anchors):
            raise ValueError("anchors must be non-empty literals")
        self.reach = max(map(len, self.anchors)) - 1  # characters an anchor can take from a side
        # "Does this stretch hold an anchor?" is asked of every path the proof joins: a loop over
        # a feature's anchors (hundreds for a feature of many languages) was ~85% of the proof's
        # time; an Aho-Corasick automaton answers it in one pass over the stretch.
        self._finder = ahocorasick_rs.AhoCorasick(self.anchors)

    # -- states ------------------------------------------------------------------------------

    def holds(self, text: str) -> bool:
        return bool(self._finder.find_matches_as_indexes(text))

    def exact(self, text: str) -> object:
        if self.holds(text):
            return ANCHORED
        if len(text) > self.reach:  # no anchor can span it: keep only its ends
            return (text[:self.reach], text[len(text) - self.reach:], False)
        return (text, text, True)

    BREAK = ("", "", False)

    def join(self, left: object, right: object) -> object:
        if left == ANCHORED or right == ANCHORED:
            return ANCHORED
        lhead, ltail, lexact = left  # type: ignore[misc]
        rhead, rtail, rexact = right  # type: ignore[misc]
        if lexact and rexact:
            return self.exact(lhead + rhead)
        if self.holds(ltail + rhead):
            return ANCHORED
        head = (lhead + rhead)[:self.reach] if lexact else lhead
        tail = (ltail + rhead)[-self.reach:] if rexact and self.reach else rtail
        return (head, tail if self.reach else "", False)

    def seq(self, lefts: set[object], rights: set[object]) -> set[object]:
        out = {self.join(a, b) for a, b in product(lefts, rights)}
        if len(out) > MAX_STATES:
            raise Unproven(f"more than {MAX_STATES} paths: the pattern is too wide to follow")
        return out

    # -- the parse tree ----------------------------------------------------------------------

    def states(self, pattern: re.Pattern[str]) -> set[object]:
        tree = parser.parse(pattern.pattern, pattern.flags)
        return self._sequence(list(tree))

    def _sequence(self, items: list[tuple[object, object]]) -> set[object]:
        result: set[object] = {self.exact("")}
        for op, arg in items:
            result = self.seq(result, self._node(op, arg))
            if result == {ANCHORED}:
                break
        return result

    def _literal(self, code: int) -> set[object]:
        return {self.exact(fold(chr(code)))}

    def _node(self, op: object, arg: object) -> set[object]:
        if op is c.LITERAL:
            return self._literal(arg)  # type: ignore[arg-type]
        if op is c.IN:
            return self._set(arg)  # type: ignore[arg-type]
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):  # zero-width: consume nothing
            return {self.exact("")}
        if op is c.SUBPATTERN:
            return self._sequence(list(arg[-1]))  # type: ignore[index]
        if op is getattr(c, "ATOMIC_GROUP", None):
            return self._sequence(list(arg))  # type: ignore[arg-type]
        if op is c.BRANCH:
            out: set[object] = set()
            for branch in arg[1]:  # type: ignore[index]
                out |= self._sequence(list(branch))
            return out
        if op is c.GROUPREF_EXISTS:
            _, yes, no = arg  # type: ignore[misc]
            return self._sequence(list(yes)) | (self._sequence(list(no)) if no else
                                                {self.exact("")})
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, high, body = arg  # type: ignore[misc]
            return self._repeat(low, high, self._sequence(list(body)))
        # ANY, NOT_LITERAL, CATEGORY, GROUPREF and the rest: something not followed.
        return {self.BREAK}

    def _set(self, items: list[tuple[object, object]]) -> set[object]:
        codes: list[int] = []
        for op, arg in items:
            if op is c.LITERAL:
                codes.append(arg)  # type: ignore[arg-type]
            elif op is c.RANGE and arg[1] - arg[0] < SMALL_SET:  # type: ignore[index,operator]
                codes.extend(range(arg[0], arg[1] + 1))  # type: ignore[index,operator]
            else:  # NEGATE, CATEGORY, a wide range
                return {self.BREAK}
        if len(codes) > SMALL_SET:
            return {self.BREAK}
        return {self.exact(fold(chr(code))) for code in codes}

    def _repeat(self, low: int, high: int, body: set[object]) -> set[object]:
        out: set[object] = {self.exact("")} if low == 0 else set()
        copies: set[object] = {self.exact("")}
        for count in range(1, min(high, max(low, COPIES)) + 1):
            copies = self.seq(copies, body)
            if count >= low:
                out |= copies
        if high > max(low, COPIES):  # more copies than followed: what came before, then a break
            out |= self.seq(copies, {self.BREAK})
        return out

    # -- the verdict -------------------------------------------------------------------------

    def check(self, pattern: re.Pattern[str]) -> None:
        """Raise :class:`Unproven` naming a path's literal ends when some match may hold no
        anchor."""
        open_paths = [s for s in self.states(pattern) if s != ANCHORED]
        if open_paths:
            shown = ", ".join(repr(p[0] if p[2] else f"{p[0]}…{p[1]}")  # type: ignore[index]
                              for p in sorted(open_paths, key=str)[:5])
            raise Unproven(f"{len(open_paths)} paths hold no anchor, for example {shown}")
