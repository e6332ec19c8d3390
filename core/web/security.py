"""What keeps the settings page to the person who started it.

One :class:`Guard` wraps the whole application (a plain ASGI middleware) and checks, in order:

1. ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT`` (the server binds 127.0.0.1 only;
   this refuses DNS-rebinding pages whose own name resolves to 127.0.0.1) — else 400;
2. every ``/api`` request carries this start's token, in the session cookie or as
   ``Authorization: Bearer TOKEN`` — else 401;
3. every state-changing request (POST, PUT, PATCH, DELETE) has an ``Origin`` equal to
   ``http://`` plus its ``Host`` — else 403 — and a JSON body (``Content-Type: application/json``)
   — else 415. Together with the ``SameSite=Strict`` cookie this stops cross-site requests.

It adds security headers to every response (a strict Content-Security-Policy with no inline
script, ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``, ``Cache-Control: no-store``
on the API and the page) and logs each request as method, path and status: never the query string,
where the token travels once, and never a header or body.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

access_log = logging.getLogger("memhost.web.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = (
    ("content-security-policy", CSP),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("x-content-type-options", "nosniff"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)


def new_token() -> str:
    """A fresh random token: one per server start."""
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """The session cookie's name. Browsers do not separate cookies by port, so two servers on
    different ports each keep their own."""
    return f"memhost_settings_{port}"


def is_api(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _headers(scope: Scope) -> dict[str, str]:
    """The request headers, lower-cased names; the first of a repeated header wins."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers") or ():
        name = raw_name.decode("latin-1").lower()
        found.setdefault(name, raw_value.decode("latin-1"))
    return found


class Tokens:
    """This start's token, and whether a request carries it."""

    def __init__(self, token: str, port: int) -> None:
        self.token = token
        self.cookie = cookie_name(port)

    def token_ok(self, candidate: str | None) -> bool:
        return bool(candidate) and secrets.compare_digest(
            candidate.encode("utf-8", "replace"), self.token.encode("utf-8"))

    def authorized(self, headers: dict[str, str]) -> bool:
        """The request (lower-cased header names) carries the token, as the session cookie or
        as ``Authorization: Bearer``."""
        auth = headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and self.token_ok(value.strip()):
            return True
        # Parsed by hand: http.cookies gives up on the whole header at the first cookie it
        # dislikes, and other programs on 127.0.0.1 may have set any cookie at all.
        for pair in headers.get("cookie", "").split(";"):
            name, _, value = pair.strip().partition("=")
            if name == self.cookie and self.token_ok(value.strip().strip('"')):
                return True
        return False


class Guard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.port = port
        self.tokens = Tokens(token, port)
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})

    # -- checks -----------------------------------------------------------------------------------

    def refusal(self, scope: Scope) -> tuple[int, str, dict[str, str]] | None:
        """``(status, message, extra headers)`` when the request must be refused, else ``None``."""
        headers = _headers(scope)
        host = headers.get("host", "").strip().lower()
        if host not in self.hosts:
            return 400, ("This server answers only to http://127.0.0.1:%d or http://localhost:%d; "
                         "the request named another host." % (self.port, self.port)), {}
        path = scope.get("path", "")
        if is_api(path) and not self.tokens.authorized(headers):
            return 401, ("Not signed in: open the link printed by `memhost settings serve` (it "
                         "holds this start's token), or send Authorization: Bearer TOKEN."), {
                "www-authenticate": 'Bearer realm="memhost settings"'}
        if scope.get("method", "GET").upper() in UNSAFE_METHODS:
            origin = headers.get("origin", "").strip().lower()
            if origin != f"http://{host}":
                return 403, ("Refused: a request that changes something must come from this "
                             "page (its Origin header must be http://%s)." % host), {}
            content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if content_type != "application/json":
                return 415, "Refused: send the request body as JSON (Content-Type: " \
                            "application/json).", {}
        return None

    # -- ASGI -------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":  # no websockets here
                await send({"type": "websocket.close", "code": 1008})
                return
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        path = scope.get("path", "")
        status = {"code": 0}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                headers = list(message.get("headers") or [])
                names = {name.lower() for name, _ in headers}
                for name, value in SECURITY_HEADERS:
                    if name.encode() not in names:
                        headers.append((name.encode(), value.encode()))
                if b"cache-control" not in names:
                    policy = "no-cache" if path.startswith("/static/") else "no-store"
                    headers.append((b"cache-control", policy.encode()))
                message["headers"] = headers
            await send(message)

        try:
            refused = self.refusal(scope)
            if refused is not None:
                code, text, extra = refused
                await _send_json(send_with_headers, code, {"error": text, "fields": {}}, extra)
            elif is_api(path):
                await self.app(scope, receive, _masking(send_with_headers))
            else:
                await self.app(scope, receive, send_with_headers)
        finally:
            # The path only: the query string (where the token travels) is never logged, and
            # the path's control characters are escaped (a decoded %0A would forge a log line,
            # %1B drive the terminal).
            access_log.info("%s %s %s %.0fms", printable(scope.get("method", "?")),
                            printable(path), status["code"] or "-",
                            (time.monotonic() - started) * 1000)


def printable(text: str) -> str:
    """``text`` with control and other unprintable characters as %XX (UTF-8 bytes)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else "".join(f"%{b:02X}" for b in ch.encode("utf-8"))
                   for ch in text)


def _masking(send: Send) -> Send:
    """``send`` for an API answer, whose body passes secret masking first: a provider's status
    or error text may quote its config (:mod:`memhost.security.masking`)."""
    from memhost.security.masking import scrub, scrub_value

    held: dict[str, Any] = {}
    parts: list[bytes] = []

    async def send_masked(message: Message) -> None:
        if message["type"] == "http.response.start":
            held["start"] = message
            return
        if message["type"] != "http.response.body" or "start" not in held:
            await send(message)
            return
        parts.append(message.get("body", b""))
        if message.get("more_body"):
            return
        body = b"".join(parts)
        try:
            masked = json.dumps(scrub_value(json.loads(body)), ensure_ascii=False).encode("utf-8")
        except ValueError:
            masked = scrub(body.decode("utf-8", "replace")).encode("utf-8")
        start = held.pop("start")
        start["headers"] = [(k, v) for k, v in start.get("headers") or ()
                            if k.lower() != b"content-length"]
        start["headers"].append((b"content-length", str(len(masked)).encode()))
        await send(start)
        await send({"type": "http.response.body", "body": masked})

    return send_masked


async def _send_json(send: Send, status: int, body: dict[str, Any],
                     extra: dict[str, str] | None = None) -> None:
    payload = json.dumps(body).encode("utf-8")
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(payload)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
