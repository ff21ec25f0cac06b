"""Servers over HTTP: Streamable HTTP (both eras) and the 2024-11-05 HTTP+SSE transport.

Streamable HTTP answers each POST with JSON or with an SSE stream that ends with the response; in
the legacy era a session id ties requests together and a GET stream carries what the server says
on its own. The 2026-07-28 era has no session: every POST stands alone and names its method (and
prompt) in headers, and closing a response stream is how a request is cancelled.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

import msgspec

from ..protocol import jsonrpc
from ..protocol.errors import ClientError, ConnectionFailed, ProtocolViolation, RequestTimeout, from_wire
from ..protocol.revisions import NEWEST_MODERN
from .channel import Channel, Envelope, Multiplexed, RequestId, SessionExpired, decode, log, result_of
from .fetch import MAX_EVENT, REQUEST_TIMER, HttpClient, Response, TransportError

#: How often a dropped stream is reopened before giving up.
RECONNECTS = 5
#: How long a POST's event stream may stay open after its answer before we stop waiting for its end.
END_GRACE = 0.25
_JSON = "application/json"
_SSE = "text/event-stream"


class Event(NamedTuple):
    event: str
    data: str
    id: str | None
    retry: int | None


async def sse_events(lines: AsyncIterator[str], limit: int = MAX_EVENT) -> AsyncIterator[Event]:
    """Server-sent events from a response's lines; events with only an id or retry are yielded too.
    An event whose data passes ``limit`` characters is a ``TransportError``."""
    kind, event_id, retry = "message", None, None
    data: list[str] = []
    size = 0
    async for line in lines:
        if not line:
            if data or event_id is not None or retry is not None:
                yield Event(kind, "\n".join(data), event_id, retry)
            kind, data, event_id, retry, size = "message", [], None, None, 0
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            size += len(value) + 1
            if size > limit:
                raise TransportError(f"an event is larger than {limit} characters")
            data.append(value)
        elif field == "event":
            kind = value
        elif field == "id" and "\0" not in value:
            event_id = value
        elif field == "retry" and value.isdigit():
            retry = int(value)
    if data:
        yield Event(kind, "\n".join(data), event_id, retry)


def header_safe(value: str) -> str:
    """A header value as the 2026-07-28 rules want it: as is if plain ASCII, else base64-wrapped."""
    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def _content_type(response: Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.partition(";")[0].strip().lower()


def _unreachable(url: str, exc: TransportError) -> ConnectionFailed:
    return ConnectionFailed(f"cannot reach {url}: {exc}")


async def refuse_status(response: Response, what: str) -> None:
    """Raise for a non-2xx answer: the JSON-RPC error in its body if there is one, else the status."""
    status = response.status_code
    if 200 <= status < 300:
        return
    body = (await response.read())[:8192]
    try:
        messages = decode(body)
    except ProtocolViolation:
        messages = []
    errors = [message.error for message in messages if message.error is not None]
    said = f": {from_wire(errors[0]).message}" if errors else ""
    # Authentication and rate limits are the transport's business, whatever JSON-RPC says with them.
    if status in (401, 403):
        challenge = response.headers.get("www-authenticate", "")
        need = "a (valid) bearer token" if status == 401 else "a token with more scopes"
        raise ConnectionFailed(f"{what}: HTTP {status}, the server wants {need}{said}" +
                               (f" ({challenge})" if challenge else ""), status=status)
    if status == 429:
        wait = response.headers.get("retry-after")
        raise ConnectionFailed(f"{what}: HTTP 429, rate limited" + (f"; retry after {wait} s" if wait else ""),
                               status=status)
    if errors:
        raise from_wire(errors[0])
    text = body.decode(errors="replace").strip()[:200]
    raise ConnectionFailed(f"{what}: HTTP {status} {response.reason_phrase}" + (f": {text}" if text else ""),
                           status=status)


async def post_unanswered(http: HttpClient, url: str, body: bytes, headers: dict[str, str], what: str) -> None:
    """POST something the server answers with no body (202): a notification, or our response to it."""
    try:
        async with http.stream("POST", url, content=body, headers=headers) as response:
            await refuse_status(response, what)
    except TransportError as exc:
        raise _unreachable(url, exc) from None


class HttpChannel(Channel):
    """Streamable HTTP, in the modern era until ``modern`` is switched off by a legacy handshake."""

    def __init__(self, http: HttpClient, url: str) -> None:
        super().__init__()
        self.http = http
        self.url = url
        self.modern = True
        #: the legacy revision negotiated by initialize, sent in MCP-Protocol-Version
        self.protocol_version: str | None = None
        self.session_id: str | None = None
        self._last_event_id: str | None = None
        #: set while the legacy GET stream is open (a watch lists only once it is, to miss no change)
        self.streaming = asyncio.Event()
        #: the server kept a POST's event stream open past its answer once: stop waiting for stream ends
        self._lingers = False

    def _headers(self, method: str | None, name: str | None) -> dict[str, str]:
        headers = {"accept": f"{_JSON}, {_SSE}", "content-type": _JSON}
        if self.modern:
            headers["mcp-protocol-version"] = NEWEST_MODERN.version
            if method is not None:
                headers["mcp-method"] = method
            if name is not None:
                headers["mcp-name"] = header_safe(name)
        else:
            if self.protocol_version is not None:
                headers["mcp-protocol-version"] = self.protocol_version
            if self.session_id is not None:
                headers["mcp-session-id"] = self.session_id
        return headers

    async def request(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                      name: str | None = None, id: RequestId | None = None) -> msgspec.Raw:
        id = self._open_request(id)
        body = jsonrpc.encode_request(id, method, params)
        try:
            async with asyncio.timeout(timeout) as timer:
                mark = REQUEST_TIMER.set(timer)  # an OAuth sign-in stops it (fetch.HttpClient._authorized)
                try:
                    return await self._post(id, method, body, self._headers(method, name))
                finally:
                    REQUEST_TIMER.reset(mark)
        except TimeoutError:
            self._cancel(id, "timed out")
            raise RequestTimeout(f"{method}: no answer within {timeout:g} s (cancelled)") from None
        except asyncio.CancelledError:
            self._cancel(id, "cancelled by the client")
            raise

    def _cancel(self, id: RequestId, reason: str) -> None:
        # In the modern era closing the response stream (leaving _post) is the cancellation.
        if not self.modern and self.failure is None:
            self.spawn(self._tell_cancelled(id, reason))

    async def _tell_cancelled(self, id: RequestId, reason: str) -> None:
        # The notice is made here, not by the caller: a task cancelled before it starts (the client
        # closing at once) then leaves no coroutine that was never awaited.
        with contextlib.suppress(ClientError, TransportError):
            await self.notify("notifications/cancelled", {"requestId": id, "reason": reason})

    async def _post(self, id: RequestId, method: str, body: bytes, headers: dict[str, str]) -> msgspec.Raw:
        try:
            # No head timeout of its own: ``request`` bounds the whole exchange (one timer, not two).
            async with self.http.stream("POST", self.url, content=body, headers=headers,
                                        head_timeout=None) as response:
                if method == "initialize" and "mcp-session-id" in response.headers:
                    self.session_id = response.headers["mcp-session-id"]
                session = headers.get("mcp-session-id")
                if response.status_code == 404 and session is not None:
                    raise SessionExpired(f"{method}: the server no longer knows session {session!r:.40}", session)
                await refuse_status(response, method)
                kind = _content_type(response)
                if kind == _JSON:
                    answer = self._answer(decode(await response.read()), id)
                    if answer is None:
                        raise ProtocolViolation(f"{method}: the server's JSON answer is not the response to it")
                    return answer
                if kind != _SSE:
                    raise ProtocolViolation(f"{method}: the server answered HTTP {response.status_code} with "
                                            f"content type {kind or 'none'!r}, not JSON or an event stream")
                answer, last_id, retry = await self._read_stream(response, id)
        except TransportError as exc:
            raise _unreachable(self.url, exc) from None
        if answer is not None:
            return answer
        return await self._resume(id, method, last_id, retry)

    async def _resume(self, id: RequestId, method: str, last_id: str | None, retry: int | None) -> msgspec.Raw:
        """The POST stream ended before the answer: 2025-11-25 servers let a GET pick it up again."""
        if self.modern or last_id is None:
            raise ConnectionFailed(f"{method}: the server closed the stream before answering")
        for _ in range(RECONNECTS):
            await asyncio.sleep((retry or 0) / 1000)
            headers = {**self._headers(None, None), "accept": _SSE, "last-event-id": last_id}
            try:
                async with self.http.stream("GET", self.url, headers=headers) as response:
                    await refuse_status(response, f"{method} (resuming)")
                    answer, seen, hint = await self._read_stream(response, id)
            except TransportError as exc:
                raise _unreachable(self.url, exc) from None
            if answer is not None:
                return answer
            last_id, retry = seen or last_id, hint or retry
        raise ConnectionFailed(f"{method}: the server's stream kept ending before the answer")

    async def _read_stream(self, response: Response,
                           id: RequestId | None) -> tuple[msgspec.Raw | None, str | None, int | None]:
        """Route what an event stream carries until the response to ``id``: (answer, last event id, retry)."""
        last_id: str | None = None
        retry: int | None = None
        events = sse_events(response.lines())
        async for event in events:
            last_id = event.id or last_id
            retry = event.retry or retry
            if event.data.strip():
                answer = self._answer(decode(event.data), id)
                if answer is not None:
                    await self._finish(events)
                    return answer, last_id, retry
        return None, last_id, retry

    async def _finish(self, events: AsyncIterator[Event]) -> None:
        """Read a POST's event stream to its end, which a server sends right after the answer.

        A connection whose response is left before its end is closed, so without this every request
        would open a new one (~1 ms and several round trips on loopback). A server that keeps the
        stream open gets END_GRACE once; after that its streams are closed at the answer.
        """
        if self._lingers:
            return
        try:
            async with asyncio.timeout(END_GRACE):
                async for event in events:
                    self._route_event(event)
        except TimeoutError:
            self._lingers = True
        except (TransportError, ClientError) as exc:
            log.debug("the end of an event stream failed: %s", exc)

    def _route_event(self, event: Event) -> None:
        """Hand what an event carries (notifications, server requests) to ``route``."""
        if event.data.strip():
            for message in decode(event.data):
                self.route(message)

    def _answer(self, messages: list[Envelope], id: RequestId | None) -> msgspec.Raw | None:
        answer: msgspec.Raw | None = None
        for message in messages:
            if message.method is None and message.id == id and id is not None:
                answer = result_of(message)
            else:
                self.route(message)
        return answer

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._deliver(jsonrpc.encode_notification(method, params), method)

    async def reply(self, data: bytes) -> None:
        await self._deliver(data, "a response")

    async def _deliver(self, body: bytes, what: str) -> None:
        await post_unanswered(self.http, self.url, body, self._headers(None, None), what)

    async def listen(self) -> None:
        """Read the legacy session's GET stream until it is gone for good; routes what it carries."""
        failures = 0
        while failures <= RECONNECTS:
            headers = {**self._headers(None, None), "accept": _SSE}
            if self._last_event_id is not None:
                headers["last-event-id"] = self._last_event_id
            retry = None
            try:
                async with self.http.stream("GET", self.url, headers=headers, head_timeout=30.0) as response:
                    if response.status_code == 405:
                        raise ClientError(f"{self.url} offers no GET stream, so the server cannot announce changes "
                                          "to this client")
                    await refuse_status(response, "the notification stream")
                    failures = 0
                    self.streaming.set()
                    try:
                        async for event in sse_events(response.lines()):
                            self._last_event_id = event.id or self._last_event_id
                            retry = event.retry or retry
                            self._route_event(event)
                    finally:
                        self.streaming.clear()
            except TransportError as exc:
                log.debug("notification stream dropped: %s", exc)
            failures += 1
            await asyncio.sleep(retry / 1000 if retry else min(2.0**failures / 4, 5.0))
        raise ConnectionFailed(f"the notification stream from {self.url} keeps failing")

    async def aclose(self) -> None:
        await super().aclose()
        if not self.modern and self.session_id is not None and self.failure is None:
            # Ending the session is a courtesy; a server that does not allow it answers 405.
            with contextlib.suppress(TransportError):
                await self.http.request("DELETE", self.url, headers=self._headers(None, None))
        self.failure = self.failure or ConnectionFailed("the client is closed")


