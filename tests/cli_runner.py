"""Run the ``memhost`` command from a test: ``run_memhost(args, env=…, input=…)`` returns what
``subprocess.run([memhost, *args], capture_output=True, text=True)`` would.

Every command runs in a process of its own, with its own environment, working folder, standard
streams and exit code. What differs from starting the console script is where the process comes
from: a server process per test worker (:mod:`cli_server`) has imported memhost's modules once
and forks a child per command. Starting ``memhost`` costs ~0.4 s of CPU in imports before the
command does anything, and the suite runs some five hundred commands, so forking takes minutes
off ``make test`` on two cores.

A command is started the ordinary way (``subprocess.run`` of the installed script) when the
fork would not be the same: an environment that changes how the interpreter starts
(``PYTHON*`` other than ``PYTHONUNBUFFERED``), more commands at once than the bound on servers,
or ``MEMHOST_TEST_EXEC=1`` (the whole suite on the script, to compare). The crash-point switch,
which memhost reads at import, is read again in each child. Tests about the script itself
(packaging, the entry point) call ``subprocess`` directly. ``spawn_memhost`` starts a command
that keeps running (a server) the same way, and returns a ``Popen``-like handle;
``run_python_code`` runs ``python -c`` (a writer killed at a crash point) the same way.
``stdio_command`` gives the command line for a client that starts its server itself (the MCP
SDK's ``stdio_client``): a small process that hands the client's pipes to a forked command.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

SCRIPT = shutil.which("memhost", path=str(Path(sys.executable).parent))
SERVER = Path(__file__).with_name("cli_server.py")
HANDOFF = Path(__file__).with_name("stdio_handoff.py")
# The environment every server starts with (a child then takes its command's own).
_SERVER_ENV = dict(os.environ)


class _Server:
    def __init__(self) -> None:
        requests_r, self.requests = os.pipe()
        self.answers, answers_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), str(requests_r), str(answers_w)],
            pass_fds=(requests_r, answers_w), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, env=_SERVER_ENV)
        os.close(requests_r)
        os.close(answers_w)
        self.busy = threading.Lock()
        self.buffer = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def answer(self, deadline: float | None) -> dict:
        while b"\n" not in self.buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.answers], [], [], wait)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.answers, 4096)
            if not chunk:
                raise RuntimeError(f"the command server ended (exit {self.proc.wait()})")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def start(self, command: list[str], env: dict[str, str], cwd: str, *, stdin: str,
              stdout: str, stderr: str) -> int:
        """Fork ``command`` with its streams on these files (the output files made empty);
        the child's pid. Its exit status is the next answer."""
        Path(stdout).write_bytes(b"")
        Path(stderr).write_bytes(b"")
        request = {"script": command[0], "args": command[1:], "env": env, "cwd": cwd,
                   "stdin": stdin, "stdout": stdout, "stderr": stderr}
        self.send(request)
        return int(self.answer(None)["pid"])

    def send(self, request: dict) -> None:
        """One request line (see :mod:`cli_server`); its answers are read with :meth:`answer`."""
        os.write(self.requests, (json.dumps(request) + "\n").encode("utf-8"))

    def stop(self) -> None:
        os.close(self.requests)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self.answers)


# One server per command running at once: a test that runs commands from several threads (the
# secret sweep) gets as many, up to a bound; past it a command is started the ordinary way.
_MAX_SERVERS = 4
_servers: list[_Server] = []
_servers_lock = threading.Lock()


def _take_server() -> _Server | None:
    """A server no other thread is using, started if needed; ``None`` when all are busy."""
    with _servers_lock:
        _servers[:] = [s for s in _servers if s.alive() or s.busy.locked()]
        for server in _servers:
            if server.busy.acquire(blocking=False):
                return server
        if len(_servers) >= _MAX_SERVERS:
            return None
        server = _Server()
        server.busy.acquire()
        _servers.append(server)
        atexit.register(server.stop)
        return server


def _forkable(env: dict[str, str]) -> bool:
    if os.environ.get("MEMHOST_TEST_EXEC") == "1" or not hasattr(os, "fork"):
        return False
    for key in set(env) | set(_SERVER_ENV):
        if key.startswith("PYTHON") and key != "PYTHONUNBUFFERED" \
                and env.get(key) != _SERVER_ENV.get(key):
            return False
    return True


