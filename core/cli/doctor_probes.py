"""What ``memhost doctor`` looks at on a file, shared by its sections: whether the file's lock is
held, leftover temp files of an interrupted atomic write, and a mode that lets others read it."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from memhost.cli.doctor import Context

TEMP_GRACE_SECONDS = 60  # a younger temp file may belong to a write in progress


def lock_state(path: Path) -> str:
    """``free``, ``held`` (another process holds it right now) or ``unknown (...)``."""
    from filelock import Timeout

    from memhost.files import lock_for

    lock_file = Path(str(path) + ".lock")
    if not lock_file.exists():
        return "free"  # nobody can hold a lock whose file does not exist
    try:
        lock = lock_for(path, timeout=0)
        lock.acquire()
    except Timeout:
        return "held"
    except OSError as exc:
        return f"unknown ({exc.strerror or exc})"
    lock.release()
    return "free"


def leftover_temp_files(path: Path, now: float) -> tuple[list[str], list[str], list[str]]:
    """Temp files of atomic writes to ``path``: (stale ones, recent ones, kept ones). A temp
    file is stale when it is old or its writer's process is gone; a young one may be a write in
    progress; one whose writer runs here is kept by it (a memory file's writer keeps the file
    its last write swapped out, for the next: memhost.builtin_providers.tempfiles.reuse)."""
    from memhost.files import temp_writer_alive, temp_writer_gone

    stale: list[str] = []
    recent: list[str] = []
    kept: list[str] = []
    try:
        candidates = sorted(path.parent.glob(f".{path.name}.*.tmp"))
    except OSError:
        return stale, recent, kept
    for candidate in candidates:
        try:
            mtime = candidate.stat().st_mtime
        except OSError:
            continue
        if temp_writer_alive(candidate.name):
            kept.append(str(candidate))
            continue
        young = now - mtime < TEMP_GRACE_SECONDS and not temp_writer_gone(candidate.name)
        (recent if young else stale).append(str(candidate))
    return stale, recent, kept


def loose_mode(path: Path) -> str | None:
    """The file's mode when group or others may read or write it."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None
    return f"{mode:04o}" if mode & 0o077 else None


def temp_findings(path: Path, ctx: Context, problems: list[str], notes: list[str], *,
                  swept: bool = False) -> list[str]:
    """Leftover temp files of ``path``: stale ones are problems, recent ones notes; all of them
    are returned. ``swept``: the next change to ``path`` deletes its stale temp files (the memory
    stores)."""
    stale, recent, kept = leftover_temp_files(path, ctx.now)
    if stale:
        also = f" (the next change to {path.name} also removes them)" if swept else ""
        problems.append(f"leftover temp file(s) from an interrupted write, safe to delete{also}: "
                        f"{', '.join(stale)}")
    if recent:
        notes.append(f"temp file(s) from a write that may still be running: {', '.join(recent)}")
    if kept:
        notes.append(f"kept by a running process for its next write to {path.name} (removed "
                     f"when it stops): {', '.join(kept)}")
    return stale + recent + kept


def lock_findings(path: Path, notes: list[str]) -> str:
    """The lock's state, with a note when it is held or cannot be checked."""
    state = lock_state(path)
    if state == "held":
        notes.append(f"{path.name}.lock is held by another process right now (a write in "
                     "progress; if it stays held, that process is stuck)")
    elif state != "free":
        notes.append(f"could not check {path.name}.lock: {state}")
    return state