class LegacySseChannel(Multiplexed):
    """The 2024-11-05 transport: one GET event stream for everything the server says, POSTs to send."""

    def __init__(self, http: HttpClient, endpoint: str, stack: contextlib.AsyncExitStack,
                 events: AsyncIterator[Event]) -> None:
        super().__init__()
        self.http = http
        self.endpoint = endpoint
        self._stack = stack
        self._reader = asyncio.ensure_future(self._read(events))

    @classmethod
    async def open(cls, http: HttpClient, url: str, timeout: float) -> LegacySseChannel:
        stack = contextlib.AsyncExitStack()
        try:
            response = await stack.enter_async_context(http.stream("GET", url, headers={"accept": _SSE}))
            if response.status_code != 200 or _content_type(response) != _SSE:
                raise ConnectionFailed(f"{url} speaks neither Streamable HTTP nor the 2024-11-05 HTTP+SSE transport "
                                       f"(GET answered HTTP {response.status_code})", status=response.status_code)
            events = sse_events(response.lines())
            async with asyncio.timeout(timeout):
                first = await anext(events)
            if first.event != "endpoint":
                raise ProtocolViolation(f"{url}: the event stream did not start with the endpoint event")
            endpoint = urljoin(url, first.data.strip())
            # The endpoint receives our credentials: it must be on the server we were pointed at.
            if urlsplit(endpoint)[:2] != urlsplit(url)[:2]:
                raise ProtocolViolation(f"{url}: the endpoint event points to another origin ({endpoint})")
        except TransportError as exc:
            await stack.aclose()
            raise _unreachable(url, exc) from None
        except (ClientError, TimeoutError, StopAsyncIteration) as exc:
            await stack.aclose()
            if isinstance(exc, ClientError):
                raise
            raise ConnectionFailed(f"{url}: no endpoint event on the event stream") from None
        return cls(http, endpoint, stack, events)

    async def _read(self, events: AsyncIterator[Event]) -> None:
        try:
            async for event in events:
                if event.event == "message" and event.data.strip():
                    self.receive(event.data.encode())
        except TransportError as exc:
            log.debug("event stream dropped: %s", exc)
        self.fail(ConnectionFailed(f"the server closed the event stream of {self.endpoint}"))

    async def send(self, data: bytes) -> None:
        await post_unanswered(self.http, self.endpoint, data, {"content-type": _JSON}, "sending")

    async def wait_closed(self) -> None:
        await asyncio.shield(self._reader)

    async def aclose(self) -> None:
        self.fail(ConnectionFailed("the client is closed"))
        await super().aclose()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)
        await self._stack.aclose()
