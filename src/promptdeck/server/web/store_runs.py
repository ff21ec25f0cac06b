"""The stops of the store calls being answered (``store_api``): a call's test run ends when its client goes away
or the server stops, so that neither holds a thread and a store slot for nobody (``testing.stopping`` is what
the run looks at)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..asgi import Receive, disconnected

#: The stop of the request being answered in this task (``Runs.watching``).
_current: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("store_run_stop", default=None)


def current_stop() -> threading.Event:
    """The stop of the request being answered, or one never set outside ``Runs.watching``."""
    return _current.get() or threading.Event()


class Runs:
    """The stops of the requests being answered; ``stop_all`` sets them, and those of requests still to come."""

    def __init__(self) -> None:
        self._stops: set[threading.Event] = set()
        self._stopped = False

    @asynccontextmanager
    async def watching(self, receive: Receive) -> AsyncIterator[threading.Event]:
        """A stop for the request's store call, set when its client goes away (the body is read by now, so
        what ``receive`` gives next is the disconnect) or when the server stops."""
        stop = threading.Event()
        if self._stopped:
            stop.set()
        self._stops.add(stop)
        gone = asyncio.ensure_future(disconnected(receive))
        gone.add_done_callback(lambda task: None if task.cancelled() else stop.set())
        token = _current.set(stop)
        try:
            yield stop
        finally:
            _current.reset(token)
            gone.cancel()
            self._stops.discard(stop)

    def stop_all(self) -> None:
        """Idempotent: the server stops."""
        self._stopped = True
        for stop in list(self._stops):
            stop.set()


__all__ = ["Runs", "current_stop"]
