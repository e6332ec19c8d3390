"""Both HTTP servers (settings page, MCP over HTTP) cut off a client that sends its headers
slowly, bound how many connections may sit open, and escape control characters in the access
log. Real servers, real sockets."""

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

from memhost.web.slowclients import HEADER_TIMEOUT, MAX_CONNECTIONS
from test_settings_api import SCRIPT, make_home, start_server


@pytest.fixture(params=["settings", "mcp"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[int, str]]:
    """``(port, Host header)`` of a running server of each kind."""
    if request.param == "settings":
        s = start_server(make_home(tmp_path), tmp_path / "logs")
        try:
            yield s.port, f"127.0.0.1:{s.port}"
        finally:
            s.stop()
        return
    assert SCRIPT
    home = tmp_path / "home"
    proc = subprocess.Popen([SCRIPT, "mcp", "--transport", "http", "--port", "0"],
                            env={**os.environ, "MEMHOST_HOME": str(home)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        banner = ""
        while "Authorization: Bearer" not in banner:
            line = proc.stderr.readline()
            assert line, f"memhost mcp ended early: {banner}"
            banner += line
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


def test_headers_sent_slowly_are_cut_off(server: tuple[int, str]) -> None:
    port, host = server
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    started = time.monotonic()
    sock.setblocking(False)
    try:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        header = f"Host: {host}\r\nX-Slow: " + "a" * 200
        for ch in header:  # one byte every 0.25 s: never a complete head
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
            time.sleep(0.25)
            assert time.monotonic() - started < HEADER_TIMEOUT + 10, "still open"
        else:
            pytest.fail("the server kept reading a head that never ended")
        elapsed = time.monotonic() - started
    finally:
        sock.close()
    assert HEADER_TIMEOUT - 1 <= elapsed <= HEADER_TIMEOUT + 5
    assert status_of(port, host) != 503  # the server itself is fine


def test_idle_connections_are_bounded_and_expire(server: tuple[int, str]) -> None:
    port, host = server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=30)
            for _ in range(MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)
        assert status_of(port, host) == 503  # past the bound: refused, not queued for ever
        deadline = time.monotonic() + HEADER_TIMEOUT + 10
        while status_of(port, host) == 503:
            assert time.monotonic() < deadline, "idle connections were never closed"
            time.sleep(0.5)
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
