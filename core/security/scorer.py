"""The risk scorer: how much a text looks like an instruction planted for the agent.

:func:`assess` reads a text through several *views*, scores each with the evidence families of
:mod:`memhost.security.features`, and keeps the worst:

* ``text``: invisible and format characters removed (an attacker splits "ig\\u200bnore"),
  NFKC applied, and confusable letters folded to the Latin ones they imitate, from Unicode's
  confusables data (the ``confusable-homoglyphs`` package) rather than a hand-written list;
* ``hidden``: what Unicode tag characters (U+E0020–E007E) spell, an invisible copy of ASCII, and
  what a run of variation selectors spells, a byte each (text hung invisibly on an emoji);
* ``leet``: digits and symbols inside words read as the letters they stand for
  (:mod:`memhost.security.leet`);
* ``decoded``: base64, hex and percent-encoded runs, decoded and read again;
* ``shifted``: rot13 or another Caesar shift, shifted back (:mod:`memhost.security.ciphers`);
* ``spaced``: letters written one by one, joined; ``backwards``: a text that shows signs of being
  written backwards ("moc.", "read this backwards"), read from its end;
* ``native``: text in other scripts as written, confusables not folded (folding would turn a
  Russian word into Latin look-alikes); it counts as plain text.

A view other than ``text`` that scores adds :data:`~memhost.security.features.OBFUSCATION_WEIGHT`;
so does evidence in a text that puts look-alike letters inside Latin words (mixed scripts,
:func:`memhost.security.confusables.mixed_script`): the folding read it, the hiding is evidence.
:meth:`Assessment.outcome` turns the score into accept, stage or refuse with a :class:`Policy`
(``[injection]`` in config). The views are built in :mod:`memhost.security.views`. A feature runs
only on a text that holds one of its anchors (:mod:`memhost.security.anchors`) and, for ASCII
text, that RE2 does not rule out (:mod:`memhost.security.prefilter`).
"""

from __future__ import annotations

import hashlib
import re
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memhost.once import once
from memhost.security import anchors, ciphers, confusables, features, learned, leet, prefilter, unread
from memhost.security import redact
from memhost.security.lexicon import source_digest
from memhost.security.text import strip_invisible
from memhost.security.views import BIDI, readings_of, views

ACCEPT, STAGE, REFUSE = "accept", "stage", "refuse"
OUTCOMES = (ACCEPT, STAGE, REFUSE)
MAX_SCAN_CHARS = 65_536


@dataclass(frozen=True)
class Policy:
    """Where the score turns into staging and into refusal."""

    stage_at: float = 3.0
    refuse_at: float = 6.0

    def outcome(self, score: float) -> str:
        if score >= self.refuse_at:
            return REFUSE
        if score >= self.stage_at:
            return STAGE
        return ACCEPT

    def key(self) -> str:
        return f"{self.stage_at:g}/{self.refuse_at:g}"


@dataclass(frozen=True)
class Evidence:
    """One feature that fired, in one view, with the weight it contributed."""

    id: str
    view: str
    weight: float


#: The learned reading's evidence (:mod:`memhost.security.learned`): it can stage, never refuse.
RESEMBLES_ATTACKS = "resembles_known_attacks"


@dataclass(frozen=True)
class Assessment:
    score: float
    evidence: tuple[Evidence, ...]

    def outcome(self, policy: Policy) -> str:
        """One feature alone stages at most: a user's own notes mention one risky thing at a
        time (a `curl | sh`, a key file's path); a refusal needs two, or a secret. The learned
        reading counts towards staging only: it resembles, it does not read."""
        outcome = policy.outcome(self.score)
        if outcome != REFUSE:
            return outcome
        firm = [r for r in self.reasons if r != RESEMBLES_ATTACKS]
        firm_score = self.score - sum(e.weight for e in self.evidence if e.id == RESEMBLES_ATTACKS)
        if policy.outcome(firm_score) != REFUSE or (len(firm) < 2 and "secret_value" not in firm):
            return STAGE
        return outcome

    @property
    def reasons(self) -> tuple[str, ...]:
        """The ids that fired, strongest first, each once."""
        seen: dict[str, float] = {}
        for item in self.evidence:
            seen[item.id] = max(seen.get(item.id, 0.0), item.weight)
        return tuple(sorted(seen, key=lambda k: -seen[k]))

    def describe(self) -> str:
        return ", ".join(self.reasons) or "nothing"


