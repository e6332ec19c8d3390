"""Calls the host waits for at most a bound, on a thread that never keeps the process alive.

:class:`DaemonExecutor` runs one call at a time on its own daemon thread. A call that hangs
keeps only that thread; the caller stops waiting after its bound, and the process still exits
when the host is done (``concurrent.futures.ThreadPoolExecutor`` joins its threads at exit, so a
hanging provider call would hold the process open until it returned).

A call's result is a :class:`Pending`, which offers what the host uses of
``concurrent.futures.Future`` (``done``, ``result(timeout)``, ``add_done_callback``, ``cancel``)
on one C lock: every turn waits for one (the recall), and a ``Future`` (a ``Condition`` and its
locks, built per call) made that hand-off about twice as costly.
"""

from __future__ import annotations

import _thread
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import CancelledError
from typing import Any

log = logging.getLogger(__name__)
_CALLBACKS = threading.Lock()


class Pending:
    """The outcome of one call handed to a :class:`DaemonExecutor`."""

    __slots__ = ("_callbacks", "_error", "_finished", "_started", "_value")

    def __init__(self) -> None:
        self._finished = _thread.allocate_lock()
        self._finished.acquire()  # released once, when the call returned, raised or was cancelled
        self._value: Any = None
        self._error: BaseException | None = None
        self._started = False
        self._callbacks: list[Callable[[Pending], Any]] | None = []

    def done(self) -> bool:
        return not self._finished.locked()

    def result(self, timeout: float | None = None) -> Any:
        """The call's value (its exception raised); ``TimeoutError`` after ``timeout`` seconds."""
        if not self._finished.acquire(True, -1 if timeout is None else max(0.0, timeout)):
            raise TimeoutError
        self._finished.release()
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback: Callable[[Pending], Any]) -> None:
        with _CALLBACKS:
            if self._callbacks is not None:
                self._callbacks.append(callback)
                return
        callback(self)

    def cancel(self) -> bool:
        """Cancel a call that has not started; ``False`` once it has."""
        with _CALLBACKS:
            if self._started or self._callbacks is None:
                return False
        self._finish(None, CancelledError())
        return True

    def _start(self) -> bool:
        with _CALLBACKS:
            if self._callbacks is None:
                return False  # cancelled
            self._started = True
            return True

    def _finish(self, value: Any, error: BaseException | None) -> None:
        with _CALLBACKS:
            if self._callbacks is None:
                return
            self._value, self._error = value, error
            callbacks, self._callbacks = self._callbacks, None
            self._finished.release()
        for callback in callbacks:
            try:
                callback(self)
            except Exception:
                log.exception("a callback of a finished call failed")


class DaemonExecutor:
    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[tuple[Pending, Callable[..., Any], tuple[Any, ...],
                                             dict[str, Any]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Pending:
        """Queue ``fn(*args, **kwargs)``; ``RuntimeError`` when closed or no thread can start."""
        pending = Pending()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name} is shut down")
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                thread.start()  # may raise RuntimeError: can't start new thread
                self._thread = thread
            self._queue.put((pending, fn, args, kwargs))
        return pending

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._run(*item)
            # Nothing of the call stays on the idle thread's frame: what it reached (a provider,
            # and so its manager) can be collected once its owner lets go (memhost.abandoned).
            del item

    @staticmethod
    def _run(pending: Pending, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> None:
        if not pending._start():
            return
        try:
            value = fn(*args, **kwargs)
        except BaseException as exc:  # handed to whoever waits on it
            pending._finish(None, exc)
        else:
            pending._finish(value, None)

    def shutdown(self) -> None:
        """Take no new calls; queued ones are cancelled, a running one is left to finish."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
            self._queue.put(None)
