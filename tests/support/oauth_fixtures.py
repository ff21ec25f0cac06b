"""Processes for the OAuth tests: the test authorization server, and promptdeck's resource server in front
of the example prompts, accepting the tokens it issues."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from tests.support.http_server import free_port, http_server, stop
from tests.support.libraries import EXAMPLES


@contextmanager
def authorization_server(*options: str) -> Iterator[str]:
    """``tests.support.oauth_server`` as a process; yields its issuer URL (with the trailing slash)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.oauth_server", str(port), *options],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy())
    issuer = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(issuer + "jwks.json", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                said = proc.stderr.read().decode() if proc.stderr is not None else ""
                raise RuntimeError(f"the authorization server did not start: {said}")
            time.sleep(0.05)
        yield issuer
    finally:
        stop(proc)
        assert proc.stderr is not None
        proc.stderr.close()


def stats(issuer: str) -> dict[str, Any]:
    answer: dict[str, Any] = httpx.get(issuer + "stats").json()
    return answer


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    """The test authorization server, for a module's tests."""
    with authorization_server() as url:
        yield url


@contextmanager
def resource_server(issuer: str, *options: str) -> Iterator[str]:
    """promptdeck's resource server in front of the examples, taking tokens from ``issuer``; yields its URL."""
    with http_server(str(EXAMPLES), "--no-watch", "--oauth-issuer", issuer, "--oauth-jwks", issuer + "jwks.json",
                     *options) as url:
        yield url


@pytest.fixture(scope="module")
def protected(issuer: str) -> Iterator[str]:
    """promptdeck's resource server in front of the examples: tokens from ``issuer`` with the scope "prompts",
    for this URL."""
    with resource_server(issuer, "--require-scope", "prompts") as url:
        yield url
