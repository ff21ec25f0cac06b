"""Server-sent events for the Streamable HTTP transport: framing, and replayable event streams.

An ``EventStream`` is one logical SSE stream of a session: the standalone GET
stream, or the stream that answers one POST. It keeps its recent events (a
bounded deque) so a client that lost its connection can come back with
``Last-Event-ID`` and get what it missed. At most one connection
(``Listener``) reads a stream at a time; a newer one takes over, because a
client only reconnects when it believes the old connection is dead, and the
server may not have noticed yet.

Event ids are ``<stream key>-<seq>``: the sequence number is unique within the
session (so ids are), and the key says which stream to resume (2025-11-25:
ids SHOULD encode the stream).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

#: An empty SSE comment: keeps idle connections (and proxies) from timing out, and makes a dead
#: peer visible as a write error.
KEEPALIVE = b": keepalive\n\n"


def frame(data: bytes | None, *, event_id: str | None = None, retry_ms: int | None = None) -> bytes:
    """One SSE event. ``data=None`` is a priming event: an id and empty data (2025-11-25)."""
    head = b""
    if event_id is not None:
        head += b"id: " + event_id.encode("ascii") + b"\n"
    if retry_ms is not None:
        head += b"retry: %d\n" % retry_ms
    if data is None:
        return head + b"data: \n\n"
    if b"\n" in data or b"\r" in data:
        # JSON from msgspec never holds a raw line break, but a frame must not depend on that.
        body = b"".join(b"data: " + line + b"\n" for line in data.splitlines())
    else:
        body = b"data: " + data + b"\n"
    return head + b"event: message\n" + body + b"\n"


def retry_field(retry_ms: int) -> bytes:
    """A block that only sets the client's reconnection delay (no event is dispatched)."""
    return b"retry: %d\n\n" % retry_ms


class Listener:
    """One HTTP connection reading a stream; ``wake`` is set when there is something to do."""

    __slots__ = ("wake", "gone")

    def __init__(self) -> None:
        self.wake = asyncio.Event()
        #: the client disconnected
        self.gone = False

    def hang_up(self) -> None:
        self.gone = True
        self.wake.set()


class EventStream:
    """The recent events of one stream, and the connection (if any) reading it."""

    __slots__ = ("key", "events", "closed", "listener", "delivered", "last_seq", "_ids", "_next_seq")

    def __init__(self, key: str, next_seq: Callable[[], int], *, limit: int, ids: bool = True) -> None:
        self.key = key
        self.events: deque[tuple[int, bytes]] = deque(maxlen=limit)
        #: no more events will come (a POST stream after its response; any stream of an ended session)
        self.closed = False
        self.listener: Listener | None = None
        #: highest sequence number written to some connection
        self.delivered = 0
        self.last_seq = 0
        self._ids = ids
        self._next_seq = next_seq

    def event_id(self, seq: int) -> str | None:
        return f"{self.key}-{seq}" if self._ids else None

    def allocate(self) -> int:
        return self._next_seq()

    def push(self, data: bytes) -> None:
        """Queue a JSON-RPC message as an event and wake the reader."""
        seq = self._next_seq()
        self.events.append((seq, frame(data, event_id=self.event_id(seq))))
        self.last_seq = seq
        if self.listener is not None:
            self.listener.wake.set()

    def close(self) -> None:
        self.closed = True
        if self.listener is not None:
            self.listener.wake.set()

    def after(self, seq: int) -> list[tuple[int, bytes]]:
        if not self.events or self.events[-1][0] <= seq:
            return []
        return [event for event in self.events if event[0] > seq]

    def attach(self, listener: Listener) -> None:
        """Make ``listener`` the reader; a previous reader is told to stop."""
        previous, self.listener = self.listener, listener
        if previous is not None and previous is not listener:
            previous.wake.set()

    def detach(self, listener: Listener) -> None:
        if self.listener is listener:
            self.listener = None

    @property
    def finished(self) -> bool:
        """Closed, and every event it holds has been written to a connection."""
        return self.closed and self.delivered >= self.last_seq


SendBody = Callable[[bytes, bool], Awaitable[None]]


async def pump(stream: EventStream, cursor: int, listener: Listener, write: SendBody,
               *, keepalive: float | None, head: bytes = b"") -> bool:
    """Write ``stream``'s events after ``cursor`` to one connection until the stream ends.

    Returns True when the stream finished and everything was written; False when the client went
    away or another connection took the stream over (the events stay for a resume).
    """
    pending_head = head
    while True:
        # Clear before reading: a push during the write below sets it again, so none is missed.
        listener.wake.clear()
        events = stream.after(cursor)
        if events:
            cursor = events[-1][0]
            chunk = pending_head + b"".join(f for _, f in events)
            pending_head = b""
            if stream.closed and cursor >= stream.last_seq:
                await write(chunk, False)
                if listener.gone:
                    return False
                stream.delivered = max(stream.delivered, cursor)
                return True
            await write(chunk, True)
            if listener.gone:
                return False
            stream.delivered = max(stream.delivered, cursor)
        elif pending_head:
            await write(pending_head, True)
            pending_head = b""
        if stream.closed and cursor >= stream.last_seq:
            await write(b"", False)
            return True
        if listener.gone or stream.listener is not listener:
            return False
        try:
            await asyncio.wait_for(listener.wake.wait(), keepalive)
        except TimeoutError:
            await write(KEEPALIVE, True)


async def watch_disconnect(receive: Callable[[], Awaitable[Any]], listener: Listener) -> None:
    """Read ASGI messages until the client disconnects, then tell the listener."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            listener.hang_up()
            return
