"""The page ``promptdeck ui`` serves, in Debian's chromium, in front of the official SDK's server (a real process
started by ``ui`` over stdio). The browser fixtures are those of tests/test_ui_browser.py."""

from __future__ import annotations

from pathlib import Path

from tests.support.http_server import ui_server
from tests.test_ui_browser import Pages, browser, catalog_ready, open_prompt, pages, shown_names  # noqa: F401
from tests.test_ui_remote import SDK_SERVER, command, library


def test_the_page_shows_and_renders_the_sdk_servers_prompts(pages: Pages, tmp_path: Path) -> None:  # noqa: F811
    from playwright.sync_api import expect  # here: the fixtures skip first when Playwright is missing

    with ui_server(command(str(SDK_SERVER), str(library(tmp_path / "prompts")))) as endpoint:
        base = endpoint.removesuffix("mcp")
        page = pages.open(base)
        catalog_ready(page)
        assert sorted(shown_names(page)) == ["farewell", "greet"]
        assert page.inner_text("#count") == "2 prompts"
        page = open_prompt(pages, base, "greet")
        page.click("#render")  # the SDK's server has no say here: the required argument is checked first
        error = page.locator(".field", has=page.get_by_label("who")).locator(".field-error")
        expect(error).to_have_text("prompt 'greet' is missing required argument 'who'")
        page.get_by_label("who").fill("Grace")
        page.click("#render")
        expect(page.locator(".message .text")).to_have_text("Hello Grace, in a warm way.")
