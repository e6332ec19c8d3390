"""The local settings page: ``memhost settings serve``.

A small Starlette application served by uvicorn on 127.0.0.1 only: a JSON API over the settings
service, the memory store, pending approvals and the archive, and a plain HTML/CSS/JavaScript page
that uses it. Starlette and uvicorn come with the ``settings`` extra (``pip install
'memhost[settings]'``); nothing here is imported by ``import memhost``.

- :mod:`memhost.web.security`: the token, Host, Origin and content-type checks, security headers
  and the request log (which never holds a query string).
- :mod:`memhost.web.api`: the API's route table and its OpenAPI document; the handlers are in
  :mod:`memhost.web.providers_api`, :mod:`memhost.web.memory_api` and
  :mod:`memhost.web.recall_api`, on :mod:`memhost.web.request` (what a handler gets and raises),
  and :mod:`memhost.web.openapi` builds the document.
- :mod:`memhost.web.app`: the application (page, static files, API) for one home and token.
- :mod:`memhost.web.server`: binding the loopback socket, printing the URL, running uvicorn.
- :mod:`memhost.web.loopback`: the listening socket on 127.0.0.1, shared with the MCP server's
  HTTP transport (standard library only).
"""
