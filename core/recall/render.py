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
    fits."""
    item_width = max(MIN_LINE, max_chars // 3)
    share = max(item_width, int(session_share * max_chars))
    used = len(header) + 1 if header else 0
    groups: dict[str, list[tuple[Hit, str]]] = {}
    spent: dict[str, int] = {}
    taken = 0
    for hit in hits:
        if taken >= max_items:
            break
        group = hit.session_id or f"#{hit.id}"
        opening = 0 if group in groups else len(_heading(hit)) + 1
        room = max_chars - used - opening - 1
        room = min(room, item_width, share - spent.get(group, 0))
        if room < MIN_LINE:
            continue
        line = _line(hit, terms, room)
        if len(line) > room:
            continue
        groups.setdefault(group, []).append((hit, line))
        spent[group] = spent.get(group, 0) + len(line) + 1
        used += opening + len(line) + 1
        taken += 1
    if not groups:
        return None
    lines = [header] if header else []
    for members in groups.values():
        lines.append(_heading(members[0][0]))
        lines.extend(line for _, line in sorted(members, key=lambda m: m[0].id))
    return "\n".join(lines)


def _heading(hit: Hit) -> str:
    return f"[{date_text(hit.created_at)}]"


__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MAX_ITEMS", "DEFAULT_SESSION_SHARE", "pack", "snippet"]
