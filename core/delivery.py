"""The external provider's writes: journalled, delivered in order, replayed, never dropped.

Every write the manager hands the external provider (a synced turn, a mirrored memory write, a
session boundary, a subtask) is appended to this manager's outbox journal first, then queued on
the background worker, and acknowledged in the journal once the provider took it. A write made
while the provider rests (unavailable) is journalled and parked until it starts again (at a
session start, or revived by :mod:`memhost.revival`); one made after shutdown is kept in the
outbox for the next manager. Journals left by managers that are gone are replayed once the
provider has been initialised, ahead of any new write. A write that cannot be delivered is
parked in ``failed/`` (:mod:`memhost.deadletter`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memhost.deadletter import DeadLetters
from memhost.errors import check_not_forked
from memhost.faultlog import FaultLog
from memhost.outbox import Journal, Outbox, Record, encode_line
from memhost.providers import FAILED, Provider, ProviderSet
from memhost.worker import BackgroundWorker, Task, WriteFailed

log = logging.getLogger("memhost")
_FAULTS = FaultLog(log)

Calls = list[tuple[str, dict[str, Any]]]


class Delivery:
    def __init__(self, home: Path, provider: Provider, providers: ProviderSet,
                 worker: BackgroundWorker, outbox: Outbox, journal: Journal,
                 closed: Callable[[], bool]) -> None:
        self.provider = provider
        self.outbox = outbox
        self.journal = journal
        self.dead = DeadLetters(home, provider.name)
        self._providers = providers
        self._worker = worker
        self._closed = closed  # the manager has shut down
        self._replaying: list[Journal] = []
        # Writes an earlier manager left behind are replayed once the provider has been
        # initialised (a provider opens its connection there), and before any new write.
        self._replay_due = True
        self._replay_lock = threading.Lock()
        # Written while the provider is unavailable, with the journal that holds each.
        self._parked: list[tuple[Journal | _Unjournalled, Record]] = []
        self._parking = threading.Lock()
        self._pid = os.getpid()  # the process whose journal this is

    @property
    def journals(self) -> list[Journal]:
        """This manager's own journals: its own and those it is replaying."""
        return [*self._replaying, self.journal]

    def submit(self, label: str, calls: Calls, *then: Task) -> None:
        """Journal ``calls`` (one write) and queue them for the provider, with the tasks
        ``then`` right behind them in the same hand-off to the worker."""
        check_not_forked(self._pid)
        self.replay_if_due()
        journal: Journal | _Unjournalled = self.journal
        try:
            record = None if self._closed() else self.journal.append(calls)
        except OSError as exc:  # a full disk: deliver it all the same, from memory
            journal, record = _Unjournalled(), _Unjournalled.record(self.journal.path, calls)
            _FAULTS.repeated(self.provider.name, "journal", (
                f"memhost could not journal write {label} for provider {self.provider.name!r} "
                f"in {self.journal.path} ({exc}); it is delivered from memory, and lost if "
                "this process ends before that"))
        if record is None:
            self._keep_late(label, calls)
            return
        with self._parking:  # against started(revived=True): parked writes go first, in order
            if not self.provider.health.unavailable:
                self._queue(journal, record, label, *then)
                return
            self._parked.append((journal, record))  # delivered once the provider starts
        if then:
            self._worker.submit(*then)

    def _keep_late(self, label: str, calls: Calls) -> None:
        """A write made after shutdown: a host thread still finishing a turn, or a manager a
        :class:`memhost.MemoryHub` closed while the host held it. Its journal is closed, so it
        goes to the outbox as a journal of its own, which the next manager started with this
        provider delivers (as it does a manager's that is gone)."""
        try:
            kept = self.outbox.requeue([tuple(calls)])
        except OSError as exc:
            log.error("memhost is shut down, and its late write %s for provider %r could not be "
                      "kept in %s (%s): it is lost", label, self.provider.name,
                      self.outbox.folder, exc)
            return
        log.warning("memhost is shut down; its late write %s for provider %r is kept in %s and "
                    "delivered when a manager next starts with that provider", label,
                    self.provider.name, kept)

    def started(self, *, revived: bool = False) -> None:
        """The provider was initialised for a session, or ``revived`` during one (it becomes
        available here, so that no new write overtakes those that waited): deliver what
        waited for it."""
        with self._parking:
            if revived:
                self.provider.health.mark_available()
            parked, self._parked = self._parked, []
            for journal, record in parked:
                self._queue(journal, record, f"parked {record.calls[0][0]}")
        self.replay_if_due()

    def replay_if_due(self) -> None:
        # Locked: a write submitted meanwhile from another thread (the background review's
        # mirrored writes) must wait until the replayed writes are queued ahead of it.
        with self._replay_lock:
            if self._replay_due and not self._closed() and not self.provider.health.unavailable:
                self._replay_due = False
                self._replay_orphans()

    def _replay_orphans(self) -> None:
        for journal in self.outbox.claim_orphans():
            records = journal.pending()
            log.info("replaying %d write(s) left in %s", len(records), journal.path)
            for record in records:
                self._queue(journal, record, f"replay {record.calls[0][0]}")
            self._replaying.append(journal)
            self._worker.submit(Task("marker", "close replayed journal", journal.close))

    def _queue(self, journal: Journal | _Unjournalled, record: Record, label: str,
               *then: Task) -> None:
        provider = self.provider
        remaining: Calls = []
        started = False

        def deliver() -> None:
            nonlocal started
            if not started:  # decoded here, on the worker thread, not the host's
                remaining.extend(record.calls)
                started = True
            # A retry resumes at the call that failed: session_end is not repeated for a rotate.
            while remaining:
                hook, kwargs = remaining[0]
                if self._providers.call(provider, hook, retryable=True, **kwargs) is FAILED:
                    raise WriteFailed(provider.stats[hook].last_error)
                remaining.pop(0)

        self._worker.submit(Task("write", label, deliver, lambda: journal.ack(record.seq),
                                 lambda error, attempts: self.dead.park_for(
                                     provider, remaining if started else list(record.calls),
                                     error, attempts)), *then)


class _Unjournalled:
    """Stands in for the journal of a write that could not be journalled: nothing to
    acknowledge."""

    @staticmethod
    def record(path: Path, calls: Calls) -> Record:
        return Record(path, 0, encode_line({"seq": 0, "calls": [[h, kw] for h, kw in calls]}))

    def ack(self, seq: int) -> None:
        pass
