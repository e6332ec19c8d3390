"""Recall items in and out of files: ``memhost recall export`` and ``memhost recall import``.

Export writes one JSON object per line (JSONL), oldest first::

    {"id": 12, "kind": "turn", "role": "user", "text": "…", "session_id": "…",
     "time": "2024-05-01T09:30:00+00:00", "created_at": 1714555800.0, "status": "active", …}

Import reads any of:

- that export (lines with ``kind`` and ``text``);
- turns, one a line: ``{"user": "…", "assistant": "…", "session_id": "…", "time": "…"}``;
- OpenAI-style chats: ``{"messages": [{"role": "user", "content": "…"}, …]}`` one a line, or one
  such object, or a list of them, or a bare list of messages;
- a ChatGPT data export's ``conversations.json`` (conversations with a ``mapping`` of messages,
  read along the branch that was shown last).

A chat becomes turns: each user message with the assistant messages that answer it (system and
tool messages are left out). Every imported item gets a key made of what it holds, so importing a
file twice stores it once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memhost import jsondoc
from memhost.recall.items import (
    ACTIVE,
    ASSISTANT,
    FORGOTTEN,
    KINDS,
    STATES,
    TURN,
    USER,
    item_key,
    turn_items,
)
from memhost.turns import flatten_content


class UnreadableFile(ValueError):
    """A file that cannot be imported; the message says where and why."""


def record(item_id: int, kind: str, role: str, body: str, session_id: str, target: str,
           origin: str, created_at: float, status: str) -> dict[str, Any]:
    """One exported line."""
    return {"id": item_id, "kind": kind, "role": role, "text": body, "session_id": session_id,
            "time": datetime.fromtimestamp(created_at, UTC).isoformat(timespec="seconds"),
            "created_at": created_at, "status": status, "target": target, "origin": origin}


def paged(page: Callable[[int], list[tuple[Any, ...]]]) -> Iterator[dict[str, Any]]:
    """Exported records from ``page(after_id)``, which returns the next rows (``record``'s
    arguments, id first, in id order) or none at the end."""
    last = 0
    while True:
        rows = page(last)
        if not rows:
            return
        for row in rows:
            yield record(*row)
        last = rows[-1][0]


@dataclass
class Conversation:
    """What one unit of a file (a line, a chat) yields: items ready for ``add_many``."""

    label: str
    items: list[dict[str, Any]] = field(default_factory=list)


def _moment(value: Any, where: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise UnreadableFile(f"{where}: time {value!r} is not an ISO date-time") from None
        return parsed.timestamp() if parsed.tzinfo else parsed.replace(tzinfo=UTC).timestamp()
    raise UnreadableFile(f"{where}: time must be an ISO date-time or a Unix time")


def _text(content: Any) -> str:
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        content = [p for p in content["parts"] if isinstance(p, str | dict)]
    return flatten_content(content).strip()


def chat_turns(messages: Iterable[dict[str, Any]], session_id: str,
               default_time: float | None) -> list[dict[str, Any]]:
    """The turns of a chat: each user message with the assistant messages after it."""
    made: list[dict[str, Any]] = []
    user: str | None = None
    replies: list[str] = []
    when: float | None = default_time

    def close() -> None:
        if user and replies:
            reply = "\n\n".join(replies)
            key = item_key("import", TURN, session_id, len(made), user, reply)
            for item in turn_items(key, user, reply, session_id):
                made.append({**item, "created_at": when})

    for message in messages:
        role = (message.get("author") or {}).get("role") if "author" in message \
            else message.get("role")
        text = _text(message.get("content"))
        if not text or role not in (USER, ASSISTANT):
            continue
        if role == USER:
            close()
            user, replies = text, []
            when = _moment(message.get("create_time") or message.get("time"), session_id) \
                or default_time
        elif user is not None:
            replies.append(text)
    close()
    return made


def _chatgpt_branch(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of a ChatGPT export's conversation, root to the node shown last."""
    mapping = conversation.get("mapping") or {}
    node = conversation.get("current_node")
    if node not in mapping:  # no pointer: the newest leaf
        leaves = [k for k, v in mapping.items() if not v.get("children")]
        node = leaves[-1] if leaves else None
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node in mapping and node not in seen:
        seen.add(node)
        message = mapping[node].get("message")
        if isinstance(message, dict):
            path.append(message)
        node = mapping[node].get("parent")
    return path[::-1]


