"""Shared by the tests of the re-read token file (server/security/token_file.py): two tokens, a clock the test
moves, and an ``initialize`` over real HTTP with a bearer token, answered by its status."""

from __future__ import annotations

import httpx

from promptdeck.server.security.principals import Principal
from promptdeck.server.security.token_file import TokenFile

OLD = "old-token-0123456789abcdef"
NEW = "new-token-0123456789abcdef"

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "token-file-test", "version": "1"}}}


class Clock:
    """``TokenFile``'s clock: moved by the test (``now``), or by ``step`` seconds at every look."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def who(tokens: TokenFile, token: str) -> Principal | None:
    return tokens.principal(f"Bearer {token}")


def status(endpoint: str, token: str) -> int:
    """The status of an ``initialize`` with ``token``, on a connection of its own (so that the kernel spreads
    such requests over the workers of ``--workers``)."""
    with httpx.Client(timeout=30) as client:
        return client.post(endpoint, json=INITIALIZE, headers={
            "authorization": f"Bearer {token}", "accept": "application/json, text/event-stream"}).status_code
