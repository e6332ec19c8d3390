"""The process a client starts for a command it talks to on standard streams (the MCP SDK's
``stdio_client``), when the command comes from a command server (see
:func:`cli_runner.stdio_command`): ``python -I -S stdio_handoff.py SOCKET``.

It hands its standard streams, environment and working folder to the server listening at
SOCKET, which forks the command onto them; then it passes on the signals a client sends to
end its server (SIGTERM, SIGINT, SIGHUP) and exits with the command's exit code (128 + N for a
command ended by signal N, as a shell reports it). It imports nothing but the standard
library's core (``-S``: no site packages), so it starts in milliseconds where the command
itself, with the MCP SDK, takes most of a second of CPU.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def main(path: str) -> int:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    said = json.dumps({"env": dict(os.environ), "cwd": os.getcwd()}).encode("utf-8") + b"\n"
    socket.send_fds(conn, [said], [0, 1, 2])
    # The command holds the streams now: the client sees its output end when the command's does.
    for fd in (0, 1):
        os.close(fd)
    answers = conn.makefile("rb")
    pid = json.loads(answers.readline())["pid"]

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    line = answers.readline()
    if not line:
        print("stdio_handoff: the command server ended before the command", file=sys.stderr)
        return 1
    status = json.loads(line)["status"]
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
