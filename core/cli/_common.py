"""What several subcommands share: the home, the config, the memory store and output helpers."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
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


def usage(parser: argparse.ArgumentParser) -> int:
    """A command group run without an action: its help on stderr, exit code 2."""
    parser.print_help(sys.stderr)
    return 2


def home(args: argparse.Namespace) -> Path:
    """The home the command works on: ``--home``, else ``$MEMHOST_HOME``, else the default."""
    from memhost.home import memhost_home

    return memhost_home(getattr(args, "home", None))


def user(args: argparse.Namespace) -> str:
    """``--user``: the user whose memory the command works on (``""``: the home's own). An
    empty ``--user ""`` (a script's unset variable) is refused, not read as the home's own."""
    value = getattr(args, "user", None)
    if value is None:
        return ""
    from memhost.users import check_user_id

    check_user_id(value)
    return value


def memory_home(args: argparse.Namespace) -> Path:
    """Where the memory the command works on is: ``<home>/users/<id>/`` with ``--user`` (made
    now, 0700, if it is new), else the home. Config, secrets and providers stay the home's
    (:func:`home`)."""
    from memhost.users import open_user_home

    who = user(args)
    return open_user_home(home(args), who) if who else home(args)


_warned_config: set[tuple[str, str]] = set()


def config(home_path: Path, *, writes: bool = False) -> Config:
    """The config. A command that ``writes`` memory gets it validated (an invalid file raises
    :class:`memhost.errors.ConfigError` naming the key, as a host does); one that only looks
    gets every valid setting and the default for each wrong one, with the problems said once
    on stderr, so the CLI still runs to show things and to repair the file."""
    from memhost.config import load_config, read_config

    if writes:
        return load_config(home_path)
    loaded, error = read_config(home_path)
    if error and (str(home_path), error) not in _warned_config:
        _warned_config.add((str(home_path), error))
        eprint(f"memhost: warning: config.toml has problems; the defaults stand in for the keys "
               f"named here until they are fixed:\n{error}")
    return loaded


def store(home_path: Path, args: argparse.Namespace | None = None, *,
          writes: bool = False) -> MemoryStore:
    """The memory store configured for ``home_path`` (``writes``: see :func:`config`): the
    home's own, or with ``args`` the one ``--user`` names (configured by the home's config all
    the same)."""
    from memhost.builtin_providers.store import MemoryStore
    from memhost.security.screen import Screen

    settings = config(home_path, writes=writes)
    folder = memory_home(args) if args is not None else home_path
    store = MemoryStore.from_settings(folder, settings.memory)
    store.screen = Screen.from_config(settings, home_path, judge=False)
    return store


def print_json(data: Any) -> None:
    # One write of the whole document: the scrubbing stream in front of stdout then sees a
    # key and its value together (json.dump writes them as separate fragments), and scans once.
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


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


@contextlib.contextmanager
def io_errors() -> Iterator[None]:
    """A file-system failure while saving is a clean error, not a traceback.

    The store writes the archive first and replaces the memory file last, atomically, so when
    either fails the memory file is as it was.
    """
    from memhost.errors import MemhostError

    try:
        yield
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise MemhostError(f"could not save the change: {exc.strerror or exc}{where}. The memory "
                           "file was not changed; `memhost doctor` checks the files.") from None


def report(response: dict[str, Any], as_json: bool,
           print_success: Callable[[dict[str, Any]], None]) -> int:
    """Show a memory tool answer (JSON, ``print_success``, or :func:`print_failure`); the exit
    code: 0 when it succeeded, else 1."""
    ok = bool(response.get("success"))
    if as_json:
        print_json(response)
    elif ok:
        print_success(response)
    else:
        print_failure(response)
    return 0 if ok else 1


def print_failure(response: dict[str, Any]) -> None:
    """A failed memory tool answer on stderr: the error, and what it carries to fix it."""
    eprint(f"memhost: error: {response.get('error', 'the write failed')}")
    matches = response.get("matches") or []
    if matches:
        eprint("  matching entries:")
        for text in matches:
            eprint(f"    - {preview(text)}")
    entries = response.get("current_entries")
    if entries:
        eprint("  current entries:")
        for index, text in enumerate(entries, 1):
            eprint(f"    [{index}] {preview(text)}")
    if response.get("usage"):
        eprint(f"  usage: {response['usage']} chars")
    if response.get("remediation"):
        eprint(f"  to fix: {response['remediation']}")