def _from_object(data: Any, where: str, default_session: str) -> Conversation:
    if not isinstance(data, dict):
        if isinstance(data, list) and all(isinstance(m, dict) and "role" in m for m in data):
            return Conversation(where, chat_turns(data, default_session, None))
        raise UnreadableFile(f"{where}: expected a JSON object")
    session = str(data.get("session_id") or data.get("conversation_id") or data.get("id")
                  or default_session)
    when = _moment(data.get("time") or data.get("created_at") or data.get("create_time"), where)
    if "mapping" in data:
        title = data.get("title") or session
        return Conversation(str(title), chat_turns(_chatgpt_branch(data), session, when))
    if isinstance(data.get("messages"), list):
        return Conversation(where, chat_turns(data["messages"], session, when))
    if "user" in data or "assistant" in data:
        user, reply = _text(data.get("user")), _text(data.get("assistant"))
        if not user or not reply:
            raise UnreadableFile(f"{where}: a turn needs both 'user' and 'assistant' text")
        key = item_key("import", TURN, session, user, reply, when)
        return Conversation(where, [{**item, "created_at": when}
                                    for item in turn_items(key, user, reply, session)])
    if "kind" in data and "text" in data:
        kind, status = data["kind"], data.get("status", ACTIVE)
        if kind not in KINDS or status not in STATES or status == FORGOTTEN:
            raise UnreadableFile(f"{where}: kind {kind!r} / status {status!r} cannot be imported")
        text = str(data["text"])
        role = str(data.get("role") or "")
        key = item_key("import", kind, role, session, when, text)
        return Conversation(where, [{"key": key, "kind": kind, "role": role, "body": text,
                                     "session_id": session, "created_at": when,
                                     "target": str(data.get("target") or ""),
                                     "origin": str(data.get("origin") or "import"),
                                     "status": status}])
    raise UnreadableFile(f"{where}: not a turn, a chat or an exported item (see `memhost recall "
                       "import --help` for the formats)")


def read(path: Path) -> Iterator[Conversation]:
    """The conversations of a file (JSONL, or one JSON document); errors name the line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start]
        raise UnreadableFile(f"{path.name} is not UTF-8 text (the byte 0x{byte:02X} at offset "
                             f"{exc.start:,}); save it as UTF-8 and import it again") from None
    stripped = text.lstrip()
    whole: Any = None
    if stripped.startswith("["):
        try:
            whole = jsondoc.loads(stripped)
        except ValueError as exc:
            raise UnreadableFile(f"{path.name}: not JSON ({jsondoc.reason(exc)})") from None
    elif stripped.startswith("{") and "\n{" not in stripped.strip():
        try:
            whole = jsondoc.loads(stripped)
        except ValueError:
            whole = None
    if whole is not None:
        units = whole if isinstance(whole, list) and whole and not (
            isinstance(whole[0], dict) and "role" in whole[0]) else [whole]
        for number, unit in enumerate(units, 1):
            yield _from_object(unit, f"{path.name} item {number}", f"import:{path.stem}:{number}")
        return
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = jsondoc.loads(line)
        except ValueError as exc:
            raise UnreadableFile(f"{path.name} line {number}: not JSON "
                                 f"({jsondoc.reason(exc)})") from None
        yield _from_object(data, f"{path.name} line {number}", f"import:{path.stem}:{number}")


__all__ = ["Conversation", "UnreadableFile", "chat_turns", "paged", "read", "record"]
