"""A watching client (``promptdeck`` following a server's list changes) as its tests run it, and servers that
cannot be watched."""

from __future__ import annotations

import asyncio
import contextlib
import functools

import pytest

from promptdeck.client import Client, Era, ListChange, connect
from promptdeck.protocol.errors import ClientError
from tests.support.client_servers import eventually


class Watcher:
    """Reads one ``watch()`` in the background, keeping every change it yields."""

    def __init__(self, client: Client) -> None:
        self.changes: list[ListChange] = []
        self.error: BaseException | None = None
        self.ended = False
        self.task = asyncio.ensure_future(self._read(client))

    async def _read(self, client: Client) -> None:
        try:
            async with contextlib.aclosing(client.watch()) as changes:
                async for change in changes:
                    self.changes.append(change)
            self.ended = True
        except Exception as exc:
            self.error = exc

    async def next_change(self, seen: int) -> ListChange:
        await eventually(lambda: len(self.changes) > seen or self.task.done(), f"change number {seen + 1}")
        assert self.error is None, self.error
        assert len(self.changes) > seen, "the watch ended"
        return self.changes[seen]

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def relisted(client: Client, before: object) -> bool:
    return client.prompts is not before


async def started(client: Client, count: int = 1) -> list[Watcher]:
    """``count`` watchers, once each has made its first listing (so it is listening)."""
    watchers = []
    for _ in range(count):
        before = client.prompts
        watchers.append(Watcher(client))
        # Each listing is a new tuple: this one is the watcher's own.
        await eventually(functools.partial(relisted, client, before), "the watcher's first listing")
    return watchers


async def unwatchable(target: str | list[str], era: Era = "auto") -> dict[str, object]:
    """watch() on ``target`` fails at once, saying listChanged is missing; returns the prompts capability."""
    async with connect(target, era=era) as client:
        with pytest.raises(ClientError, match="no prompts.listChanged capability"):
            async for _ in client.watch():
                pass
        prompts: dict[str, object] = client.capabilities["prompts"]
        return prompts
