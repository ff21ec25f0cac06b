"""A legacy MCP client over Streamable HTTP for the resources tests (tests/server/test_resources.py and the
skills tests beside it), and the principals of the resources attack tests."""

from __future__ import annotations

from typing import Any

from promptdeck import PromptServer
from promptdeck.server.local import LocalClient
from tests.support.schema import schema_available, validate_message

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Client(LocalClient):
    """A legacy session in memory whose every answer and notification is checked against its revision."""

    def __init__(self, server: PromptServer, revision: str, scopes: frozenset[str] | None = None) -> None:
        self.revision = revision
        super().__init__(server, revision)
        self.session.scopes = scopes
        self.check(self.initialize, "initialize")

    def check(self, message: dict[str, Any], method: str | None = None) -> dict[str, Any]:
        if schema_available(self.revision):
            validate_message(self.revision, message, method)
        return message

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.check(self.request(method, params), method)

    def heard(self) -> list[dict[str, Any]]:
        notes, self.notifications[:] = list(self.notifications), []
        return [self.check(note) for note in notes]


BOB = {"authorization": "Bearer reader-token-0123456789"}  # no scope at all
CAROL = {"authorization": "Bearer hr-token-0123456789"}  # hr
TOKENS = "bob:reader-token-0123456789\ncarol:hr-token-0123456789 hr\n"
