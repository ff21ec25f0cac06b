"""Fixtures shared by test modules: the browser and its pages for the web page's tests (tests/support/browser.py),
the store's two databases (tests/support/stores.py), and the loggers kept around in-process logging set-up
(tests/support/loggers.py). They cost nothing unless a test asks for them; the PostgreSQL cluster, once started,
serves the whole run of one process (one per xdist worker)."""

from tests.support.browser import browser, pages
from tests.support.loggers import kept_logging
from tests.support.stores import postgres, postgres_cluster, store_url

__all__ = ["browser", "kept_logging", "pages", "postgres", "postgres_cluster", "store_url"]
