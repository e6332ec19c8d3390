"""Both HTTP servers (settings page, MCP over HTTP) cut off a client that sends its headers
slowly, bound how many connections may sit open, and escape control characters in the access
log. Real servers, real sockets.

The servers here run with a 2-second header deadline (``MEMHOST_HEADER_TIMEOUT``), so the
tests watch the deadline fire without waiting the default ten seconds; one test checks the
default is what a server without the variable uses."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memhost.errors import MemhostError
from memhost.web.slowclients import (
    HEADER_TIMEOUT,
    HEADER_TIMEOUT_ENV,
    MAX_CONNECTIONS,
    HeaderDeadlineProtocol,
    header_timeout,
    uvicorn_options,
)
from cli_runner import spawn_memhost, wait_for_output
from test_settings_api import SCRIPT, make_home, start_server

#: The header deadline the servers under test run with.
DEADLINE = 2.0


@pytest.fixture(params=["settings", "mcp"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[int, str]]:
    """``(port, Host header)`` of a running server of each kind."""
    if request.param == "settings":
        s = start_server(make_home(tmp_path), tmp_path / "logs",
                         env={HEADER_TIMEOUT_ENV: str(DEADLINE)})
        try:
            yield s.port, f"127.0.0.1:{s.port}"
        finally:
            s.stop()
        return
    home = tmp_path / "home"
    err = tmp_path / "mcp.err"
    proc = spawn_memhost(["mcp", "--transport", "http", "--port", "0"],
                         env={**os.environ, "MEMHOST_HOME": str(home),
                              HEADER_TIMEOUT_ENV: str(DEADLINE)},
                         stdout=tmp_path / "mcp.out", stderr=err)
    try:
        banner = wait_for_output(proc, err, "Authorization: Bearer")
        port = int(re.search(r"127\.0\.0\.1:(\d+)/mcp", banner).group(1))  # type: ignore[union-attr]
        yield port, f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def status_of(port: int, host: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        head = sock.recv(64).decode("latin-1")
    return int(head.split()[1])


@pytest.mark.slow
def test_headers_sent_slowly_are_cut_off(server: tuple[int, str]) -> None:
    port, host = server
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    started = time.monotonic()
    sock.setblocking(False)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        header = f"Host: {host}\r\nX-Slow: " + "a" * 200
        for ch in header:  # one byte every 0.1 s: never a complete head
            try:
                data = sock.recv(1024)
                if data == b"":
                    break
            except BlockingIOError:
                pass
            except ConnectionResetError:
                break
            try:
                sock.send(ch.encode())
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.1)
            assert time.monotonic() - started < DEADLINE + 10, "still open"
        else:
            pytest.fail("the server kept reading a head that never ended")
        elapsed = time.monotonic() - started
    finally:
        sock.close()
    assert DEADLINE - 0.5 <= elapsed <= DEADLINE + 5
    assert status_of(port, host) != 503  # the server itself is fine


@pytest.mark.slow
def test_idle_connections_are_bounded_and_expire(server: tuple[int, str]) -> None:
    port, host = server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=30)
            for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)
        assert status_of(port, host) == 503  # past the bound: refused, not queued for ever
        deadline = time.monotonic() + DEADLINE + 10
        while status_of(port, host) == 503:
            assert time.monotonic() < deadline, "idle connections were never closed"
            time.sleep(0.2)
    finally:
        for sock in idle:
            sock.close()


def test_access_log_escapes_control_characters(tmp_path: Path) -> None:
    s = start_server(make_home(tmp_path), tmp_path / "logs")
    try:
        status, _, _ = s.request("GET", "/static/x%0Amemhost%20settings:%20GET%20/forged%1B[31m")
        assert status == 404
    finally:
        s.stop()
    log = s.output()
    assert "\x1b" not in log
    assert not re.search(r"^memhost settings: GET /forged", log, re.M)
    assert "x%0Amemhost settings: GET /forged%1B[31m" in log


def test_the_header_deadline_is_ten_seconds_unless_the_environment_says_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert header_timeout({}) == HEADER_TIMEOUT == 10.0
    assert header_timeout({HEADER_TIMEOUT_ENV: " 2.5 "}) == 2.5
    monkeypatch.delenv(HEADER_TIMEOUT_ENV, raising=False)
    assert uvicorn_options()["http"].header_timeout == 10.0
    monkeypatch.setenv(HEADER_TIMEOUT_ENV, "30")
    protocol = uvicorn_options()["http"]
    assert issubclass(protocol, HeaderDeadlineProtocol) and protocol.header_timeout == 30.0
    assert HeaderDeadlineProtocol.header_timeout == 10.0  # other servers keep the default


@pytest.mark.parametrize("bad", ["0", "-1", "ten", "nan", "inf", "1e999"])
def test_a_bad_header_deadline_is_refused_with_what_to_do(bad: str) -> None:
    with pytest.raises(MemhostError, match=f"{HEADER_TIMEOUT_ENV} must be a positive number"):
        header_timeout({HEADER_TIMEOUT_ENV: bad})


@pytest.mark.parametrize("command", [["settings", "serve", "--port", "0"],
                                     ["mcp", "--transport", "http", "--port", "0"]])
def test_a_bad_header_deadline_stops_the_server_before_it_serves(
        command: list[str], tmp_path: Path) -> None:
    assert SCRIPT
    done = subprocess.run([SCRIPT, *command], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEMHOST_HOME": str(tmp_path / "home"),
                               HEADER_TIMEOUT_ENV: "ten"})
    assert done.returncode != 0
    assert HEADER_TIMEOUT_ENV in done.stderr and "positive number of seconds" in done.stderr
    assert "Traceback" not in done.stderr
    assert "127.0.0.1:" not in done.stdout + done.stderr  # it never served
