"""Connection pools shared by every store of one process that connects the same way.

A ``MemoryHub`` opens one provider instance, and so one recall store, per user. If each store
made its own pool, a gateway serving 200 users would hold 200 pools and their connections; the
stores borrow one pool here instead, keyed by everything that shapes a connection, so a process
keeps at most ``pool_size`` connections to one database whatever the number of users. The pool
closes when the last store that borrowed it gives it back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable

from psycopg_pool import ConnectionPool

_lock = threading.Lock()
#: key -> [pool, how many stores hold it]
_pools: dict[Hashable, list[object]] = {}
#: key -> the lock held while its pool is being opened
_opening: dict[Hashable, threading.Lock] = {}
#: The pools a forked child inherited: its parent's connections, never used nor closed here
#: (closing them would end the parent's sessions on the server), only kept from the collector.
_inherited: list[object] = []


def _forget_after_fork() -> None:
    """In a forked child: the parent's pools are the parent's; this process makes its own."""
    global _lock
    _inherited.extend(entry[0] for entry in _pools.values())
    _pools.clear()
    _opening.clear()
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def borrow(key: Hashable, make: Callable[[], ConnectionPool]) -> ConnectionPool:
    """The pool for ``key``; made (not yet opened) by ``make`` when there is none."""
    with _lock:
        entry = _pools.get(key)
        if entry is None:
            entry = _pools[key] = [make(), 0]
        entry[1] = int(entry[1]) + 1  # type: ignore[call-overload]
        return entry[0]  # type: ignore[return-value]


def open_once(key: Hashable, pool: ConnectionPool, first: Callable[[], None]) -> None:
    """Open ``pool`` unless it is open already, calling ``first()`` just before: the stores
    sharing it then make that call once between them, not once each (a direct connection
    attempt would otherwise be one connection more than the pool's bound per store opening)."""
    with _lock:
        opening = _opening.setdefault(key, threading.Lock())
    with opening:
        if pool.closed:
            first()
            pool.open(wait=False)


def give_back(key: Hashable, pool: ConnectionPool, *, timeout: float = 2.0) -> None:
    """A store is done with ``pool``; the last one to give it back closes it. One a forked
    child inherited is never closed there: its connections are the parent's."""
    if any(pool is inherited for inherited in _inherited):
        return
    with _lock:
        entry = _pools.get(key)
        last = entry is None or entry[0] is not pool or int(entry[1]) <= 1  # type: ignore[call-overload]
        if entry is not None and entry[0] is pool:
            if last:
                del _pools[key]
                _opening.pop(key, None)
            else:
                entry[1] = int(entry[1]) - 1  # type: ignore[call-overload]
    if last:
        pool.close(timeout=timeout)  # outside the lock: closing waits for connections
