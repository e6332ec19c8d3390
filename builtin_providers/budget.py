"""The snapshot budget: a store never puts more than its character budget into the prompt.

A file edited by hand, or one whose limit was lowered, can hold more than its budget. Every
entry stays on disk (nothing is truncated or lost), but the frozen snapshot takes only the
entries that fit, in file order (an entry too long to fit is passed over, and shorter ones after
it may still fit), plus one line saying how many were withheld. That line is the only tolerance
over the budget. The same fact is a problem in ``MemoryManager.status()`` and ``memhost doctor``,
and ``memhost memory fix`` repairs the file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memhost.builtin_providers.entries import DELIMITER, joined_length

log = logging.getLogger(__name__)

FIX_COMMAND = "memhost memory fix"


@dataclass(frozen=True)
class Fit:
    """Which entries of one store go into the prompt."""

    shown: tuple[str, ...]
    withheld: tuple[str, ...]
    used: int  # characters of all the file's entries, joined
    limit: int

    @property
    def over(self) -> bool:
        return self.used > self.limit


def fit(entries: list[str], limit: int) -> Fit:
    """The entries that fit in ``limit`` characters (joined), in order; the rest are withheld."""
    used = joined_length(entries)
    if used <= limit:
        return Fit(tuple(entries), (), used, limit)
    shown: list[str] = []
    withheld: list[str] = []
    size = 0
    for entry in entries:
        grown = size + (len(DELIMITER) if shown else 0) + len(entry)
        if grown <= limit:
            shown.append(entry)
            size = grown
        else:
            withheld.append(entry)
    return Fit(tuple(shown), tuple(withheld), used, limit)


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def withheld_line(result: Fit, filename: str) -> str:
    """The line a model reads about the entries that did not fit (the prompt's, and the
    ``current_entries`` of an answer's)."""
    chars = sum(len(e) for e in result.withheld)
    more = "more " if result.shown else ""
    return (f"[{len(result.withheld)} {more}{_entries(len(result.withheld)).split(' ', 1)[1]} "
            f"of {filename} ({chars:,} chars) withheld: the file holds {result.used:,} chars, "
            f"over its {result.limit:,}-char budget, and new additions are refused until it is "
            f"back under it. The user can repair it with `{FIX_COMMAND}`.]")


def with_note(block: str, result: Fit, filename: str, title: str) -> str:
    """``block`` (the rendered entries that fit) with the line about the withheld ones."""
    if not result.withheld:
        return block
    note = withheld_line(result, filename)
    return f"{block}\n{note}" if block else f"{title}\n{note}"


def problem(result: Fit, filename: str) -> str:
    """What ``status()`` and ``doctor`` say about an over-budget store."""
    count = len(result.withheld)
    verb = "is" if count == 1 else "are"
    return (f"{filename} is over its budget ({result.used:,}/{result.limit:,} chars): "
            f"{_entries(count)} {verb} withheld from the prompt and new additions are refused; "
            f"run `{FIX_COMMAND}` to split and trim it (with a preview and a backup), or raise "
            "the limit")


def warn(result: Fit, path: object) -> None:
    """Log an over-budget store once per snapshot."""
    if result.over:
        log.warning("%s is over its budget (%s/%s chars): %s withheld from the prompt, and "
                    "additions are refused until it is back under the limit; `%s` repairs it",
                    path, f"{result.used:,}", f"{result.limit:,}", _entries(len(result.withheld)),
                    FIX_COMMAND)


def consequence(filename: str, entries: list[str], limit: int, *,
                which: str = "the new limit") -> str | None:
    """What a limit of ``limit`` does to a store holding ``entries``; ``None`` when they fit."""
    result = fit(entries, limit)
    if not result.over:
        return None
    return (f"{filename} holds {result.used:,} chars, over {which} of {limit:,}: from the "
            f"next session {_entries(len(result.withheld))} "
            f"{'is' if len(result.withheld) == 1 else 'are'} withheld from the prompt and new "
            f"additions are refused until it is back under the limit (`{FIX_COMMAND}` trims it, "
            "keeping what it removes in the archive)")
