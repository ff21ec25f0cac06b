"""The stops of store calls (server/web/store_runs.py): a call's stop is set when its client goes away or the
server stops, and is the one ``current_stop`` gives inside it."""

from __future__ import annotations

import asyncio
from typing import Any

from promptdeck.server.web.store_runs import Runs, current_stop
from tests.support.client_servers import run


class Client:
    """An ASGI ``receive`` whose client goes away when told to."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}


def test_a_stop_is_set_when_its_client_goes_away() -> None:
    async def main() -> None:
        runs = Runs()
        client = Client()
        async with runs.watching(client.receive) as stop:
            assert current_stop() is stop and not stop.is_set()
            client.gone.set()
            while not stop.is_set():
                await asyncio.sleep(0.01)
        assert current_stop() is not stop and not current_stop().is_set()

    run(main())


def test_stop_all_stops_the_calls_running_and_those_to_come() -> None:
    async def main() -> None:
        runs = Runs()
        async with runs.watching(Client().receive) as running:
            runs.stop_all()
            assert running.is_set()
            runs.stop_all()  # idempotent
        async with runs.watching(Client().receive) as later:
            assert later.is_set()

    run(main())


def test_outside_a_call_the_stop_is_never_set() -> None:
    assert not current_stop().is_set()
