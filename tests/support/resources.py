"""A legacy MCP client over Streamable HTTP for the resources tests (tests/server/test_resources.py and the
skills tests beside it), their 2026-07-28 requests handled in memory, and the principals of the resources attack
tests with their requests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from promptdeck import PromptServer
from promptdeck.protocol import jsonrpc
from promptdeck.server.legacy import LegacySession
from promptdeck.server.local import LocalClient
from promptdeck.server.outcome import Answer
from tests.support.http_rpc import post_legacy
from tests.support.modern import REVISION, headers_for, request
from tests.support.schema import schema_available, validate_message
from tests.support.skills_schema import METHODS as SKILLS_METHODS
from tests.support.skills_schema import validate_skills_message

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


#: Checks an answer the server sent: (revision, message, method).
Check = Callable[[str, dict[str, Any], str], None]


def schema_checked(revision: str, message: dict[str, Any], method: str) -> None:
    """An answer checked against the official schema of its revision, where that schema is present."""
    if schema_available(revision):
        validate_message(revision, message, method)


def skills_checked(revision: str, message: dict[str, Any], method: str) -> None:
    """A skills method's answer checked against the skills SEP; any other against the official schema."""
    if method in SKILLS_METHODS:
        validate_skills_message(revision, message, method)
    else:
        schema_checked(revision, message, method)


def modern_answer(session: LegacySession, method: str, params: dict[str, Any] | None = None,
                  scopes: frozenset[str] | None = None, *, check: Check = schema_checked) -> dict[str, Any]:
    """A 2026-07-28 request handled in memory by ``session`` for a principal holding ``scopes`` (None: none
    asked); its answer, checked by ``check``. What the session sends beside the answer is dropped."""
    message = request(1, method, params)
    session.scopes = scopes
    decoded = jsonrpc.decode(json.dumps(message).encode())
    assert not isinstance(decoded, list)
    outcome = session.handle(decoded, lambda _: None)
    assert isinstance(outcome, Answer)
    answer: dict[str, Any] = json.loads(outcome.data)
    check(REVISION, answer, method)
    return answer


def guarded_legacy(url: str, method: str, params: dict[str, Any], who: dict[str, str], *, secret: str,
                   check: Check = schema_checked, revision: str = "2025-06-18") -> dict[str, Any]:
    """One stateless ``revision`` request sent as ``who`` (its headers); its JSON answer, checked by ``check``,
    which must not show ``secret`` (what the server keeps from ``who``) anywhere."""
    answer = post_legacy(url, method, params, revision=revision, headers=who, timeout=30)
    assert secret not in answer.text
    message: dict[str, Any] = answer.json()
    check(revision, message, method)
    return message


def guarded_modern(url: str, method: str, params: dict[str, Any], who: dict[str, str], *, secret: str,
                   check: Check = schema_checked) -> tuple[int, dict[str, Any]]:
    """The same as one 2026-07-28 request: (its HTTP status, its answer)."""
    message = request(1, method, params)
    answer = httpx.post(url, json=message, headers={**headers_for(message), **who}, timeout=30)
    assert secret not in answer.text
    body: dict[str, Any] = answer.json()
    check(REVISION, body, method)
    return answer.status_code, body
