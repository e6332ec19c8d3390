"""memhost for asyncio hosts: :class:`AsyncMemoryManager` and :class:`AsyncMemoryHub`.

The methods are :class:`~memhost.MemoryManager`'s and :class:`~memhost.MemoryHub`'s, awaitable.
Each call runs on a thread of a pool memhost owns (never the loop's default executor, which the
host's own blocking calls need), so a provider that hangs holds one of those threads while the
event loop goes on: a ``begin_turn`` whose recall hangs returns after
``memory.prefetch_timeout`` with ``recall == "timed-out"``, and every other task of the host
runs meanwhile. ``async with`` shuts down within ``memory.shutdown_timeout``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from memhost.builtin_providers.view import MemoryEntry
from memhost.errors import MemhostError
from memhost.hub import DEFAULT_MAX_OPEN, MemoryHub
from memhost.manager import MemoryManager, Turn
from memhost.worker import ShutdownReport

T = TypeVar("T")

#: Threads for one manager's calls (a hub's managers share the hub's, ``HUB_THREADS``).
MANAGER_THREADS = 4
HUB_THREADS = 32

AsyncConfirm = Callable[[str, str], "bool | Awaitable[bool]"]


class CallThreads:
    """A thread pool for blocking calls made on behalf of an event loop.

    Its threads are started up front, from a thread of its own: starting a thread waits until
    the new thread runs, and on a busy machine that wait would land on the event loop the first
    time several calls are in flight at once.
    """

    def __init__(self, threads: int, name: str, owner: str = "AsyncMemoryManager") -> None:
        self.owner = owner  # named in the error a call after shutdown raises
        self.closed = False
        self._threads, self._name = threads, name
        self._start()

    def _start(self) -> None:
        self.executor = ThreadPoolExecutor(self._threads, thread_name_prefix=self._name)
        self._pid = os.getpid()
        self.ready = threading.Event()
        threading.Thread(target=self._start_all, args=(self._threads,),
                         name=f"{self._name}-start", daemon=True).start()

    def _start_all(self, threads: int) -> None:
        started = threading.Barrier(threads)
        try:
            for _ in range(threads):
                # Each task waits until all are running, so the pool has to start every thread.
                self.executor.submit(started.wait, 5.0)
        except RuntimeError:  # closed before every thread was started: none is needed now
            started.abort()  # and the ones started stop waiting for the rest
        finally:
            self.ready.set()

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        if self._pid != os.getpid() and not self.closed:
            # A forked child (gunicorn --preload): the pool's threads stayed in the parent,
            # and a call handed to it would wait for ever. This process gets threads of its own.
            self._start()
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))
        except RuntimeError:  # "cannot schedule new futures after shutdown"
            if not self.closed:
                raise
            raise MemhostError(f"this {self.owner} is shut down; make a new one to go on "
                               "(its memory and its provider's writes are kept)") from None
        return await future

    def close(self) -> None:
        self.closed = True
        self.executor.shutdown(wait=False, cancel_futures=True)


class AsyncMemoryManager:
    """A :class:`~memhost.MemoryManager` for asyncio hosts: the same methods, awaitable.

    ``tool_schemas`` is a plain method (the schemas are in memory); everything that may touch a
    provider or a file is a coroutine.
    """

    def __init__(self, manager: MemoryManager, *, threads: CallThreads | None = None) -> None:
        #: The synchronous manager underneath.
        self.sync = manager
        self._own_threads = threads is None
        self._threads = threads or CallThreads(MANAGER_THREADS, "memhost-aio")

    @classmethod
    async def from_home(cls, home: str | Path | None = None, *, user_id: str = "",
                        **overrides: Any) -> AsyncMemoryManager:
        """:meth:`MemoryManager.from_home`, off the event loop (it may open a database)."""
        threads = CallThreads(MANAGER_THREADS, "memhost-aio")
        try:
            manager = await threads.run(MemoryManager.from_home, home, user_id=user_id,
                                        **overrides)
        except BaseException:
            threads.close()
            raise
        made = cls(manager, threads=threads)
        made._own_threads = True
        return made

    @property
    def home(self) -> Path:
        return self.sync.home

    @property
    def session_id(self) -> str:
        return self.sync.session_id

    # -- the host contract, awaitable ------------------------------------------------------------

    async def start_session(self, session_id: str, *, context: str = "primary",
                            history: list[dict[str, Any]] | None = None) -> None:
        await self._threads.run(self.sync.start_session, session_id, context=context,
                                history=history)

    async def system_prompt(self) -> str:
        return await self._threads.run(self.sync.system_prompt)

    def tool_schemas(self, format: str = "bare") -> list[dict[str, Any]]:
        return self.sync.tool_schemas(format)

    async def call_tool(self, call: Any, arguments: dict[str, Any] | str | None = None) -> str:
        return await self._threads.run(self.sync.call_tool, call, arguments)

    async def begin_turn(self, user_message: Any, **options: Any) -> Turn:
        return await self._threads.run(self.sync.begin_turn, user_message, **options)

    async def finish_turn(self, user_message: Any, reply: Any, *, interrupted: bool = False,
                          messages: list[dict[str, Any]] | None = None) -> None:
        await self._threads.run(self.sync.finish_turn, user_message, reply,
                                interrupted=interrupted, messages=messages)

    async def pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return await self._threads.run(self.sync.pre_compress, messages)

    async def subtask_finished(self, task: str, result: str, child_session_id: str) -> None:
        await self._threads.run(self.sync.subtask_finished, task, result, child_session_id)

    async def rotate(self, new_session_id: str, reason: str, *,
                     messages: list[dict[str, Any]] | None = None) -> None:
        await self._threads.run(self.sync.rotate, new_session_id, reason, messages=messages)

    async def end_session(self, messages: list[dict[str, Any]] | None = None) -> None:
        await self._threads.run(self.sync.end_session, messages)

    async def entries(self, target: str = "memory") -> list[MemoryEntry]:
        return await self._threads.run(self.sync.entries, target)

    async def flush(self, timeout: float | None = None) -> bool:
        return await self._threads.run(self.sync.flush, timeout)

    async def status(self) -> dict[str, Any]:
        return await self._threads.run(self.sync.status)

    async def shutdown(self, timeout: float | None = None) -> ShutdownReport:
        """:meth:`MemoryManager.shutdown`: within its bound, whatever the providers do. Again
        after that: the same report, at once."""
        if self._threads.closed and self.sync.closed:
            return self.sync.shutdown(timeout)  # kept from the first call: nothing waits
        try:
            return await self._threads.run(self.sync.shutdown, timeout)
        finally:
            if self._own_threads:
                self._threads.close()

    def set_confirm_callback(self, callback: AsyncConfirm | None) -> None:
        """``callback(summary, detail)`` answers an approval prompt. A coroutine function runs
        on the event loop this method is called from (call it from inside that loop)."""
        if callback is None or not inspect.iscoroutinefunction(callback):
            self.sync.set_confirm_callback(callback)  # type: ignore[arg-type]
            return
        loop = asyncio.get_running_loop()

        def confirm(summary: str, detail: str) -> bool:
            # Runs on a pool thread inside call_tool, which waits for the loop's answer.
            return bool(asyncio.run_coroutine_threadsafe(callback(summary, detail), loop).result())

        self.sync.set_confirm_callback(confirm)

    async def __aenter__(self) -> AsyncMemoryManager:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()


class AsyncMemoryHub:
    """A :class:`~memhost.MemoryHub` for asyncio hosts: ``await hub.manager(user_id)``."""

    def __init__(self, home: str | Path | None = None, *, max_open: int = DEFAULT_MAX_OPEN,
                 threads: int = HUB_THREADS, **overrides: Any) -> None:
        self.sync = MemoryHub(home, max_open=max_open, **overrides)
        self._threads = CallThreads(threads, "memhost-hub", owner="AsyncMemoryHub")

    @property
    def home(self) -> Path:
        return self.sync.home

    async def manager(self, user_id: str) -> AsyncMemoryManager:
        """``user_id``'s manager (see :meth:`MemoryHub.manager`); its calls use the hub's
        threads."""
        manager = await self._threads.run(self.sync.manager, user_id)
        return AsyncMemoryManager(manager, threads=self._threads)

    def users(self) -> list[str]:
        return self.sync.users()

    def status(self) -> dict[str, Any]:
        return self.sync.status()

    async def close(self, timeout: float | None = None) -> dict[str, ShutdownReport]:
        try:
            return await self._threads.run(self.sync.close, timeout)
        finally:
            self._threads.close()

    async def __aenter__(self) -> AsyncMemoryHub:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


__all__ = ["AsyncMemoryHub", "AsyncMemoryManager", "CallThreads"]
