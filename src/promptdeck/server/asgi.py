"""Small pieces of plain ASGI: the callable's types, headers, bodies, responses and SSE framing.

Every transport frames its server-sent events here (``sse_event``,
``sse_priming``) and answers a POST here (``respond_messages``): JSON when it
may and nothing came before the answer, else one event stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol import jsonrpc
from ..protocol.errors import HttpError, InvalidRequest, McpError

if TYPE_CHECKING:
    from .outcome import Answer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

JSON = b"application/json"
SSE_HEADERS: Headers = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    # nginx buffers responses unless told not to; an SSE stream must flow event by event.
    (b"x-accel-buffering", b"no"),
]


T = TypeVar("T")
KEEP_ALIVE_SECONDS = 15.0
#: How long a client is told to wait before reconnecting an SSE stream (the ``retry`` field).
RETRY_MS = 3000
#: How long a request body may take to arrive, once its head is in.
BODY_SECONDS = 30.0


class BodyTooLarge(HttpError):
    """The request body is larger than its route takes (413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the body is larger than {limit} bytes")


class BodyTooSlow(HttpError):
    """The request body did not arrive within its deadline (408; the connection is closed)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"the body did not arrive within {seconds:g} s", headers=[(b"connection", b"close")])


class Disconnected(Exception):
    pass


#: Where ``headers_of`` keeps a request's header table in its scope (ASGI lets an app add keys).
_TABLE = "promptdeck.headers"


def headers_of(scope: Scope) -> dict[bytes, bytes]:
    """Request headers by lower-case name (ASGI servers lower-case them); a repeated header keeps its first value.

    Built once per request: a request's checks read half a dozen headers, and a scan of the list
    for each was a measurable part of answering it.
    """
    table: dict[bytes, bytes] | None = scope.get(_TABLE)
    if table is None:
        headers = scope["headers"]
        table = dict(headers)
        if len(table) != len(headers):  # a repeated header (rare): keep its first value
            table = dict(reversed(list(headers)))
        scope[_TABLE] = table
    return table


def header(scope: Scope, name: bytes) -> str | None:
    """One request header's value as text, or None."""
    value = headers_of(scope).get(name)
    return None if value is None else value.decode("latin-1")


def get_query(scope: Scope, path: str, max_fields: int = 4) -> dict[str, str]:
    """The query of a GET to ``path`` (the web page's JSON APIs): 405 for another method, 400 for a query
    that is not valid UTF-8 or has more than ``max_fields`` fields."""
    from urllib.parse import parse_qsl

    if scope["method"] != "GET":
        raise HttpError(405, f"{path} takes GET", headers=[(b"allow", b"GET")])
    try:
        return dict(parse_qsl(scope.get("query_string", b"").decode("utf-8"), keep_blank_values=True,
                              max_num_fields=max_fields))
    except (UnicodeDecodeError, ValueError):
        raise HttpError(400, "the query string is not valid") from None


async def read_body(receive: Receive, limit: int, declared: bytes | None, seconds: float = BODY_SECONDS) -> bytes:
    """The whole request body, refusing more than ``limit`` bytes (before reading, when declared) and a
    body that has not all arrived within ``seconds`` (``BodyTooSlow``): a client trickling its upload
    would otherwise hold a connection, and a slot under the connection cap, as long as it likes."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    try:
        async with asyncio.timeout(seconds):
            return await _read_body(receive, limit)
    except TimeoutError:
        raise BodyTooSlow(seconds) from None


async def _read_body(receive: Receive, limit: int) -> bytes:
    message = await receive()
    if message["type"] == "http.disconnect":
        raise Disconnected
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        if len(body) > limit:
            raise BodyTooLarge(limit)
        return body
    chunks = [body]
    size = len(body)
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def stream_queue(send: Send, receive: Receive, queue: asyncio.Queue[T | None],
                       frame: Callable[[T], bytes]) -> None:
    """Send each queued item as ``frame(item)`` on an open SSE response until None ends it.

    Returns early when the client goes away; a comment line every ``KEEP_ALIVE_SECONDS`` keeps
    proxies from closing a quiet stream.
    """
    gone = asyncio.ensure_future(disconnected(receive))
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, gone}, timeout=KEEP_ALIVE_SECONDS,
                                         return_when=asyncio.FIRST_COMPLETED)
            if gone in done:
                getter.cancel()
                return
            if getter not in done:
                getter.cancel()
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
                continue
            item = getter.result()
            if item is None:
                break
            await send({"type": "http.response.body", "body": frame(item), "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    finally:
        gone.cancel()


async def disconnected(receive: Receive) -> None:
    """Returns once the client has gone away (everything it sends before that is dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass


#: A body past this is sent in pieces of ``_PIECE`` (``send_body`` says why).
_LARGE = 1024 * 1024
_PIECE = 256 * 1024


async def send_body(send: Send, body: bytes) -> None:
    """The whole body of a response. uvicorn waits for a slow client before it writes a piece, not after, so
    one large body handed over at once sits, copied, in the connection's buffer after ``send`` returned, and
    what a request held (its read budget, its memory) is let go while the bytes still wait: a hundred slow
    readers of a 10 MiB resource held a gigabyte. In pieces, each ``send`` waits for the one before it to
    drain, so when this returns at most a piece is left to the connection."""
    if len(body) <= _LARGE:
        await send({"type": "http.response.body", "body": body})
        return
    for start in range(0, len(body), _PIECE):
        await send({"type": "http.response.body", "body": body[start:start + _PIECE], "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def respond(send: Send, status: int, body: bytes = b"", content_type: bytes | None = JSON,
                  headers: Headers | None = None) -> None:
    """A complete response in two ASGI messages."""
    out: Headers = [(b"content-type", content_type)] if content_type is not None and body else []
    out.append((b"content-length", b"%d" % len(body)))
    if headers:
        out.extend(headers)
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send_body(send, body)


async def respond_events(send: Send, stream: bytes, headers: Headers | None = None) -> None:
    """An event stream that is complete already (a POST's events and answer): sent with its length, so
    the connection stays open for the next request without chunked framing."""
    out = [*SSE_HEADERS, (b"content-length", b"%d" % len(stream))]
    if headers:
        out.extend(headers)
    await send({"type": "http.response.start", "status": 200, "headers": out})
    await send_body(send, stream)


def from_any_thread(deliver: Callable[[T], None]) -> Callable[[T], None]:
    """``deliver`` made safe to call from any thread: run at once on the running loop, else handed to it.

    Notifications come from other threads too (log records, a catalog swapped by a source's own thread),
    while the queues they go to belong to the event loop.
    """
    loop = asyncio.get_running_loop()

    def call(item: T) -> None:
        try:
            here = asyncio.get_running_loop() is loop
        except RuntimeError:
            here = False
        if here:
            deliver(item)
        else:
            loop.call_soon_threadsafe(deliver, item)

    return call


def sse_event(data: bytes, event_id: str | None = None) -> bytes:
    """One SSE event carrying one JSON-RPC message."""
    head = b"id: " + event_id.encode() + b"\n" if event_id is not None else b""
    return head + b"event: message\ndata: " + data + b"\n\n"


def sse_priming(event_id: str, retry_ms: int = RETRY_MS) -> bytes:
    """The event a 2025-11-25 stream opens with: an id to resume from, how long to wait before
    reconnecting, and no data."""
    return f"id: {event_id}\nretry: {retry_ms}\ndata: \n\n".encode()


async def respond_messages(send: Send, related: list[bytes], final: bytes, *, status: int = 200,
                           json: bool = True, stream_id: str | None = None, headers: Headers | None = None) -> None:
    """A POST's answer: ``final`` as JSON when ``json`` allows and no ``related`` message (progress) comes
    before it; else one event stream of them all. With ``stream_id`` the stream is primed and its events
    are numbered ``{stream_id}-N`` (2025-11-25 and later legacy revisions)."""
    if json and not related:
        await respond(send, status, final, headers=headers)
        return
    frames = [*related, final]
    if stream_id is None:
        stream = b"".join(sse_event(data) for data in frames)
    else:
        # The whole stream is in this one body, so there is nothing to resume: the ids are for form.
        stream = sse_priming(f"{stream_id}-0") + b"".join(
            sse_event(data, f"{stream_id}-{n}") for n, data in enumerate(frames, 1))
    await respond_events(send, stream, headers)


class PostStream:
    """A POST's answer that must begin before it is ready: a request the server makes of its client while it
    answers (``elicitation/create``, given to ``ask``) goes out at once as an event of this POST's stream, the
    place the spec gives requests related to the client's, and the answer follows on the same stream.

    ``settle`` awaits the answer; while nothing was asked, nothing is sent, and the caller answers as
    ``respond_messages`` does. Once the stream has begun, a client that leaves cancels the answer's work:
    nothing could reach it, nor its reply to what it was asked come back.
    """

    def __init__(self, send: Send, receive: Receive, stream_id: Callable[[], str | None],
                 headers: Headers | None = None) -> None:
        self._send = send
        self._receive = receive
        #: the stream's id when it is primed (made only if it begins: it numbers the session's streams)
        self._stream_id = stream_id
        self._headers = headers or []
        #: whether the response has begun: then ``settle`` has sent the answer too
        self.started = False
        #: whether the client has left since it began
        self.left = False
        self._related: list[bytes] = []
        self._out: list[bytes] = []
        self._writer: asyncio.Task[None] | None = None
        self._work: asyncio.Task[Answer | None] | None = None
        self._gone: asyncio.Task[None] | None = None
        self._id: str | None = None
        self._events = 0
        self._held = 0

    def ask(self, message: bytes) -> None:
        """Send ``message`` at once (called on the event loop, by the work ``settle`` awaits)."""
        self._out.append(message)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._flush())

    async def settle(self, pending: Awaitable[Answer | None], related: list[bytes]) -> Answer | None:
        """``pending``'s answer (an ``outcome.Answer``; None when its request was cancelled), the requests it
        makes sent meanwhile with the ``related`` messages queued before them."""
        self._related = related
        # A task of its own, so that a client leaving cancels the work and not this response.
        work = self._work = asyncio.ensure_future(pending)
        try:
            try:
                answer = await work
            except asyncio.CancelledError:
                if not work.cancelled() or _cancelling():
                    raise
                answer = None  # cancelled before it began
            while self._writer is not None and not self._writer.done():
                await self._writer  # what it asked as it ended (a notifications/cancelled) goes first
            if self.started:
                if answer is not None and not self.left:
                    await self._write(answer.data)
                await self._send({"type": "http.response.body", "body": b""})
            return answer
        finally:
            work.cancel()
            if self._gone is not None:
                self._gone.cancel()

    async def _flush(self) -> None:
        while self._out:
            await self._write(self._out.pop(0))
        if self._gone is None:
            self._gone = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        await disconnected(self._receive)
        self.left = True
        if self._work is not None:
            self._work.cancel()

    async def _write(self, message: bytes) -> None:
        frames = [*self._related[self._held:], message]
        self._held = len(self._related)
        body = b""
        if not self.started:
            self.started = True
            self._id = self._stream_id()
            await self._send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *self._headers]})
            body = sse_priming(f"{self._id}-0") if self._id is not None else b""
        for data in frames:
            self._events += 1
            body += sse_event(data, None if self._id is None else f"{self._id}-{self._events}")
        await self._send({"type": "http.response.body", "body": body, "more_body": True})


