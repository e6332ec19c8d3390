"""The core concepts of a planted instruction, in the languages of :mod:`memhost.security.lexicon_i18n`.

Each feature pairs two vocabularies, in either order (Japanese, Korean and Turkish put the verb
last: "以前の指示は無視して"), within one sentence: a dismissing verb and the agent's guidance;
a verb that moves data and a place outside, or data worth stealing; a word that hides and the
user. Persona changes and persistence markers are phrases of their own. Either part may come
from a different language than the other, as mixed text does. Weights sit a little under the
English features', since one language's word can be another's ordinary one; any second piece
of evidence (a URL to send to, "from now on") still takes an entry to refusal.
"""

from __future__ import annotations

from memhost.security.lexicon import CHANNEL, Feature
from memhost.security.lexicon_i18n import alternation, anchors

VOID = alternation("void", negatable=True)
GUIDANCE = alternation("guidance")
MOVE = alternation("move")
DATA = alternation("data")
PERSONA = alternation("persona")
HIDE = alternation("hide")
USER = alternation("user")
ALWAYS = alternation("always")
ASK = alternation("ask")
SECRET = alternation("secret")
AGAIN = alternation("again")
ENTRY = alternation("entry")
#: The rest of one sentence, bounded: no full stop of any script, no line break.
_SAME = r"[^\n.;!?。！？؟।]{0,60}?"


def _either(first: str, second: str) -> str:
    return rf"{first}{_SAME}{second}|{second}{_SAME}{first}"


F = Feature
FEATURES: tuple[Feature, ...] = (
    F("override_i18n", 5.0, _either(VOID, GUIDANCE), "override"),
    F("identity_i18n", 3.0, PERSONA, "identity"),
    F("concealment_i18n", 3.0, _either(HIDE, USER), "concealment"),
    F("persistence_i18n", 1.0, ALWAYS, "persistence"),
    F("exfil_channel_i18n", 3.0, rf"{MOVE}[^\n]{{0,120}}?{CHANNEL}|{CHANNEL}[^\n]{{0,40}}?{MOVE}",
      "exfil_channel"),
    F("exfil_data_i18n", 2.5, _either(MOVE, DATA), "exfil_data"),
    # Asking someone for a one-time code or a password, and this note written back: stage only,
    # since asking and restoring are everyday words in every language.
    F("phishing_i18n", 3.0, _either(ASK, SECRET), "phishing"),
    F("self_restore_i18n", 3.0, _either(AGAIN, rf"(?:{ENTRY}|MEMORY\.md|USER\.md)"), "self_replicate"),
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
}
