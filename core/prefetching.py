"""The turn's recall call: the external provider's ``prefetch``, waited for at most
``memory.prefetch_timeout`` on a daemon thread.

A call that gives no answer in time makes the turn go on without recall, and later turns skip
the provider until that call returns (a provider stuck on a dead connection is not called again
and again); whatever it returns late is dropped, since it belongs to an earlier turn.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from memhost.bounded import DaemonExecutor, Pending
from memhost.errors import check_not_forked
from memhost.providers import FAILED, Provider, ProviderSet
from memhost.security.redact import redact

log = logging.getLogger("memhost")


class BoundedPrefetch:
    def __init__(self, providers: ProviderSet, timeout: float) -> None:
        self._providers = providers
        self.timeout = timeout
        self.pool: DaemonExecutor | None = None
        # A call that gave no answer within the bound and has not returned yet: later turns
        # skip the provider until it does. A call another turn is still waiting for (turns of
        # one manager may run at once) is not stuck: this turn's call queues behind it.
        self._stuck: Pending | None = None
        self.stats = {"timeouts": 0, "skipped_while_stuck": 0, "late_results_dropped": 0}
        self._pid = os.getpid()  # the process whose provider connections these are

    @property
    def stuck(self) -> bool:
        return self._stuck is not None and not self._stuck.done()

    def status(self) -> dict[str, Any]:
        return {"timeout_s": self.timeout, "stuck": self.stuck, **self.stats}

    def ask(self, provider: Provider, query: str, session_id: str, *,
            closed: bool = False) -> tuple[str, str]:
        """``(how recall went, the recalled text)`` for one turn; ``closed``: the manager has
        shut down, so nothing new is started."""
        check_not_forked(self._pid)
        stats = self.stats
        pending = self._stuck
        if pending is not None and not pending.done():
            stats["skipped_while_stuck"] += 1
            provider.health.failed("prefetch", "prefetch: an earlier call has not returned")
            if stats["skipped_while_stuck"] % 10 == 1:
                log.warning("memory provider %r: an earlier prefetch is still running; recall is "
                            "skipped until it returns (%d turns so far)", provider.name,
                            stats["skipped_while_stuck"])
            return "skipped-stuck", ""
        if pending is not None:
            self._stuck = None
        if closed:
            return "failed", ""
        if self.pool is None:
            # Daemon threads: a prefetch that never returns must not keep the process alive.
            self.pool = DaemonExecutor("memhost-prefetch")
        try:
            future = self.pool.submit(self._providers.call, provider, "prefetch",
                                      query=redact(query), session_id=session_id)
        except RuntimeError as exc:  # no thread could start
            log.warning("memory provider %r: recall skipped (%s)", provider.name, exc)
            return "failed", ""
        try:
            value = future.result(timeout=self.timeout)
        except FutureTimeout:
            self._stuck = future
            stats["timeouts"] += 1
            provider.health.failed("prefetch", f"prefetch: no answer within {self.timeout:g}s")
            # Whatever it returns later is dropped: it belongs to this turn, not a later one.
            future.add_done_callback(lambda _f: stats.__setitem__(
                "late_results_dropped", stats["late_results_dropped"] + 1))
            log.warning("memory provider %r: prefetch gave no answer within %.2fs; recall is "
                        "skipped, and skipped on later turns until that call returns "
                        "(memory.prefetch_timeout)", provider.name, self.timeout)
            return "timed-out", ""
        if value is FAILED:
            return "failed", ""
        return ("ok", value) if value and value.strip() else ("empty", "")

    def shutdown(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
