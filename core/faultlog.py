"""How a provider fault is logged: the first traceback in full, then a count.

A provider that fails on every call would otherwise print the same traceback once a turn. Per
provider and hook, the first fault is logged with its traceback, trimmed of pluggy's and
memhost's own dispatch frames (they are the same every time and hide the provider's); later
faults of the same hook are counted, and a one-line summary is logged at the 2nd, 10th, 100th...
occurrence. A write hook failing with an ordinary exception also gets a hint: if the failure
passes (a database that is down), raise :class:`memhost.RetryableError` so the write is retried
instead of parked in the dead-letter queue.
"""

from __future__ import annotations

import logging
import threading
import traceback
from pathlib import Path

import pluggy

from memhost.security.redact import redact

#: Hooks whose calls are writes kept in the outbox.
WRITE_HOOKS = frozenset({"sync_turn", "on_builtin_write", "session_end", "rotate", "on_subtask"})

RETRYABLE_HINT = ("if this failure passes by itself (a service that is down, a lock), raise "
                  "memhost.RetryableError instead: the write is then retried in order rather "
                  "than parked in the outbox's failed/ folder")

_HIDDEN = (str(Path(pluggy.__file__).parent), str(Path(__file__).with_name("providers.py")))


def trimmed_traceback(exc: BaseException) -> str:
    """``exc``'s traceback without pluggy's frames or memhost's dispatch frame."""
    summary = traceback.TracebackException.from_exception(exc)
    _trim(summary)
    return redact("".join(summary.format()).rstrip())


def _trim(summary: traceback.TracebackException) -> None:
    kept = [frame for frame in summary.stack if not frame.filename.startswith(_HIDDEN)]
    summary.stack = traceback.StackSummary.from_list(kept)
    for chained in (summary.__cause__, summary.__context__):
        if chained is not None:
            _trim(chained)


def _is_milestone(count: int) -> bool:
    """2, 10, 100, 1000, ...: how often a repeated fault is summarised."""
    if count == 2:
        return True
    while count >= 10 and count % 10 == 0:
        count //= 10
    return count == 1


class FaultLog:
    """Rate-limited WARNINGs for provider faults, keyed by (provider, hook)."""

    def __init__(self, logger: logging.Logger) -> None:
        self.log = logger
        self._counts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def count(self, provider: str, hook: str) -> int:
        return self._counts.get((provider, hook), 0)

    def report(self, provider: str, hook: str, message: str,
               exc: BaseException | None = None) -> None:
        with self._lock:
            count = self._counts[(provider, hook)] = self._counts.get((provider, hook), 0) + 1
        if count == 1:
            detail = ""
            if exc is not None and not isinstance(exc, SystemExit):
                detail = "\n" + trimmed_traceback(exc)
            self.log.warning("provider %r failed in %s: %s%s", provider, hook, message, detail)
        elif _is_milestone(count):
            ordinary = exc is not None and not isinstance(exc, SystemExit)
            hint = f"; {RETRYABLE_HINT}" if ordinary and hook in WRITE_HOOKS else ""
            self.log.warning("provider %r failed in %s %d times so far (only the first "
                             "traceback is shown); last: %s%s", provider, hook, count, message,
                             hint)

    def repeated(self, provider: str, topic: str, message: str) -> None:
        """Log ``message`` the first time, then with a count at the 2nd, 10th, 100th... time."""
        with self._lock:
            count = self._counts[(provider, topic)] = self._counts.get((provider, topic), 0) + 1
        if count == 1:
            self.log.warning("%s", message)
        elif _is_milestone(count):
            self.log.warning("%s (%d times so far)", message, count)
