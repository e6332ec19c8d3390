"""What several subcommands share: the home, the config, the memory store and output helpers."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from memhost.builtin_providers.store import MemoryStore
    from memhost.config import Config

TARGET_CHOICES = ("memory", "user")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def add_target_flag(parser: argparse.ArgumentParser, *, default: str | None = "memory",
                    help: str | None = None) -> None:
    parser.add_argument("--target", choices=TARGET_CHOICES, default=default, help=help or (
        "'memory' (MEMORY.md, the agent's notes) or 'user' (USER.md, the user profile); "
        f"default: {default}"))


def home(args: argparse.Namespace) -> Path:
    """The home the command works on: ``--home``, else ``$MEMHOST_HOME``, else the default."""
    from memhost.home import memhost_home

    return memhost_home(getattr(args, "home", None))


def config(home_path: Path) -> Config:
    """The validated config; an invalid file raises :class:`memhost.errors.ConfigError`."""
    from memhost.config import load_config

    return load_config(home_path)


def store(home_path: Path) -> MemoryStore:
    """The memory store configured for ``home_path``."""
    from memhost.builtin_providers.store import MemoryStore

    return MemoryStore.from_settings(home_path, config(home_path).memory)


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def eprint(message: str) -> None:
    print(message, file=sys.stderr)


def age(timestamp: Any, now: float | None = None) -> str:
    """``"3d"``-style age of a Unix timestamp, or ``"unknown"`` when there is none."""
    if not isinstance(timestamp, int | float) or isinstance(timestamp, bool):
        return "unknown"
    seconds = max(0.0, (time.time() if now is None else now) - float(timestamp))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def local_time(timestamp: float) -> str:
    """A Unix timestamp as local time, to the second."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp))


def preview(text: str, width: int = 70) -> str:
    """One line of ``text``: newlines shown as ``⏎``, cut to ``width`` characters."""
    line = " ⏎ ".join(part.strip() for part in text.splitlines() if part.strip())
    return line if len(line) <= width else line[: width - 1] + "…"


def entries_phrase(count: int) -> str:
    """``"1 entry"``, ``"3 entries"``."""
    return f"{count} entr{'y' if count == 1 else 'ies'}"
