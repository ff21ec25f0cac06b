"""The browser the web page's tests drive: Debian's chromium through Playwright, and fresh pages in it that
record what went wrong (uncaught errors, console errors such as a Content-Security-Policy violation).

Chromium comes from apt (``.ci/run`` installs it); Playwright's own browser downloads are not used. Without
chromium or Playwright the tests skip locally and fail in CI. tests/conftest.py gives the fixtures to every
test module, so the browser test files share one definition. Below them, the steps the page's tests share
(signing in, waiting for the catalog).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]

CHROMIUM = Path("/usr/bin/chromium")
#: How long the page may take to show what a test waits for (the server answers in milliseconds).
WAIT_MS = 15_000


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium per module. Not per session: Playwright's sync API keeps its event loop marked running in
    the thread while it is open, and the next module's ``asyncio.run`` would then refuse to start."""
    if not CHROMIUM.exists():
        _missing(f"Debian's chromium is not installed at {CHROMIUM}: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed: pip install -e '.[dev]'")
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        # --no-sandbox: chromium's sandbox refuses to start as root, which CI containers are.
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()


class Pages:
    """Opens pages in fresh browser contexts (own sessionStorage) and records what went wrong in them."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser
        self.problems: list[str] = []
        self._contexts: list[Any] = []

    def open(self, url: str, **options: Any) -> Page:
        context = self.browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        self._contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: self.problems.append(f"uncaught: {error}"))
        # A refused request (401) is logged by the browser as a failed resource: expected. Anything else
        # on the console as an error is not, a Content-Security-Policy violation least of all.
        page.on("console", lambda message: self.problems.append(f"console: {message.text}")
                if message.type == "error" and "Failed to load resource" not in message.text else None)
        page.goto(url)
        return page

    def wait_for_problems(self, page: Page, enough: Callable[[list[str]], bool]) -> list[str]:
        """The problems recorded once ``enough`` holds of them. A console message reaches this process after
        the page said it, so one the page has already said may not be recorded yet: each turn waits for the
        page's next message (recorded by the listener ``open`` added before this waiter) until they suffice."""
        while not enough(self.problems):
            page.wait_for_event("console", timeout=WAIT_MS)
        return list(self.problems)

    def close(self) -> None:
        for context in self._contexts:
            context.close()


@pytest.fixture
def pages(browser: Browser) -> Iterator[Pages]:
    opened = Pages(browser)
    yield opened
    opened.close()
    assert opened.problems == [], "the page had errors"


# -- what the page's tests do on it ----------------------------------------------------------------------

#: Markup that runs script if a page ever puts text into its HTML unescaped.
HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'


def shown_names(page: Page) -> list[str]:
    return page.locator("#results .result-name").all_inner_texts()


def catalog_ready(page: Page) -> None:
    """The list is shown, every page of it read. The count stays as it was while a prompt is open, so after
    going back from one it says nothing until the list is shown again: both are waited for."""
    expect(page.locator("#catalog")).to_be_visible()
    expect(page.locator("#count")).to_have_text(re.compile(r"^\d+( of \d+)? prompts?$"))


def sign_in(page: Page, token: str) -> None:
    page.fill("#token", token)
    page.press("#token", "Enter")
