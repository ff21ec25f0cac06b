"""Fixtures shared by test modules: the browser and its pages for the web page's tests (tests/support/browser.py),
and the store's two databases (tests/support/stores.py). They cost nothing unless a test asks for them."""

from tests.support.browser import browser, pages
from tests.support.stores import postgres, store_url

__all__ = ["browser", "pages", "postgres", "store_url"]
