"""``postgres``: recall shared by every host that points at one PostgreSQL database.

The hooks are those of the ``sqlite`` provider (store every turn, note and subtask; recall the
most relevant items, never the session's own newest turn, nothing below the relevance floor;
``recall_search`` and ``recall_forget``), over a schema that many users share, each seeing only
the rows of their ``user_id``. psycopg is imported on first use, never at ``import memhost``.
"""

from __future__ import annotations

import getpass
import logging
import re
import threading
from pathlib import Path
from typing import Any

from memhost import hookimpl, recall

from .config_schema import CONFIG_SCHEMA

log = logging.getLogger("memhost.plugins.postgres")

DEFAULTS = CONFIG_SCHEMA.defaults()
SESSION_MAX_CHARS = 50_000
SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
DSN_KEY = "MEMHOST_POSTGRES_DSN"
PIP = "pip install 'memhost[postgres]' (or: pip install 'psycopg[binary]>=3.1' 'psycopg-pool>=3.2')"


def settings(config: dict[str, Any] | None) -> dict[str, Any]:
    """``config`` over the schema's defaults (``None`` values ignored)."""
    return {**DEFAULTS, **{k: v for k, v in (config or {}).items() if v is not None}}


def user_id(config: dict[str, Any]) -> str:
    value = str(config.get("user_id") or "").strip()
    if value:
        return value
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        return "default"


def prefetch_timeout(home: Path) -> float:
    """The manager's ``memory.prefetch_timeout`` for ``home`` (8 s when it cannot be read)."""
    try:
        from memhost.config import load_config

        return float(load_config(home).memory.prefetch_timeout)
    except Exception:
        return 8.0


