"""A note about the agent and something outside, in a language the scorer does not read.

The scorer reads the core concepts in over sixty languages
(:mod:`memhost.security.lexicon_i18n`); an order planted in one more (Amharic, Yoruba, Khmer)
passes every word list. Two things stay readable in any language, because they are written the
same everywhere or nearly so: the agent's name for itself (assistant, agent, bot and their
cognates, "AI"), and what an order moves or points at
(an address, a key file's path, a secret's name: "token", "API key", "SSH"). A note that holds
both in one clause, written in words that are not English (few English function words, and letters outside
ASCII: another script, or Latin letters with marks; or, in plain letters, almost none of
English's function words: Afrikaans, Swahili, Indonesian), is a note about what the agent does with
something outside, in words no feature could read; so is one, in letters with marks or another
script, that names a secret and a place outside together, the agent unnamed ("every key in the
.env goes to backup@…"): :func:`directive_unread` says so, and the
scorer weighs it :data:`WEIGHT`, enough to stage for a person and never, alone, to refuse.

A note in a language the scorer does read gets the same weight when it holds both parts; its
own features add to it as usual.
"""

from __future__ import annotations

import re

from memhost.security.lexicon import CHANNEL, CREDENTIAL_PATH, HOST, LABEL, NAME_START

WEIGHT = 3.0

#: The agent named by itself in many languages: word starts for languages with spaces, anywhere
#: for those without (Chinese, Japanese, Thai) or that glue prefixes on (Hebrew, Arabic).
_AGENT = re.compile(
    r"(?<!\w)(?:assist\w*|asist\w*|asyst\w*|asszisztens\w*|agent\w*|avustaja\w*|pomocn[ií]k\w*"
    r"|chatbot\w*|bot(?:u|a|en|ten|ot|ul|s)?\b|ai\b|ki\b|ia\b|llm\b|gpt\w*|msaidizi|katulong"
    r"|ассистент\w*|асистент\w*|помощник\w*|помічник\w*|агент\w*|бот\w*|ии\b|ші\b"
    r"|βοηθ\w*|πράκτορα\w*|सहायक|সহকারী)"
    r"|עוזר|סוכן|בוט|مساعد|دستیار|عامل|ربات|ผู้ช่วย|บอท|助手|助理|智能体|机器人|アシスタント"
    r"|エージェント|ボット|어시스턴트|에이전트|비서",
    re.IGNORECASE)
#: A place outside, named the way every language names it.
_PLACE = re.compile(
    # A host name with a path ("relay.example/beacon") is a place whatever its suffix. Its labels
    # are bounded as DNS bounds them, and it starts where a name does, as HOST does (see there).
    rf"{CHANNEL}|{HOST}|{NAME_START}{LABEL}(?:\.{LABEL}){{1,126}}/[\w-]|\bwebhooks?\b",
    re.IGNORECASE)
#: A secret, named the way every language names it.
_SECRET = re.compile(
    rf"{CREDENTIAL_PATH}|\b(?:tokens?|api[\s_-]?keys?|api|ssh|aws|gpg|passwords?|credentials?"
    r"|cookies?|2fa|otp)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+")
_ASCII_WORD = re.compile("[a-z]+")
#: Where a clause ends: a full stop of any script before a space or the end, a semicolon, a line.
_CLAUSES = re.compile(r"[.。!?！？؟।](?=\s|$)|[;\n]")
#: Words that make up a third of any English sentence.
_ENGLISH = frozenset(
    "the a an and or to of in on for with is are was were be it this that at by from as not but if "
    "when all any every you your its has have should must will can into after before so than then "
    "their they he she his her we our my me do does".split())


def directive_unread(text: str) -> bool:
    """Whether ``text`` names the agent and something outside in words that are not English."""
    marked = not text.isascii()
    if not marked:
        # Plain letters: English, or a language written without marks (Afrikaans, Indonesian,
        # Swahili): told apart by English's function words, of which the others hold almost none.
        # The words of lowered ASCII text are its runs of a-z (a class ``re`` tests in half the
        # time of the general one).
        words = _ASCII_WORD.findall(text.lower())
        if len(words) < 8 or sum(map(_ENGLISH.__contains__, words)) > 0.05 * len(words):
            return False
    else:
        words = _WORD.findall(text)
        english = sum(w.lower() in _ENGLISH for w in words)
        if (len(words) < 4 or sum(not w.isascii() for w in words) < 2
                or english > 0.15 * len(words)):
            return False
    # In one clause: "the assistant answers in Czech; the docs are at https://…" is two notes.
    # The agent with a place or a secret; or, without the agent named, a secret and a place
    # ("every key in the .env goes to backup@…"): what is moved, and where to. Not in plain
    # letters, where a command line or a config note holds both and few English words.
    # The agent is looked for first, then the secret, then the place: each search is made only
    # when the answer still depends on it, cheapest first (on 64 KB of "x-y-z." the place's
    # patterns take ~50 ms, the agent's ~10).
    for clause in _CLAUSES.split(text):
        if _AGENT.search(clause):
            if _SECRET.search(clause) or _PLACE.search(clause):
                return True
        elif marked and _SECRET.search(clause) and _PLACE.search(clause):
            return True
    return False
