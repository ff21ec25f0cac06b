"""A resettable async event for tests (anyio's Event cannot be cleared)."""

from __future__ import annotations

import anyio


class Flag:
    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    def clear(self) -> None:
        self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()