class PostgresRecall:
    """The provider object memhost loads (``plugin.toml``: ``entry = "provider:PostgresRecall"``)."""

    def __init__(self) -> None:
        self.store: Any = None
        self.config: dict[str, Any] = dict(DEFAULTS)
        self.session_id = ""
        self.writes = True
        self.recall_timeout_ms = 2000
        self._previous: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- settings -----------------------------------------------------------------------------

    def _int(self, key: str, low: int, high: int) -> int:
        return recall.int_setting(self.config, key, int(DEFAULTS[key]), low=low, high=high)

    def _float(self, key: str, low: float, high: float) -> float:
        return recall.float_setting(self.config, key, float(DEFAULTS[key]), low=low, high=high)

    def open_store(self, home: Path, config: dict[str, Any]) -> Any:
        """A store for ``config`` (not yet connected; also used by ``memhost recall``)."""
        from .store import RecallStore

        merged = settings(config)
        problem = self.check_available(merged)
        if problem:
            from memhost.errors import ConfigError

            raise ConfigError(problem)
        statement = recall.int_setting(merged, "statement_timeout_ms", 5000, low=100,
                                       high=600000)
        # A recall must give up before the manager stops waiting for it.
        read = max(100, min(statement, int(prefetch_timeout(home) * 1000 * 0.5)))
        owner = user_id(merged)
        return RecallStore(
            str(merged["dsn"]), schema=str(merged["schema"]), user_id=owner,
            pool_size=recall.int_setting(merged, "pool_size", 4, low=1, high=64),
            connect_timeout=recall.float_setting(merged, "connect_timeout", 5.0, low=1,
                                                 high=120),
            statement_timeout_ms=statement, read_timeout_ms=read,
            application_name=f"memhost-recall {owner}")

    def maintenance(self, home: Path, config: dict[str, Any], action: str) -> dict[str, Any]:
        """``memhost recall stats|vacuum`` for this user's rows."""
        store = self.open_store(home, config)
        try:
            return store.vacuum() if action == "vacuum" else store.stats()
        finally:
            store.close()

    # -- lifecycle ----------------------------------------------------------------------------

    @hookimpl
    def check_available(self, config: dict[str, Any]) -> str | None:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError as exc:
            return f"needs psycopg 3 and psycopg-pool ({exc}); install with: {PIP}"
        merged = settings(config)
        dsn = merged.get("dsn")
        if not dsn or not str(dsn).strip():
            return (f"no database given: set the connection string with `memhost config set "
                    f"providers.postgres.dsn` (it is prompted for and kept in .env as {DSN_KEY})")
        try:
            from psycopg.conninfo import conninfo_to_dict

            conninfo_to_dict(str(dsn))
        except Exception as exc:
            return (f"the connection string ({DSN_KEY}) cannot be read: {exc}; use the form "
                    "postgresql://user:password@host:5432/dbname")
        schema = merged.get("schema")
        if not isinstance(schema, str) or not SCHEMA_NAME.match(schema):
            return (f"providers.postgres.schema = {schema!r} is not a plain schema name (a "
                    "letter or '_', then letters, digits or '_', at most 63)")
        return None

    @hookimpl
    def initialize(self, session_id: str, home: Path, config: dict[str, Any],
                   context: str) -> None:
        self.config = settings(config)
        self.session_id = session_id
        self.writes = context == "primary"
        with self._lock:
            if self.store is None:
                self.store = self.open_store(Path(home), self.config)
            self.recall_timeout_ms = self.store.read_timeout_ms
        # Connect and migrate now; if the server is down, writes wait in the outbox
        # (RetryableError) and recall is skipped until it is back.
        try:
            self.store.open()
        except Exception as exc:
            from memhost.errors import RetryableError

            if not isinstance(exc, RetryableError):
                raise
            log.warning("PostgreSQL recall store is not reachable yet (%s); writes wait in the "
                        "outbox until it is", exc)

    @hookimpl
    def rotate(self, old_session_id: str, new_session_id: str, reason: str) -> None:
        with self._lock:
            if reason != "new" and old_session_id and old_session_id != new_session_id:
                self._previous[new_session_id] = old_session_id
            self.session_id = new_session_id

    @hookimpl
    def shutdown(self) -> None:
        with self._lock:
            store, self.store = self.store, None
        if store is not None:
            store.close()

    @hookimpl
    def prompt_fragment(self) -> str:
        return ("Past conversations, saved notes and subtask results (from every machine this "
                "user works on) are kept in a shared recall store. Relevant items are recalled "
                "into <memory-context> automatically; use recall_search to look something up "
                "on purpose, and recall_forget to erase an item the user wants forgotten.")

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
        max_items = self._int("max_items", 1, 50)
        hits = store.prefetch(query, sessions=self._lineage(session_id or self.session_id),
                              filters=recall.Filters(recall.PREFETCH_KINDS), limit=max_items,
                              min_score=self._float("min_score", 0, 50),
                              min_coverage=self._float("min_coverage", 0, 1),
                              timeout_ms=self.recall_timeout_ms)
        return recall.format_hits(hits, max_chars=self._int("max_chars", 200, 20000),
                                  max_items=max_items)

    @hookimpl
    def pre_compress(self, session_id: str, messages: list[dict[str, Any]]) -> str | None:
        store = self.store
        text = recall.user_text(messages)
        if store is None or not text.strip():
            return None
        hits = store.search(text, filters=recall.Filters((recall.FACT,)),
                            limit=self._int("max_items", 1, 50),
                            min_score=self._float("min_score", 0, 50), min_coverage=0.0,
                            timeout_ms=self.recall_timeout_ms)
        return recall.format_hits(hits, max_chars=self._int("max_chars", 200, 20000),
                                  max_items=self._int("max_items", 1, 50),
                                  header="Stored facts relevant to this conversation:")

    # -- writes -------------------------------------------------------------------------------

    def _writable(self) -> Any:
        if not self.writes:
            return None
        if self.store is None:
            from memhost.errors import RetryableError

            raise RetryableError("the PostgreSQL recall store is not open (shut down?)")
        return self.store

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
        return recall.tool_schemas("the shared recall store")

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any]) -> str:
        from memhost.errors import RetryableError

        store = self.store
        if store is None:
            return recall.error("The recall store is not open; try again in a moment.")
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
        except RetryableError as exc:
            return recall.error(f"The recall database is not reachable right now ({exc}); "
                                "try again later.")
        return recall.error(f"Unknown tool {tool_name!r}.")
