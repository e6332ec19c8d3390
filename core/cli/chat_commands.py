"""``memhost chat``'s slash commands: ``/memory``, ``/pending``, ``/approve``, ``/reject``,
``/new``, ``/help`` and ``/quit``, as a part of :class:`~memhost.cli.chat.ChatHost`."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memhost.cli import _common

if TYPE_CHECKING:  # pragma: no cover
    from memhost.manager import MemoryManager

HELP = """\
/memory        show what is in memory now (MEMORY.md and USER.md)
/pending       list memory writes waiting for approval
/approve ID    apply a waiting write ('all' for every one)
/reject ID     discard a waiting write ('all' for every one)
/new           start a new conversation (memory changes show up in it)
/quit          end the session (Ctrl-D works too)"""


class ChatCommands:
    """The slash commands of one terminal conversation (mixed into ``ChatHost``, whose state
    they read and change)."""

    manager: MemoryManager
    session_id: str
    messages: list[dict[str, Any]]
    api_messages: list[dict[str, Any]]
    say: Callable[..., None]

    def _command(self, text: str) -> bool:
        name, _, rest = text.partition(" ")
        rest = rest.strip()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self.say(HELP)
        elif name == "/memory":
            self._show_memory()
        elif name == "/pending":
            self._show_pending()
        elif name in ("/approve", "/reject"):
            self._decide(name[1:], rest)
        elif name == "/new":
            self._new_session()
        else:
            self.say(f"unknown command {name}; /help lists them")
        return True

    def _show_memory(self) -> None:
        from memhost.builtin_providers.store import FILENAMES, TARGETS, Unreadable

        store = self.manager.store
        for target in TARGETS:
            if not store.enabled[target]:
                self.say(f"{FILENAMES[target]} ({target}): disabled")
                continue
            try:
                entries = store.entries(target)
            except Unreadable as exc:
                self.say(f"{FILENAMES[target]} ({target}): cannot be read ({exc})")
                continue
            self.say(f"{FILENAMES[target]} ({target}): {store.usage(target, entries)}, "
                     f"{_common.entries_phrase(len(entries))}")
            for index, entry in enumerate(entries, 1):
                self.say(f"  [{index}] {one_line(entry)}")
        self.say("(the model sees memory as it was when this session started; /new reloads it)")

    def _show_pending(self) -> None:
        from memhost.review.approval import PendingStore

        records = PendingStore(self.manager.home).list()
        if not records:
            self.say("No memory writes are waiting for approval.")
            return
        for record in records:
            self.say(f"{record.id} ({record.origin}) {record.summary.split(': ', 1)[0]}")
            for line in record.detail.splitlines():
                self.say(f"    {line}")
        self.say("/approve ID|all applies, /reject ID|all discards.")

    def _decide(self, verb: str, wanted: str) -> None:
        from memhost.review.approval import PendingStore, approve, reject

        if not wanted:
            self.say(f"usage: /{verb} ID|all")
            return
        pending = PendingStore(self.manager.home)
        ids = [r.id for r in pending.list()] if wanted == "all" else [wanted]
        if not ids:
            self.say("No memory writes are waiting for approval.")
        for pending_id in ids:
            # Through the manager's store, so an approved write is mirrored like any other.
            result = (approve(self.manager.store, pending_id, home=self.manager.home)
                      if verb == "approve" else reject(self.manager.home, pending_id))
            if result.get("success"):
                self.say(f"{verb}d {pending_id}: {result.get('message', '')}".rstrip())
            else:
                self.say(f"  ! {result.get('error')}")

    def _new_session(self) -> None:
        new_id = time.strftime("chat-%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        if self.manager.reviewer is not None:
            self.manager.reviewer.cancel()
        self.manager.rotate(new_id, "new", messages=self.messages)
        self.session_id = new_id
        self.messages, self.api_messages = [], []
        self.say(f"new session {new_id}; memory reloaded")


def one_line(text: str, width: int = 160) -> str:
    """``text`` on one line, cut to ``width``."""
    return _common.preview(text, width)