# -- scoring --------------------------------------------------------------------------------------

_UNBUILT = object()


class _Compiled:
    """A feature with its anchors; its patterns are compiled the first time a text needs them.

    Compiling every feature costs a process about a tenth of a second; a note with no anchor of
    a feature never needs that feature's pattern, so a process that scores a few ordinary notes
    (one write, one session start) compiles only the features those notes reach.
    """

    __slots__ = ("feature", "group", "weight", "anchors", "also_anchors", "_rx", "_also",
                 "_check")

    def __init__(self, feature: features.Feature) -> None:
        self.feature = feature
        # Read once here: the loop over a note's features asks for them on every note.
        self.group, self.weight = feature.group, feature.weight
        found = features.ANCHORS.get(feature.id)
        self.anchors = frozenset(found) if found is not None else None
        also = features.ALSO_ANCHORS.get(feature.id)
        self.also_anchors = frozenset(also) if also is not None else None
        self._rx: re.Pattern[str] | None = None
        self._also: re.Pattern[str] | None = None
        self._check: Any = _UNBUILT

    def ascii_check(self) -> Callable[[bytes], bool] | None:
        """The prefilter's check (:mod:`memhost.security.prefilter`): false for an ASCII text
        the pattern cannot match, a few µs where running the pattern costs tens; None when the
        feature has none."""
        if self._check is _UNBUILT:
            self._check = prefilter.check_for(self.feature)
        return self._check

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:  # a race compiles twice, to the same pattern: harmless
            self._rx = self.feature.compile()
        return self._rx

    @property
    def also(self) -> re.Pattern[str] | None:
        if self._also is None and self.feature.also:
            self._also = self.feature.compile_also()
        return self._also


@once
def _compiled() -> tuple[_Compiled, ...]:
    version()  # named once, when the scorer is first built
    return tuple(_Compiled(f) for f in features.FEATURES)


#: Set to False to run every feature on every text (what the anchors are checked against).
USE_ANCHORS = True
#: Set to False to run every chosen feature's own pattern without asking RE2 first (what the
#: prefilter is checked and timed against; the verdicts are the same).
USE_PREFILTER = True


_QUOTED = re.compile(r"\"[^\"\n]{1,300}\"|“[^”\n]{1,300}”|«[^»\n]{1,300}»|„[^“\n]{1,300}“")


@once
def _by_anchor() -> tuple[tuple[int, ...], dict[str, tuple[int, ...]]]:
    """The features without anchors, and for each anchor literal the features it names."""
    every = _compiled()
    by_literal: dict[str, list[int]] = {}
    for number, compiled in enumerate(every):
        for literal in compiled.anchors or ():
            by_literal.setdefault(literal, []).append(number)
    always = tuple(n for n, c in enumerate(every) if c.anchors is None)
    return always, {lit: tuple(ns) for lit, ns in by_literal.items()}


#: A prohibition of moving something: "never paste", "don't commit", "must not share".
_FORBIDS = re.compile(r"\b(?:never|don't|dont|do\s+not|must\s+not|mustn't|should\s+not|shouldn't|not\s+to"
                      r"|avoid)\s+(?:\w+\s+)?(?:paste|print|share|post|send|commit|includ|put|upload|cat|show"
                      r"|expos|leak|log|echo|copy|push|attach|reveal|disclos|dump|list|output|writ|add"
                      r"|append|insert|embed|stor|keep|leav)\w*\b", re.IGNORECASE)


def _forbidden(text: str, start: int, end: int) -> bool:
    """Whether the clause holding a match forbids moving what it names, from before the match."""
    clause = max(text.rfind(mark, 0, start) for mark in ".;\n!?") + 1
    found = _FORBIDS.search(text, clause, end)
    return found is not None and found.start() <= start


def _chosen(text: str) -> tuple[_Compiled, ...]:
    """The features ``text`` can fire, in their order: those whose anchors it holds (and, for a
    feature of two parts, one of the second part's too): a few of ninety."""
    if not USE_ANCHORS:
        return _compiled()
    return _chosen_by(frozenset(anchors.present(text)))


@lru_cache(maxsize=1024)  # notes hold the same few anchors over and over
def _chosen_by(present: frozenset[str]) -> tuple[_Compiled, ...]:
    every = _compiled()
    always, by_literal = _by_anchor()
    chosen = set(always)
    for literal in present:
        chosen.update(by_literal.get(literal, ()))
    return tuple(every[i] for i in sorted(chosen)
                 if every[i].also_anchors is None or not every[i].also_anchors.isdisjoint(present))


