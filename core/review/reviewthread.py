"""Which thread is a background review's, and a host prompt that answers "no" there by itself.

The review sets :data:`_local` on its own thread (and on the threads of its model calls); nobody is
there to answer a prompt raised on those threads, so a host wraps its approval callbacks with
:func:`deny_on_review_thread`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("memhost.review.background")  # the review's own log, where its readers look

_local = threading.local()

F = TypeVar("F", bound=Callable[..., Any])


def in_review_thread() -> bool:
    """True on a thread that is running a background review (or one of its model calls)."""
    return bool(getattr(_local, "active", False))


def deny_on_review_thread(callback: F, *, denied: Any = False) -> F:
    """Wrap a host's approval callback (a dangerous-command prompt, say) so that on the
    review's thread it answers ``denied`` without asking anyone, and elsewhere asks as before.
    Nobody is there to answer a prompt raised by a background pass; waiting would hang it."""

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if in_review_thread():
            log.info("background review: a prompt for the user was answered 'no' automatically")
            return denied
        return callback(*args, **kwargs)

    guarded.__wrapped__ = callback  # type: ignore[attr-defined]
    guarded.__name__ = getattr(callback, "__name__", "guarded")
    return guarded  # type: ignore[return-value]
