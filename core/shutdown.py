"""How a manager shuts down within its bound: drain the background queue, then shut the
providers down in reverse order of registration, once, and report what happened.

The report's status is ``drained`` only when every queued task ran and nothing was kept, parked
or abandoned; ``completed_with_loss`` when the bound held but work was left for later (it stays
in the outbox, or was parked in ``failed/``); ``timed_out`` when the bound passed with a task or a
provider's ``shutdown()`` still running.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from memhost.outbox import Journal
from memhost.prefetching import BoundedPrefetch
from memhost.providers import Provider, ProviderSet
from memhost.worker import BackgroundWorker, ShutdownReport

log = logging.getLogger("memhost")


def shut_down(worker: BackgroundWorker, providers: ProviderSet, *, bound: float,
              journals: list[Journal], external: Provider | None,
              prefetch: BoundedPrefetch) -> ShutdownReport:
    """Drain ``worker`` and shut ``providers`` down within ``bound`` seconds; ``journals`` are
    the manager's own outbox journals, given up only once nothing of theirs is still running."""
    started = time.monotonic()
    deadline = started + bound
    # The drain gets most of the bound, not all of it: provider shutdown() runs after it and
    # needs a moment too. With none left, a drain that used the whole bound (a write parked in
    # a retry wait, which stops at once) left the report's status to a race.
    writes, prefetches, active = worker.drain(started + bound * 0.9)
    prefetch.shutdown()
    finished = threading.Event()
    reports: dict[str, dict[str, Any]] = {}
    shut: list[str] = []

    def finalize(wait: float | None = None) -> None:
        # Never shut a provider down while one of its tasks is still running, nor give up a
        # journal: a journal whose lock is free is replayed by the next manager, and a write
        # still running would then be delivered twice.
        if not worker.join(wait):
            return
        for journal in journals:
            journal.close()
        for provider in reversed(list(providers)):
            value = providers.call(provider, "shutdown")
            shut.append(provider.name)
            if isinstance(value, dict) and value:
                reports[provider.name] = value
        providers.release_threads()
        finished.set()

    try:
        threading.Thread(target=finalize, name="memhost-shutdown", daemon=True).start()
    except RuntimeError:  # no thread can start: finish here, within the bound
        finalize(max(0.0, deadline - time.monotonic()))
    done = finished.wait(max(0.0, deadline - time.monotonic()))
    # The manager's own journals only: the folder may also hold the journal of another live
    # manager of the same provider, whose writes this shutdown did not leave behind.
    kept = sum(len(j.pending()) for j in journals)
    lost_by_providers = sum(int(v) for r in reports.values() for k, v in r.items()
                            if k.startswith("abandoned") and isinstance(v, int))
    failed = external.health.failed_writes if external else 0
    if not done:
        status = "timed_out"
    elif writes or prefetches or active or lost_by_providers or kept or failed:
        status = "completed_with_loss"
    else:
        status = "drained"
    report = ShutdownReport(status, writes, prefetches, active, kept, tuple(shut), reports,
                            round(time.monotonic() - started, 3), failed)
    if status != "drained":
        log.warning("memory shutdown %s: abandoned %d queued write(s) and %d queued prefetch(es), "
                    "%d task(s) still running; %d write(s) kept in the outbox for the next start, "
                    "%d parked as failed", status, writes, prefetches, active, kept, failed)
    return report
