"""The background FIFO: one worker thread runs every provider write in submission order.

Turn N's sync lands before turn N+1's, a session boundary runs ``session_end`` before ``rotate``,
and the host's reply never waits for a provider. A write whose provider raised
:class:`memhost.RetryableError` is retried with backoff before anything behind it runs, so order
holds across a database restart; one that keeps failing past its retry budget, or that failed
for another reason (:class:`WriteFailed`), is handed to the task's ``fail`` callback, which parks
it in the dead-letter queue. Shutdown drains within a bound and reports what it left.

The thread is a daemon, so a provider call that never returns cannot keep the process alive
after shutdown; if the OS refuses to start it, work stays queued (and journalled) and the next
submission tries again.
"""

from __future__ import annotations

import _thread
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from memhost.errors import RetryableError

log = logging.getLogger(__name__)


class WriteFailed(Exception):
    """Raised by a task's ``run`` when the write failed for good (not a passing failure)."""


_SETTING = threading.Lock()


class Done:
    """Set once, when a task has run (or was dropped); waited for by :meth:`BackgroundWorker.flush`.

    What ``threading.Event`` offers for that, on one C lock: an Event builds a ``Condition``
    and two locks, and every turn queues a task or two from the host's thread.
    """

    __slots__ = ("_lock", "_set")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()  # released once, by set()
        self._set = False

    def set(self) -> None:
        with _SETTING:
            if self._set:
                return
            self._set = True
        self._lock.release()

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        if not self._lock.acquire(True, -1 if timeout is None else max(0.0, timeout)):
            return False
        self._lock.release()
        return True


@dataclass
class Task:
    kind: str  # "write" (kept in the outbox until acknowledged) or "prefetch" (a warm-up)
    label: str
    run: Callable[[], Any]
    acknowledge: Callable[[], None] | None = None
    #: ``fail(error, attempts)``: the write failed for good; keep it elsewhere (may raise).
    fail: Callable[[str, int], None] | None = None
    done: Done = field(default_factory=Done)


@dataclass(frozen=True)
class ShutdownReport:
    """What :meth:`memhost.MemoryManager.shutdown` did.

    ``status`` is ``drained`` (everything ran, providers shut down), ``completed_with_loss``
    (finished within the bound, but some work was abandoned, kept for later or parked as failed),
    or ``timed_out`` (the bound passed with work or a provider's ``shutdown()`` still running).
    Abandoned writes stay in the outbox and are replayed by the next manager started with the
    same provider; ``failed_writes`` were parked in ``<home>/outbox/<provider>/failed/``.
    """

    status: str
    abandoned_writes: int = 0
    abandoned_prefetches: int = 0
    active_tasks: int = 0
    kept_in_outbox: int = 0
    providers_shut_down: tuple[str, ...] = ()
    provider_reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    failed_writes: int = 0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["providers_shut_down"] = list(self.providers_shut_down)
        return data


