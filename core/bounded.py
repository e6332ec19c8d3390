"""Calls the host waits for at most a bound, on a thread that never keeps the process alive.

:class:`DaemonExecutor` runs one call at a time on its own daemon thread. A call that hangs
keeps only that thread; the caller stops waiting after its bound, and the process still exits
when the host is done (``concurrent.futures.ThreadPoolExecutor`` joins its threads at exit, so a
hanging provider call would hold the process open until it returned).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class DaemonExecutor:
    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = \
            queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Queue ``fn(*args, **kwargs)``; ``RuntimeError`` when closed or no thread can start."""
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name} is shut down")
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                thread.start()  # may raise RuntimeError: can't start new thread
                self._thread = thread
            self._queue.put((future, lambda: fn(*args, **kwargs)))
        return future

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(call())
            except BaseException as exc:  # handed to whoever waits on the future
                future.set_exception(exc)

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