def _cancelling() -> bool:
    """Whether the running task itself is being cancelled (not only a task it awaited)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def respond_error(send: Send, status: int, error: McpError, headers: Headers | None = None) -> None:
    """An HTTP error whose body is an id-less JSON-RPC error (the spec allows one on every HTTP error)."""
    await respond(send, status, jsonrpc.encode_error(None, error), JSON, headers)


async def respond_refusal(send: Send, refusal: HttpError, *, rpc: bool = True) -> None:
    """The response an ``HttpError`` stands for: on an MCP path (``rpc``) an id-less JSON-RPC error, its own
    or -32600 with its message; on the JSON API ``{"error": message, **extra}``, never cached."""
    if rpc:
        await respond_error(send, refusal.status, refusal.error or InvalidRequest(refusal.message), refusal.headers)
        return
    body = jsonrpc.encode_json({"error": refusal.message, **refusal.extra})
    await respond(send, refusal.status, body, JSON, [(b"cache-control", b"no-store"),
                                                     (b"x-content-type-options", b"nosniff"), *refusal.headers])


def _media_types(value: bytes | None) -> list[bytes]:
    """The media ranges of an Accept header, lower-cased, parameters dropped."""
    if not value:
        return []
    return [part.split(b";", 1)[0].strip().lower() for part in value.split(b",")]


def _accepts(ranges: list[bytes], media_type: bytes) -> bool:
    """Does an Accept header's list of ranges admit ``media_type`` (wildcards count)?"""
    major = media_type.split(b"/", 1)[0]
    return media_type in ranges or b"*/*" in ranges or major + b"/*" in ranges


@lru_cache(maxsize=64)
def accepts_all(value: bytes | None, *media_types_wanted: bytes) -> bool:
    """Does an Accept header admit every one of ``media_types_wanted``?

    Cached: a client sends the same Accept on every request, and parsing it each time cost more
    than the rest of the request's header checks. The cache is small because a key may be as long
    as a request head allows (64 entries of at most 64 KiB).
    """
    ranges = _media_types(value)
    return all(_accepts(ranges, wanted) for wanted in media_types_wanted)


@lru_cache(maxsize=64)
def media_type(value: bytes | None) -> bytes:
    """A Content-Type's media type, lower-cased, parameters dropped (empty when absent)."""
    return value.split(b";", 1)[0].strip().lower() if value else b""
