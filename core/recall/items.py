"""What a recall store holds: kinds and states of items, their bodies, keys and labels.

A completed turn is stored as two items, the user's message and the reply (kind ``turn``, role
``user`` and ``assistant``), one after the other: each is found, weighed and shown on its own, so a
short precise message is not outranked by a long exchange that gathered words from two, and the
other side stays one step away (:meth:`memhost.recall.Backend.neighbours`). A note the builtin
memory committed is a ``fact``; a subagent's task and result one ``subtask``; a session's
transcript one ``session`` (searchable on purpose, never recalled into a turn: it repeats the
turns).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memhost.turns import flatten_content

#: Kinds of stored items.
TURN, FACT, SESSION, SUBTASK = "turn", "fact", "session", "subtask"
KINDS = (TURN, FACT, SESSION, SUBTASK)
#: What ``prefetch`` recalls by default: whole-session transcripts repeat the turns.
PREFETCH_KINDS = (FACT, TURN, SUBTASK)
#: Item states. Only ``active`` items are searchable; the others are kept, and marked.
ACTIVE, SUPERSEDED, RETIRED, FORGOTTEN = "active", "superseded", "retired", "forgotten"
STATES = (ACTIVE, SUPERSEDED, RETIRED, FORGOTTEN)
#: Roles of a turn's two items.
USER, ASSISTANT = "user", "assistant"

#: Between the parts of one item (a subtask's task and result, a transcript's messages). Labels
#: are added only when an item is shown, so the index never holds them.
PART_SEPARATOR = "\n\x1e\n"

#: How an item is labelled when shown: long in listings, short in a turn's recall.
LABELS = {USER: "User", ASSISTANT: "Assistant", FACT: "Note", SUBTASK: "Subtask",
          SESSION: "Session"}
SHORT_LABELS = {USER: "U", ASSISTANT: "A", FACT: "Note", SUBTASK: "Task", SESSION: "Session"}


@dataclass
class Hit:
    """One stored item found by a search (or listed)."""

    id: int
    kind: str
    body: str
    created_at: float  # Unix time
    session_id: str = ""
    matched: frozenset[str] = frozenset()
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    role: str = ""
    #: The item's terms as stored (:func:`memhost.recall.terms.index_text`), when the backend
    #: has them: scoring then needs no second look at the text.
    terms: str | None = None

    @property
    def label(self) -> str:
        return LABELS.get(self.role or self.kind, self.kind)

    @property
    def short_label(self) -> str:
        return SHORT_LABELS.get(self.role or self.kind, self.kind)

    @property
    def text(self) -> str:
        return display(self.kind, self.body)

    def as_dict(self) -> dict[str, Any]:
        data = {"id": self.id, "kind": self.kind, "date": date_text(self.created_at),
                "time": datetime.fromtimestamp(self.created_at, UTC).isoformat(
                    timespec="seconds"),
                "session_id": self.session_id, "score": round(self.score, 3),
                "text": self.text, **self.extra}
        if self.role:
            data["role"] = self.role
        return data


def display(kind: str, body: str) -> str:
    """An item's text as shown: a subtask as ``task → result``, a transcript one message a
    line."""
    parts = [p for p in body.split(PART_SEPARATOR) if p.strip()]
    if kind == SUBTASK and len(parts) == 2:
        return f"{parts[0]} → {parts[1]}"
    return "\n".join(parts)


def date_text(timestamp: float) -> str:
    """The local date of a Unix time, ``YYYY-MM-DD``."""
    return time.strftime("%Y-%m-%d", time.localtime(timestamp))


def one_line(text: str) -> str:
    """``text`` on one line: runs of whitespace become one space, line breaks ``⏎``."""
    lines = [" ".join(part.split()) for part in text.splitlines()]
    return " ⏎ ".join(line for line in lines if line)


def subtask_body(task: str, result: str) -> str:
    return f"{task.strip()}{PART_SEPARATOR}{result.strip()}"


def transcript(messages: Iterable[Any], *, max_chars: int) -> str:
    """The user and assistant text of ``messages`` (tool calls and results left out), the most
    recent part when it is longer than ``max_chars``."""
    parts = []
    for message in messages or ():
        if not isinstance(message, dict) or message.get("role") not in (USER, ASSISTANT):
            continue
        text = flatten_content(message.get("content")).strip()
        if text:
            parts.append(text)
    text = PART_SEPARATOR.join(parts)
    return text if len(text) <= max_chars else "…" + text[-(max_chars - 1):]


def user_text(messages: Iterable[Any], *, max_chars: int = 4000) -> str:
    """The user messages of a transcript, most recent last, within ``max_chars``."""
    parts = [flatten_content(m.get("content")) for m in messages or ()
             if isinstance(m, dict) and m.get("role") == USER]
    text = "\n".join(p for p in parts if p.strip())
    return text[-max_chars:]


def item_key(*parts: Any) -> str:
    """A stable key for a write, from what the write carries: a replay of the same write (the
    outbox retrying it, or a restart replaying it) yields the same key and so stores nothing."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str("" if part is None else part).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1f")
    return digest.hexdigest()


def turn_key(session_id: str, user: str, assistant: str, messages: Sequence[Any] | None) -> str:
    """The key of a synced turn: the session, the turn's text, and where it sits in the
    transcript (its length), so a turn said twice in one session is stored twice, and a replay
    of one turn once. A host that passes no transcript gets one item per distinct exchange."""
    return item_key("turn", session_id, len(messages or ()), user, assistant)


def turn_items(key: str, user: str, assistant: str, session_id: str) -> list[dict[str, Any]]:
    """The two items of a turn (user first), keyed ``<turn key>/user`` and ``/assistant``."""
    return [{"key": f"{key}/{role}", "kind": TURN, "role": role, "body": text.strip(),
             "session_id": session_id}
            for role, text in ((USER, user), (ASSISTANT, assistant))]


def newest_exchange(rows: Sequence[tuple[int, str]]) -> list[int]:
    """The ids of a session's newest exchange, from its newest turn items ``(id, role)``,
    newest first: the reply and the user message before it (or a lone message)."""
    ids = []
    for item_id, role in rows:
        ids.append(item_id)
        if role != ASSISTANT:
            break
    return ids


__all__ = ["ACTIVE", "ASSISTANT", "FACT", "FORGOTTEN", "Hit", "KINDS", "LABELS", "PART_SEPARATOR",
           "PREFETCH_KINDS", "RETIRED", "SESSION", "SHORT_LABELS", "STATES", "SUBTASK",
           "SUPERSEDED", "TURN", "USER", "date_text", "display", "item_key", "newest_exchange",
           "one_line",
           "subtask_body", "transcript", "turn_items", "turn_key", "user_text"]
