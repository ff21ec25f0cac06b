"""2026-07-28 requests over Streamable HTTP: one POST, one message, no session.

The headers must agree with the body (``MCP-Protocol-Version`` with the
``_meta`` version, ``Mcp-Method`` with the method, ``Mcp-Name`` with the prompt
of a ``prompts/get``), else 400 with -32020. Errors in ``_meta`` are 400, an
unknown method 404. A request is answered with JSON, or with SSE when progress
notifications come first. ``subscriptions/listen`` holds its response open as
an SSE stream: the acknowledgement, then list_changed as it happens. Closing a
response stream cancels the request (2026-07-28 reverses the older rule).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from ..protocol import jsonrpc
from ..protocol.errors import HeaderMismatch, InvalidParams, InvalidRequest, McpError
from ..protocol.jsonrpc import Notification, Request
from . import _asgi as asgi
from . import limits
from .guard import Principal
from .modern import META_VERSION, Subscription

if TYPE_CHECKING:
    from .http import StreamableHttpApp

#: Methods whose ``Mcp-Name`` header must repeat a member of their params, and which member.
NAMED = {"prompts/get": "name", "tools/call": "name", "resources/read": "uri"}


def header_value(scope: asgi.Scope, name: bytes) -> str | None:
    """A header's value, with the ``=?base64?...?=`` wrapping for unsafe values undone."""
    raw = asgi.headers_of(scope).get(name)
    if raw is None:
        return None
    text = raw.decode("latin-1").strip()
    if text.startswith("=?base64?") and text.endswith("?="):
        try:
            decoded: str = base64.b64decode(text[9:-2], validate=True).decode("utf-8")
            return decoded
        except (binascii.Error, UnicodeDecodeError):
            raise HeaderMismatch(f"header {name.decode()} is not valid base64-wrapped UTF-8") from None
    return text


def _check_headers(scope: asgi.Scope, message: Request | Notification, version: object) -> None:
    for name, expected in ((b"mcp-protocol-version", version), (b"mcp-method", message.method)):
        value = header_value(scope, name)
        if value is None:
            raise HeaderMismatch(f"the {name.decode()} header is required")
        if value != expected:
            raise HeaderMismatch(f"the {name.decode()} header says {value!r} but the body says {expected!r}")
    key = NAMED.get(message.method)
    if key is not None:
        value = header_value(scope, b"mcp-name")
        expected = (message.params or {}).get(key)
        if value is None:
            raise HeaderMismatch("the mcp-name header is required for " + message.method)
        if value != expected:
            raise HeaderMismatch(f"the mcp-name header says {value!r} but the body names {expected!r}")


async def serve_modern(app: StreamableHttpApp, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send,
                       principal: Principal, message: Request | Notification, version: object) -> None:
    request_id = message.id if isinstance(message, Request) else None
    try:
        if version is None and isinstance(message, Request):
            raise InvalidParams(f'params._meta must carry "{META_VERSION}"', http_status=400)
        _check_headers(scope, message, version or header_value(scope, b"mcp-protocol-version"))
        if isinstance(message, Notification):
            await asgi.respond(send, 202, b"", None)  # cancellation is the closing of a stream here
            return
        endpoint = app.server.modern
        ctx = endpoint.open(message, principal.name, principal.scopes)
    except McpError as exc:
        await asgi.respond(send, exc.http_status if exc.http_status != 200 else 400,
                           jsonrpc.encode_error(request_id, exc))
        return
    if not endpoint.knows(message.method):
        outcome = endpoint.handle(message, ctx, lambda _m: None)
        assert isinstance(outcome, bytes)
        await asgi.respond(send, 404, outcome)
        return
    if message.method == "subscriptions/listen":
        refusal = limits.stream_refusal(app, principal.name)
        if refusal is not None:
            await asgi.respond(send, refusal.status, jsonrpc.encode_error(request_id, InvalidRequest(refusal.message)),
                               headers=refusal.headers())
            return
        with app.streams.hold(principal.name):
            await _listen(app, message, ctx, receive, send)
        return
    related: list[bytes] = []
    started = time.perf_counter()
    outcome = endpoint.handle(message, ctx, related.append)
    if isinstance(outcome, bytes):
        answer: bytes | None = outcome
    else:
        assert not isinstance(outcome, Subscription)  # listen was served above
        answer = await _unless_closed(outcome, receive)
    if answer is None:
        return  # the client closed the stream: the request is cancelled and gets nothing more
    app._observe([message], answer, time.perf_counter() - started, principal)
    if not related:
        await asgi.respond(send, 200, answer)
        return
    await asgi.respond_events(send, b"".join(_event(m) for m in [*related, answer]))


async def _unless_closed(pending: Awaitable[bytes | None], receive: asgi.Receive) -> bytes | None:
    """Await a render, cancelling it if the client goes away first."""
    work = asyncio.ensure_future(pending)
    gone = asyncio.ensure_future(asgi._disconnected(receive))
    try:
        done, _ = await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            result = work.result()
            return result if isinstance(result, bytes) else None
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        return None
    finally:
        gone.cancel()


async def _listen(app: StreamableHttpApp, message: Request, ctx: object, receive: asgi.Receive,
                  send: asgi.Send) -> None:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    def push(data: bytes) -> None:
        # The catalog may be swapped from another thread (a Python prompt registered there).
        try:
            here = asyncio.get_running_loop() is loop
        except RuntimeError:
            here = False
        if here:
            queue.put_nowait(data)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, data)

    outcome = app.server.modern.handle(message, ctx, push, push)  # type: ignore[arg-type]
    if not isinstance(outcome, Subscription):
        assert isinstance(outcome, bytes)
        await asgi.respond(send, 400 if b'"code":-32602' in outcome else 200, outcome)
        return
    app.server.subscriptions.add(outcome)
    app.listeners[outcome] = queue
    try:
        await send({"type": "http.response.start", "status": 200, "headers": asgi.SSE_HEADERS})
        await send({"type": "http.response.body", "body": _event(outcome.acknowledgement()), "more_body": True})
        await asgi.stream_queue(send, receive, queue, _event)
    except OSError:
        return
    finally:
        app.server.subscriptions.discard(outcome)
        app.listeners.pop(outcome, None)


def end_subscriptions(app: StreamableHttpApp) -> None:
    """Server shutdown: end every open subscription gracefully with its listen result."""
    for subscription, queue in list(app.listeners.items()):
        queue.put_nowait(subscription.ending())
        queue.put_nowait(None)


def _event(data: bytes) -> bytes:
    return b"event: message\ndata: " + data + b"\n\n"
