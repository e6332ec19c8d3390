"""A turn's recall as text: as many distinct places as fit the budget, compactly.

Items are taken best first and shown grouped by the session they come from, the group's date
said once on its own line, each item on one line behind a short label (``U:`` the user, ``A:``
the assistant, ``Note:`` a saved note, ``Task:`` a subtask)::

    [2024-05-01]
    U: Which port does billing use?
    A: 8443, behind the internal proxy.
    [2024-04-18]
    Note: The staging database runs on host falcon-9.

Groups come in the order of their best item; inside a group, items keep the order they were
said in. No session may take more than ``session_share`` of the budget, so one long
conversation cannot crowd out the others. An item longer than a third of the budget is shown
by its most relevant part (:func:`snippet`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from memhost.recall.items import Hit, date_text, one_line
from memhost.recall.terms import stem, words

DEFAULT_MAX_CHARS = 1500
DEFAULT_MAX_ITEMS = 20
DEFAULT_SESSION_SHARE = 0.5
#: An item cut shorter than this is left out rather than shown as a stub.
MIN_LINE = 60
_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\s+⏎\s+")


def snippet(text: str, terms: Collection[str], width: int) -> str:
    """``text`` within ``width`` characters: whole when it fits, else the run of sentences
    that starts at the one holding the most of ``terms``, marked ``…`` where it was cut."""
    if len(text) <= width:
        return text
    if width < 2:
        return ""
    pieces = [p for p in _SENTENCE.split(text) if p]
    starts, offset = [], 0
    for piece in pieces:
        offset = text.find(piece, offset)
        starts.append(offset)
    best = max(range(len(pieces)), key=lambda i: (
        sum(stem(w) in terms for w in words(pieces[i])), -i)) if terms and pieces else 0
    # Start at that sentence, or earlier while everything from there on fits.
    first = best
    while first > 0 and len(text) - starts[first - 1] + 1 <= width:
        first -= 1
    start = starts[first] if pieces else 0
    lead = "…" if start > 0 else ""
    tail = text[start:]
    if len(lead) + len(tail) <= width:
        return lead + tail
    return lead + tail[: width - len(lead) - 1].rstrip() + "…"


def _line(hit: Hit, terms: Collection[str], width: int) -> str:
    label = f"{hit.short_label}: "
    return label + snippet(one_line(hit.text), terms, max(0, width - len(label)))


def pack(hits: Sequence[Hit], *, max_chars: int = DEFAULT_MAX_CHARS,
         max_items: int = DEFAULT_MAX_ITEMS, session_share: float = DEFAULT_SESSION_SHARE,
         terms: Collection[str] = (), header: str = "") -> str | None:
    """The recall text for ``hits`` (best first) within ``max_chars``; ``None`` when nothing
    fits. Items a session's share kept out get a second chance once every session has had its
    turn, so the budget is not left empty when one session is all there is."""
    packing = _Packing(max_chars, max_items, session_share, terms, header)
    held = [hit for hit in hits if not packing.place(hit, capped=True)]
    for hit in held:
        packing.place(hit, capped=False)
    return packing.text()


class _Packing:
    def __init__(self, max_chars: int, max_items: int, session_share: float,
                 terms: Collection[str], header: str) -> None:
        self.max_chars, self.max_items, self.terms, self.header = (
            max_chars, max_items, terms, header)
        self.item_width = max(MIN_LINE, max_chars // 3)
        self.share = max(self.item_width, int(session_share * max_chars))
        self.used = len(header) + 1 if header else 0
        self.groups: dict[str, list[tuple[Hit, str]]] = {}
        self.spent: dict[str, int] = {}
        self.taken = 0

    def place(self, hit: Hit, *, capped: bool) -> bool:
        """Add ``hit`` if it fits (within its session's share when ``capped``)."""
        if self.taken >= self.max_items:
            return True  # nothing more goes in: not worth a second pass
        group = hit.session_id or f"#{hit.id}"
        opening = 0 if group in self.groups else len(_heading(hit)) + 1
        room = min(self.max_chars - self.used - opening - 1, self.item_width)
        if capped:
            room = min(room, self.share - self.spent.get(group, 0))
        if room < MIN_LINE:
            return False
        line = _line(hit, self.terms, room)
        if len(line) > room:
            return False
        self.groups.setdefault(group, []).append((hit, line))
        self.spent[group] = self.spent.get(group, 0) + len(line) + 1
        self.used += opening + len(line) + 1
        self.taken += 1
        return True

    def text(self) -> str | None:
        if not self.groups:
            return None
        lines = [self.header] if self.header else []
        for members in self.groups.values():
            lines.append(_heading(members[0][0]))
            lines.extend(line for _, line in sorted(members, key=lambda m: m[0].id))
        return "\n".join(lines)


def _heading(hit: Hit) -> str:
    return f"[{date_text(hit.created_at)}]"


__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MAX_ITEMS", "DEFAULT_SESSION_SHARE", "pack", "snippet"]
