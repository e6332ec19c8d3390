"""``memhost settings serve``: the local settings page."""

from __future__ import annotations

import argparse

from memhost.cli import _common

DEFAULT_PORT = 8765  # memhost.web.server.DEFAULT_PORT, repeated so --help imports nothing


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "settings", help="the local settings page: choose the provider, edit its settings, "
                         "look after the memory",
        description="A web page on 127.0.0.1 for choosing the memory provider, filling in its "
                    "settings, and editing the builtin memory, pending approvals and the archive. "
                    "Needs the 'settings' extra: pip install 'memhost[settings]'.")
    sub = parser.add_subparsers(dest="settings_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _common.usage(parser))

    serve = sub.add_parser(
        "serve", help="serve the settings page on 127.0.0.1 until Ctrl+C",
        description="Serve the settings page on 127.0.0.1 only. A new token is made at every "
                    "start and printed in the URL; open that URL (the page swaps the token for a "
                    "session cookie). See docs/settings.md for the security model.")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"the port (default {DEFAULT_PORT}; 0 picks a free one, and the URL "
                            "printed has it)")
    serve.add_argument("--open", action="store_true", dest="open_browser",
                       help="open the page in the default browser once the server is up")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    from memhost.web.server import serve

    memory_home = _common.memory_home(args) if _common.user(args) else None
    return serve(_common.home(args), port=args.port, open_browser=args.open_browser,
                 memory_home=memory_home)
