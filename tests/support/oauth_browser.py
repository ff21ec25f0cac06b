"""A test "browser" for sign-ins: follows the authorization URL's redirects (the test authorization server
approves at once) until the loopback redirect answers. As a program it is what $BROWSER names for the CLI:

    python -m tests.support.oauth_browser URL
"""

from __future__ import annotations

import sys
from urllib.parse import urljoin

import httpx


def follow(url: str, limit: int = 5) -> httpx.Response:
    """GET ``url`` and its redirects, as a browser would; the last answer (the loopback page)."""
    with httpx.Client(timeout=10, trust_env=False) as client:
        for _ in range(limit):
            response = client.get(url)
            if not response.is_redirect:
                return response
            url = urljoin(url, response.headers["location"])
    raise RuntimeError(f"more than {limit} redirects from {url}")


def sign_in(url: str) -> None:
    """``follow`` for ``OAuth(open_url=...)``, which calls it in a thread (the loopback listener answers on
    the event loop meanwhile); a bad end fails the test."""
    response = follow(url)
    if response.status_code != 200:
        raise AssertionError(f"the sign-in ended with HTTP {response.status_code}: {response.text[:200]}")


if __name__ == "__main__":
    print(follow(sys.argv[1]).status_code, file=sys.stderr)
