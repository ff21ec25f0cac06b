"""A resettable async event for tests (anyio's Event cannot be cleared)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

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


def setter_for(kind: type, flag: Flag) -> Callable[[Any], Awaitable[None]]:
    """An SDK ``message_handler`` that sets ``flag`` whenever a message of type ``kind`` arrives."""

    async def handle(message: Any) -> None:
        if isinstance(message, kind):
            flag.set()

    return handle
