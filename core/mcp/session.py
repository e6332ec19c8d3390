"""One MCP connection's memory: a :class:`~memhost.MemoryManager` of its own, built, started,
called and shut down on one thread of its own, exactly as a host drives one. Every answer passes
secret masking on its way out."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import mcp.types as types
from mcp.shared.exceptions import MCPError

from memhost.manager import MemoryManager
from memhost.security.masking import scrub_value

log = logging.getLogger("memhost.mcp")


class MemorySession:
    """One MCP connection's memory: a manager of its own, called from one thread of its own."""

    def __init__(self, factory: Callable[[], MemoryManager], label: str) -> None:
        self._factory = factory
        self.label = label
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="memhost-mcp")
        self._started: Future[None] | None = None
        self._closed: Future[Any] | None = None
        self.manager: MemoryManager | None = None
        self.session_id = ""

    def prepare(self) -> None:
        """Build the manager now (on the session's thread), so a broken setup fails early."""
        self._thread.submit(self._build).result()

    def _build(self) -> MemoryManager:
        if self.manager is None:
            self.manager = self._factory()
        return self.manager

    async def call(self, fn: Callable[[MemoryManager], Any]) -> Any:
        """Run ``fn(manager)`` on the session's thread, after the session started."""
        if self._closed is not None:
            raise MCPError(code=types.INTERNAL_ERROR, message="this memory session has ended")
        await self.start("")
        # Every answer (tool results, recall, the snapshot) passes secret masking: a provider's
        # error text may quote its config.
        return scrub_value(await asyncio.wrap_future(self._thread.submit(lambda: fn(self._build()))))

    async def start(self, client: str) -> None:
        """Start the session once; later calls wait for that start."""
        if self._started is None:
            self._started = self._thread.submit(self._start, client)
        await asyncio.wrap_future(self._started)

    def _start(self, client: str) -> None:
        try:
            manager = self._build()
        except Exception as exc:
            # Every request of this connection answers with an error from now on; say why here.
            log.error("the memory session (%s) cannot start: %s", self.label, exc)
            raise
        self.session_id = time.strftime("mcp-%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        manager.start_session(self.session_id)
        status = manager.status()
        log.info("session %s started (%s%s); memory: %s", self.session_id, self.label,
                 f", client {client}" if client else "",
                 status["external_provider"] or "builtin only")
        for problem in status["problems"]:
            log.warning("memory provider %r: %s", problem["provider"], problem["problem"])

    def close(self) -> Future[Any]:
        """End the session and shut the manager down, once, on the session's thread."""
        if self._closed is None:
            self._closed = self._thread.submit(self._close)
            self._thread.shutdown(wait=False)
        return self._closed

    def _close(self) -> Any:
        manager = self.manager
        if manager is None:
            return None
        if self.session_id:
            manager.end_session()
        report = manager.shutdown()
        log.info("session %s ended (%s); shutdown report: %s", self.session_id or "(not started)",
                 self.label, json.dumps(report.as_dict(), sort_keys=True))
        return report
