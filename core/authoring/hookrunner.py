"""Calling one provider's hooks in isolation: through a pluggy manager of its own (each
implementation gets only the arguments it accepts), on a daemon thread joined for at most a
bound, optionally with the network refused. Used by ``memhost providers check``, the
availability probe and the provider contract suite."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pluggy

from memhost import hookspecs
from memhost.errors import MemhostError


class HookTimeout(Exception):
    """A hook that did not return within its bound (its thread is left to finish alone)."""

    def __init__(self, hook: str, bound: float) -> None:
        super().__init__(f"{hook}() did not return within {bound:g}s")


class HookRunner:
    """Calls one provider's hooks through pluggy (each implementation gets only the arguments it
    accepts), on a daemon thread joined for at most a bound; raises what the provider raised."""

    def __init__(self, provider: Any) -> None:
        self.pm = pluggy.PluginManager("memhost")
        self.pm.add_hookspecs(hookspecs)
        self.pm.register(provider, name="provider-under-check")
        self.hooks = {caller.name for caller in self.pm.get_hookcallers(provider) or []}

    def implements(self, hook: str) -> bool:
        return hook in self.hooks

    def call(self, hook: str, bound: float, **kwargs: Any) -> Any:
        outcome: dict[str, Any] = {}

        def run() -> None:
            try:
                results = getattr(self.pm.hook, hook)(**kwargs)
                outcome["value"] = results[0] if results else None
            except BaseException as exc:  # handed back to the caller's thread
                outcome["error"] = exc

        worker = threading.Thread(target=run, name=f"memhost-check-{hook}", daemon=True)
        worker.start()
        worker.join(bound)
        if worker.is_alive():
            raise HookTimeout(hook, bound)
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")


@contextlib.contextmanager
def no_network(attempts: list[str]) -> Iterator[None]:
    """Refuse (and record) outgoing connections and name lookups inside the block."""
    saved = (socket.socket.connect, socket.socket.connect_ex, socket.create_connection,
             socket.getaddrinfo)

    def refuse(what: str) -> Callable[..., Any]:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            attempts.append(what)
            raise OSError(f"network access is not allowed here ({what})")
        return blocked

    socket.socket.connect = refuse("connect")  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse("connect_ex")  # type: ignore[method-assign]
    socket.create_connection = refuse("create_connection")  # type: ignore[assignment]
    socket.getaddrinfo = refuse("getaddrinfo")  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = saved[0], saved[1]  # type: ignore[method-assign]
        socket.create_connection, socket.getaddrinfo = saved[2], saved[3]


def error_text(exc: BaseException) -> str:
    """What went wrong, in one line: memhost's own errors as they are, others with their type."""
    if isinstance(exc, MemhostError | HookTimeout):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
