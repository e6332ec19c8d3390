"""Text into search terms, the same way for every database.

Both bundled recall stores index the terms made here, not their own tokenizer's (SQLite's porter
and PostgreSQL's ``english`` configuration stem differently and drop different stop words), so an
item is found and weighed the same on either. A term is a word, lowercased, its accents folded,
stemmed with the Snowball English stemmer (``painted``, ``painting`` → ``paint``); English function
words are not terms. A query also drops the filler of a chat message ("can you remember what I
said about…"): :func:`query_words`.

The stemmer comes from ``snowballstemmer`` (the Snowball project's own generated code, the one
Sphinx uses; it runs on PyStemmer's C code when that is installed): no hand-written stemming.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from functools import lru_cache

import snowballstemmer

MAX_QUERY_WORDS = 32
MAX_WORD_LEN = 40

#: English function words: never terms, in an item or a query.
FUNCTION_WORDS = frozenset("""
a about above after again against all almost also am an and any anyone anything are aren as at
be because been before being below between both but by can cannot could couldn did didn do does
doesn doing don done down during each either else ever every few for from further had hadn has
hasn have haven having he her here hers herself him himself his how however i if in into is isn
it its itself just let lets me might more most must mustn my myself no nor not now of off on once
one only or other ought our ours ourselves out over own quite rather same shan she should shouldn
so some such than that the their theirs them themselves then there these they this those though
through to too under until up upon us very was wasn we were weren what when where whether which
while who whom whose why will with within without won would wouldn yet you your yours yourself
yourselves ll ve re
""".split())

#: The filler of a chat message: indexed in items (where "made" or "new" may matter), but never
#: searched for (where "can you remember what I said" says nothing about the subject).
FILLER = frozenset("""
ok okay yes yeah yep nope hi hello hey thanks thank please pls sure well oh ah hmm like just really
actually basically maybe perhaps probably anyway also still even much many lot lots bit thing
things stuff something somebody someone anything everything nothing kind sort way get gets got
getting go goes going gone make makes made making know knows knew think thinks thought want wants
wanted need needs needed tell tells told say says said ask asks asked mean means meant let remember
remembers remembered recall recalled again back here there today now right new good great nice
decide decided discuss discussed talk talked mention mentioned shall may
""".split())

#: Both lists together: what a query leaves out.
STOP_WORDS = FUNCTION_WORDS | FILLER

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_APOSTROPHE = re.compile(r"['’]")
_local = threading.local()


def fold(text: str) -> str:
    """Lowercase with accents removed (``Café`` → ``cafe``), compatibility forms unified."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str, stop: frozenset[str] = FUNCTION_WORDS) -> list[str]:
    """The words of ``text``, folded, in order, without ``stop`` words.

    A possessive or contraction keeps its stem (``user's`` → ``user``); one-letter words are
    dropped, digits are kept (``v2``, ``2024``); an over-long word (a hash, a URL's tail) is no
    word.
    """
    found = []
    for match in _WORD.finditer(fold(text)):
        word = _APOSTROPHE.split(match.group(), 1)[0]
        if len(word) < 2 and not word.isdigit():
            continue
        if word in stop or len(word) > MAX_WORD_LEN:
            continue
        found.append(word)
    return found


def _stemmer() -> snowballstemmer.stemmer:
    # Stemmer objects keep state between calls: one per thread.
    made = getattr(_local, "stemmer", None)
    if made is None:
        made = _local.stemmer = snowballstemmer.stemmer("english")
    return made


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The term of one folded word."""
    return _stemmer().stemWord(word) if not word.isdigit() else word


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order, repeats kept (what an item is indexed and weighed by)."""
    return [stem(word) for word in words(text)]


def term_counts(text: str) -> Counter[str]:
    return Counter(terms(text))


def index_text(text: str) -> str:
    """The terms of ``text``, in order, space-separated: what an item's ``terms`` column and
    full-text index hold (repeats kept, so a term's frequency and the item's length can be read
    back without the text)."""
    return " ".join(terms(text))


def query_words(text: str, *, limit: int = MAX_QUERY_WORDS) -> list[str]:
    """The search words of ``text``: folded, in order, without stop words, filler or repeats."""
    return list(dict.fromkeys(words(text, STOP_WORDS)))[:limit]


def query_terms(text: str) -> dict[str, list[str]]:
    """Each search word of ``text`` with the term it stands for."""
    return {word: [stem(word)] for word in query_words(text)}


__all__ = ["FILLER", "FUNCTION_WORDS", "STOP_WORDS", "fold", "index_text", "query_terms",
           "query_words", "stem", "term_counts", "terms", "words"]
