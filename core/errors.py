"""The exceptions memhost raises, and the one a provider may raise on purpose."""

from __future__ import annotations

import os


class MemhostError(Exception):
    """Base class: every memhost error carries a message a person can act on."""


class ConfigError(MemhostError):
    """The configuration is invalid; the message names the file, the key and what is expected."""


class ProviderError(MemhostError):
    """A provider could not be registered or loaded; the message names the provider."""


class RetryableError(MemhostError):
    """Raised by a provider when a write failed for a passing reason (a locked database, a
    dropped connection). The manager keeps the write in the outbox and retries it, in order,
    with backoff, instead of counting it as lost."""


class ForkedError(MemhostError):
    """A manager used in a process forked from the one that made it."""


def check_not_forked(pid: int) -> None:
    """Raise :class:`ForkedError` unless this is process ``pid``, where the manager was made.

    A forked child gets a copy of the manager without its background threads, and with the
    parent's outbox journal and its provider's connections (a database socket, a SQLite
    handle), which two processes must not share: its provider writes would wait for ever, or
    reach the provider twice, or not at all. So it is refused, loudly, on first use."""
    if pid != os.getpid():
        raise ForkedError(
            f"this MemoryManager was made in process {pid}, and this process was forked from "
            "it: its provider's threads, connections and outbox journal cannot be shared. Make "
            "the MemoryManager (or MemoryHub) in each process after it forks (gunicorn's "
            "post_fork, Celery's worker_process_init, multiprocessing's initializer)")