class BackgroundWorker:
    def __init__(self, *, name: str = "memhost-worker", retry_initial: float = 0.2,
                 retry_max: float = 30.0, retry_budget: float = 600.0) -> None:
        self.name = name
        self.retry_initial = retry_initial
        self.retry_max = retry_max
        self.retry_budget = retry_budget
        self._queue: deque[Task] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._running: Task | None = None
        self._accepting = True
        self._stopping = False
        self._abandon = threading.Event()
        # When the running task, parked in a retry wait, tries again (monotonic); None otherwise.
        self._retry_at: float | None = None
        self.completed = 0
        self.retrying: dict[str, Any] = {}
        self._then: Callable[[], None] | None = None  # see stop_when_idle

    # -- submission ----------------------------------------------------------------------------

    def submit(self, *tasks: Task) -> bool:
        """Queue ``tasks`` in order, with one wake-up of the worker: woken after the first of
        several, it would take the interpreter from the submitting thread in between."""
        with self._cond:
            if not self._accepting:
                for task in tasks:
                    if task.kind == "write":  # journalled before it was queued: not lost
                        log.warning("memhost is shutting down; late write %s stays in the "
                                    "outbox for the next start", task.label)
                    else:
                        log.warning("memhost is shutting down; dropped late %s task %s",
                                    task.kind, task.label)
                return False
            self._queue.extend(tasks)
            self._ensure_thread()
            self._cond.notify()
        return True

    def _ensure_thread(self) -> bool:
        """Start the worker thread if it is not running; ``False`` when the OS refused."""
        if self._thread is not None:
            return True
        thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:  # can't start new thread: the work waits, journalled
            log.warning("memhost could not start its background worker (%s); %d task(s) wait "
                        "and the next one tries again", exc, len(self._queue))
            return False
        self._thread = thread
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted so far has run; ``False`` on timeout, or at once when
        no worker thread can run it. After shutdown, waits for a task still running."""
        with self._cond:
            if not self._accepting:
                return self._cond.wait_for(lambda: self._running is None, timeout)
        marker = Task("marker", "flush", lambda: None)
        if not self.submit(marker):  # shut down meanwhile
            return self.flush(timeout)
        if self._thread is None:
            return False
        return marker.done.wait(timeout)

    # -- the loop ------------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._stopping:
                    self._cond.wait()
                if not self._queue:
                    then, self._then = self._then, None
                    break
                task = self._running = self._queue.popleft()
            try:
                if self._run(task) and task.acknowledge is not None:
                    task.acknowledge()
            except Exception:  # noqa: BLE001 - the one thread behind every write must live on
                log.exception("memhost's background worker: task %s failed after it ran; the "
                              "queue goes on", task.label)
            finally:
                task.done.set()
                with self._cond:
                    self._running = None
                    self.completed += 1
                    self._cond.notify_all()
            del task  # not kept on the idle thread's frame (memhost.abandoned)
        if then is not None:
            then()

    def _run(self, task: Task) -> bool:
        """Run ``task``; ``True`` when it is finished with (done, or failed for good and kept
        by its ``fail`` callback)."""
        delay, attempts, started = self.retry_initial, 0, time.monotonic()
        while True:
            try:
                attempts += 1
                self._retry_at = None
                task.run()
            except WriteFailed as exc:
                return self._give_up(task, str(exc), attempts)
            except RetryableError as exc:
                if time.monotonic() - started + delay > self.retry_budget and task.fail:
                    return self._give_up(task, f"still failing after {attempts} attempts over "
                                               f"{time.monotonic() - started:.0f}s "
                                               f"(memory.write_retry_budget): {exc}", attempts)
                self.retrying = {"task": task.label, "attempts": attempts, "last_error": str(exc),
                                 "next_retry_in": round(delay, 2)}
                if attempts == 1 or attempts % 10 == 0:
                    log.warning("%s failed for a passing reason (%s); retrying in order (attempt %d)",
                                task.label, exc, attempts)
                with self._cond:  # a drain waiting for this task learns when it tries again
                    self._retry_at = time.monotonic() + delay
                    self._cond.notify_all()
                if self._abandon.wait(delay):
                    return False  # shutting down: the write stays in the outbox
                delay = min(delay * 2, self.retry_max)
                continue
            except Exception:  # provider faults were already counted; never kill the worker
                log.exception("background task %s failed", task.label)
            self.retrying = {}
            return True

    def _give_up(self, task: Task, error: str, attempts: int) -> bool:
        self.retrying = {}
        if task.fail is None:
            return True
        try:
            task.fail(error, attempts)
        except Exception:  # could not keep it elsewhere: it stays in the journal
            log.exception("could not park failed write %s; it stays in the outbox", task.label)
            return False
        return True

    # -- shutdown ------------------------------------------------------------------------------

    def drain(self, deadline: float) -> tuple[int, int, int]:
        """Stop accepting work and let the queue run until ``deadline`` (a monotonic time).

        Returns ``(abandoned_writes, abandoned_prefetches, active_tasks)``.
        """
        with self._cond:
            self._accepting = False
            while (self._queue or self._running) and time.monotonic() < deadline:
                if self._thread is None and not self._ensure_thread():
                    break  # nothing can run the queue: it stays in the outbox
                if self._running is not None and self._retry_at is not None \
                        and self._retry_at >= deadline:
                    # Parked in a retry wait that ends after the deadline: nothing runs before
                    # it, so waiting would only take time from the providers' shutdown.
                    break
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

    @property
    def accepting(self) -> bool:
        """False once :meth:`drain` or :meth:`stop_when_idle` began."""
        return self._accepting

    def stop_when_idle(self, then: Callable[[], None]) -> None:
        """Take no new work, run what is queued, then ``then()`` on the worker's thread (here,
        at once, when that thread is not running). Safe from a finalizer: it only flags and
        wakes the thread."""
        with self._cond:
            self._accepting = False
            self._stopping = True
            running = self._thread is not None and self._thread.is_alive()
            if running:
                self._then = then
            self._cond.notify_all()
        if not running:
            then()

    def join(self, timeout: float | None) -> bool:
        if self._thread is None:  # never started: nothing runs
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def status(self) -> dict[str, Any]:
        with self._cond:
            return {"queued": len(self._queue), "running": self._running.label if self._running else None,
                    "completed": self.completed, "retrying": dict(self.retrying),
                    "accepting": self._accepting}
