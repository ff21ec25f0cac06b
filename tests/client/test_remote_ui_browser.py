"""The page ``promptdeck ui`` serves, in Debian's chromium, in front of the official SDK's server (a real process
started by ``ui`` over stdio). The browser fixtures are in tests/support/browser.py."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import Pages, catalog_ready, shown_names
from tests.support.http_server import UI_TOKEN, ui_server
from tests.support.remote_ui import SDK_SERVER, command, library


def test_the_page_shows_and_renders_the_sdk_servers_prompts(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect  # here: the fixtures skip first when Playwright is missing

    with ui_server(command(str(SDK_SERVER), str(library(tmp_path / "prompts")))) as endpoint:
        base = endpoint.removesuffix("mcp")
        # Opened by address alone (another user of the machine, or a browser ui did not open), the page
        # asks for the token: ui's own opening signs in by a one-time code (tests/attack/test_ui_signin.py).
        page = pages.open(base + "#/p/greet")
        expect(page.locator("#login")).to_be_visible()
        page.fill("#token", "not-the-token-0123456789")
        page.click("#login button[type=submit]")
        expect(page.locator("#login-error")).to_contain_text("refused")
        page.fill("#token", UI_TOKEN)
        page.click("#login button[type=submit]")
        page.wait_for_selector("#fields .field")
        page.click("#back")
        catalog_ready(page)
        assert sorted(shown_names(page)) == ["farewell", "greet"]
        expect(page.locator("#count")).to_have_text("2 prompts")
        page.evaluate("location.hash = '#/p/greet'")
        page.wait_for_selector("#fields .field")
        page.click("#render")  # the SDK's server has no say here: the required argument is checked first
        error = page.locator(".field", has=page.get_by_label("who")).locator(".field-error")
        expect(error).to_have_text("prompt 'greet' is missing required argument 'who'")
        page.get_by_label("who").fill("Grace")
        page.click("#render")
        expect(page.locator(".message .text")).to_have_text("Hello Grace, in a warm way.")
