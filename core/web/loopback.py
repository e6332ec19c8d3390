"""A listening TCP socket on 127.0.0.1, for the servers memhost runs (settings page, MCP over HTTP).

The socket is bound to the loopback interface only, and listening before the server prints its
URL: a client that read the URL may connect at once, and waits in the backlog instead of being
refused, even before uvicorn is up. With port 0 the system picks a free port; the socket's
``getsockname()`` has the real one.
"""

from __future__ import annotations

import socket

from memhost.errors import MemhostError

HOST = "127.0.0.1"


def listen(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: any free port)."""
    if not 0 <= port <= 65535:
        raise MemhostError(f"--port {port} is not a port number (0-65535; 0 picks a free one)")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise MemhostError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}; choose another "
                           "port with --port N, or --port 0 for any free port") from None
    return sock


__all__ = ["HOST", "listen"]
