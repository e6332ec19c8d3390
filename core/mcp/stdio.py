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
import re
import sys
from collections.abc import AsyncIterable, AsyncIterator
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


# A JSON escape of a surrogate: a pair (kept) or a lone half, after an even run of backslashes
# (an odd one would make the escape's own backslash a literal one).
_SURROGATE_ESCAPE = re.compile(
    r"(?<!\\)((?:\\\\)*)(\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2})")


#: Any escape of a surrogate at all: most lines hold none, and skip the full pattern.
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]")


def sound_line(line: str) -> str:
    """``line`` with each JSON escape of half a character (``\\ud800`` without its pair) written
    as ``\\ufffd``, as the wire's bytes that are not UTF-8 are read.

    JSON allows such an escape and Python's encoder writes one for a lone surrogate, but the MCP
    SDK's parser refuses the whole message, and the SDK then drops it without an answer: the
    client would wait for ever. Read this way the request is answered, its text holding U+FFFD
    where the half character was."""
    if _SURROGATE_HINT.search(line) is None:
        return line
    return _SURROGATE_ESCAPE.sub(
        lambda m: m.group(0) if len(m.group(2)) == 12 else m.group(1) + "\\ufffd", line)


async def sound_lines(lines: AsyncIterable[str]) -> AsyncIterator[str]:
    """An async text file's lines, each through :func:`sound_line`."""
    async for line in lines:
        yield sound_line(line)
