"""Backups of a memory file kept before memhost refuses, or repairs, a hand edit.

A backup is ``<file>.bak.<unix time>`` beside the file. One copy of a given content is enough:
when a backup already holds exactly this text, that backup is the answer and nothing new is
written. (Each refused replace or remove used to add one more copy of the same text.)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memhost.files import atomic_write_text


def _existing(path: Path, size: int) -> list[Path]:
    """Backups of ``path`` of ``size`` bytes, newest name first."""
    prefix = f"{path.name}.bak."
    try:
        names = sorted((n for n in os.listdir(path.parent) if n.startswith(prefix)),
                       reverse=True)
    except OSError:
        return []
    found = []
    for name in names:
        candidate = path.parent / name
        try:
            if candidate.stat().st_size == size:
                found.append(candidate)
        except OSError:
            continue
    return found


def back_up(path: Path, text: str, clock: Callable[[], float]) -> Path:
    """A backup holding ``text`` (what ``path`` holds): an existing one with exactly this text,
    else a new file. Raises ``OSError`` when a new one cannot be written."""
    for candidate in _existing(path, len(text.encode("utf-8"))):
        try:
            if candidate.read_text(encoding="utf-8") == text:
                return candidate
        except (OSError, UnicodeDecodeError):
            continue
    stamp = int(clock())
    backup = path.with_name(f"{path.name}.bak.{stamp}")
    counter = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.bak.{stamp}.{counter}")
        counter += 1
    atomic_write_text(backup, text)
    return backup
