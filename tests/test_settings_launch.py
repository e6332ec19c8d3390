"""``memhost settings serve --open``'s launch file, opened in a real browser, signs the browser in:
the token never went through a command line (see test_settings_api.py for that side)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memhost.web.server import LaunchFile
from services import chromium_problem, launch_chromium, require_service
from test_settings_api import make_home, start_server

pytestmark = pytest.mark.browser


def test_the_launch_file_signs_the_browser_in(tmp_path: Path) -> None:
    require_service("Chromium with Playwright", chromium_problem())
    from playwright.sync_api import sync_playwright

    s = start_server(make_home(tmp_path), tmp_path / "logs")
    launch = LaunchFile(s.url)
    try:
        assert stat.S_IMODE(os.stat(launch.path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(launch.folder).st_mode) == 0o700
        assert s.token not in launch.address
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                page = browser.new_page()
                page.set_default_timeout(20_000)
                page.goto(launch.address)
                page.wait_for_selector("body[data-ready='true']")  # the API answered: signed in
                assert page.url.startswith(s.origin) and "token=" not in page.url
            finally:
                browser.close()
    finally:
        launch.remove()
        s.stop()
    assert not launch.path.exists() and not launch.folder.exists()
