"""The ``memhost`` command line.

Each subcommand lives in its own module exposing ``register(subparsers)``; modules import their
heavy dependencies inside the command functions, so ``memhost --help`` stays fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from memhost import __version__
from memhost.errors import MemhostError

# Order is the order shown in --help.
#: Commands on what all users of a home share, for which ``--user`` means nothing.
SHARED_COMMANDS = ("config", "providers", "demo")
COMMAND_MODULES = ("memory", "config", "providers", "outbox", "settings", "recall", "doctor",
                   "chat", "mcp", "demo")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``command`` (one of :data:`COMMAND_MODULES`), only that command's
    subparser: a command's own run needs no other, and building all of them (~50 parsers, each
    asking ``gettext`` for its texts) took ~15 ms of a short command's ~100."""
    parser = argparse.ArgumentParser(prog="memhost", description="A plugin host for agent memory.")
    parser.add_argument("--version", action="version", version=f"memhost {__version__}")
    parser.add_argument("--home", help="memhost home folder (default: $MEMHOST_HOME or the "
                        "platform's user data folder)")
    parser.add_argument("--user", metavar="ID", help="work on this user's memory, in "
                        "<home>/users/ID/ (a home serving many users through memhost.MemoryHub)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (command,) if command in COMMAND_MODULES else COMMAND_MODULES:
        importlib.import_module(f"memhost.cli.{name}").register(subparsers)
    return parser


#: The global options that take a value, and those that take none.
_VALUED = ("--home", "--user")
_FLAGS = ("-v", "--verbose")


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, when it is sure to be one of :data:`COMMAND_MODULES`;
    ``None`` for anything else (help, the version, an unknown word, an option this does not
    read the way argparse would): the whole parser then reads it."""
    words = iter(argv)
    for word in words:
        option = word.partition("=")[0]
        valued = [name for name in _VALUED if len(option) > 2 and name.startswith(option)]
        if len(valued) == 1 and word.startswith("--"):  # argparse takes a unique prefix too
            if "=" not in word and next(words, None) is None:
                return None
        elif word in _FLAGS:
            continue
        else:
            return word if word in COMMAND_MODULES else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_named(arguments))
    args = parser.parse_args(arguments)
    if not getattr(args, "func", None):
        # No command: the help goes to stderr with exit code 2, as for a group without an action.
        parser.print_help(sys.stderr)
        return 2
    # Everything a command prints passes secret masking: the values in the home's .env and
    # whatever the detector finds (docs/security.md, "Secrets").
    from memhost.security.masking import ScrubbingStream

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(sys.stdout), ScrubbingStream(sys.stderr)
    try:
        return _run(args)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdout, sys.stderr = streams


def _run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="memhost: %(levelname)s: %(message)s")
    from memhost.home import memhost_home
    from memhost.security import detector
    from memhost.security.masking import remember_home

    home = memhost_home(getattr(args, "home", None))
    # A command scans mostly what it scanned last time (paths, settings): what the secret
    # detector's engine answered then needs no engine now (memhost.security.engine_answers).
    # Before the home's settings are read: finding the secrets among them is such a scan.
    detector.keep_engine_answers_in(home / "cache")
    remember_home(home)
    if getattr(args, "user", None) is not None and args.command in SHARED_COMMANDS:
        print(f"memhost: error: `memhost {args.command}` works on what every user of the home "
              "shares (config.toml, .env, providers); run it without --user", file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except MemhostError as exc:
        print(f"memhost: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Output piped into `head` and friends: stop quietly, and keep Python from complaining
        # again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
