"""Calls run on one daemon thread and awaited with a time bound: a turn's recall.

``begin_turn`` asks the external provider for recall on another thread, so that a provider that
hangs costs the turn ``prefetch_timeout`` and no more. A one-thread ``ThreadPoolExecutor`` did
this before; each call then built a ``Future`` (a ``Condition`` and its locks), a work item and
a semaphore check, and the hand-off to the thread and back was about twice what it is here: a
put on a C ``SimpleQueue`` and one C lock the caller waits on. On every turn of every host,
that difference is most of what memhost's own turn path costs.

The thread is a daemon: a call that never returns cannot keep the process alive at exit.
"""

from __future__ import annotations

import _thread
import logging
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

log = logging.getLogger(__name__)


class Pending:
    """A call handed to a :class:`CallThread`: what ``concurrent.futures.Future`` offers that
    the turn path uses (``done``, ``result(timeout)``, ``add_done_callback``)."""

    __slots__ = ("_callbacks", "_error", "_finished", "_value")

    def __init__(self) -> None:
        self._finished = _thread.allocate_lock()
        self._finished.acquire()  # released once, when the call has returned or raised
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Pending], Any]] | None = []

    def done(self) -> bool:
        return not self._finished.locked()

    def result(self, timeout: float | None = None) -> Any:
        """The call's value (or its exception, raised); ``TimeoutError`` after ``timeout``."""
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

    def _finish(self, value: Any, error: BaseException | None) -> None:
        self._value, self._error = value, error
        with _CALLBACKS:
            callbacks, self._callbacks = self._callbacks or [], None
            self._finished.release()
        for callback in callbacks:
            try:
                callback(self)
            except Exception:
                log.exception("a callback of a finished call failed")


_CALLBACKS = threading.Lock()


class CallThread:
    """One daemon thread that runs submitted calls in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._calls: SimpleQueue[tuple[Pending, Callable[..., Any], tuple[Any, ...],
                                       dict[str, Any]] | None] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Pending:
        pending = Pending()
        if self._closed:
            raise RuntimeError(f"{self.name} is shut down")
        self._calls.put((pending, fn, args, kwargs))
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                    self._thread.start()
        return pending

    def shutdown(self, wait: bool = False, *, cancel_futures: bool = False) -> None:
        """Stop after the calls already submitted (those still queued are dropped with
        ``cancel_futures``); ``wait`` joins the thread."""
        self._closed = True
        if cancel_futures:
            while not self._calls.empty():
                item = self._calls.get_nowait()
                if item is not None:
                    item[0]._finish(None, RuntimeError(f"{self.name} was shut down"))
        self._calls.put(None)
        if wait and self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while (item := self._calls.get()) is not None:
            pending, fn, args, kwargs = item
            try:
                value = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the caller, as a Future would
                pending._finish(None, exc)
            else:
                pending._finish(value, None)
