"""The secret engine's keywords: the words betterleaks looks for before it runs any rule.

betterleaks runs a rule on a text only when the lower-cased text holds one of that rule's
keywords, and every rule of its built-in set has some (but one that reads file names, never
text). A rule marked ``skipReport`` (a part of a rule of two parts, such as the username beside
a password) reports nothing unless the other rule found something first, so only the keywords of
rules that report count. A text holding none of them gets no finding from it, so building its
rule set (~0.1 s of CPU, once in each process) to scan such a text is wasted, and most lines a
command prints (a path, a setting's name, a count) are such texts. The keywords are read from
the rule set the installed library embeds and shipped beside this module as
``engine_keywords.json``, with the library's version:

    python -m memhost.security.engine_keywords          # write engine_keywords.json again
    python -m memhost.security.engine_keywords --check  # exit 1 when it is stale

A library of another version is not trusted to look for the same words: :func:`for_engine`
then gives ``None``, and the detector hands the engine every text it did before the table
existed (:mod:`memhost.security.detector`). ``tests/test_secret_engine_gate.py`` fails while
the shipped table is not the installed library's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("engine_keywords.json")
#: The first line of the rule set the library embeds (its default configuration, as TOML).
_CONFIG_START = b'title = "betterleaks config"'


class StaleTable(Exception):
    """The installed library's rule set cannot be read, or cannot be gated by keywords."""


def library() -> Path:
    """The installed engine's shared library (where betterleaks itself looks for it)."""
    from betterleaks import _lib

    return Path(_lib._find_library())


def extract(path: Path) -> list[str]:
    """Every keyword of every rule of the rule set embedded in the library at ``path``,
    lower-cased (as the engine compares them), sorted."""
    import tomllib  # here: a process that only reads the shipped table never needs it

    data = path.read_bytes()
    start = data.find(_CONFIG_START)
    if start < 0:
        raise StaleTable(f"{path} holds no embedded rule set (looked for {_CONFIG_START!r})")
    end = data.find(b"\x00", start)
    try:
        rules = tomllib.loads(data[start:end].decode("utf-8"))["rules"]
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise StaleTable(f"{path}: its embedded rule set does not read as TOML ({exc})") from None
    # A rule without keywords is run on every text; then no text could skip the engine.
    unguarded = sorted(rule.get("id", "?") for rule in rules
                       if not rule.get("keywords") and rule.get("regex"))
    if unguarded:
        raise StaleTable(f"rules read every text, whatever words it holds: {', '.join(unguarded)}")
    # A rule marked skipReport reports nothing on its own: the engine runs it only as a part
    # of another rule's finding (a username beside the password that rule found), and that
    # rule's own keywords are in the table. "user" or "client" alone opens nothing.
    return sorted({word.lower() for rule in rules if not rule.get("skipReport")
                   for word in rule.get("keywords", ())})


def for_engine(version: str) -> frozenset[str] | None:
    """The shipped keywords when they were read from an engine of ``version``; else ``None``."""
    try:
        table = json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if table.get("engine") != version:
        return None
    return frozenset(table.get("keywords", ()))


def _current() -> dict[str, Any]:
    from memhost.security.detector import engine_version

    return {"engine": engine_version(), "keywords": extract(library())}


def main(argv: list[str] | None = None) -> int:
    from memhost.security.shipped import write_or_check

    try:
        current = _current()
    except StaleTable as exc:
        print(f"cannot read the engine's keywords: {exc}", file=sys.stderr)
        return 1
    return write_or_check(TABLE, json.dumps(current, indent=0) + "\n", argv,
                          prog="python -m memhost.security.engine_keywords",
                          description=__doc__.split("\n\n")[0],
                          summary=f"{len(current['keywords'])} keywords, "
                                  f"engine {current['engine']}")


if __name__ == "__main__":
    raise SystemExit(main())
