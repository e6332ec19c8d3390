"""Progress lines on stderr while a server gets ready.

Starting a server can wait on a provider's import and its connection, for seconds when a
database is slow or unreachable. :func:`step` says on stderr what is being waited for before
the wait starts, repeats it while the wait lasts, and says how it ended, so a user watching a
silent terminal knows what it is waiting for. stdout is never touched (over stdio it is a
protocol stream).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

#: Seconds between "still waiting" lines.
REPEAT_EVERY = 5.0


@contextlib.contextmanager
def step(label: str, what: str, *, stream: TextIO | None = None, every: float = REPEAT_EVERY,
         after: float = 0.0) -> Iterator[None]:
    """Print ``label: what...``, ``label: still what (N s)`` every ``every`` seconds while the
    block runs, then ``label: what: done in N s`` (or ``failed``). With ``after``, nothing is
    printed unless the block is still running ``after`` seconds in (for work that is usually
    quick, done once per request)."""
    out = stream if stream is not None else sys.stderr
    started = time.monotonic()
    done = threading.Event()
    spoke = threading.Event()

    def say(text: str) -> None:
        spoke.set()
        with contextlib.suppress(OSError, ValueError):  # a closed stderr must not break a start
            print(f"{label}: {text}", file=out, flush=True)

    def remind() -> None:
        if after and not done.wait(after):
            say(f"{what}...")
        while not done.wait(every):
            say(f"still {what} ({time.monotonic() - started:.0f} s)")

    if not after:
        say(f"{what}...")
    reminder = threading.Thread(target=remind, name="memhost-progress", daemon=True)
    reminder.start()
    try:
        yield
    except BaseException:
        done.set()
        reminder.join()
        if spoke.is_set():
            say(f"{what}: failed after {time.monotonic() - started:.1f} s")
        raise
    done.set()
    reminder.join()
    if spoke.is_set():
        say(f"{what}: done in {time.monotonic() - started:.1f} s")


def loading_what(home: Path) -> str:
    """What building a manager for ``home`` waits on, for a progress line."""
    from memhost.config import read_config
    from memhost.discovery import BUILTIN_ONLY

    name = read_config(home)[0].memory.provider.strip()
    if name.lower() in BUILTIN_ONLY:
        return "loading the builtin memory"
    return f"loading memory provider {name!r} (import, check_available)"


def starting_what(manager: Any) -> str:
    """What starting a session of ``manager`` waits on, for a progress line."""
    name = manager.status()["external_provider"]
    return (f"starting the memory session (memory provider {name!r} connects)" if name
            else "starting the memory session")
