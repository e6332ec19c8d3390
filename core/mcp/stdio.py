"""The stdio wire of ``memhost mcp``: stdout carries JSON-RPC and nothing else.

Provider code runs in this process and may print: at import, in ``check_available``, from a
thread of its own at any later time. :func:`claim` is called before any provider code runs. It
moves the wire (the process's stdin and stdout) to private file descriptors and points
descriptor 1 at stderr and descriptor 0 at the null device, for the rest of the process: a
``print()``, a C extension writing to fd 1, or a child process inheriting it all land on stderr,
and nothing can read the client's requests from under the server. Only the server writes to
the private stdout. (The MCP SDK diverts the descriptors too, but only while it serves, which
starts after the provider was imported.) The client's requests are read from the private stdin
by :class:`WireLines`, each made readable by the SDK's parser first (:func:`sound_line`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import threading
from collections.abc import AsyncIterator
from typing import BinaryIO

import anyio
import anyio.lowlevel


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
    """``line`` as the MCP SDK's parser can read it, for two messages it would otherwise drop
    without an answer, leaving the client waiting for ever:

    * each JSON escape of half a character (``\\ud800`` without its pair) is written as
      ``\\ufffd``, as the wire's bytes that are not UTF-8 are read. JSON allows such an escape
      and Python's encoder writes one for a lone surrogate, but the parser refuses the whole
      message. Read this way the request is answered, its text holding U+FFFD there;
    * a request nested deeper than the parser reads (:data:`DEEPEST_READ` levels) becomes a
      request for a method named for what is wrong, which the server answers with an error
      under the request's id: "Method not found", ``data`` saying why.
    """
    if _SURROGATE_HINT.search(line) is not None:
        line = _SURROGATE_ESCAPE.sub(
            lambda m: m.group(0) if len(m.group(2)) == 12 else m.group(1) + "\\ufffd", line)
    if line.count("[") + line.count("{") > DEEPEST_READ:  # else it cannot nest that deep
        line = _shallow(line)
    return line


#: The deepest nesting the MCP SDK's parser reads (jiter's limit: a message 201 levels deep is
#: read, one 202 deep is not).
DEEPEST_READ = 201
#: What a request nested too deeply is answered with, as its method's name.
TOO_DEEP = ("memhost: the request nests deeper than the MCP SDK reads "
            f"({DEEPEST_READ} levels); send it flatter")
# A JSON string, or a bracket outside one.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[][{}]')
# What follows a top-level "id" key: its value.
_ID_VALUE = re.compile(r'\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def _shallow(line: str) -> str:
    """``line``, or when it nests deeper than :data:`DEEPEST_READ` and is a request (it has a
    top-level id), a request for the method :data:`TOO_DEEP` under that id."""
    depth = deepest = 0
    request_id = None
    for token in _TOKENS.finditer(line):
        text = token.group()
        if text in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif text in ("]", "}"):
            depth -= 1
        elif depth == 1 and text == '"id"' and request_id is None:
            found = _ID_VALUE.match(line, token.end())
            request_id = found.group(1) if found else None
        if deepest > DEEPEST_READ and request_id is not None:
            break
    if deepest <= DEEPEST_READ or request_id is None:
        return line  # readable, or a notification nobody waits on
    return json.dumps({"jsonrpc": "2.0", "id": json.loads(request_id), "method": TOO_DEEP})


class WireLines:
    """The client's messages, one line each, read on a daemon thread of their own.

    The MCP SDK reads stdin on one of the event loop's worker threads, and nothing can stop a
    read blocked there: after a signal (a supervisor's SIGTERM, a Ctrl-C) the session was closed
    but the process stayed until the client closed its end of the pipe, and at exit the
    interpreter waited for that thread too. Here a daemon thread reads the wire and hands each
    line to the event loop; :meth:`stop` ends the lines at once, and the thread, still blocked
    in its read, goes with the process.
    """

    def __init__(self, wire_in: BinaryIO) -> None:
        self._file = io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace")
        # Unbuffered: a line is read from the wire only once the server takes the one before.
        self._send, self._receive = anyio.create_memory_object_stream[str]()

    async def lines(self) -> AsyncIterator[str]:
        """Each line through :func:`sound_line`, until the client closes the wire or
        :meth:`stop`."""
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._read, args=(token,), name="memhost-mcp-wire",
                         daemon=True).start()
        async with self._receive:
            async for line in self._receive:
                yield sound_line(line)

    def stop(self) -> None:
        """End the lines now (called on the event loop)."""
        self._send.close()

    def _read(self, token: anyio.lowlevel.EventLoopToken) -> None:
        try:
            for line in self._file:
                anyio.from_thread.run(self._send.send, line, token=token)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # stopped: nobody reads any more
        except RuntimeError:
            return  # the event loop is gone
        except (OSError, ValueError):
            pass  # the wire broke: as the end of it
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run_sync(self._send.close, token=token)
