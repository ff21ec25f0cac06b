"""An in-process client for one session: what ``promptdeck render`` and the tests use to call the
real request path without a transport."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import msgspec

from ..protocol import jsonrpc
from .legacy import LegacySession
from .outcome import Answer, Pending

if TYPE_CHECKING:
    from .legacy import LegacyServed


class LocalClient:
    def __init__(self, server: LegacyServed, revision: str) -> None:
        self.notifications: list[dict[str, Any]] = []
        self.session = LegacySession(server, self._note)
        self._next = 0
        self.initialize = self.request("initialize", {
            "protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "promptdeck", "version": "0"}})
        self.session.handle(jsonrpc.Notification("notifications/initialized", None), self._note)

    def _note(self, message: bytes) -> None:
        self.notifications.append(msgspec.json.decode(message))

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next += 1
        outcome = self.session.handle(jsonrpc.Request(self._next, method, params), self._note)
        answer = asyncio.run(_wait(outcome)) if isinstance(outcome, Pending) else outcome
        assert isinstance(answer, Answer)
        decoded: dict[str, Any] = msgspec.json.decode(answer.data)
        return decoded


async def _wait(pending: Pending) -> Answer | None:
    return await pending
