"""``sqlite``: local recall of past turns, notes and subtasks, in one SQLite file.

The hooks are :class:`memhost.recall.RecallProvider`'s; this file says how the store is
opened. In the order a session meets them:

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
from pathlib import Path
from typing import Any

from memhost import hookimpl, recall
from memhost.recall import RecallProvider

from .config_schema import CONFIG_SCHEMA
from .store import RecallStore, fts5_problem

log = logging.getLogger("memhost.plugins.sqlite")

DEFAULTS = CONFIG_SCHEMA.defaults()


def database_path(home: Path, config: dict[str, Any]) -> Path:
    """The configured database file: relative to ``home``, ``~`` expanded."""
    raw = config.get("path") or DEFAULTS["path"]
    path = Path(str(raw)).expanduser()
    return path if path.is_absolute() else Path(home) / path


class SqliteRecall(RecallProvider):
    """The provider object memhost loads (``plugin.toml``: ``entry = "provider:SqliteRecall"``)."""

    defaults = DEFAULTS
    store_label = "the local recall store"
    not_open = "The recall store is not open yet; try again in a moment."
    store: RecallStore | None

    def open_store(self, home: Path, config: dict[str, Any]) -> RecallStore:
        """The store for ``config`` (also used by ``memhost recall stats|vacuum``)."""
        merged = self.settings(config)
        busy = recall.int_setting(merged, "busy_timeout_ms", 5000, low=100, high=60000)
        store = RecallStore(database_path(home, merged), busy_timeout_ms=busy)
        store.migrate()
        return store

    def store_exists(self, home: Path, config: dict[str, Any]) -> bool:
        return database_path(home, self.settings(config)).exists()

    def maintenance(self, home: Path, config: dict[str, Any], action: str) -> dict[str, Any]:
        """``memhost recall stats|vacuum``: never creates a database that is not there."""
        path = database_path(home, self.settings(config))
        if not path.exists():
            raise FileNotFoundError(f"no recall database at {path} yet (it is created when the "
                                    "sqlite provider first runs)")
        return super().maintenance(home, config, action)

    @hookimpl
    def scratch_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """``memhost providers check``: the default file, which is under the check's scratch
        home, whatever path the user configured."""
        return {**config, "path": DEFAULTS["path"]}

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

    def start(self, home: Path) -> None:
        """Open the configured file, unless it is the one already open."""
        path = database_path(home, self.config)
        with self._lock:
            if self.store is not None and self.store.path == path:
                return
            if self.store is not None:
                self.store.close()
                self.store = None
        self.store_for_writing()

    def store_for_writing(self) -> RecallStore:
        """The open store; opened (and migrated) now if it is not yet. A database locked by
        another process raises ``RetryableError``, so a write waits in the outbox for it."""
        with self._lock:
            if self.store is None:
                if self.home is None:
                    raise RuntimeError("the sqlite recall provider was not initialized")
                self.store = self.open_store(self.home, self.config)
            return self.store

    @hookimpl
    def prompt_fragment(self) -> str:
        return ("Past conversations, saved notes and subtask results are kept in a local recall "
                "store. Relevant items are recalled into <memory-context> automatically; use "
                "recall_search to look something up on purpose, and recall_forget to erase an "
                "item the user wants forgotten.")