def run_memhost(args: list[str] | tuple[str, ...], *, env: dict[str, str] | None = None,
                input: str | None = None, timeout: float = 120,
                cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    """``memhost *args`` in a process of its own; stdout and stderr captured as text."""
    assert SCRIPT, "the memhost console script is not installed next to this Python"
    return _run([SCRIPT, *args], env, input, timeout, cwd)


def run_python_code(code: str, *args: str, env: dict[str, str] | None = None,
                    timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -c code *args`` in a process of its own (this Python, memhost importable),
    forked from a command server as ``memhost`` commands are; stdout and stderr captured."""
    return _run([sys.executable, "-c", code, *args], env, None, timeout, None)


def _run(command: list[str], env: dict[str, str] | None, input: str | None, timeout: float,
         cwd: str | Path | None) -> subprocess.CompletedProcess[str]:
    """``command`` forked from a command server, or started afresh where it cannot be."""
    env = dict(os.environ if env is None else env)
    server = _take_server() if _forkable(env) else None
    if server is None:
        return subprocess.run(command, check=False, env=env, input=input, capture_output=True,
                              text=True, timeout=timeout, cwd=cwd,
                              stdin=None if input is not None else subprocess.DEVNULL)
    try:
        return _forked(server, command, env, input, timeout, cwd)
    finally:
        server.busy.release()


def spawn_memhost(args: list[str] | tuple[str, ...], *, env: dict[str, str], stdout: Path,
                  stderr: Path) -> ForkedProcess | subprocess.Popen[bytes]:
    """``memhost *args`` started and left running (a server), its output going to two files and
    its standard input empty: what ``subprocess.Popen`` would start, returned as a handle with
    the part of ``Popen`` the tests use (``pid``, ``poll``, ``wait``, ``send_signal``,
    ``terminate``, ``kill``, ``returncode``). It holds a command server until it has ended and
    been waited for."""
    assert SCRIPT, "the memhost console script is not installed next to this Python"
    command = [SCRIPT, *args]
    server = _take_server() if _forkable(env) else None
    if server is None:
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            return subprocess.Popen(command, env=env, stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL)
    try:
        pid = server.start(command, env, os.getcwd(), stdin=os.devnull, stdout=str(stdout),
                           stderr=str(stderr))
    except BaseException:
        server.busy.release()
        raise
    return ForkedProcess(server, pid, command)


@contextlib.contextmanager
def stdio_command(args: list[str] | tuple[str, ...], *, env: dict[str, str]) -> Iterator[list[str]]:
    """The command line a client that starts its server itself, and talks to it on its standard
    streams (the MCP SDK's ``stdio_client``), is to run for ``memhost *args`` with ``env``.

    Where the command can be forked, that is a small process (:mod:`stdio_handoff`) that hands
    the streams the client gave it to a command server's fork of the command, and exits with
    the command's code; the command runs with the environment and working folder the client
    gave that process. Otherwise it is the console script itself. The server is held until the
    command has ended, after the client is done with it."""
    assert SCRIPT, "the memhost console script is not installed next to this Python"
    command = [SCRIPT, *args]
    server = _take_server() if _forkable(env) else None
    if server is None:
        yield command
        return
    in_step = False  # the server's answers read up to the command's end
    try:
        with tempfile.TemporaryDirectory(prefix="memhost-stdio-") as folder:
            path = os.path.join(folder, "handoff.sock")
            server.send({"script": SCRIPT, "args": list(args), "handoff": path})
            assert server.answer(time.monotonic() + 60).get("listening"), "no handoff socket"
            try:
                yield [sys.executable, "-I", "-S", str(HANDOFF), path]
            finally:
                _end_handed_off(server, path)
                in_step = True
    finally:
        if not in_step:  # never used again: its next answer could be this command's
            server.proc.kill()
        server.busy.release()


def _end_handed_off(server: _Server, path: str) -> None:
    """Once the client is done: the command's end. Where the client never started the handoff
    process, the server still waits at ``path``: connecting without streams releases it."""
    if os.path.exists(path):
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as poke:
            poke.connect(path)
    pid = server.answer(time.monotonic() + 60)["pid"]
    try:
        server.answer(time.monotonic() + 30)  # the client closed the command's input: it ends
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        server.answer(None)


def wait_for_output(proc: ForkedProcess | subprocess.Popen[bytes], path: Path, needle: str,
                    timeout: float = 60) -> str:
    """What a started command has written to ``path``, once it holds ``needle`` (a server's
    banner); ``AssertionError`` with that output if the command ends or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        if needle in text:
            return text
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"memhost {' '.join(map(str, proc.args[1:]))} did not print "
                                 f"{needle!r} (exit {proc.poll()}):\n{text}")
        time.sleep(0.02)


class ForkedProcess:
    """A running command forked by a command server; its exit status is the server's next
    answer, and the server is free again once that answer has been read."""

    def __init__(self, server: _Server, pid: int, args: list[str]) -> None:
        self.server, self.pid, self.args = server, pid, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self._ended(self.server.answer(time.monotonic()))
            except TimeoutError:
                pass
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                self._ended(self.server.answer(deadline))
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
        assert self.returncode is not None
        return self.returncode

    def _ended(self, answer: dict) -> None:
        self.returncode = answer["status"]
        self.server.busy.release()

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:  # not yet waited for: the pid is still this command's
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _forked(server: _Server, command: list[str], env: dict[str, str], input: str | None,
            timeout: float, cwd: str | Path | None) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="memhost-cmd-") as folder:
        streams = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
        Path(streams["stdin"]).write_text(input or "", encoding="utf-8")
        pid = server.start(command, env, str(cwd or os.getcwd()), **streams)
        deadline = time.monotonic() + timeout
        try:
            status = server.answer(deadline)["status"]
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            server.answer(None)
            raise subprocess.TimeoutExpired(
                command, timeout, output=_read(streams["stdout"]),
                stderr=_read(streams["stderr"])) from None
        return subprocess.CompletedProcess(command, status, _read(streams["stdout"]),
                                           _read(streams["stderr"]))


def _read(path: str) -> str:
    # As subprocess.run(text=True) decodes: the locale's encoding, universal newlines.
    with open(path, encoding=None, errors="strict", newline=None) as handle:
        return handle.read()
