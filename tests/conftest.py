"""Fixtures shared by test modules: the browser and its pages for the web page's tests (tests/support/browser.py),
and the store's two databases (tests/support/stores.py). They cost nothing unless a test asks for them; the
PostgreSQL cluster, once started, serves the whole run of one process (one per xdist worker)."""

from tests.support.browser import browser, pages
from tests.support.stores import postgres, postgres_cluster, store_url

__all__ = ["browser", "pages", "postgres", "postgres_cluster", "store_url"]
