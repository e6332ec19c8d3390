"""``memhost mcp``: serve the memory to any MCP client, over stdio or local HTTP.

The server itself is :mod:`memhost.mcp.server`; it needs the ``mcp`` extra
(``pip install 'memhost[mcp]'``), imported only when the command runs.
"""

from __future__ import annotations

import argparse
import logging
import os

from memhost.cli import _common

DEFAULT_PORT = 8766


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mcp", help="serve the memory to MCP clients (stdio, or HTTP on this machine)",
        description="Serve the builtin memory and the configured provider over the Model "
                    "Context Protocol: the memory tool and the provider's tools, a recall tool, "
                    "and the memory snapshot as a resource and a prompt. Each connection is one "
                    "memory session. stdio (the default) is what MCP clients launch; http serves "
                    "streamable HTTP on 127.0.0.1 behind a bearer token printed at start "
                    "(or $MEMHOST_MCP_TOKEN). Logs go to stderr. See docs/mcp.md.")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                        help="stdio (default) or http")
    parser.add_argument("--port", type=int, default=None, metavar="N",
                        help=f"the HTTP port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a "
                             "free one); only with --transport http")
    parser.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from memhost.errors import MemhostError

    if args.transport == "stdio" and args.port is not None:
        raise MemhostError("--port only applies to --transport http")
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise MemhostError(f"--port {port} is not a port; use 1-65535, or 0 for any free one")
    try:
        from memhost.mcp import server
    except ImportError as exc:
        raise MemhostError(f"memhost mcp needs the MCP SDK ({exc}); install it with: "
                           "pip install 'memhost[mcp]'") from None

    home = _common.home(args)
    _common.config(home, writes=True)  # a broken config.toml fails here, before a client connects
    # Session starts, ends and shutdown reports are always logged (to stderr, like every log:
    # on stdio, stdout is the protocol stream).
    logging.getLogger("memhost.mcp").setLevel(logging.INFO)
    if args.transport == "http":
        return server.serve_http(home, port, server.http_token(dict(os.environ)))
    return server.serve_stdio(home)
