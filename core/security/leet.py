"""Leetspeak read as letters: "d1sr3g4rd y0ur ru13s" is "disregard your rules".

Digits and symbols inside words stand for the letters they resemble. Two readings are made,
each a view of the scorer (:mod:`memhost.security.scorer`): "1" as i everywhere, and "1" read per
word, as l where English puts an l ("ru13s", "c0ntr01") and as i elsewhere. A path under the home
folder is read part by part whatever its shape ("~/.55h/1d_r54"), since a credential file's name
is the point of writing it. :func:`worth_reading` says cheaply whether a text holds anything to
read: most texts with digits (a date, a version, an id) do not.
"""

from __future__ import annotations

import re

from memhost.security.lexicon import URL_START

_MARKS_AS = {"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i",
             "|": "l", "€": "e"}
#: "1" stands for i as often as for l; each reading is its own view: "1" as i everywhere, and
#: "1" read per word (:func:`_one_as`).
TABLES = (str.maketrans({**_MARKS_AS, "1": "i"}), None)
TOKEN = re.compile(r"[\w@$!|€]{3,}")
MARKS = re.compile(r"[0134579@$!|€]")


#: A leet mark with a letter on each side ("s3nd", "h4x0r"), one leading two letters ("4ll"), or
#: marks at both ends of letters ("4P1"), or a short word ending in 3 or 0 for e or o ("th3");
#: "m000", "ipv4", "sha256" and "python3" have none, and are left as they are.
_WORD = (r"[^\W\d_][0134579@$!|€]+[^\W\d_]|{start}[0134579@$][^\W\d_]{{2,}}"
         r"|{start}[0134579@$][^\W\d_]+[0134579@$!|€]{end}|{start}[^\W\d_]{{2,3}}[03]{end}"
         # Two marks ending a word ("rul35"); a version ("sha256") has a 2 or 6.
         r"|{start}[^\W\d_]{{3,}}[0134579]{{2}}{end}")
INSIDE = re.compile(_WORD.format(start="^", end="$"))
#: Whether a text holds a word :data:`INSIDE` finds: a text with digits but no such word (a
#: date, a version, an id: most notes with digits) skips rewriting every word twice only to find
#: nothing changed. Each of its shapes written from the first mark in it, what is around that
#: mark looked at from behind: a pattern that starts with a set of characters lets ``re`` skip
#: to them (~2 µs for a note, against ~12 for the shapes written from the word's start). A
#: word's edges are where :data:`TOKEN`'s characters stop. The last shape does not check that
#: the letters before its marks start the word, so the gate finds a few texts more than it
#: must (they are then rewritten for nothing); never fewer (``tests/test_scorer.py``).
_L, _M, _W = r"[^\W\d_]", r"[0134579@$!|€]", r"[\w@$!|€]"
ANYWHERE = re.compile(
    rf"{_M}(?:(?<={_L}{_M}){_M}*{_L}"  # a mark with a letter on each side
    rf"|(?<!{_W}.)(?<=[0134579@$]){_L}{{2,}}"  # a word led by a mark and two letters or more
    rf"|(?<!{_W}.)(?<=[0134579@$]){_L}+{_M}(?!{_W})"  # marks at both ends of letters
    rf"|(?<=[03])(?<={_L}{_L}.)(?<!{_W}{_L}{_L}.)(?!{_W})"  # two letters and a 3 or 0
    rf"|(?<=[03])(?<={_L}{_L}{_L}.)(?<!{_W}{_L}{_L}{_L}.)(?!{_W})"  # three letters and a 3 or 0
    rf"|(?<=[0134579])(?<={_L}{_L}{_L}.)[0134579](?!{_W}))")  # letters and two marks ending it


#: A path under the home folder with a mark in it ("~/.55h/1d_r54"): each of its parts is read
#: as letters, whatever its shape, since a credential file's name is the point of writing it.
_PATH = re.compile(r"(?:~|\$HOME)/[\w./-]*?[0134579@$]")
_PATH_PART = re.compile(r"(?<=/)\.?[\w@$.-]+")


#: A word, or a whole URL: an address is read as written. Its "@" ends a user name and its
#: digits are a port or an address ("postgres://user:pass@localhost:5432"); read as letters
#: they would turn a local address into a made-up host outside.
_TOKEN_OR_URL = re.compile(rf"({URL_START}\S+)|{TOKEN.pattern}", re.IGNORECASE)


def read(base: str, table: dict[int, str] | None) -> str:
    read_as: dict[str, str] = {}  # a text repeats its words: each is read once

    def word(match: re.Match[str]) -> str:
        url, token = match.group(1, 0)
        if url:
            return url
        found = read_as.get(token)
        if found is None:
            found = read_as[token] = unleet(token, table)
        return found

    leet = _TOKEN_OR_URL.sub(word, base)
    if "/" in base and _PATH.search(base):
        leet = _PATH_RUN.sub(
            lambda m: _PATH_PART.sub(lambda p: unleet(p.group(0), table, every=True), m.group(0)),
            leet)
    return leet


_PATH_RUN = re.compile(r"(?:~|\$HOME)/[\w@$./-]+")


def unleet(token: str, table: dict[int, str] | None, *, every: bool = False) -> str:
    """A word written with digits or symbols among its letters, read as letters."""
    if token.isalpha() or not (every or INSIDE.search(token)):  # most words: letters only
        return token
    if table is None:
        token = _ONE.sub(_one_as, token)
        table = TABLES[0]
    return token.translate(table)


#: A "1" with what stands around it in its word.
_ONE = re.compile(r"(?<=(.))?1(?=(.))?")


def _one_as(match: re.Match[str]) -> str:
    """"1" as l where English puts an l: before an e ("ru13s", "f1le"), doubled ("a11"), or
    ending a word after a vowel ("c0ntr01"); as i elsewhere ("d1sr3g4rd", "1nstruct10ns")."""
    before, after = match.group(1) or "", match.group(2) or ""
    if after in ("e", "E", "3", "1") or before == "1":
        return "l"
    if not after and before.lower() in ("a", "e", "o", "u", "0", "3", "4"):
        return "l"
    return "i"


def worth_reading(base: str) -> bool:
    """Whether either reading could change ``base`` (it may say yes for a few texts more)."""
    return MARKS.search(base) is not None and (ANYWHERE.search(base) is not None or (
        ("~/" in base or "$HOME/" in base) and _PATH.search(base) is not None))
