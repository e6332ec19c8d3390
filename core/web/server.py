"""Running the settings application: a loopback socket, a fresh token, uvicorn.

The socket is bound to 127.0.0.1 (never another interface) and listening before the URL is printed
(:mod:`memhost.web.loopback`), so a client that reads the URL can connect at once; with port 0 the
system picks a free port and the printed URL has the real one. uvicorn's access log is off (it
would print the query string, where the token travels once); :mod:`memhost.web.security` logs
method, path and status.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import webbrowser
from pathlib import Path
from typing import TextIO

from memhost.errors import MemhostError
from memhost.web import loopback

HOST = loopback.HOST
DEFAULT_PORT = 8765

LOG_CONFIG = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "memhost settings: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain",
                            "stream": "ext://sys.stderr"}},
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": [], "level": "CRITICAL", "propagate": False},
        "memhost.web": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}


def bind(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1:``port`` (0: any free port)."""
    sock = loopback.listen(port)
    sock.set_inheritable(True)
    return sock


def serve(home: Path, *, port: int = DEFAULT_PORT, open_browser: bool = False,
          out: TextIO | None = None, memory_home: Path | None = None) -> int:
    """Serve the settings page for ``home`` until interrupted (``memory_home``: the memory of
    one user of the home, see ``memhost --user``)."""
    try:
        import uvicorn

        from memhost.web.app import create_app
    except ImportError as exc:
        raise MemhostError(f"the settings page needs starlette and uvicorn ({exc}); install them "
                           "with: pip install 'memhost[settings]'") from None
    from memhost.web.security import new_token

    out = out or sys.stdout
    sock = bind(port)
    actual = sock.getsockname()[1]
    token = new_token()
    app = create_app(home, token=token, port=actual, memory_home=memory_home)
    config = uvicorn.Config(app, log_config=LOG_CONFIG, access_log=False, server_header=False,
                            proxy_headers=False, lifespan="off", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    url = f"http://{HOST}:{actual}/?token={token}"
    print(f"memhost settings for {home}" + (f", memory of {memory_home}" if memory_home else ""),
          file=out)
    print(f"  {url}", file=out)
    print("Open that link: it holds this start's token. Ctrl+C stops the server.", file=out,
          flush=True)
    if open_browser:
        threading.Thread(target=_open_when_started, args=(server, url), daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0


def _open_when_started(server: object, url: str) -> None:
    deadline = time.monotonic() + 10
    while not getattr(server, "started", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    webbrowser.open(url)
