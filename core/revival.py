"""An external provider that could not start is started again while its session goes on.

A provider whose ``initialize`` failed (its service was down or out of reach) is unavailable:
no recall, its tools off, its writes parked in the outbox (:mod:`memhost.health`). A session can
last as long as its host: a gateway's user, a long chat. So while the provider is unavailable,
a turn that begins at least :data:`memhost.health.RETRY_SECONDS` after the last try starts it
again, on a thread of its own: the turn does not wait for it (an ``initialize`` may take up to
``memory.hook_timeout``, and one on a dead connection does), it goes on without recall. Once
``initialize`` succeeds the provider is available again: the parked writes are delivered, in
the order they were made, and the next turn recalls.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from memhost import health
from memhost.providers import Provider

log = logging.getLogger("memhost")


class Revival:
    """Tries to start one unavailable provider again, at most every
    :data:`memhost.health.RETRY_SECONDS`, one try at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trying = False
        self._last_try = 0.0
        self.tries = 0

    def start_if_due(self, provider: Provider, start: Callable[[], bool]) -> bool:
        """Run ``start`` (``True`` when the provider started) on a thread of its own if the
        provider has been unavailable, and untried, for ``RETRY_SECONDS``; whether it was
        started now."""
        now = time.monotonic()
        since = max(provider.health.unavailable_since, self._last_try)
        with self._lock:
            if self._trying or now - since < health.RETRY_SECONDS:
                return False
            self._trying, self._last_try = True, now
            self.tries += 1
        try:
            threading.Thread(target=self._try, args=(provider, start), daemon=True,
                             name=f"memhost-revive-{provider.name}").start()
        except RuntimeError:  # no thread can start now: the next due turn tries again
            with self._lock:
                self._trying = False
            return False
        return True

    def _try(self, provider: Provider, start: Callable[[], bool]) -> None:
        started = False
        try:
            started = start()
        finally:
            with self._lock:
                self._trying = False
        if started:
            log.warning("memory provider %r is available again: it started on try %d, after "
                        "%.0f s; its waiting writes are being delivered", provider.name,
                        self.tries, time.monotonic() - provider.health.unavailable_since)
        else:
            log.info("memory provider %r is still unavailable (try %d): %s; next try in %.0f s",
                     provider.name, self.tries, provider.health.last_error,
                     health.RETRY_SECONDS)


__all__ = ["Revival"]
