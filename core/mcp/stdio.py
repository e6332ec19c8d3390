"""The stdio wire of ``memhost mcp``: stdout carries JSON-RPC and nothing else.

Provider code runs in this process and may print: at import, in ``check_available``, from a
thread of its own at any later time. :func:`claim` is called before any provider code runs. It
moves the wire (the process's stdin and stdout) to private file descriptors and points
descriptor 1 at stderr and descriptor 0 at the null device, for the rest of the process: a
``print()``, a C extension writing to fd 1, or a child process inheriting it all land on stderr,
and nothing can read the client's requests from under the server. Only the server writes to
the private stdout. (The MCP SDK diverts the descriptors too, but only while it serves, which
starts after the provider was imported.)
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import BinaryIO


def claim() -> tuple[BinaryIO, BinaryIO]:
    """Take the wire: ``(stdin, stdout)`` as binary files on private descriptors."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    # os.dup gives the lowest free descriptor (above 2, which are open) and marks it
    # non-inheritable, so a child process never gets the wire.
    wire_in, wire_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    return (io.open(wire_in, "rb", closefd=True),  # noqa: SIM115
            io.open(wire_out, "wb", closefd=True))  # noqa: SIM115