def _score_view(text: str, view: str) -> dict[str, Evidence]:
    """The evidence in one view: per family, its strongest feature."""
    quoted = [m.span() for m in _QUOTED.finditer(text)] if '"' in text or not text.isascii() else []
    found: dict[str, Evidence] = {}
    ascii_text = text.encode("ascii") if text.isascii() and USE_PREFILTER else None
    for compiled in _chosen(text):
        held = found.get(compiled.group)
        if held is not None and held.weight >= compiled.weight:
            continue
        if ascii_text is not None:  # the check inlined: it runs five or six times a note
            check = compiled._check
            if check is _UNBUILT:
                check = compiled.ascii_check()
            if check is not None and not check(ascii_text):
                continue
        feature = compiled.feature
        best = 0.0
        for match in compiled.rx.finditer(text):
            also = compiled.also
            if also is not None and also.search(text) is None:
                break
            if feature.unless_forbidden and _forbidden(text, match.start(), match.end()):
                continue
            inside = feature.halved_in_quotes and any(
                a <= match.start() and match.end() <= b for a, b in quoted)
            best = max(best, feature.weight * (features.QUOTED_FACTOR if inside else 1.0))
            if best == feature.weight:
                break
        if best and (held is None or best > held.weight):
            found[feature.group] = Evidence(feature.id, view, best)
    return found


def assess(text: str, *, learned_reading: bool = True, held_secrets: bool = True) -> Assessment:
    """The risk of ``text`` (its first :data:`MAX_SCAN_CHARS` characters); ``learned_reading``
    adds :mod:`memhost.security.learned`'s evidence (left out for two entries read together: it
    was fitted to single notes, and a pair of ordinary notes is not one; and where only a
    refusal is asked about, which it never decides: :func:`refusal_reading`).

    ``held_secrets`` adds the evidence of a secret value this process holds (a configured
    secret's, :mod:`memhost.security.masking`). Unlike the rest it is not cached with the text:
    the values held change while a process runs, and a score kept from before a value became a
    secret would let that value through. A caller that keeps scores (the snapshot, the scores
    saved across processes) asks without it and checks the held values itself each time."""
    found = _assess(text, learned_reading)
    if (not held_secrets or not redact.known_values() or "secret_value" in found.reasons
            or not redact.holds_known_value(text[:MAX_SCAN_CHARS])):
        return found
    return Assessment(round(found.score + features.SECRET_WEIGHT, 2),
                      (*found.evidence, Evidence("secret_value", "text", features.SECRET_WEIGHT)))


@lru_cache(maxsize=8192)
def _assess(text: str, learned_reading: bool) -> Assessment:
    head = text[:MAX_SCAN_CHARS]
    best, evidence, read = _by_rules(head)
    model = learned.model() if learned_reading else None
    if model is not None and best < learned.WEIGHT and model.resembles_attack(
            *(read if read is not None else readings_of(views(head)))):
        # Asked only where the rules alone would not stage: it adds nothing to an entry they
        # already hold back, and its cost stays off those.
        evidence += (Evidence(RESEMBLES_ATTACKS, "text", learned.WEIGHT),)
        best += learned.WEIGHT
    return Assessment(round(best, 2), evidence)


def refusal_reading(text: str) -> Assessment:
    """What decides whether ``text`` is refused: the rules' evidence alone.

    :meth:`Assessment.outcome` refuses on firm evidence only, never on the learned reading's, so
    leaving that reading out changes no refusal (``tests/test_learned.py`` checks it on every
    corpus text); the store's own check, which asks only that, saves its cost. The rules' part
    is cached apart from the learned reading, so a text the write gate already assessed in full
    is not read by the rules again.
    """
    return assess(text, learned_reading=False)


def forget() -> None:
    """Forget every cached score (a test or a benchmark that changes how texts are read)."""
    _assess.cache_clear()
    _by_rules.cache_clear()


#: The readings the learned reading takes are kept with the rules' evidence for a note of up to
#: this many characters (a note's size); a longer text's are built again if asked for, so the
#: cache holds at most a few megabytes.
_KEPT_READINGS = 2048


