"""The client's transports share one contract: send a request, get its raw result back.

A ``Channel`` carries JSON-RPC to one server. Results come back undecoded (``msgspec.Raw``) so the
caller decodes them straight into the type it expects; errors come back as the ``McpError`` the
server meant (``from_wire``). What the server sends on its own -- notifications, and the few
requests a legacy server may make (ping, elicitation) -- goes to ``on_notification`` and
``on_request``.

``Multiplexed`` is the shape of stdio and of the 2024-11-05 HTTP+SSE transport: every message the
server sends arrives on one stream, and responses are matched to requests by id.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..protocol import jsonrpc
from ..protocol.errors import (
    ClientError,
    ConnectionFailed,
    McpError,
    MethodNotFound,
    ProtocolViolation,
    RequestTimeout,
    from_wire,
)

log = logging.getLogger("promptdeck.client")

RequestId = int | str
NotificationHandler = Callable[[str, dict[str, Any] | None], None]
RequestHandler = Callable[[str, dict[str, Any] | None], Awaitable[Any]]


class Envelope(msgspec.Struct):
    """Any JSON-RPC message from the server; ``result`` stays raw until the caller knows its type."""

    jsonrpc: str = ""
    id: RequestId | None = None
    method: str | None = None
    params: dict[str, Any] | None = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: Any = None


_decode = msgspec.json.Decoder(Envelope | list[Envelope]).decode


def decode(data: bytes | str) -> list[Envelope]:
    """The messages in one frame; anything that is not JSON-RPC is a ``ProtocolViolation``."""
    try:
        decoded = _decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise ProtocolViolation(f"the server sent something that is not JSON-RPC ({exc}): {data[:120]!r}") from None
    messages = decoded if isinstance(decoded, list) else [decoded]
    for message in messages:
        if message.jsonrpc != "2.0":
            raise ProtocolViolation(f'the server sent a message without "jsonrpc": "2.0": {data[:120]!r}')
    return messages


def result_of(message: Envelope) -> msgspec.Raw:
    """The result of a response, or the error it carries raised (a response with neither is a violation)."""
    if message.error is not None:
        raise from_wire(message.error)
    if not message.result:
        raise ProtocolViolation(f"the answer to request {message.id!r} has neither a result nor an error")
    return message.result


def _ignore(method: str, params: dict[str, Any] | None) -> None:
    log.debug("ignored %s from the server", method)


async def _refuse(method: str, params: dict[str, Any] | None) -> Any:
    raise MethodNotFound(f"this client does not handle {method}")


class SessionExpired(ConnectionFailed):
    """A legacy HTTP server answered 404 to a request in our session: it no longer knows the session
    (it restarted, or the session timed out). The spec's answer is a new session: initialize again."""

    def __init__(self, message: str, session: str) -> None:
        super().__init__(message, status=404)
        self.session = session


class Channel:
    """One connection to a server."""

    def __init__(self) -> None:
        self.on_notification: NotificationHandler = _ignore
        self.on_request: RequestHandler = _refuse
        self._ids = itertools.count(1)
        #: set once the connection is unusable; every later call raises it
        self.failure: ClientError | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def next_id(self) -> int:
        return next(self._ids)

    def _open_request(self, id: RequestId | None) -> RequestId:
        """The id for a new request (the next one unless given); raises once the connection is unusable."""
        if self.failure is not None:
            raise self.failure
        return next(self._ids) if id is None else id

    async def request(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                      name: str | None = None, id: RequestId | None = None) -> msgspec.Raw:
        """Send a request and wait for its result. ``name`` is the prompt it concerns (an HTTP header)."""
        raise NotImplementedError

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def spawn(self, work: Awaitable[Any]) -> None:
        """Run ``work`` in the background, keeping a reference until it ends."""
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def route(self, message: Envelope) -> None:
        """A notification or a request from the server (responses are the transport's business)."""
        if message.method is None:
            log.debug("dropped a response to unknown request %r", message.id)
        elif message.id is None:
            self.on_notification(message.method, message.params)
        else:
            self.spawn(self._serve(message.id, message.method, message.params))

    async def _serve(self, id: RequestId, method: str, params: dict[str, Any] | None) -> None:
        try:
            answer = jsonrpc.encode_result(id, await self.on_request(method, params))
        except McpError as exc:
            answer = jsonrpc.encode_error(id, exc)
        except Exception:
            log.exception("answering the server's %s failed", method)
            answer = jsonrpc.encode_error(id, McpError("the client failed to answer", code=-32603))
        try:
            await self.reply(answer)
        except ClientError as exc:
            log.debug("could not answer the server's %s: %s", method, exc)

    async def reply(self, data: bytes) -> None:
        """Send the answer to a request the server made."""
        raise NotImplementedError


class _Expired(Exception):
    """A request's timer went off before its answer came (becomes ``RequestTimeout``)."""


def _expire(future: asyncio.Future[msgspec.Raw]) -> None:
    if not future.done():
        future.set_exception(_Expired())


class Multiplexed(Channel):
    """Requests go out one way, everything comes back on one stream and is matched by id."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[RequestId, asyncio.Future[msgspec.Raw]] = {}

    async def send(self, data: bytes) -> None:
        raise NotImplementedError

    async def wait_closed(self) -> None:
        """Return when the server's stream has ended (``failure`` says why)."""
        raise NotImplementedError

    def send_soon(self, data: bytes) -> None:
        """Send without waiting (a cancellation from a task that is itself being cancelled)."""
        self.spawn(self.send(data))

    async def reply(self, data: bytes) -> None:
        await self.send(data)

    async def request(self, method: str, params: dict[str, Any] | None, *, timeout: float | None,
                      name: str | None = None, id: RequestId | None = None) -> msgspec.Raw:
        id = self._open_request(id)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[msgspec.Raw] = loop.create_future()
        self._pending[id] = future
        # A timer that fails the future, rather than asyncio.wait_for: wait_for adds a second future, a
        # done callback and an extra event-loop pass to every request (~10% of a stdio round trip).
        timer = None if timeout is None else loop.call_later(timeout, _expire, future)
        try:
            await self.send(jsonrpc.encode_request(id, method, params))
            return await future
        except _Expired:
            self._cancel(id, "timed out")
            raise RequestTimeout(f"{method}: no answer within {timeout:g} s (cancelled)") from None
        except asyncio.CancelledError:
            self._cancel(id, "cancelled by the client")
            raise
        finally:
            self._pending.pop(id, None)
            if timer is not None:
                timer.cancel()

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        if self.failure is not None:
            raise self.failure
        await self.send(jsonrpc.encode_notification(method, params))

    def _cancel(self, id: RequestId, reason: str) -> None:
        if self.failure is None:
            self.send_soon(jsonrpc.encode_notification("notifications/cancelled", {"requestId": id, "reason": reason}))

    def receive(self, data: bytes) -> None:
        """One frame from the server."""
        try:
            messages = decode(data)
        except ProtocolViolation as exc:
            self.fail(exc)
            return
        for message in messages:
            if message.method is None and message.id in self._pending:
                future = self._pending[message.id]
                if future.done():
                    continue
                try:
                    future.set_result(result_of(message))
                except (McpError, ProtocolViolation) as exc:
                    future.set_exception(exc)
            else:
                self.route(message)

    def fail(self, failure: ClientError) -> None:
        """The connection is unusable: every waiting and later request raises ``failure``."""
        if self.failure is None:
            self.failure = failure
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self.failure)
