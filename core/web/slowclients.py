"""Bounds on slow clients, for both HTTP servers memhost runs (settings page, MCP over HTTP).

uvicorn (0.2x-0.5x) closes a keep-alive connection that stays idle between requests
(``timeout_keep_alive``), caps the size of an incomplete request head
(``h11_max_incomplete_event_size``) and answers 503 past ``limit_concurrency`` open connections;
it has no deadline for reading a request's headers. A client that connects and sends its headers
a byte at a time (slowloris) holds a connection for ever, and enough of them hold the server.
:class:`HeaderDeadlineProtocol` adds that deadline at the protocol layer, where the headers are
parsed: a connection whose request headers are not complete within :data:`HEADER_TIMEOUT`
seconds of its start (or of the previous response) is closed. :func:`uvicorn_options` is what
both servers pass to ``uvicorn.Config``.

``MEMHOST_HEADER_TIMEOUT`` (seconds, a positive number) changes that deadline for a server
started with it set: longer for clients on a slow link, shorter where a quicker cut-off is
wanted (memhost's own tests use it to watch the deadline fire without waiting ten seconds).
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a request's line and headers (``MEMHOST_HEADER_TIMEOUT``).
HEADER_TIMEOUT = 10.0
HEADER_TIMEOUT_ENV = "MEMHOST_HEADER_TIMEOUT"
#: Open connections (or running requests) past which new requests get 503: both servers serve
#: one person on this machine.
MAX_CONNECTIONS = 32
#: Seconds an idle keep-alive connection is kept.
KEEP_ALIVE = 5
#: Largest request line plus headers accepted, in bytes.
MAX_HEAD_BYTES = 16 * 1024


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers come too slowly."""

    header_timeout = HEADER_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request's headers are in
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection gets the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.info("closed a connection whose request headers took over %gs",
                             self.header_timeout)
            self.transport.close()


def header_timeout(environ: dict[str, str] | None = None) -> float:
    """The header deadline in seconds: ``MEMHOST_HEADER_TIMEOUT`` when set, else 10.

    ``MemhostError`` for a value that is not a positive, finite number of seconds, so a typo
    stops the server at start instead of leaving it without a deadline."""
    raw = (os.environ if environ is None else environ).get(HEADER_TIMEOUT_ENV, "").strip()
    if not raw:
        return HEADER_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        from memhost.errors import MemhostError

        raise MemhostError(f"{HEADER_TIMEOUT_ENV} must be a positive number of seconds, not "
                           f"{raw[:40]!r}; unset it for the default of {HEADER_TIMEOUT:g}")
    return seconds


def uvicorn_options() -> dict[str, Any]:
    """The ``uvicorn.Config`` options that bound slow and numerous clients."""
    protocol: type[HeaderDeadlineProtocol] = HeaderDeadlineProtocol
    seconds = header_timeout()
    if seconds != HEADER_TIMEOUT:
        protocol = type("HeaderDeadlineProtocol", (HeaderDeadlineProtocol,),
                        {"header_timeout": seconds})
    return {"http": protocol, "limit_concurrency": MAX_CONNECTIONS,
            "timeout_keep_alive": KEEP_ALIVE, "h11_max_incomplete_event_size": MAX_HEAD_BYTES}


__all__ = ["HEADER_TIMEOUT", "HEADER_TIMEOUT_ENV", "HeaderDeadlineProtocol", "MAX_CONNECTIONS",
           "header_timeout", "uvicorn_options"]
