"""Fixtures shared by test modules: the browser and its pages for the web page's tests (tests/support/browser.py).
They cost nothing unless a test asks for them."""

from tests.support.browser import browser, pages

__all__ = ["browser", "pages"]
