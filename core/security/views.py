"""The views of a text the risk scorer reads (:mod:`memhost.security.scorer` says what each
one is for): the text as it reads, the words of other scripts as written, what hidden
characters spell, leetspeak, decoded runs, shifted, spaced and reversed text.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Callable

from memhost.once import once
from memhost.security import ciphers, confusables, leet, prefilter
from memhost.security.text import strip_invisible

BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
_B64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,6}(?![A-Za-z0-9+/=])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Fa-f])")
#: Base32: capitals and the digits 2 to 7, padded with up to six "=". Its runs are base64's too
#: (the same pass finds them), and both decodings are tried.
_B32 = re.compile(r"[A-Z2-7]{16,}=*")


def clean(text: str) -> str:
    """``text`` as it reads: invisible characters removed, NFKC, confusables folded."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", strip_invisible(text))
    return confusables.fold(text)


def readings(text: str) -> list[str]:
    """What the learned reading reads: the ``text`` view, and the ``native`` one when the two
    differ (a Russian note folded to Latin look-alikes is no longer Russian words)."""
    return readings_of(views(text))


def readings_of(found: list[tuple[str, str]]) -> list[str]:
    """:func:`readings` of the views already built."""
    return [body for view, body in found[:2] if view in ("text", "native")]


def views(text: str) -> list[tuple[str, str]]:
    """Each view of ``text`` as (name, text), the ``text`` view first and ``native`` second when
    there is one; a reading that changes nothing (no leetspeak, nothing encoded) is left out."""
    if text.isascii() and USE_GATE and not _may_hide(text):
        return [("text", text)]
    found = [("text", clean(text))]
    if not text.isascii():
        # Folding confusables turns a Russian or Greek word into Latin look-alikes: the words as
        # written are read too, as plain text (see :func:`assess`).
        native = unicodedata.normalize("NFKC", strip_invisible(text))
        if native != found[0][1]:
            found.append(("native", native))
        hidden = "".join(chr(ord(c) - 0xE0000) for c in text if 0xE0020 <= ord(c) <= 0xE007E)
        hidden += ciphers.selector_bytes(text) or ""
        if hidden.strip():
            found.append(("hidden", hidden))
    base = found[0][1]
    if leet.worth_reading(base):
        for number, table in enumerate(leet.TABLES):
            leet_text = leet.read(base, table)
            if leet_text != base:
                found.append((f"leet{number or ''}", leet_text))
    if _BIDI_OVERRIDE in text:
        found.append(("reversed", clean(_REVERSED.sub(lambda m: m.group(1)[::-1], text))))
    decoded = []
    for match in _B64.finditer(base):
        decoded.append(_decode(match.group(0), "b64"))
        if _B32.fullmatch(match.group(0)):
            decoded.append(_decode(match.group(0), "b32"))
    decoded += [_decode(m.group(0), "hex") for m in _HEX.finditer(base)]
    decoded.append(ciphers.percent_decoded(base))
    words = [d for d in decoded if d]
    if words:
        found.append(("decoded", "\n".join(words)))
    spaced = ciphers.unspace(base)
    if spaced is not None:
        found.append(("spaced", spaced))
    shifted = ciphers.unshift(base)
    if shifted is not None:
        found.append(("shifted", shifted))
    backwards = ciphers.backwards(base)
    if backwards is not None:
        found.append(("backwards", backwards))
    return found


_BIDI_OVERRIDE = "\u202e"
_REVERSED = re.compile("\u202e([^\u202c\n]*)")


def _decode(run: str, kind: str) -> str | None:
    try:
        if kind == "hex":
            raw = bytes.fromhex(run)
        elif kind == "b32":
            raw = base64.b32decode(run + "=" * (-len(run) % 8))
        else:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        text = raw.decode("utf-8")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    if len(text) < 8 or printable < 0.9 * len(text) or not re.search(r"[A-Za-z]{3}", text):
        return None
    return text


# -- the gate: most notes hold nothing to read another way ----------------------------------------

#: Set to False to build every view of every text (what the gate is checked against).
USE_GATE = True


@once
def _gate() -> Callable[[bytes], bool] | None:
    """What an ASCII text holds wherever a reading above could differ from the text, as an RE2
    check (None without RE2): each part a loosened form of that reading's own test (look-arounds
    dropped, so it matches more, never less); a bidi override or a hidden character is not
    ASCII. One pass over a note costs ~0.5 µs, where the readings' own tests cost ~7 µs
    together, and most notes hold none of it. Built at the first ASCII note (~2.4 ms), not at
    import."""
    mark = "[0134579@$!|]"
    pattern = "|".join((
        # Leetspeak, the shapes of leet.ANYWHERE: a mark between letters, a mark and two
        # letters, marks at both ends of letters, two letters and a 3 or 0, three letters and
        # two marks.
        rf"[a-z]{mark}+[a-z]", "[0134579@$][a-z][a-z]", rf"[0134579@$][a-z]+{mark}",
        "[a-z][a-z][03]", "[a-z][a-z][a-z][0134579][0134579]",
        r"~/|\$HOME/",  # a path under the home folder, read part by part
        "[a-z0-9+/]{16}",  # a run base64 is made of (a hex run is one too)
        "%",  # percent-encoded bytes
        r"\b[a-z][ *\-._][a-z][ *\-._][a-z]\b",  # letters one by one (ciphers._SPACED_HINT)
        "(?-i:" + "|".join(re.escape(sign) for sign in ciphers.BACKWARDS_SIGNS) + ")",
        # A word some Caesar shift of a common word spells (ciphers.unshift needs two).
        "(?:^|[^a-z])(?:" + "|".join(sorted(ciphers.SHIFTED_WORDS)) + ")(?:[^a-z]|$)",
    ))
    return prefilter.compile_check(("(?i)" + pattern).encode("ascii"))


def _may_hide(text: str) -> bool:
    """Whether ASCII ``text`` may read differently in some view (False: only as itself)."""
    gate = _gate()
    return gate is None or gate(text.encode("ascii"))  # no RE2: every text is read every way
