"""``sqlite``: local recall of past turns, notes and subtasks, in one SQLite file.

Hooks, in the order a session meets them:

- ``check_available``: FTS5 with the porter tokenizer must be compiled into this Python's SQLite.
- ``initialize``: open ``<home>/recall.db`` (or the configured file) and migrate it.
- ``prefetch``: the stored items most relevant to the user's message, best first, within
  ``max_chars``; never the current session's newest stored turn (it is still in the context);
  nothing when nothing reaches the relevance floor.
- ``sync_turn`` / ``session_end`` / ``on_subtask`` / ``on_builtin_write``: store what they are
  given (in ``primary`` sessions only); a locked database raises ``memhost.RetryableError``.
- ``pre_compress``: the stored facts most relevant to the conversation being compressed.
- Tools ``recall_search`` and ``recall_forget``.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from memhost import hookimpl, recall

from .config_schema import CONFIG_SCHEMA
from .store import RecallStore, fts5_problem

log = logging.getLogger("memhost.plugins.sqlite")

DEFAULTS = CONFIG_SCHEMA.defaults()
SESSION_MAX_CHARS = 50_000


def database_path(home: Path, config: dict[str, Any]) -> Path:
    """The configured database file: relative to ``home``, ``~`` expanded."""
    raw = config.get("path") or DEFAULTS["path"]
    path = Path(str(raw)).expanduser()
    return path if path.is_absolute() else Path(home) / path


class SqliteRecall:
    """The provider object memhost loads (``plugin.toml``: ``entry = "provider:SqliteRecall"``)."""

    def __init__(self) -> None:
        self.store: RecallStore | None = None
        self.config: dict[str, Any] = dict(DEFAULTS)
        self.session_id = ""
        self.writes = True
        # Session ids that continue one conversation (rotate for compress, branch, resume...):
        # the newest turn of any of them is still in the host's context.
        self._previous: dict[str, str] = {}
        self._home: Path | None = None
        self._lock = threading.Lock()

    # -- settings -----------------------------------------------------------------------------

    def _int(self, key: str, low: int, high: int) -> int:
        return recall.int_setting(self.config, key, int(DEFAULTS[key]), low=low, high=high)

    def _float(self, key: str, low: float, high: float) -> float:
        return recall.float_setting(self.config, key, float(DEFAULTS[key]), low=low, high=high)

    def open_store(self, home: Path, config: dict[str, Any]) -> RecallStore:
        """The store for ``config`` (also used by ``memhost recall stats|vacuum``)."""
        merged = {**DEFAULTS, **{k: v for k, v in (config or {}).items() if v is not None}}
        busy = recall.int_setting(merged, "busy_timeout_ms", 5000, low=100, high=60000)
        store = RecallStore(database_path(home, merged), busy_timeout_ms=busy)
        store.migrate()
        return store

    def maintenance(self, home: Path, config: dict[str, Any], action: str) -> dict[str, Any]:
        """``memhost recall stats|vacuum``: never creates a database that is not there."""
        merged = {**DEFAULTS, **{k: v for k, v in (config or {}).items() if v is not None}}
        path = database_path(home, merged)
        if not path.exists():
            raise FileNotFoundError(f"no recall database at {path} yet (it is created when the "
                                    "sqlite provider first runs)")
        store = self.open_store(home, merged)
        try:
            return store.vacuum() if action == "vacuum" else store.stats()
        finally:
            store.close()

    # -- lifecycle ----------------------------------------------------------------------------

    @hookimpl
    def check_available(self, config: dict[str, Any]) -> str | None:
        problem = fts5_problem()
        if problem:
            return problem
        path = (config or {}).get("path")
        if path is not None and not isinstance(path, str):
            return ("providers.sqlite.path must be a file path (text); fix it with "
                    "`memhost config set providers.sqlite.path recall.db`")
        return None

    @hookimpl
    def initialize(self, session_id: str, home: Path, config: dict[str, Any],
                   context: str) -> None:
        self.config = {**DEFAULTS, **{k: v for k, v in (config or {}).items() if v is not None}}
        self.session_id = session_id
        self.writes = context == "primary"
        self._home = Path(home)
        path = database_path(home, self.config)
        with self._lock:
            if self.store is not None and self.store.path == path:
                return
            if self.store is not None:
                self.store.close()
                self.store = None
        self._open()

    def _open(self) -> RecallStore:
        """The open store; opened (and migrated) now if it is not yet. A database locked by
        another process raises ``RetryableError``, so a write waits in the outbox for it."""
        with self._lock:
            if self.store is None:
                if self._home is None:
                    raise RuntimeError("the sqlite recall provider was not initialized")
                self.store = self.open_store(self._home, self.config)
            return self.store

    @hookimpl
    def rotate(self, old_session_id: str, new_session_id: str, reason: str) -> None:
        with self._lock:
            if reason != "new" and old_session_id and old_session_id != new_session_id:
                self._previous[new_session_id] = old_session_id
            self.session_id = new_session_id

    @hookimpl
    def shutdown(self) -> None:
        with self._lock:
            if self.store is not None:
                self.store.close()
                self.store = None
            self._home = None

    @hookimpl
    def prompt_fragment(self) -> str:
        return ("Past conversations, saved notes and subtask results are kept in a local recall "
                "store. Relevant items are recalled into <memory-context> automatically; use "
                "recall_search to look something up on purpose, and recall_forget to erase an "
                "item the user wants forgotten.")

    # -- recall -------------------------------------------------------------------------------

    def _lineage(self, session_id: str) -> list[str]:
        chain, seen = [], set()
        current: str | None = session_id
        while current and current not in seen and len(chain) < 32:
            chain.append(current)
            seen.add(current)
            current = self._previous.get(current)
        return chain

    @hookimpl
    def prefetch(self, query: str, session_id: str) -> str | None:
        store = self.store
        if store is None or not query.strip():
            return None
        echo = store.last_turn(self._lineage(session_id or self.session_id))
        max_items = self._int("max_items", 1, 50)
        filters = recall.Filters(recall.PREFETCH_KINDS, (echo,) if echo is not None else ())
        hits = store.search(query, filters=filters, limit=max_items,
                            min_score=self._float("min_score", 0, 50),
                            min_coverage=self._float("min_coverage", 0, 1))
        return recall.format_hits(hits, max_chars=self._int("max_chars", 200, 20000),
                                  max_items=max_items)

    @hookimpl
    def pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        store = self.store
        text = recall.user_text(messages)
        if store is None or not text.strip():
            return None
        # A whole conversation is a long query: the coverage floor would ask too much of it.
        hits = store.search(text, filters=recall.Filters((recall.FACT,)),
                            limit=self._int("max_items", 1, 50),
                            min_score=self._float("min_score", 0, 50), min_coverage=0.0)
        return recall.format_hits(hits, max_chars=self._int("max_chars", 200, 20000),
                                  max_items=self._int("max_items", 1, 50),
                                  header="Stored facts relevant to this conversation:")

    # -- writes -------------------------------------------------------------------------------

    def _writable(self) -> RecallStore | None:
        return self._open() if self.writes else None

    @hookimpl
    def sync_turn(self, user_content: str, assistant_content: str, session_id: str,
                  messages: list[dict[str, Any]]) -> None:
        store = self._writable()
        if store is None or not self.config.get("store_turns", True):
            return
        if not user_content.strip() or not assistant_content.strip():
            return
        store.add(key=recall.turn_key(session_id, user_content, assistant_content, messages),
                  kind=recall.TURN, body=recall.turn_body(user_content, assistant_content),
                  session_id=session_id)

    @hookimpl
    def session_end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        store = self._writable()
        if store is None or not self.config.get("store_sessions", True):
            return
        text = recall.transcript(messages, max_chars=SESSION_MAX_CHARS)
        if text:
            store.add(key=recall.item_key("session", session_id, text), kind=recall.SESSION,
                      body=text, session_id=session_id)

    @hookimpl
    def on_subtask(self, task: str, result: str, child_session_id: str, session_id: str) -> None:
        store = self._writable()
        if store is None or not (task.strip() or result.strip()):
            return
        store.add(key=recall.item_key("subtask", session_id, child_session_id, task, result),
                  kind=recall.SUBTASK, body=recall.subtask_body(task, result),
                  session_id=session_id)

    @hookimpl
    def on_builtin_write(self, action: str, target: str, content: str,
                         previous_content: str | None, session_id: str, origin: str) -> None:
        store = self._writable()
        if store is None:
            return
        store.note(action=action, target=target, content=content, previous=previous_content,
                   session_id=session_id, origin=origin)

    # -- tools --------------------------------------------------------------------------------

    @hookimpl
    def tool_schemas(self) -> list[dict[str, Any]]:
        return recall.tool_schemas("the local recall store")

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any]) -> str:
        store = self.store
        if store is None:
            return recall.error("The recall store is not open yet; try again in a moment.")
        try:
            if tool_name == recall.SEARCH_TOOL:
                args = recall.search_args(arguments)
                if recall.query_words(args.query):
                    hits = store.search(args.query, limit=args.limit, filters=recall.Filters(
                        since=args.since, until=args.until))
                else:
                    hits = store.recent(since=args.since, until=args.until, limit=args.limit)
                found = hits[: args.limit]
                return recall.answer(count=len(found), results=[h.as_dict() for h in found])
            if tool_name == recall.FORGET_TOOL:
                item_id = recall.forget_id(arguments)
                if not self.writes:
                    return recall.error("This session cannot change the recall store.")
                forgotten = store.forget(item_id)
                if forgotten is None:
                    return recall.error(f"No stored item has id {item_id} (or it was forgotten "
                                        "already); recall_search shows the ids.")
                return recall.answer(forgotten=forgotten)
        except recall.ToolArgumentError as exc:
            return recall.error(str(exc))
        return recall.error(f"Unknown tool {tool_name!r}.")
