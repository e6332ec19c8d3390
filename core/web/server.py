"""Running the settings application: a loopback socket, a fresh token, uvicorn.

The socket is bound to 127.0.0.1 (never another interface) and listening before the URL is printed
(:mod:`memhost.web.loopback`), so a client that reads the URL can connect at once; with port 0 the
system picks a free port and the printed URL has the real one. uvicorn's access log is off (it
would print the query string, where the token travels once); :mod:`memhost.web.security` logs
method, path and status.
"""

from __future__ import annotations

import contextlib
import html
import json
import socket
import sys
import tempfile
import threading
import time
import webbrowser
from pathlib import Path
from typing import TextIO

from memhost.errors import MemhostError
from memhost.files import write_new_private
from memhost.security.masking import unscrubbed
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
        from memhost.web.slowclients import uvicorn_options
    except ImportError as exc:
        raise MemhostError(f"the settings page needs starlette and uvicorn ({exc}); install them "
                           "with: pip install 'memhost[settings]'") from None
    from memhost.web.security import new_token

    out = out or sys.stdout
    bounds = uvicorn_options()  # before binding: a bad MEMHOST_HEADER_TIMEOUT stops here
    sock = bind(port)
    actual = sock.getsockname()[1]
    token = new_token()
    app = create_app(home, token=token, port=actual, memory_home=memory_home)
    config = uvicorn.Config(app, log_config=LOG_CONFIG, access_log=False, server_header=False,
                            proxy_headers=False, lifespan="off", timeout_graceful_shutdown=3,
                            **bounds)
    server = uvicorn.Server(config)
    url = f"http://{HOST}:{actual}/?token={token}"
    shown = unscrubbed(out)  # the token is printed on purpose: past the output's secret masking
    print(f"memhost settings for {home}" + (f", memory of {memory_home}" if memory_home else ""),
          file=shown)
    print(f"  {url}", file=shown)
    print("Open that link: it holds this start's token. Ctrl+C stops the server.", file=shown,
          flush=True)
    launch = LaunchFile(url) if open_browser else None
    if launch is not None:
        threading.Thread(target=_open_when_started, args=(server, launch), daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if launch is not None:
            launch.remove()
    return 0


class LaunchFile:
    """A page only this user can read that sends the browser on to ``url``.

    A browser is started with its address on the command line, where every local user sees it
    (``ps``); the token must not be there. The browser is given this file's path instead: a
    ``file:`` address naming a 0600 file in a fresh 0700 folder, whose page redirects to the
    token URL. It is removed once the browser had time to read it, and when the server stops.
    """

    KEEP_SECONDS = 60.0

    def __init__(self, url: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="memhost-settings-"))  # 0700
        self.path = self.folder / "open.html"
        # A script (Chromium does not follow a meta refresh from file: to http:), the refresh for
        # browsers that do, and a link for one that runs neither.
        page = ("<!doctype html><meta charset=utf-8><meta name=referrer content=no-referrer>"
                f'<meta http-equiv="refresh" content="0;url={html.escape(url)}">'
                "<title>memhost settings</title>"
                f"<script>location.replace({json.dumps(url)})</script>"
                f'<p><a href="{html.escape(url)}">Open the memhost settings</a></p>')
        write_new_private(self.path, page.encode("utf-8"))

    @property
    def address(self) -> str:
        return self.path.as_uri()

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            self.folder.rmdir()


def _open_when_started(server: object, launch: LaunchFile) -> None:
    deadline = time.monotonic() + 10
    while not getattr(server, "started", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    webbrowser.open(launch.address)
    time.sleep(LaunchFile.KEEP_SECONDS)
    launch.remove()
