"""A value built once per process, however many threads ask for it first.

``functools.cache`` keeps a builder's value, but two threads that both find none build it both:
a host whose sixteen threads took their first turns together built the threat scanner's anchor
automaton (~2 ms alone) a dozen times over, each build slowed by the others, ~1 s of CPU in
all. :func:`once` lets the first caller build while the others wait for its value, and keeps
what ``functools.cache`` offered its callers (``cache_clear``, ``__wrapped__``). A call after
the build costs ~45 ns (``functools.cache``: ~32).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, cast

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
_UNSET: Any = object()


class Once(Protocol[T_co]):
    __wrapped__: Callable[[], T_co]

    def __call__(self) -> T_co: ...

    def cache_clear(self) -> None: ...


#: Each built value's [value, lock], so a forked child can be given new locks.
_STATES: list[list[Any]] = []


def once(builder: Callable[[], T]) -> Once[T]:
    """``@once`` on a function of no arguments: its value, built on the first call (a builder
    that raises leaves it unbuilt, as ``functools.cache`` does)."""
    state: list[Any] = [_UNSET, threading.Lock()]
    _STATES.append(state)

    @functools.wraps(builder)
    def built() -> T:
        value = state[0]
        if value is _UNSET:
            with state[1]:
                value = state[0]
                if value is _UNSET:
                    value = state[0] = builder()
        return value  # (not typing.cast: a function call on every use)

    def cache_clear() -> None:
        """Forget the value: the next call builds it again."""
        with state[1]:
            state[0] = _UNSET

    built.cache_clear = cache_clear  # type: ignore[attr-defined]
    return cast(Once[T], built)


def _new_locks() -> None:
    # A child forked while another thread of the parent was building starts with that lock
    # held by a thread it does not have: it would wait for ever.
    for state in _STATES:
        state[1] = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_locks)
