"""Fixtures shared by test modules: the browser and its pages for the web page's tests (tests/support/browser.py),
the store's two databases (tests/support/stores.py), and the loggers kept around in-process logging set-up
(tests/support/loggers.py). They cost nothing unless a test asks for them."""

from tests.support.browser import browser, pages
from tests.support.loggers import kept_logging
from tests.support.stores import postgres, store_url

__all__ = ["browser", "kept_logging", "pages", "postgres", "store_url"]
