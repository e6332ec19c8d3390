"""The settings application for one home and one token: the page, its static files and the API.

``GET /?token=TOKEN`` trades the token printed at start for an HttpOnly, SameSite=Strict session
cookie and a page that moves on to ``/``, so the token leaves the address bar. ``GET /``
serves the page to a browser that holds the cookie. Everything is wrapped in
:class:`memhost.web.security.Guard`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memhost import jsondoc
from memhost.web import api
from memhost.web.security import Guard, Tokens, is_api

log = logging.getLogger("memhost.web")

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 1024 * 1024

SIGN_IN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>memhost settings: not signed in</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/static/style.css">
</head><body><main class="narrow"><h1>memhost settings</h1>
<p id="signin">This page needs the link printed by <code>memhost settings serve</code> when it
started: it holds a token that is new at every start. Open that link again (or restart the
server for a new one).</p></main></body></html>
"""


def _error_response(exc: api.ApiError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


def _map_error(exc: Exception) -> api.ApiError:
    """A library exception as the API's answer."""
    from memhost.errors import ConfigError, MemhostError, ProviderError
    from memhost.schema.settings import SettingsError

    if isinstance(exc, api.ApiError):
        return exc
    if isinstance(exc, SettingsError):
        return api.ApiError(422, str(exc), exc.errors)
    if isinstance(exc, ProviderError):
        return api.ApiError(404, str(exc))
    if isinstance(exc, ConfigError):
        return api.ApiError(409, f"config.toml cannot be used: {exc}")
    if isinstance(exc, MemhostError):
        return api.ApiError(500, str(exc))
    log.error("settings API: unexpected %s", type(exc).__name__, exc_info=exc)
    return api.ApiError(500, f"Internal error: {type(exc).__name__}. The server log has the "
                             "details.")


def _endpoint(item: api.Endpoint, home: Path, memory_home: Path | None) -> Any:
    async def endpoint(request: Request) -> Response:
        body: Any = None
        if item.method != "GET":
            raw = b""
            async for chunk in request.stream():
                raw += chunk
                if len(raw) > MAX_BODY:
                    return _error_response(api.ApiError(413, "The request body is too large."))
            if raw.strip():
                try:
                    body = jsondoc.loads(raw)
                except ValueError:
                    return _error_response(api.ApiError(400, "The request body is not valid JSON."))
            else:
                body = {}
        call = api.Request(home=home, params=dict(request.path_params),
                           query=dict(request.query_params), body=body, memory_home=memory_home)
        try:
            result = await run_in_threadpool(item.handler, call)
        except Exception as exc:
            return _error_response(_map_error(exc))
        return JSONResponse(result)

    endpoint.__name__ = item.operation_id
    endpoint.__doc__ = item.handler.__doc__
    return endpoint


SIGNED_IN_PAGE = ("<!doctype html><meta charset=utf-8>"
                  '<meta http-equiv="refresh" content="0;url=/"><title>memhost settings</title>'
                  '<p>Signed in. <a href="/">Open the memhost settings</a></p>')


def create_app(home: Path, *, token: str, port: int, memory_home: Path | None = None) -> Starlette:
    """The application for ``home``, accepting ``token``, served at 127.0.0.1:``port``; with
    ``memory_home``, the memory tab shows and edits that user's memory."""
    home = Path(home)
    document = api.openapi(port)
    tokens = Tokens(token, port)

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    async def page(request: Request) -> Response:
        offered = request.query_params.get("token")
        if offered is not None:
            if not tokens.token_ok(offered):
                return HTMLResponse(SIGN_IN_PAGE, status_code=401)
            # A page that moves on to "/" itself, not a redirect: after a navigation another site
            # (or a file: page, as `--open` uses) started, the browser would not send the new
            # SameSite=Strict cookie along the redirect; a navigation this page starts is
            # same-site, so it does.
            response = HTMLResponse(SIGNED_IN_PAGE)
            response.set_cookie(tokens.cookie, token, httponly=True, samesite="strict", path="/")
            return response
        headers = {k.lower(): v for k, v in request.headers.items()}
        if not tokens.authorized(headers):
            return HTMLResponse(SIGN_IN_PAGE, status_code=401)
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        if is_api(request.url.path):
            text = "No such API route." if status == 404 else "Method not allowed on this route."
            return JSONResponse({"error": text, "fields": {}}, status_code=status)
        return Response("Not found" if status == 404 else "Method not allowed",
                        status_code=status, media_type="text/plain")

    routes: list[Any] = [
        Route("/", page, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        Route(api.OPENAPI_PATH, openapi, methods=["GET"]),
    ]
    routes += [Route(item.path, _endpoint(item, home, memory_home), methods=[item.method])
               for item in api.ENDPOINTS]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, token=token, port=port)],
                    exception_handlers={HTTPException: not_found})
    app.state.home = home
    app.state.port = port
    return app


def api_routes(app: Starlette) -> set[tuple[str, str]]:
    """``(METHOD, path)`` of every API route the application serves (for checking the OpenAPI
    document against it)."""
    found = set()
    for route in app.routes:
        path = getattr(route, "path", "")
        if isinstance(route, Route) and is_api(path):
            for method in route.methods or ():
                if method != "HEAD":
                    found.add((method, path))
    return found