@lru_cache(maxsize=2048)  # what it saves is the second reading of a text just assessed
def _by_rules(head: str) -> tuple[float, tuple[Evidence, ...], tuple[str, ...] | None]:
    """The rules' score of ``head`` (unrounded), their evidence, and the readings the learned
    reading takes (None for a long text)."""
    found_views = views(head)
    read = tuple(readings_of(found_views)) if len(head) <= _KEPT_READINGS else None
    plain = _score_view(found_views[0][1], "text")
    if len(found_views) > 1 and found_views[1][0] == "native":  # as plain as the folded text
        for group, found in _score_view(found_views.pop(1)[1], "native").items():
            if group not in plain or found.weight > plain[group].weight:
                plain[group] = found
    evidence = list(plain.values())
    best = sum(e.weight for e in evidence)
    if plain and confusables.mixed_script(head):
        # Look-alike letters inside Latin words hide the words from a reader of words: what
        # they spell is evidence, and so is the hiding.
        evidence.append(Evidence("obfuscated_confusables", "text", features.OBFUSCATION_WEIGHT))
        best += features.OBFUSCATION_WEIGHT
    if unread.directive_unread(head):
        # The agent and something outside, in words no feature reads: a person looks.
        evidence.append(Evidence("unread_language", "text", unread.WEIGHT))
        best += unread.WEIGHT
    for view, body in found_views[1:]:
        found = _score_view(body, view)
        # Only what the plain reading did not already show counts as hidden.
        new = [e for g, e in found.items() if g not in plain or e.weight > plain[g].weight]
        gain = sum(e.weight for e in new)
        if gain >= features.OBFUSCATION_WEIGHT:
            new.append(Evidence(f"obfuscated_{view.rstrip('0123456789')}", view,
                                features.OBFUSCATION_WEIGHT))
            evidence += new
            best = max(best, sum(e.weight for e in found.values()) + features.OBFUSCATION_WEIGHT)
    # A secret would sit in every prompt: it scores as its own evidence, on the write and at the
    # snapshot alike. What egress redaction's detector finds is read here, with the text; a
    # configured secret's value is read on every call instead (assess, held_secrets).
    if redact.holds_secret(head):
        evidence.append(Evidence("secret_value", "text", features.SECRET_WEIGHT))
        best += features.SECRET_WEIGHT
    if not head.isascii():
        extra = 0.0
        if any(ch in BIDI for ch in head):
            evidence.append(Evidence("bidi_control", "raw", features.BIDI_WEIGHT))
            extra += features.BIDI_WEIGHT
        if strip_invisible(head) != head:
            evidence.append(Evidence("invisible_characters", "raw", features.INVISIBLE_WEIGHT))
            extra += features.INVISIBLE_WEIGHT
        best += extra
    return best, tuple(evidence), read


def assess_together(first: str, second: str, alone: float) -> Assessment | None:
    """Two adjacent entries read as one text, when that says more than each alone.

    ``alone`` is the two entries' scores added. Only new evidence counts: the pair is reported
    when its score is higher, i.e. some feature matched across the boundary (an instruction
    split over two entries).
    """
    pair = assess(joined(first, second), learned_reading=False, held_secrets=False)
    return pair if pair.score > alone else None


def joined(first: str, second: str) -> str:
    """Two adjacent entries as :func:`assess_together` reads them: with a space, not a line
    break, between them, so they read as one sentence, as an attacker splitting one meant."""
    return first + " " + second


@once
def version() -> str:
    """A name for what :func:`assess` finds; changes with any feature, weight or table."""
    parts = ["score-3", str(MAX_SCAN_CHARS), ciphers.VERSION, unicodedata.unidata_version,
             f"{sys.version_info[0]}.{sys.version_info[1]}", confusables.version(),
             repr(features.OBFUSCATION_WEIGHT), repr(features.INVISIBLE_WEIGHT),
             repr(features.BIDI_WEIGHT), repr(features.QUOTED_FACTOR), repr(features.SECRET_WEIGHT)]
    # The leetspeak reading, the unread-language check and the learned reading's features and
    # gates are rules written as code, not tables: their source names them, so a change to any
    # is a new version (the learned reading's table is named by its digest).
    parts += [source_digest(module) for module in (leet, unread, learned)]
    parts.append(redact.version())
    parts.append(f"learned {learned.digest()}")
    parts += [f"{fid}\t{','.join(lits)}" for fid, lits in sorted(features.ANCHORS.items())]
    parts += [f"{fid}\talso\t{','.join(lits)}" for fid, lits in sorted(features.ALSO_ANCHORS.items())]
    parts += [f.signature for f in features.FEATURES]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:24]
