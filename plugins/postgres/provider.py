"""``postgres``: recall shared by every host that points at one PostgreSQL database.

The hooks are :class:`memhost.recall.RecallProvider`'s, as in the ``sqlite`` provider
(store every turn, note and subtask; recall the most relevant items, never the session's own
newest turn, nothing below the relevance floor; ``recall_search`` and ``recall_forget``), over a
schema that many users share, each seeing only the rows of their ``user_id``. This file says how
the store is opened. psycopg is imported on first use, never at ``import memhost``.
"""

from __future__ import annotations

import getpass
import logging
import re
import secrets
from pathlib import Path
from typing import Any

from memhost import hookimpl, recall
from memhost.errors import ConfigError, RetryableError
from memhost.recall import RecallProvider

from .config_schema import CONFIG_SCHEMA

log = logging.getLogger("memhost.plugins.postgres")

DEFAULTS = CONFIG_SCHEMA.defaults()
SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
DSN_KEY = "MEMHOST_POSTGRES_DSN"
PIP = "pip install 'memhost[postgres]' (or: pip install 'psycopg[binary]>=3.1' 'psycopg-pool>=3.2')"


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


class PostgresRecall(RecallProvider):
    """The provider object memhost loads (``plugin.toml``: ``entry = "provider:PostgresRecall"``)."""

    defaults = DEFAULTS
    store_label = "the shared recall store"
    recall_timeout_ms = 2000
    #: The schema a ``memhost providers check`` made, dropped at shutdown.
    scratch_schema: str | None = None

    def open_store(self, home: Path, config: dict[str, Any]) -> Any:
        """A store for ``config`` (not yet connected; also used by ``memhost recall``)."""
        from .store import RecallStore

        merged = self.settings(config)
        problem = self.check_available(merged)
        if problem:
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

    @hookimpl
    def check_available(self, config: dict[str, Any]) -> str | None:
        try:
            import psycopg  # noqa: F401
            import psycopg_pool  # noqa: F401
        except ImportError as exc:
            return f"needs psycopg 3 and psycopg-pool ({exc}); install with: {PIP}"
        merged = self.settings(config)
        dsn = merged.get("dsn")
        if not dsn or not str(dsn).strip():
            return (f"no database given: set the connection string with `memhost config set "
                    f"providers.postgres.dsn` (it is prompted for and kept in .env as {DSN_KEY})")
        try:
            from psycopg.conninfo import conninfo_to_dict

            conninfo_to_dict(str(dsn))
        except Exception:
            # The driver's message quotes the string, password and all: it is not repeated.
            return (f"the connection string ({DSN_KEY}) cannot be read: it is neither a "
                    "postgresql:// URL nor key=value pairs; use the form "
                    "postgresql://user:password@host:5432/dbname")
        schema = merged.get("schema")
        if not isinstance(schema, str) or not SCHEMA_NAME.match(schema):
            return (f"providers.postgres.schema = {schema!r} is not a plain schema name (a "
                    "letter or '_', then letters, digits or '_', at most 63)")
        return None

    def start(self, home: Path) -> None:
        """Connect and migrate now. If the server cannot be reached, ``initialize`` fails:
        memhost reports the provider unavailable for the session and keeps its writes in the
        outbox, instead of every turn waiting on a pool that keeps reconnecting."""
        with self._lock:
            if self.store is None:
                self.store = self.open_store(home, self.config)
            self.recall_timeout_ms = self.store.read_timeout_ms
        try:
            self.store.open()
        except RetryableError:
            with self._lock:
                store, self.store = self.store, None
            if store is not None:
                store.close()  # stops the pool's reconnection attempts
            raise

    def store_for_writing(self) -> Any:
        if self.store is None:
            raise RetryableError("the PostgreSQL recall store is not open (shut down?)")
        return self.store

    def recall_options(self) -> dict[str, Any]:
        """A turn's recall gives up before the manager stops waiting for it."""
        return {"timeout_ms": self.recall_timeout_ms}

    @hookimpl
    def prompt_fragment(self) -> str:
        return ("Past conversations, saved notes and subtask results (from every machine this "
                "user works on) are kept in a shared recall store. Relevant items are recalled "
                "into <memory-context> automatically; use recall_search to look something up "
                "on purpose, and recall_forget to erase an item the user wants forgotten.")

    @hookimpl
    def scratch_config(self, config: dict[str, Any]) -> dict[str, Any]:
        """``memhost providers check``: a schema and a user id of the check's own, so its turn
        never reaches the real recall store; the schema is dropped at ``shutdown``."""
        token = secrets.token_hex(4)
        self.scratch_schema = f"memhost_check_{token}"
        return {**config, "schema": self.scratch_schema, "user_id": f"memhost-check-{token}"}

    @hookimpl
    def shutdown(self) -> None:
        dsn = self.config.get("dsn")
        super().shutdown()
        schema, self.scratch_schema = self.scratch_schema, None
        if schema and dsn:
            from .store import drop_schema

            drop_schema(str(dsn), schema)

    @hookimpl
    def handle_tool_call(self, tool_name: str, arguments: dict[str, Any]) -> str:
        try:
            return super().handle_tool_call(tool_name, arguments)
        except RetryableError as exc:
            return recall.error(f"The recall database is not reachable right now ({exc}); "
                                "try again later.")
