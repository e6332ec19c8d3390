"""A linear-time check that a feature's pattern can match a text at all, before ``re`` runs it.

The anchors (:mod:`memhost.security.anchors`) choose the few features a text can fire; an
ordinary note still holds a few of their literals ("always", "as", "reply") and ran those
features' patterns for nothing. Python's ``re`` is a backtracking engine: it tries a pattern of
many branches at every position of the text, and case-insensitive branches lose its quick
first-character test, so a feature cost ~10–75 µs on a one-line note that it does not match.
That was half the cost of screening a write.

Here each feature also has an RE2 pattern (Google's linear-time engine, the ``google-re2``
package) that matches wherever the feature's own pattern matches on ASCII text, written
ahead of time by :mod:`memhost.security.prefilter_table`. RE2 answers "no match anywhere" for a
note in ~1–2 µs, and ``re`` runs only where it says "maybe", so what the scorer finds is the
same to the match: the check can only skip a pattern that would have found nothing. A text with
any other character is read by ``re`` alone (the table is exact for ASCII only: case folding and
word characters differ between the engines beyond it).

Why RE2 and not a second rewrite for ``re``: a rewrite for speed would have to keep every
pattern's meaning; a check that only has to say "maybe" can drop what RE2 lacks (lookarounds,
back-references) and still be right. Why not Hyperscan: its compile of these patterns takes
seconds, paid at the start of a process. Without ``google-re2`` (a platform with no wheel), or
where an entry is stale or RE2 refuses a pattern, that feature runs as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memhost.once import once
from memhost.security import features

TABLE_PATH = Path(__file__).with_name("prefilter_re2.json")
#: The table's layout; a table of another layout is not read.
FORMAT = 1

#: Where RE2 may stop compiling a large pattern: the largest feature needs a few megabytes.
_MAX_MEM = 64 << 20
_UNCHECKED = object()


@once
def engine() -> Any:
    """``(the re2 module, the options every check compiles with)``, or None without RE2."""
    try:
        import re2
    except ImportError:  # no wheel for this platform: every feature runs through re alone
        return None
    options = re2.Options()
    options.never_capture = True  # only whether it matches is asked
    options.log_errors = False
    options.max_mem = _MAX_MEM
    return re2, options


def signature_digest(feature: features.Feature) -> str:
    """What a table entry is written for: the feature's pattern, flags and weights."""
    return hashlib.sha256(feature.signature.encode("utf-8")).hexdigest()[:16]


@once
def _table() -> dict[str, tuple[str, str]]:
    try:
        data = json.loads(TABLE_PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if data.get("format") != FORMAT:
        return {}
    return {fid: (digest, pattern) for fid, (digest, pattern) in data["features"].items()}


#: Each feature's check, built the first time a text reaches it (a race builds one twice, the
#: same: harmless).
_checks: dict[str, Any] = {}


def check_for(feature: features.Feature) -> Callable[[bytes], bool] | None:
    """A function of an ASCII text's bytes, False when ``feature`` cannot match it; None when
    the feature has no usable prefilter (it then runs on every text its anchors choose)."""
    found = _checks.get(feature.id, _UNCHECKED)
    if found is _UNCHECKED:
        found = _checks[feature.id] = _build(feature)
    return found


def _build(feature: features.Feature) -> Callable[[bytes], bool] | None:
    entry = _table().get(feature.id)
    if entry is None:
        return None
    digest, pattern = entry
    if digest != signature_digest(feature):
        return None  # the feature changed since the table was written
    return compile_check(pattern.encode("ascii"))


def compile_check(pattern: bytes) -> Callable[[bytes], bool] | None:
    """A function of a text's bytes, false when RE2 finds no match of ``pattern`` anywhere in
    it; None without RE2, or when RE2 refuses the pattern.

    It calls the compiled pattern's own ``Match`` where the wrapper keeps one: one Python frame
    per check instead of the wrapper's three (~0.55 µs against ~0.8, five or six checks a note).
    Not ``re2.Set``, which would be one call into C: a set whose automaton runs out of memory
    answers "no match" (RE2 gives up and says so only to a caller that asks), where a pattern
    falls back to its slower engine, and a text written to exhaust it would pass unread.
    """
    found = engine()
    if found is None:
        return None
    re2, options = found
    try:
        compiled = re2.compile(pattern, options)
    except re2.error:
        return None
    own = getattr(compiled, "_regexp", None)
    anywhere = getattr(getattr(own, "Anchor", None), "UNANCHORED", None)
    if anywhere is None:  # a wrapper of another shape: its public search
        return lambda text: compiled.search(text) is not None
    match = own.Match

    def check(text: bytes) -> bool:
        return match(anywhere, text, 0, len(text))[0][0] >= 0

    return check


def coverage() -> tuple[bool, int, int]:
    """``(RE2 installed, features whose table entry is current, all features)``, read from the
    table without compiling anything (``memhost doctor`` reports it)."""
    installed = engine() is not None
    table = _table()
    current = sum(1 for f in features.FEATURES
                  if f.id in table and table[f.id][0] == signature_digest(f))
    return installed, current, len(features.FEATURES)
