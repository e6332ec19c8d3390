"""Many users in one process: :class:`MemoryHub`.

A gateway or a web service keeps one hub for its home. ``hub.manager(user_id)`` is that user's
:class:`~memhost.MemoryManager`: its builtin memory is in ``<home>/users/<user_id>/``, and its
external provider serves that user alone (``initialize`` gets the user's folder as ``home`` and
the id as ``user_id``). What users share is read once, when the hub is made or on the first
opening: ``config.toml``, the provider (found in its folders or entry points) and its runtime
config (the schema, stored settings and secrets in ``.env``); so a changed setting reaches a
hub's users when a new hub is made. What a provider shares across its instances, such as the
postgres connection pool, is shared across users.

At most ``max_open`` managers stay open. Opening one more closes the least recently used one
that is between turns: its queued writes are delivered within ``memory.shutdown_timeout``, or
kept in its outbox and delivered when the user comes back. A manager with a turn open
(``begin_turn`` without its ``finish_turn``), or handed out less than ``MIN_IDLE_SECONDS`` ago,
is never closed under the host, so the bound can be passed for as long as every open manager is
in use; a turn with no call for ``ABANDONED_TURN_SECONDS`` counts as abandoned, not open. A
write made through a manager after it was closed is kept in the outbox too. A user whose
manager was closed gets a new one from the next ``manager(user_id)``, with the session it had
restarted (and so a fresh snapshot of the memory): the hub remembers the sessions of the last
``SESSIONS_KEPT`` users it closed, so a process that meets users by the million over its life
keeps a bounded record of them.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from memhost.config import Config, load_config, validate
from memhost.discovery.shared import SharedProviderReads
from memhost.home import config_path, memhost_home
from memhost.manager import MemoryManager
from memhost.users import check_user_id, list_users
from memhost.worker import ShutdownReport

log = logging.getLogger("memhost.hub")

DEFAULT_MAX_OPEN = 64
#: A manager handed out this recently counts as in use: the host is about to call it.
MIN_IDLE_SECONDS = 1.0
#: A turn begun this long ago, with no call since, was abandoned: a host whose model call failed
#: and that never called ``finish_turn`` would otherwise keep that manager open for ever.
ABANDONED_TURN_SECONDS = 900.0
#: The sessions of this many users closed to make room are remembered, the most recent kept: a
#: user further back gets a manager without a session (the host starts one, see docs/hosts.md).
SESSIONS_KEPT = 10_000
OPENING_LOCKS = 64
CLOSING_THREADS = 16


class MemoryHub:
    """The managers of the users of one home, at most ``max_open`` of them open at once."""

    def __init__(self, home: str | Path | None = None, *, max_open: int = DEFAULT_MAX_OPEN,
                 **overrides: Any) -> None:
        if isinstance(max_open, bool) or not isinstance(max_open, int) or max_open < 1:
            raise ValueError(f"max_open must be a whole number of at least 1, not {max_open!r}")
        self.home = memhost_home(home)
        config = load_config(self.home)
        if overrides:  # [memory] keys, validated like the file
            data = config.model_dump()
            data["memory"].update(overrides)
            config = validate(data, config_path(self.home))
        self.config: Config = config
        self.max_open = max_open
        self._open: OrderedDict[str, MemoryManager] = OrderedDict()
        self._handed_out: dict[str, float] = {}
        self._closing: dict[str, threading.Event] = {}
        # user -> (session_id, context), of users closed to make room, the most recent last
        self._sessions: OrderedDict[str, tuple[str, str]] = OrderedDict()
        # Striped, so the locks stay few however many users come and go.
        self._opening = [threading.Lock() for _ in range(OPENING_LOCKS)]
        # The users' provider, found and configured once (see memhost.discovery.shared).
        self._provider_reads = SharedProviderReads()
        self._lock = threading.Lock()
        self._closed = False
        self.closed_to_make_room = 0
        #: Seconds after being handed out during which a manager counts as in use.
        self.min_idle = MIN_IDLE_SECONDS
        #: Seconds without a call after which an open turn counts as abandoned.
        self.abandoned_after = ABANDONED_TURN_SECONDS
        #: How many closed users' sessions are remembered for their next manager.
        self.sessions_kept = SESSIONS_KEPT
        _HUBS.add(self)

    def _forget_parent(self) -> None:
        """In a process forked from the one that made this hub: the managers open there are
        the parent's (their threads did not come along; their connections and journals are
        the parent's), so this process opens its own; each user's session carries over."""
        _INHERITED.extend(self._open.values())  # never used nor shut down here
        for user_id, manager in self._open.items():
            self._remember_session(user_id, manager)
        self._open.clear()
        self._handed_out.clear()
        self._closing.clear()
        self._opening = [threading.Lock() for _ in range(OPENING_LOCKS)]
        self._lock = threading.Lock()

    # -- users -----------------------------------------------------------------------------------

    def manager(self, user_id: str) -> MemoryManager:
        """``user_id``'s manager, opened now if it is not open (:class:`memhost.users.UserIdError`
        for an id that cannot name a folder). Ask for it when a turn starts and use it at once;
        don't keep it across turns, since a manager between turns may be closed to make room."""
        check_user_id(user_id)
        opening = self._opening[hash(user_id) % OPENING_LOCKS]
        with opening:  # one opening per user at a time, so a user never has two managers
            self._wait_until_closed(user_id)
            with self._lock:
                self._check_not_closed()
                manager = self._open.get(user_id)
                if manager is not None and not manager.closed:
                    self._open.move_to_end(user_id)
                    self._handed_out[user_id] = time.monotonic()
                    return manager
                self._open.pop(user_id, None)
                session = self._sessions.pop(user_id, None)
            manager = MemoryManager.from_config(self.home, self.config, user_id=user_id,
                                                provider_reads=self._provider_reads)
            if session is not None:
                manager.start_session(session[0], context=session[1])
            with self._lock:
                closed_meanwhile = self._closed
                if not closed_meanwhile:
                    self._open[user_id] = manager
                    self._handed_out[user_id] = time.monotonic()
                    victims = self._make_room(opened=user_id)
            if closed_meanwhile:  # close() ran while this one opened: it never saw it
                manager.shutdown()
                self._check_not_closed()
        for victim, old in victims:  # outside every lock: a shutdown may take its whole bound
            self._close(victim, old)
        return manager

    def _wait_until_closed(self, user_id: str) -> None:
        with self._lock:
            closing = self._closing.get(user_id)
        if closing is not None:
            closing.wait()

    def _make_room(self, opened: str) -> list[tuple[str, MemoryManager]]:
        """Take the least recently used idle managers over the bound out of the open set; never
        ``opened``, the one being handed out (with ``min_idle`` 0 it would count as idle)."""
        excess = len(self._open) - self.max_open
        now = time.monotonic()
        victims = []
        for user_id, manager in self._open.items():
            if len(victims) >= excess:
                break
            if user_id == opened:
                continue
            abandoned = manager.open_turns > 0 and manager.quiet_seconds >= self.abandoned_after
            if ((manager.open_turns == 0 or abandoned)
                    and now - self._handed_out.get(user_id, 0) >= self.min_idle):
                victims.append((user_id, manager))
                if abandoned:
                    log.warning("memory hub: user %r has a turn begun and not finished, with no "
                                "call for %.0f s; it is taken for abandoned (finish_turn was "
                                "never called) and the manager closed. Its later writes are "
                                "kept in the outbox.", user_id, manager.quiet_seconds)
        for user_id, manager in victims:
            del self._open[user_id]
            self._handed_out.pop(user_id, None)
            self._closing[user_id] = threading.Event()
            self._remember_session(user_id, manager)
        if victims:
            self.closed_to_make_room += len(victims)
            log.info("memory hub: closing %d idle manager(s) to stay within max_open=%d",
                     len(victims), self.max_open)
        return victims

    def _remember_session(self, user_id: str, manager: MemoryManager) -> None:
        """Keep ``manager``'s session for ``user_id``'s next manager (under ``_lock``), and
        forget the oldest kept past ``sessions_kept``."""
        if manager.session_id:
            self._sessions[user_id] = (manager.session_id, manager.context)
            self._sessions.move_to_end(user_id)
        while len(self._sessions) > max(0, self.sessions_kept):
            self._sessions.popitem(last=False)

    def _close(self, user_id: str, manager: MemoryManager,
               timeout: float | None = None) -> ShutdownReport:
        try:
            return manager.shutdown(timeout)
        finally:
            with self._lock:
                done = self._closing.pop(user_id, None)
            if done is not None:
                done.set()

    def _check_not_closed(self) -> None:
        if self._closed:
            raise RuntimeError("this MemoryHub is closed; make a new one")

    def users(self) -> list[str]:
        """Every user with a folder under ``<home>/users/``, open or not."""
        return list_users(self.home)

    # -- the whole hub ---------------------------------------------------------------------------

    def close(self, timeout: float | None = None) -> dict[str, ShutdownReport]:
        """Shut every open manager down, each within ``timeout`` (default
        ``memory.shutdown_timeout``), several at once; their reports by user."""
        with self._lock:
            self._closed = True
            managers = list(self._open.items())
            self._open.clear()
            for user_id, _ in managers:
                self._closing[user_id] = threading.Event()
        reports: dict[str, ShutdownReport] = {}
        if managers:
            # At once: a hub of wedged providers must not take max_open shutdown bounds to close.
            with ThreadPoolExecutor(min(CLOSING_THREADS, len(managers)),
                                    thread_name_prefix="memhost-hub-close") as pool:
                futures = {user_id: pool.submit(self._close, user_id, manager, timeout)
                           for user_id, manager in managers}
            reports = {user_id: future.result() for user_id, future in futures.items()}
        for user_id in list(self._closing):
            self._wait_until_closed(user_id)  # managers a concurrent opening was closing
        return reports

    def status(self) -> dict[str, Any]:
        """JSON-ready: the home, the open users (least recently used first) and the bound."""
        with self._lock:
            return {"home": str(self.home), "open": list(self._open), "max_open": self.max_open,
                    "closed_to_make_room": self.closed_to_make_room, "closed": self._closed}

    def __enter__(self) -> MemoryHub:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


#: The hubs of this process, and the managers a forked child inherited from its parent's (kept
#: from the collector: closing their files or connections here would close the parent's).
_HUBS: weakref.WeakSet[MemoryHub] = weakref.WeakSet()
_INHERITED: list[MemoryManager] = []


def _after_fork_in_child() -> None:
    for hub in list(_HUBS):
        hub._forget_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["ABANDONED_TURN_SECONDS", "DEFAULT_MAX_OPEN", "MemoryHub"]
