"""The settings page in a real browser: Playwright driving Debian's Chromium against a real
``memhost settings serve`` process (see test_settings_api.py for the server helpers).

Skipped when /usr/bin/chromium or playwright is missing, except under CI, where that fails.
One test writes docs/images/settings.png (and settings-phone.png), the screenshots in
docs/settings.md.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from services import chromium_problem, launch_chromium, require_service
from test_settings_api import SECRET, Server, make_home, snapshot, stage, start_server

# One worker runs them all, so pytest-xdist starts one Chromium rather than one per worker.
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

REPO = Path(__file__).resolve().parents[1]
BUNDLED_SQLITE = REPO / "plugins" / "sqlite"
IMAGES = REPO / "docs" / "images"
TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_service("Chromium with Playwright", chromium_problem())
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start_server(make_home(tmp_path), tmp_path / "logs")
    try:
        yield running
    finally:
        running.stop()


class Page:
    """A browser page on the settings server that records every response body and every
    console problem."""

    def __init__(self, browser: Any, server: Server, *, width: int = 1200, height: int = 900) -> None:
        self.server = server
        self.context = browser.new_context(viewport={"width": width, "height": height},
                                           locale="en-GB", timezone_id="UTC")
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.bodies: list[bytes] = []
        self.requests: list[tuple[str, str]] = []
        self.console: list[str] = []
        self.page.on("response", self._record)
        self.page.on("request", lambda r: self.requests.append((r.method, r.url)))
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def _record(self, response: Any) -> None:
        try:
            self.bodies.append(response.body())
        except Exception:  # a redirect has no body
            self.bodies.append(b"")

    def open(self) -> Any:
        self.page.goto(self.server.url)
        self.page.wait_for_selector("body[data-ready='true']")
        assert "token=" not in self.page.url  # the token left the address bar
        assert self.server.token not in self.page.evaluate("document.cookie")  # HttpOnly
        return self.page

    def reload(self) -> Any:
        self.page.reload()
        self.page.wait_for_selector("body[data-ready='true']")
        return self.page

    def notice(self, state: str, containing: str = "") -> str:
        """Wait for the notice to be in ``state`` and say ``containing``; return its text."""
        self.page.wait_for_function(
            """([state, text]) => {
                const box = document.querySelector('#notice');
                return box && !box.hidden && box.dataset.state === state &&
                       box.textContent.includes(text);
            }""", arg=[state, containing])
        return str(self.page.inner_text("#notice"))

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Page]:
    opened = Page(browser, server)
    try:
        yield opened
    finally:
        opened.close()


def field(page: Any, key: str) -> Any:
    return page.locator(f"#form-fields [data-field='{key}']")


def use_provider(page: Any, name: str) -> None:
    page.click(f"#providers [data-provider='{name}'] [data-action='use']")
    page.wait_for_selector(f"#providers [data-provider='{name}'][data-configured='true']")
    page.wait_for_selector(f"#provider-form[data-provider='{name}']")


# -- choosing a provider and saving its settings ---------------------------------------------------


def _pick_number(described: dict[str, Any]) -> tuple[str, int | float]:
    """A number field and a valid value for it that differs from its current value."""
    item = next(f for f in described["fields"] if f["kind"] == "number" and f["visible"])
    current = item["value"]
    step = item.get("step") or 1
    low = item.get("min") if item.get("min") is not None else 0
    high = item.get("max") if item.get("max") is not None else low + 100 * step
    candidates = [low + step * n for n in range(1, 50)] + [high, low]
    value = next(v for v in candidates if low <= v <= high and v != current)
    return item["key"], int(value) if float(value).is_integer() else value


def _save_number_bool_secret(p: Page, name: str) -> None:
    s = p.server
    page = p.open()
    use_provider(page, name)
    described = s.json("GET", f"/api/providers/{name}")[1]
    number_key, number = _pick_number(described)
    bool_field = next(f for f in described["fields"] if f["kind"] == "bool" and f["visible"])
    secret = next((f for f in described["fields"] if f["kind"] == "secret" and f["visible"]), None)

    field(page, number_key).locator("input").fill(str(number))
    checkbox = field(page, bool_field["key"]).locator("input[type=checkbox]")
    checkbox.set_checked(not bool_field["value"])
    if secret is not None:
        assert field(page, secret["key"]).locator("[data-secret-state]").inner_text() == "not set"
        field(page, secret["key"]).locator("input[type=password]").fill(SECRET)
    page.click("#save")
    p.notice("saved", "Saved")

    page = p.reload()
    page.wait_for_selector(f"#provider-form[data-provider='{name}']")
    assert field(page, number_key).locator("input").input_value() == str(number)
    assert field(page, bool_field["key"]).locator("input").is_checked() is (not bool_field["value"])
    stored = s.json("GET", f"/api/providers/{name}")[1]
    values = {f["key"]: f.get("value") for f in stored["fields"]}
    assert values[number_key] == number and values[bool_field["key"]] is (not bool_field["value"])
    assert stored["active"] is True
    if secret is not None:
        state = field(page, secret["key"]).locator("[data-secret-state]")
        assert state.inner_text() == "set"
        assert field(page, secret["key"]).locator("input[type=password]").input_value() == ""
        assert SECRET in (s.home / ".env").read_text()  # it was saved...
        # ...and it is nowhere to be seen: the DOM, any response the page received, the log
        assert SECRET not in page.content()
        assert p.bodies and not any(SECRET.encode() in body for body in p.bodies)
        s.stop()
        assert SECRET not in s.output()
    assert not [c for c in p.console if "Content Security Policy" in c or "pageerror" in c]


def test_select_provider_change_number_bool_and_secret_then_reload(page: Page) -> None:
    _save_number_bool_secret(page, "demo")


@pytest.mark.skipif(not BUNDLED_SQLITE.is_dir(),
                    reason="the bundled sqlite provider (plugins/sqlite) is not in this tree yet")
def test_select_the_bundled_sqlite_provider_and_save_its_settings(page: Page) -> None:
    _save_number_bool_secret(page, "sqlite")


def test_a_provider_picker_shows_status_and_reason(page: Page) -> None:
    p = page.open()
    offline = p.locator("#providers [data-provider='offline']")
    assert offline.get_attribute("data-status") == "unavailable"
    assert offline.locator("[data-role='reason']").inner_text() == "the offline service is switched off"
    assert p.locator("#providers [data-provider='builtin'] [data-role='status']").inner_text() == "active"
    assert p.locator("#providers [data-provider='demo'] [data-role='status']").inner_text() == "available"
    use_provider(p, "demo")
    assert p.locator("#providers [data-provider='demo'] [data-role='status']").inner_text() == "active"
    assert 'provider = "demo"' in (page.server.home / "config.toml").read_text()
    p.click("#providers [data-provider='builtin'] [data-action='use']")
    p.wait_for_selector("#providers [data-provider='builtin'][data-configured='true']")
    assert p.locator("#settings-section").is_hidden()


def test_every_field_kind_is_rendered(page: Page) -> None:
    p = page.open()
    p.click("#providers [data-provider='demo'] [data-action='edit']")
    p.wait_for_selector("#provider-form[data-provider='demo']")
    assert field(p, "mode").locator("select option").all_inner_texts() == ["Hosted", "Self-hosted"]
    number = field(p, "max_chars").locator("input[type=number]")
    assert (number.get_attribute("min"), number.get_attribute("max"),
            number.get_attribute("step")) == ("100", "10000", "100")
    assert field(p, "rerank").locator("input[type=checkbox]").count() == 1
    assert field(p, "filters").locator("textarea").count() == 1
    assert field(p, "user_id").locator("input[type=text]").input_value() == "me"
    assert field(p, "api_key").locator("input[type=password]").count() == 1
    assert "Whose memories these are." in field(p, "user_id").inner_text()
    assert p.locator("fieldset[data-group='Recall'] legend").inner_text() == "Recall"
    assert field(p, "max_chars").locator("xpath=ancestor::fieldset").get_attribute(
        "data-group") == "Recall"
    assert "api_key" in p.inner_text("#settings-missing")


def test_a_secret_can_be_replaced_and_cleared_but_never_read(page: Page) -> None:
    s = page.server
    s.json("PUT", "/api/providers/demo/config", body={"values": {"api_key": SECRET}})
    p = page.open()
    p.click("#providers [data-provider='demo'] [data-action='edit']")
    secret = field(p, "api_key")
    assert secret.locator("[data-secret-state]").inner_text() == "set"
    assert secret.locator("input[type=password]").is_hidden()
    secret.locator("[data-action='replace-secret']").click()
    secret.locator("input[type=password]").fill("sk-replacement-value-0001")
    p.click("#save")
    page.notice("saved", "Saved")
    assert "sk-replacement-value-0001" in (s.home / ".env").read_text()
    field(p, "api_key").locator("[data-action='clear-secret']").click()
    p.wait_for_selector("#form-fields [data-field='api_key'] [data-secret-state='not set']")
    assert "DEMO_API_KEY" not in (s.home / ".env").read_text()
    assert not any(SECRET.encode() in b or b"sk-replacement" in b for b in page.bodies)


# -- errors ----------------------------------------------------------------------------------------


def test_a_bad_value_shows_its_fields_error_and_changes_nothing(page: Page) -> None:
    s = page.server
    s.json("PUT", "/api/providers/demo/config", body={"values": {"user_id": "alice",
                                                                "api_key": "sk-before"}})
    before = snapshot(s.home)
    assert before["config.toml"] and before[".env"]
    p = page.open()
    p.click("#providers [data-provider='demo'] [data-action='edit']")
    # out of range: only the server knows the rule; its message lands under the field
    field(p, "max_chars").locator("input").fill("50")
    field(p, "user_id").locator("input").fill("bob")
    p.click("#save")
    page.notice("failed", "Not saved")
    error = p.locator("[data-error-for='max_chars']")
    assert "at least 100" in error.inner_text()
    assert field(p, "max_chars").get_attribute("data-invalid") == "true"
    assert p.locator("[data-error-for='user_id']").inner_text() == ""
    assert snapshot(s.home) == before

    # JSON is checked before anything is sent
    puts = len([r for r in page.requests if r[0] == "PUT"])
    field(p, "max_chars").locator("input").fill("300")
    field(p, "filters").locator("textarea").fill('{"lang": ')
    assert "not valid JSON" in p.locator("[data-error-for='filters']").inner_text()
    p.click("#save")
    page.notice("failed", "Not saved")
    assert "not valid JSON" in p.locator("[data-error-for='filters']").inner_text()
    assert len([r for r in page.requests if r[0] == "PUT"]) == puts
    field(p, "filters").locator("textarea").fill("42")
    p.click("#save")
    assert "object or array" in p.locator("[data-error-for='filters']").inner_text()
    assert snapshot(s.home) == before

    field(p, "filters").locator("textarea").fill('{"lang": "en"}')
    p.click("#save")
    page.notice("saved", "Saved")
    stored = {f["key"]: f.get("value") for f in s.json("GET", "/api/providers/demo")[1]["fields"]}
    assert stored["filters"] == {"lang": "en"} and stored["max_chars"] == 300
    assert stored["user_id"] == "bob"


def test_the_when_field_appears_and_hides_with_its_condition(page: Page) -> None:
    p = page.open()
    p.click("#providers [data-provider='demo'] [data-action='edit']")
    p.wait_for_selector("#provider-form[data-provider='demo']")
    host, api_key, model = field(p, "host"), field(p, "api_key"), field(p, "rerank_model")
    assert api_key.is_visible() and host.is_hidden() and model.is_hidden()
    field(p, "mode").locator("select").select_option(label="Self-hosted")
    assert host.is_visible() and api_key.is_hidden()
    field(p, "rerank").locator("input").check()
    assert model.is_visible()
    field(p, "rerank").locator("input").uncheck()
    assert model.is_hidden()
    field(p, "mode").locator("select").select_option(label="Hosted")
    assert api_key.is_visible() and host.is_hidden()
    # a value typed into a field that is hidden again is not saved
    field(p, "mode").locator("select").select_option(label="Self-hosted")
    field(p, "host").locator("input").fill("http://localhost:9000")
    field(p, "mode").locator("select").select_option(label="Hosted")
    p.click("#save")
    page.notice("info", "Nothing to save")  # back where it started: nothing changed
    field(p, "user_id").locator("input").fill("ada")
    p.click("#save")
    page.notice("saved", "Saved")
    stored = {f["key"]: f for f in page.server.json("GET", "/api/providers/demo")[1]["fields"]}
    assert stored["host"]["value"] is None and stored["user_id"]["value"] == "ada"
    assert stored["mode"]["source"] == "default"  # an untouched field is not written


# -- memory ----------------------------------------------------------------------------------------


def test_approve_a_pending_write_from_the_page(page: Page) -> None:
    s = page.server
    approve_id = stage(s.home, {"action": "add", "target": "memory",
                                "content": "The team deploys on Fridays"})
    reject_id = stage(s.home, {"action": "add", "target": "user", "content": "User likes tea"})
    p = page.open()
    card = p.locator(f"#pending [data-pending-id='{approve_id}']")
    assert "The team deploys on Fridays" in card.inner_text()
    assert p.inner_text("#pending-badge") == "2"
    card.locator("[data-action='approve']").click()
    p.wait_for_selector(f"#pending [data-pending-id='{approve_id}']", state="detached")
    page.notice("saved", "Approved")
    p.wait_for_selector("#stores [data-store='memory'] .entry-text:has-text('The team deploys on Fridays')")
    from memhost.builtin_providers.store import MemoryStore

    assert MemoryStore(s.home).entries("memory") == ["The team deploys on Fridays"]
    p.locator(f"#pending [data-pending-id='{reject_id}'] [data-action='reject']").click()
    p.wait_for_selector(f"#pending [data-pending-id='{reject_id}']", state="detached")
    assert MemoryStore(s.home).entries("user") == []
    assert p.inner_text("#pending").strip() == "Nothing is waiting for approval."


def test_memory_entries_are_added_edited_removed_and_restored(page: Page) -> None:
    from memhost.builtin_providers.store import MemoryStore

    s = page.server
    p = page.open()
    store = p.locator("#stores [data-store='user']")
    store.locator("textarea[name='content']").fill("The user's name is Ada")
    store.locator("[data-action='add-entry']").click()
    p.wait_for_selector("#stores [data-store='user'] .entry[data-entry-index='1']")
    assert MemoryStore(s.home).entries("user") == ["The user's name is Ada"]
    assert "22 / 1,375 chars" in store.locator(".usage-text").inner_text()

    entry = store.locator(".entry[data-entry-index='1']")
    entry.locator("[data-action='edit-entry']").click()
    entry.locator("textarea").fill("The user's name is Ada Lovelace")
    entry.locator("[data-action='save-entry']").click()
    p.wait_for_selector("#stores [data-store='user'] .entry-text:has-text('Ada Lovelace')")
    assert MemoryStore(s.home).entries("user") == ["The user's name is Ada Lovelace"]

    # the tool's rules apply: over budget is refused, with its message under the form
    store.locator("textarea[name='content']").fill("y" * 1400)
    store.locator("[data-action='add-entry']").click()
    page.notice("failed", "budget")
    assert "budget" in store.locator(".add-entry [data-entry-error]").inner_text()
    assert MemoryStore(s.home).entries("user") == ["The user's name is Ada Lovelace"]

    store.locator(".entry[data-entry-index='1'] [data-action='remove-entry']").click()
    p.wait_for_selector("#stores [data-store='user'] .entry", state="detached")
    assert MemoryStore(s.home).entries("user") == []
    archived = p.locator("#archive [data-archive-id]").first
    assert "Ada Lovelace" in archived.inner_text()
    archived.locator("[data-action='restore']").click()
    p.wait_for_selector("#stores [data-store='user'] .entry-text:has-text('Ada Lovelace')")
    assert MemoryStore(s.home).entries("user") == ["The user's name is Ada Lovelace"]


def test_pinned_and_stale_entries_are_marked(page: Page) -> None:
    from memhost.builtin_providers.store import MemoryStore

    s = page.server
    old = MemoryStore(s.home, clock=lambda: time.time() - 400 * 86_400)
    assert old.add("memory", "A fact from long ago").ok
    assert old.add("memory", "A pinned fact").ok
    old.update_metadata("memory", "A pinned fact", pinned=True)
    p = page.open()
    stale = p.locator("#stores [data-store='memory'] .entry[data-entry-index='1']")
    pinned = p.locator("#stores [data-store='memory'] .entry[data-entry-index='2']")
    assert stale.get_attribute("data-stale") == "true"
    assert stale.locator("[data-flag='stale']").inner_text() == "stale"
    assert pinned.get_attribute("data-pinned") == "true"
    assert pinned.locator("[data-flag='pinned']").is_visible()
    assert pinned.get_attribute("data-stale") is None


# -- layout and the screenshot -------------------------------------------------------------------------


def _populate(server: Server) -> None:
    from memhost.builtin_providers.store import MemoryStore

    s = server
    s.json("PUT", "/api/active", body={"provider": "demo"})
    s.json("PUT", "/api/providers/demo/config", body={"values": {
        "user_id": "ada", "max_chars": 3000, "rerank": True, "rerank_model": "small-reranker",
        "filters": {"lang": "en"}, "api_key": SECRET}})
    week = MemoryStore(s.home, clock=lambda: time.time() - 6 * 86_400)
    for text in ("Project uses pytest; run `make test` before committing",
                 "CI runs on Debian bookworm with Python 3.11"):
        assert week.add("memory", text).ok
    assert week.add("user", "The user's name is Ada; prefers short answers").ok
    week.update_metadata("user", "The user's name is Ada; prefers short answers", pinned=True)
    old = MemoryStore(s.home, clock=lambda: time.time() - 120 * 86_400)
    assert old.add("memory", "The staging database is on port 5433").ok
    assert old.add("memory", "Old build server: build-01").ok
    assert MemoryStore(s.home).remove("memory", "build-01").ok
    stage(s.home, {"action": "add", "target": "memory",
                   "content": "The team deploys on Fridays"})


def test_screenshots_for_the_docs(browser: Any, server: Server, tmp_path: Path) -> None:
    # The pictures in docs/images are rewritten only when asked for
    # (MEMHOST_UPDATE_SCREENSHOTS=1): a test run must not leave the checkout changed.
    images = IMAGES if os.environ.get("MEMHOST_UPDATE_SCREENSHOTS") == "1" else tmp_path
    _populate(server)
    images.mkdir(parents=True, exist_ok=True)
    for name, width, height in (("settings.png", 1200, 900), ("settings-phone.png", 390, 844)):
        opened = Page(browser, server, width=width, height=height)
        try:
            p = opened.open()
            p.wait_for_selector("#provider-form[data-provider='demo']")
            # the same time on every run, so the picture only changes when the page does
            p.evaluate("""() => {
                for (const node of document.querySelectorAll('#archive .meta')) {
                    node.textContent = node.textContent.replace(/^\\w+ · [^·]+ · /, 'dd34767b · 2026-01-05 10:00 · ');
                }
                for (const node of document.querySelectorAll('#pending .meta')) {
                    node.textContent = node.textContent.replace(/^\\w+ · (.*) · [^·]+ ago$/, '34108f64 · $1 · 2m ago');
                }
                const home = document.querySelector('#home-path');
                home.textContent = 'Home: ~/.local/share/memhost';
            }""")
            path = images / name
            p.screenshot(path=str(path), full_page=True, animations="disabled")
            assert path.stat().st_size > 10_000
            overflow = p.evaluate("document.documentElement.scrollWidth - "
                                  "document.documentElement.clientWidth")
            assert overflow <= 0, f"{name}: the page scrolls sideways by {overflow}px"
            assert SECRET not in p.content()
            assert not [c for c in opened.console if "Content Security Policy" in c
                        or "pageerror" in c]
        finally:
            opened.close()


def test_the_page_fits_a_phone(browser: Any, server: Server) -> None:
    opened = Page(browser, server, width=360, height=740)
    try:
        p = opened.open()
        p.click("#providers [data-provider='demo'] [data-action='edit']")
        p.wait_for_selector("#provider-form[data-provider='demo']")
        overflow = p.evaluate("document.documentElement.scrollWidth - "
                              "document.documentElement.clientWidth")
        assert overflow <= 0
        box = field(p, "user_id").locator("input").bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360
    finally:
        opened.close()


def test_a_stale_cookie_shows_how_to_sign_in(browser: Any, server: Server) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        response = page.goto(f"http://127.0.0.1:{server.port}/")
        assert response is not None and response.status == 401
        assert "memhost settings serve" in page.inner_text("#signin")
    finally:
        context.close()
