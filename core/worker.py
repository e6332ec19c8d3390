"""The background FIFO: one worker thread runs every provider write in submission order.

Turn N's sync lands before turn N+1's, a session boundary runs ``session_end`` before ``rotate``,
and the host's reply never waits for a provider. A write whose provider raised
:class:`memhost.RetryableError` is retried with backoff before anything behind it runs, so order
holds across a database restart. Shutdown drains within a bound and reports what it left.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from memhost.errors import RetryableError

log = logging.getLogger(__name__)


@dataclass
class Task:
    kind: str  # "write" (kept in the outbox until acknowledged) or "prefetch" (a warm-up)
    label: str
    run: Callable[[], Any]
    acknowledge: Callable[[], None] | None = None
    done: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class ShutdownReport:
    """What :meth:`memhost.MemoryManager.shutdown` did.

    ``status`` is ``drained`` (everything ran, providers shut down), ``completed_with_loss``
    (finished within the bound, but some work was abandoned), or ``timed_out`` (the bound passed
    with work or a provider's ``shutdown()`` still running). Abandoned writes stay in the outbox
    and are replayed by the next manager started with the same provider.
    """

    status: str
    abandoned_writes: int = 0
    abandoned_prefetches: int = 0
    active_tasks: int = 0
    kept_in_outbox: int = 0
    providers_shut_down: tuple[str, ...] = ()
    provider_reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["providers_shut_down"] = list(self.providers_shut_down)
        return data


class BackgroundWorker:
    def __init__(self, *, name: str = "memhost-worker", retry_initial: float = 0.2,
                 retry_max: float = 30.0) -> None:
        self.name = name
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self._queue: deque[Task] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._running: Task | None = None
        self._accepting = True
        self._stopping = False
        self._abandon = threading.Event()
        self._batching = 0
        self.completed = 0
        self.retrying: dict[str, Any] = {}

    # -- submission ----------------------------------------------------------------------------

    def submit(self, task: Task) -> bool:
        with self._cond:
            if not self._accepting:
                log.warning("memhost is shutting down; dropped late %s task %s", task.kind, task.label)
                return False
            self._queue.append(task)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()
            if not self._batching:
                self._cond.notify()
        return True

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Submit several tasks with one wake-up of the worker, at the end: woken after the
        first, it would take the interpreter from the submitting thread in between."""
        with self._cond:
            self._batching += 1
        try:
            yield
        finally:
            with self._cond:
                self._batching -= 1
                if not self._batching and self._queue:
                    self._cond.notify()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted so far has run; ``False`` on timeout."""
        marker = Task("marker", "flush", lambda: None)
        if not self.submit(marker):
            return True
        return marker.done.wait(timeout)

    # -- the loop ------------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    return
                task = self._running = self._queue.popleft()
            try:
                if self._run(task) and task.acknowledge is not None:
                    task.acknowledge()
            finally:
                task.done.set()
                with self._cond:
                    self._running = None
                    self.completed += 1
                    self._cond.notify_all()

    def _run(self, task: Task) -> bool:
        """Run ``task``; ``True`` when it is finished with (done, or failed for good)."""
        delay, attempts = self.retry_initial, 0
        while True:
            try:
                task.run()
            except RetryableError as exc:
                attempts += 1
                self.retrying = {"task": task.label, "attempts": attempts, "last_error": str(exc),
                                 "next_retry_in": round(delay, 2)}
                if attempts == 1 or attempts % 10 == 0:
                    log.warning("%s failed for a passing reason (%s); retrying in order (attempt %d)",
                                task.label, exc, attempts)
                if self._abandon.wait(delay):
                    return False  # shutting down: the write stays in the outbox
                delay = min(delay * 2, self.retry_max)
                continue
            except Exception:  # provider faults were already counted; never kill the worker
                log.exception("background task %s failed", task.label)
            self.retrying = {}
            return True

    # -- shutdown ------------------------------------------------------------------------------

    def drain(self, deadline: float) -> tuple[int, int, int]:
        """Stop accepting work and let the queue run until ``deadline`` (a monotonic time).

        Returns ``(abandoned_writes, abandoned_prefetches, active_tasks)``.
        """
        with self._cond:
            self._accepting = False
            while (self._queue or self._running) and time.monotonic() < deadline:
                self._cond.wait(max(0.0, deadline - time.monotonic()))
            left = list(self._queue)
            self._queue.clear()
            running = self._running
            self._stopping = True
            self._cond.notify_all()
        self._abandon.set()
        writes = sum(1 for t in left if t.kind == "write")
        prefetches = sum(1 for t in left if t.kind == "prefetch")
        active = 0
        if running is not None:
            if self.retrying.get("task") == running.label:
                writes += 1  # parked in a retry wait; it stops now and stays in the outbox
            else:
                active = 1
        for task in left:
            task.done.set()
        return writes, prefetches, active

    def join(self, timeout: float | None) -> bool:
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def status(self) -> dict[str, Any]:
        with self._cond:
            return {"queued": len(self._queue), "running": self._running.label if self._running else None,
                    "completed": self.completed, "retrying": dict(self.retrying),
                    "accepting": self._accepting}
