"""Repairing a memory file edited by hand: what ``memhost memory fix`` plans and applies.

:func:`plan` proposes a clean entry list for one store. Every entry the store did not write
itself (it has no sidecar metadata) and that holds several parts, a pasted blob, is split into
entries: at blank lines, at each list item (its marker removed) and at each heading (heading
lines title a group; they are no fact of their own, so they are dropped, and kept in the backup
and the archive like everything else). Repeats are dropped. The entries are then kept in file
order while they fit the budget (:func:`memhost.builtin_providers.budget.fit`); the rest are set
aside. :func:`apply` saves a backup of the file as it was, then replaces the entry list in one
store write, which archives every entry it replaces or sets aside: ``memhost memory restore``
brings any of them back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memhost.builtin_providers import backups, budget, entrymeta
from memhost.builtin_providers.archive import ArchivedEntry, new_id
from memhost.builtin_providers.entries import canonical_entry, joined_length, parse

_HEADING = re.compile(r"#{1,6}\s")
_ITEM = re.compile(r"([-*+•]|\d{1,3}[.)])[ \t]+(?=\S)")


@dataclass
class Plan:
    """What fixing one store would do."""

    target: str
    raw: str  # the file's text when the plan was made
    before: list[str]
    limit: int
    after: list[str] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)
    split: int = 0  # how many entries were cut into parts
    dropped_headings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.after != self.before

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "limit": self.limit, "changed": self.changed,
                "before": {"entries": len(self.before), "chars": joined_length(self.before)},
                "after": {"entries": len(self.after), "chars": joined_length(self.after)},
                "split_entries": self.split, "dropped_headings": self.dropped_headings,
                "kept": self.after, "set_aside": self.set_aside}


def split_entry(text: str) -> tuple[list[str], list[str]]:
    """``text`` cut into entries at blank lines, list items and headings; and the headings.

    An indented line continues the entry above it (a wrapped list item stays whole)."""
    parts: list[str] = []
    headings: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            parts.append("\n".join(current).strip())
            current.clear()

    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped == "§":
            close()
        elif _HEADING.match(stripped):
            close()
            headings.append(stripped)
        elif _ITEM.match(line):  # a list item in column 0 starts an entry
            close()
            current.append(_ITEM.sub("", stripped, count=1))
        else:
            current.append(line.rstrip() if current else stripped)
    close()
    return [p for p in parts if p], headings


def plan(store: Any, target: str) -> Plan:
    """What :func:`apply` would do to ``target`` now; nothing is written. Raises
    :class:`memhost.builtin_providers.store.Unreadable` for a file that cannot be read."""
    raw = store.read_raw(target)
    before = parse(raw)
    result = Plan(target, raw, before, store.limits[target])
    meta = entrymeta.load(store.path(target))
    pieces: list[str] = []
    for entry in before:
        if entrymeta.written_by_store(entrymeta.for_entry(meta, entry)):
            pieces.append(entry)  # the store wrote it as one entry: it stays one
            continue
        parts, headings = split_entry(entry)
        if len(parts) > 1 or headings:
            result.split += 1
        result.dropped_headings += headings
        pieces += [canonical_entry(part) for part in parts]
    fitted = budget.fit(list(dict.fromkeys(pieces)), result.limit)
    result.after, result.set_aside = list(fitted.shown), list(fitted.withheld)
    return result


def apply(store: Any, fix: Plan, *, origin: str = "cli") -> Any:
    """Back the file up, then write the plan's entries (an ``Outcome``). Refused, with nothing
    changed, when the file changed since the plan was made."""
    backup = backups.back_up(store.path(fix.target), fix.raw, store.clock)
    # A part set aside was never an entry of its own, so the write below does not archive it
    # (it archives the blob it came from). Archived here, first, so each part can be restored
    # on its own; should the write be refused, these records are only extra history.
    parts = [text for text in fix.set_aside if text not in fix.before]
    if parts:
        now = store.clock()
        store.archive.append([ArchivedEntry(new_id(), now, fix.target, "set-aside", text,
                                            "", origin) for text in parts])
    outcome = store.replace_all(fix.target, fix.before, fix.after, origin=origin)
    if outcome.ok:
        outcome.response["backup"] = str(backup)
        outcome.response["set_aside"] = len(fix.set_aside)
    return outcome
