"""Confusable letters folded to the ASCII letters they imitate, from Unicode's confusables data.

The data is Unicode's ``confusables.txt`` (UTS #39) as shipped by the ``confusable-homoglyphs``
package; memhost keeps no list of its own. Loading it costs tens of milliseconds, so it is
loaded only when a text holds a non-ASCII letter, which plain notes do not.

Letters folded this way are a reading, not a verdict: :func:`mixed_script` says whether a text
put them inside Latin words, which is how they are used to hide a word.
"""

from __future__ import annotations

import json
import re

from memhost.once import once


@once
def _table() -> dict[int, str]:
    from importlib import resources  # ~9 ms to import, and only non-ASCII text needs the table

    data = json.loads(resources.files("confusable_homoglyphs").joinpath("confusables.json")
                      .read_text(encoding="utf-8"))
    table: dict[int, str] = {}
    for char, homoglyphs in data.items():
        if len(char) != 1 or char.isascii():
            continue
        for glyph in homoglyphs:
            target = glyph.get("c", "")
            if len(target) == 1 and target.isascii() and target.isalnum():
                table[ord(char)] = target
                break
    return table


def fold(text: str) -> str:
    """``text`` with every letter that imitates an ASCII letter or digit replaced by it."""
    if text.isascii():
        return text
    folded = text.translate(_table())
    # The data folds a Greek or Cyrillic capital I to "l"; in a word in capitals it reads as I.
    return _CAPS_L.sub(lambda m: m.group(0).replace("l", "I"), folded) if "l" in folded else folded


_CAPS_L = re.compile(r"\b(?=[A-Zl]*[A-Z]{2})[A-Z]*l[A-Zl]*\b")


#: A word that mixes Latin letters with Greek or Cyrillic ones ("ѕуѕtеm", "аррrοvаl"): no
#: language writes that; a Russian or Greek note writes its words in one script.
_MIXED_WORD = re.compile(r"(?=\w*[A-Za-z])(?=\w*[\u0370-\u03ff\u0400-\u04ff])\b\w+")


def mixed_script(text: str) -> bool:
    """Whether ``text`` (before folding) writes two words or more in mixed scripts: letters that
    imitate Latin ones, put where Latin ones belong to slip past a reader of words."""
    if text.isascii():
        return False
    found = _MIXED_WORD.finditer(text)
    return next(found, None) is not None and next(found, None) is not None


@once
def version() -> str:
    """Names the data: its size and modification time (finding the file imports nothing; the
    package's version would cost an import on every session start)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("confusable_homoglyphs")
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not folders:
        return "confusable-homoglyphs missing"
    info = os.stat(os.path.join(folders[0], "confusables.json"))
    return f"confusable-homoglyphs {info.st_size} {info.st_mtime_ns}"
