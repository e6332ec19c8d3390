"""Services some tests need, and what happens when one is missing.

A test that needs a service (a PostgreSQL server, Chromium driven by Playwright) calls
:func:`require_service` with the service's name and the problem found (``None`` when it is there).
Outside CI a missing service skips the test with that reason; under CI (the ``CI`` variable is
true, as ``.ci/run`` sets it) it fails the test, because CI installs and starts every service and a
missing one there is a broken run, not a reason to skip.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: How the browser tests start Debian's Chromium (never a browser downloaded by Playwright).
CHROMIUM_ARGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def require_service(name: str, problem: str | None) -> None:
    """Skip (fail under CI) the calling test when ``problem`` says ``name`` is missing."""
    if problem is None:
        return
    message = f"{name} is not available: {problem}"
    if under_ci():
        pytest.fail(f"{message} (required under CI)", pytrace=False)
    pytest.skip(message)


def chromium_problem() -> str | None:
    """Why the browser tests cannot run here, or ``None``."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        found = shutil.which("chromium")
        hint = f" (a chromium is at {found}, but the tests use {CHROMIUM})" if found else ""
        return f"{CHROMIUM} is missing; install Debian's package: apt-get install chromium{hint}"
    return None


#: Chromium features turned off on top of Playwright's own list. In headless mode each new
#: window (one per browser context, so one per test) still loads the address bar's popup, a WebUI
#: page in a renderer of its own: that took about 9 of the browser tests' 26 CPU-seconds, and no
#: test looks at the address bar.
DISABLED_FEATURES = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup")


def playwright_disabled_features() -> list[str] | None:
    """The features Playwright's driver turns off (its ``--disable-features``), read from the
    driver's source, or ``None`` where they cannot be found there."""
    import playwright

    lib = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for source in (lib / "coreBundle.js", lib / "server" / "chromium" / "chromiumSwitches.js"):
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        start = text.find("disabledFeatures = [")
        if start < 0:
            continue
        listed = re.sub(r"//[^\n]*", "", text[start:start + 10_000]).split("]", 1)[0]
        names = re.findall(r"[\"']([A-Za-z0-9_]+)[\"']", listed)
        if names:
            return names
    return None


def launch_chromium(playwright: Any) -> Any:
    """A headless Chromium browser from ``/usr/bin/chromium``, via a started Playwright.

    Chromium keeps only the last ``--disable-features`` it is given, so :data:`DISABLED_FEATURES`
    go with Playwright's own list; where that list cannot be read they are left out (the tests
    then only cost more), rather than replace it."""
    args = list(CHROMIUM_ARGS)
    theirs = playwright_disabled_features()
    if theirs is not None:
        args.append("--disable-features=" + ",".join([*theirs, *DISABLED_FEATURES]))
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
