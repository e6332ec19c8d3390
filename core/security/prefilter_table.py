"""Writing the prefilter's table: each feature's pattern rewritten as an RE2 pattern that matches
at least wherever it matches, on ASCII text (:mod:`memhost.security.prefilter` reads it).

    python -m memhost.security.prefilter_table          # rewrite prefilter_re2.json
    python -m memhost.security.prefilter_table --check  # exit 1 when the table is stale

The rewrite works on the pattern's parse tree (``re._parser``, the tree ``re.compile`` builds
from), not on its text, so no quirk of Python's syntax is read differently. Only ASCII text is
ever checked, and every choice below keeps "RE2 matches wherever ``re`` does" true on it:

* a character, a class, ``.``, each with the pattern's flags: the ASCII characters it matches,
  found by asking ``re`` itself one character at a time, and written as an explicit class. Case
  folding (``ſ`` matches ``s``, the Kelvin sign ``k``), ``\\s`` (which in ``re`` also holds
  ``\\x1c``–``\\x1f``) and ``\\w`` come out exactly as ``re`` has them, and RE2 runs case-sensitively;
* a lookahead or lookbehind, positive or negative: left out (a condition dropped matches more);
* a back-reference: any run of characters; an atomic group or possessive repeat: a plain one;
* a repeat bounded above one: unbounded (``{0,200}`` becomes ``*``). A bounded repeat makes
  RE2's automaton track every count at every start, and a table built that way ran at a third
  of the speed;
* ``^`` and ``$`` as at a line's start and end (``$`` also before a final line break, which the
  multi-line reading holds); ``\\b`` and ``\\B`` as they are (ASCII word characters, as ``re``'s
  on ASCII text).

Each entry carries a digest of the feature's signature (its pattern, flags and weights), so an
entry a feature has outgrown is never used: that feature runs without a prefilter until the
table is written again, and ``tests/test_prefilter.py`` fails until it is.
"""

from __future__ import annotations

import json
import re
import re._constants as sre  # the parse tree's opcodes, the module re.compile itself uses
import re._parser as parser
from functools import lru_cache
from typing import Any

from memhost.security import features
from memhost.security.prefilter import FORMAT, TABLE_PATH, signature_digest
from memhost.security.shipped import write_or_check

