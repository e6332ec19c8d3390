"""The core concepts of a planted instruction, in the languages of :mod:`memhost.security.lexicon_i18n`.

Each feature pairs two vocabularies, in either order (Japanese, Korean and Turkish put the verb
last: "以前の指示は無視して"), within one sentence: a dismissing verb and the agent's guidance;
a verb that moves data and a place outside, or data worth stealing; a word that hides and the
user; a verb that switches off and a safeguard (a confirmation, a certificate check, a warning);
a download and running it, from a place outside. Persona changes and persistence markers are
phrases of their own. Either part may come from a different language than the other, as mixed
text does. Weights sit a little under the English features', since one language's word can be
another's ordinary one; any second piece of evidence (a URL to send to, "from now on") still
takes an entry to refusal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache

from memhost.security import lexicon, lexicon_i18n
from memhost.security.lexicon import CHANNEL, CHANNEL_ANCHORS, Built, Feature
from memhost.security.lexicon_i18n import alternation, anchors

#: The rest of one sentence, bounded: no full stop of any script, no line break.
_SAME = r"[^\n.;!?。！？؟।]{0,60}?"
#: The same, longer, through the address an order names between its verbs ("lataa skriptin
#: osoitteesta https://x.example/a.sh ja ajaa sen"): a full stop there is no sentence's end.
_SAME_PLACE = r"(?:[^\n.;!?。！？؟।]|\.(?=\S)){0,120}?"


@cache
def _words(concept: str) -> str:
    """Every language's stems of ``concept`` (built once, shared by the features that use it)."""
    # "do not forget the instructions" voids nothing, "do not disable the confirmation" defeats
    # no safeguard.
    return alternation(concept, negatable=concept in ("void", "disable"))


def _pair(first: str, second: str, gap: str = _SAME) -> str:
    return rf"{first}{gap}{second}|{second}{gap}{first}"


def _either(first: str, second: str, gap: str = _SAME) -> Built:
    """Concepts ``first`` and ``second`` in one sentence, in either order."""
    return _built(lambda: _pair(_words(first), _words(second), gap))


def _built(build: Callable[[], str]) -> Built:
    # Built from this module, the stems and the shared vocabularies (the channel, the negators).
    return Built(cache(build), (sys.modules[__name__], lexicon_i18n, *lexicon_i18n.WORD_MODULES,
                                lexicon))


F = Feature
FEATURES: tuple[Feature, ...] = (
    F("override_i18n", 5.0, _either("void", "guidance"), "override"),
    F("identity_i18n", 3.0, _built(lambda: _words("persona")), "identity"),
    F("concealment_i18n", 3.0, _either("hide", "user"), "concealment"),
    F("persistence_i18n", 1.0, _built(lambda: _words("always")), "persistence"),
    F("exfil_channel_i18n", 3.0,
      _built(lambda: rf"{_words('move')}[^\n]{{0,120}}?{CHANNEL}|{CHANNEL}[^\n]{{0,40}}?{_words('move')}"),
      "exfil_channel"),
    F("exfil_data_i18n", 2.5, _either("move", "data"), "exfil_data"),
    # Asking someone for a one-time code or a password, and this note written back: stage only,
    # since asking and restoring are everyday words in every language.
    F("phishing_i18n", 3.0, _either("ask", "secret"), "phishing"),
    F("self_restore_i18n", 3.0,
      _built(lambda: _pair(_words("again"), rf"(?:{_words('entry')}|MEMORY\.md|USER\.md)")),
      "self_replicate"),
    # A safeguard switched off or skipped, and a download run, from a place outside.
    F("tamper_i18n", 3.0, _either("disable", "safeguard"), "safety"),
    F("download_exec_i18n", 3.0, _either("fetch", "run", _SAME_PLACE), "download_execute",
      also=CHANNEL),
)

ANCHORS: dict[str, tuple[str, ...]] = {
    "override_i18n": anchors("void"),
    "identity_i18n": anchors("persona"),
    # The user is named in every match, in rarer words than the hiding ones ("cache", "dis").
    "concealment_i18n": anchors("user"),
    "persistence_i18n": anchors("always"),
    "exfil_channel_i18n": anchors("move"),
    "exfil_data_i18n": anchors("move"),
    "phishing_i18n": anchors("ask"),
    "self_restore_i18n": anchors("again"),
    # The safeguard is named in rarer words than the switching off ("apaga", "kör").
    "tamper_i18n": anchors("safeguard"),
    "download_exec_i18n": anchors("fetch"),
}
#: The second concept of each pair: most texts that hold a word of one language's first concept
#: ("ber", Norwegian for "asks", is in "number") hold none of the second's, and skip the feature.
ALSO_ANCHORS: dict[str, tuple[str, ...]] = {
    "override_i18n": anchors("guidance"),
    "concealment_i18n": anchors("hide"),
    "exfil_channel_i18n": CHANNEL_ANCHORS,
    "exfil_data_i18n": anchors("data"),
    "phishing_i18n": anchors("secret"),
    "self_restore_i18n": (*anchors("entry"), "memory.md", "user.md"),
    "tamper_i18n": anchors("disable"),
    "download_exec_i18n": anchors("run"),
}
