"""Running the MCP server: over stdio (the process is the connection) or over streamable HTTP on
127.0.0.1, where every request needs a bearer token (``$MEMHOST_MCP_TOKEN`` or a fresh one,
printed at start)."""

from __future__ import annotations

import hmac
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

from memhost.errors import MemhostError
from memhost.security.masking import unscrubbed
from memhost.web import loopback

HTTP_HOST = loopback.HOST
HTTP_PATH = "/mcp"
TOKEN_ENV = "MEMHOST_MCP_TOKEN"
MIN_TOKEN_LENGTH = 16


def serve_stdio(home: Path, user_id: str = "") -> int:
    """Serve one connection on the process's stdin and stdout until it ends."""
    from memhost.cli.progress import loading_what, step
    from memhost.mcp import stdio
    from memhost.mcp.server import MemoryMcpServer

    # Before any provider code runs: from here on only the server writes to the real stdout.
    wire_in, wire_out = stdio.claim()
    server = MemoryMcpServer(home, per_connection=False, user_id=user_id)
    with step("memhost mcp", loading_what(home)):
        server.shared_session().prepare()
    anyio.run(server.run_stdio, wire_in, wire_out)
    return 0

class _Token:
    """The SDK's token verifier for one static token."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._token.encode()):
            return AccessToken(token=token, client_id="memhost-mcp", scopes=[])
        return None


def http_token(env: dict[str, str]) -> str:
    """``$MEMHOST_MCP_TOKEN`` when set (at least 16 characters), else a fresh random token."""
    token = env.get(TOKEN_ENV, "").strip()
    if not token:
        return secrets.token_urlsafe(32)
    if len(token) < MIN_TOKEN_LENGTH:
        raise MemhostError(f"{TOKEN_ENV} is too short to guard the memory; use at least "
                           f"{MIN_TOKEN_LENGTH} random characters, or unset it for a fresh token")
    return token


def serve_http(home: Path, port: int, token: str, user_id: str = "") -> int:
    """Serve MCP over streamable HTTP on 127.0.0.1:``port`` until a signal stops it."""
    import uvicorn

    from memhost.mcp.server import MemoryMcpServer
    from memhost.web.slowclients import uvicorn_options

    bounds = uvicorn_options()  # before listening: a bad MEMHOST_HEADER_TIMEOUT stops here
    # Listening now, not when uvicorn is up: a client that read the banner below may connect at
    # once, and waits in the backlog instead of being refused.
    listener = loopback.listen(port)
    port = listener.getsockname()[1]
    url = f"http://{HTTP_HOST}:{port}{HTTP_PATH}"
    server = MemoryMcpServer(home, per_connection=True, user_id=user_id)
    app = server.server.streamable_http_app(
        streamable_http_path=HTTP_PATH, host=HTTP_HOST, token_verifier=_Token(token),
        auth=AuthSettings(issuer_url=f"http://{HTTP_HOST}:{port}", resource_server_url=None))

    class Uvicorn(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Stop serving; the memory sessions are closed below and the exit is a clean 0
            # (uvicorn would otherwise raise the signal again once it stopped).
            if self.should_exit and sig == signal.SIGINT:
                self.force_exit = True
            self.should_exit = True

    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=3, **bounds)
    # The token is printed on purpose (the user needs it): past the output's secret masking.
    banner = unscrubbed(sys.stderr)
    print(f"memhost mcp: serving {url} (MCP over streamable HTTP, this machine only)",
          file=banner)
    print(f"memhost mcp: token: {token}", file=banner)
    print(f"memhost mcp: every request needs the header 'Authorization: Bearer {token}'",
          file=banner, flush=True)
    try:
        Uvicorn(config).run(sockets=[listener])
    finally:
        server.close_all()
        listener.close()
    return 0