_ASCII = tuple(chr(code) for code in range(128))
_CATEGORY = {sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W", sre.CATEGORY_SPACE: r"\s",
             sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D"}
_FLAGS_KEPT = re.IGNORECASE | re.DOTALL | re.ASCII | re.MULTILINE


def translate(pattern: str, flags: int) -> str:
    """``pattern`` (compiled by ``re`` with ``flags``) as an RE2 pattern matching wherever it
    matches on ASCII text."""
    tree = parser.parse(pattern, flags)
    found = _sequence(tree, tree.state.flags)
    # RE2 runs case-insensitively; a class that tells case apart says so (see _class).
    return "(?i)" + found if found is not None else NEVER


#: A pattern no text matches: what a feature whose every branch needs a non-ASCII character
#: becomes (it cannot match ASCII text).
NEVER = r"[^\x00-\x{10ffff}]"


def _sequence(items: Any, flags: int) -> str | None:
    """The items in order; None when one of them cannot match ASCII text (nor can the whole)."""
    parts = []
    for op, av in items:
        part = _node(op, av, flags)
        if part is None:
            return None
        parts.append(part)
    return "".join(parts)


def _node(op: Any, av: Any, flags: int) -> str | None:
    if op in (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY):
        return _class(_ascii_matches(_class_source(op, av), flags & _FLAGS_KEPT))
    if op is sre.BRANCH:
        branches = [found for found in (_sequence(b, flags) for b in av[1]) if found is not None]
        return "(?:" + "|".join(branches) + ")" if branches else None
    if op is sre.SUBPATTERN:
        _group, add, remove, body = av
        found = _sequence(body, (flags | add) & ~remove)
        return None if found is None else "(?:" + found + ")"
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, body = av
        found = _sequence(body, flags)
        if found is None:
            return None if low else ""
        if high is sre.MAXREPEAT or high > 1:
            return "(?:" + found + ")" + ("*" if low == 0 else "+")
        return "(?:" + found + ")" + ("?" if low == 0 else "")
    if op is sre.AT:
        return {sre.AT_BEGINNING: "(?m:^)", sre.AT_BEGINNING_LINE: "(?m:^)", sre.AT_END: "(?m:$)",
                sre.AT_END_LINE: "(?m:$)", sre.AT_BEGINNING_STRING: r"\A",
                sre.AT_END_STRING: r"\z", sre.AT_BOUNDARY: r"\b", sre.AT_NON_BOUNDARY: r"\B"}[av]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return ""
    if op is sre.GROUPREF:
        return r"[\x00-\x7f]*"
    if op is sre.GROUPREF_EXISTS:
        _group, yes, no = av
        either = [found for found in (_sequence(yes, flags), _sequence(no, flags) if no else "")
                  if found is not None]
        return "(?:" + "|".join(either) + ")" if either else None
    if op is sre.ATOMIC_GROUP:
        found = _sequence(av, flags)
        return None if found is None else "(?:" + found + ")"
    raise ValueError(f"no RE2 rewrite for {op} in a feature's pattern")


def _class_source(op: Any, av: Any) -> str:
    """One character's worth of pattern, written back as ``re`` syntax."""
    if op is sre.ANY:
        return "."
    if op is sre.LITERAL:
        return re.escape(chr(av))
    if op is sre.NOT_LITERAL:
        return "[^" + re.escape(chr(av)) + "]"
    parts = []
    for item, value in av:
        if item is sre.NEGATE:
            parts.append("^")
        elif item is sre.LITERAL:
            parts.append(re.escape(chr(value)))
        elif item is sre.RANGE:
            parts.append(re.escape(chr(value[0])) + "-" + re.escape(chr(value[1])))
        elif item is sre.CATEGORY:
            parts.append(_CATEGORY[value])
        else:
            raise ValueError(f"no RE2 rewrite for {item} in a character class")
    return "[" + "".join(parts) + "]"


@lru_cache(maxsize=None)
def _ascii_matches(source: str, flags: int) -> tuple[str, ...]:
    one = re.compile(source, flags)
    return tuple(ch for ch in _ASCII if one.fullmatch(ch))


@lru_cache(maxsize=None)  # ~90,000 characters of the features are ~170 sets: each written once
def _class(chars: tuple[str, ...]) -> str | None:
    """The ASCII characters ``chars`` as RE2 syntax under ``(?i)``; None when there are none."""
    if not chars:
        return None
    found = set(chars)
    if all(ch.swapcase() in found for ch in found):
        # Closed under case: its lower-case letters say it, as (?i) reads them.
        return _ranges(sorted(ch for ch in found if not ch.isupper()))
    return "(?-i:" + _ranges(sorted(found)) + ")"


def _ranges(chars: list[str]) -> str:
    runs: list[tuple[int, int]] = []
    for code in map(ord, chars):
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    if len(runs) == 1 and runs[0][0] == runs[0][1]:
        return _char(runs[0][0])
    return "[" + "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in runs) + "]"


def _char(code: int) -> str:
    ch = chr(code)
    return ch if ch.isalnum() or ch in "_ " else f"\\x{code:02x}"


def table() -> dict[str, Any]:
    """The table as it should be for today's features."""
    entries = {}
    for feature in features.FEATURES:
        entries[feature.id] = [signature_digest(feature),
                               translate(feature.expression, feature.flags | re.MULTILINE)]
    return {"format": FORMAT, "features": entries}


def main(argv: list[str] | None = None) -> int:
    wanted = table()
    text = json.dumps(wanted, indent=0, sort_keys=True, ensure_ascii=True) + "\n"
    return write_or_check(TABLE_PATH, text, argv, prog="python -m memhost.security.prefilter_table",
                          description=__doc__.split("\n\n")[0],
                          summary=f"{len(wanted['features'])} features, {len(text):,} bytes")


if __name__ == "__main__":
    raise SystemExit(main())
