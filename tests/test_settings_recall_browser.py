"""The settings page's recall tab in a real browser (Playwright driving Debian's Chromium against a
real ``memhost settings serve`` process): the newest items, a search ranked as recall ranks it,
and forgetting an item for good."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_settings_api import start_server
from test_settings_browser import Page, browser  # noqa: F401  (the module's browser fixture)

from memhost.testing import load_folder_provider
from recall_helpers import PLUGINS, configure

pytestmark = pytest.mark.browser

TURNS = [("Our release codename is Bluefin.", "Bluefin, noted."),
         ("The staging database runs on falcon-9.", "falcon-9 for staging."),
         ("My cat is called Pixel.", "Hello Pixel!")]


@pytest.fixture
def recall_page(browser: Any, tmp_path: Path) -> Iterator[Page]:  # noqa: F811
    home = tmp_path / "home"
    configure(home, "sqlite")
    made = load_folder_provider(PLUGINS / "sqlite")
    made.initialize(session_id="old", home=home, config={}, context="primary")
    for user, reply in TURNS:
        made.sync_turn(user_content=user, assistant_content=reply, session_id="old",
                       messages=[])
    made.shutdown()
    server = start_server(home, tmp_path / "logs")
    opened = Page(browser, server)
    try:
        yield opened
    finally:
        opened.close()
        server.stop()


def test_the_recall_tab_searches_and_forgets(recall_page: Page) -> None:
    page = recall_page.open()
    cards = page.locator("#recall [data-recall-id]")
    assert cards.count() == 6  # three turns, two items each, newest first
    assert "Hello Pixel!" in cards.first.inner_text()

    page.fill("#recall-query", "staging database")
    page.click("#recall-form button[type=submit]")
    page.wait_for_function("""() => {
        const first = document.querySelector('#recall [data-recall-id] pre');
        return first && first.textContent === 'The staging database runs on falcon-9.';
    }""")
    assert "as recall ranks them" in page.inner_text("#recall-note")
    first = cards.first
    item = int(first.get_attribute("data-recall-id"))

    page.once("dialog", lambda dialog: dialog.accept())
    first.locator("[data-action='forget']").click()
    recall_page.notice("saved", f"Forgot item #{item}")
    assert page.locator(f"#recall [data-recall-id='{item}']").count() == 0
    db = sqlite3.connect(recall_page.server.home / "recall.db")
    assert db.execute("SELECT body, status FROM items WHERE id = ?", (item,)).fetchone() == (
        "", "forgotten")
    # The API says the same, and a second forget is a clean 404.
    status, body = recall_page.server.json("GET", "/api/recall?query=falcon")
    assert status == 200 and item not in [h["id"] for h in body["results"]]
    status, body = recall_page.server.json("POST", f"/api/recall/{item}/forget", body={})
    assert status == 404 and "forgotten already" in body["error"]
    assert not [c for c in recall_page.console if "pageerror" in c]
