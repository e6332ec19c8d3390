"""Named steps of a memory write, where a test can have the writing process killed.

``MEMHOST_CRASH_AT=<step>`` in a process's environment, read at import (or by :func:`arm`),
makes that process SIGKILL itself the first time it reaches ``<step>`` (see ``STEPS``); the
durability tests use it to kill a writer between every two steps of a write and check what a
crash there leaves. Unset (always, outside those tests), :func:`reached` is a function that
does nothing.
"""

from __future__ import annotations

import os
import signal

#: Every step boundary a write passes, in order (``checkpoint-*`` only when the journal is full).
STEPS = (
    "locked",  # the lock is held, nothing read yet
    "temp-created",  # the temp file for the new text exists (empty, or a reused file's old text)
    "temp-written",  # the temp file holds the new text; nothing is committed yet
    "checkpoint-archived",  # the journal's archive records are in archive.jsonl, fsynced
    "checkpoint-folded",  # the metadata sidecar holds the journal's metadata, fsynced
    "checkpoint-synced",  # the memory file and the folder are fsynced
    "checkpoint-restarted",  # the journal starts a new generation
    "journal-written",  # the commit record is written, not yet synced
    "journal-synced",  # the commit record is durable: the write is committed
    "renamed",  # the memory file holds the new text (swapped or renamed); no answer yet
)

_AT = ""


def _kill_at(step: str) -> None:
    if step == _AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _nothing(step: str) -> None:
    return None


reached = _nothing


def arm(step: str) -> None:
    """Kill this process at ``step`` ("": never). Done at import from ``MEMHOST_CRASH_AT``; a
    process forked from one that had imported this module (the test suite's writers) reads the
    variable again by calling this."""
    global _AT, reached
    _AT = step
    reached = _kill_at if step else _nothing


arm(os.environ.get("MEMHOST_CRASH_AT", ""))
