"""A manager its host let go of without :meth:`~memhost.MemoryManager.shutdown`.

A host that makes a manager per request and never shuts it down kept, for each one, its
background thread, its provider's call thread and its outbox journal (locked, so no later
manager replayed it) for the life of the process. Now such a manager is collected like any
object, and what it started then ends by itself: the background worker runs what it had
queued, then, on its own thread, gives the journals up (what they still owe is replayed by the
next manager) and lets the providers' threads end. The providers' ``shutdown`` hooks are not
called (nobody waits for them), and a :class:`ResourceWarning` says so, as Python does for a
file left open.

For the manager to be collected at all, nothing its threads or collaborators keep may lead back
to it: they hold it weakly (:func:`weak_method`, :func:`weak_attribute`), and idle threads drop
the last task they ran. The finalizer itself only flags and wakes the worker: it may run on any
thread, the worker's own included, in the middle of anything.
"""

from __future__ import annotations

import os
import warnings
import weakref
from collections.abc import Callable
from typing import Any


def weak_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (a bound method), called while its object lives; a no-op after."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = ref()
        return None if bound is None else bound(*args, **kwargs)

    return call


def weak_attribute(owner: object, name: str, gone: Any = None) -> Callable[[], Any]:
    """A function reading ``owner.name`` while ``owner`` lives, ``gone`` after."""
    ref = weakref.ref(owner)
    return lambda: gone if (found := ref()) is None else getattr(found, name)


class Leftovers:
    """What a manager started, held apart from it: ``weakref.finalize`` must not hold the
    manager itself."""

    def __init__(self, worker: Any, providers: Any, prefetch: Any) -> None:
        self.worker, self.providers, self.prefetch = worker, providers, prefetch
        self.deliveries: list[Any] = []
        self.pid = os.getpid()

    def abandoned(self) -> None:
        """The manager was collected: end what it started, unless it was shut down, or this
        is a process forked from the one that made it (the journals and their locks are the
        parent's: giving them up here would unlock, or delete, the parent's live journal)."""
        if not self.worker.accepting or os.getpid() != self.pid:
            return
        warnings.warn("a MemoryManager was let go of without shutdown(): its queued provider "
                      "writes are delivered and its threads end, but its providers were not "
                      "shut down. Call shutdown() (or use `with`), or keep one manager per user "
                      "in a MemoryHub", ResourceWarning, stacklevel=1)
        self.worker.stop_when_idle(self._release)

    def _release(self) -> None:
        for delivery in self.deliveries:
            for journal in delivery.journals:
                journal.close()
        self.prefetch.shutdown()
        self.providers.release_threads()


def watch(manager: object, leftovers: Leftovers) -> Leftovers:
    """End what ``manager`` started once it is collected (not at the interpreter's exit: what
    a process leaves running then ends with it)."""
    weakref.finalize(manager, leftovers.abandoned).atexit = False
    return leftovers


__all__ = ["Leftovers", "watch", "weak_attribute", "weak_method"]
