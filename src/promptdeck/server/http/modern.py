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
from typing import TYPE_CHECKING, Any, Protocol

from ...prompts.execution import in_threads
from ...protocol import jsonrpc
from ...protocol.errors import HeaderMismatch, InvalidParams, InvalidRequest, McpError
from ...protocol.jsonrpc import Notification, Request
from ...protocol.revisions import META_VERSION
from .. import asgi
from ..modern import Subscription
from ..outcome import Answer, Pending, failed
from ..security.principals import Principal

if TYPE_CHECKING:
    from ..legacy import LegacyServed
    from .sessions import SessionTable


class ModernHost(Protocol):
    """What 2026-07-28 requests need of the endpoint that routes them here."""

    @property
    def server(self) -> LegacyServed: ...

    @property
    def table(self) -> SessionTable: ...

    def observe(self, messages: list[jsonrpc.Message], response: Answer, seconds: float, principal: Principal) -> None:
        """Count the request in /metrics and write its audit line."""

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


async def serve_modern(app: ModernHost, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send,
                       principal: Principal, message: Request | Notification, meta: dict[str, Any] | None) -> None:
    """Answer one 2026-07-28 message; ``meta`` is its ``_meta`` (``modern_meta``), None when it names no version."""
    request_id = message.id if isinstance(message, Request) else None
    version = meta.get(META_VERSION) if meta is not None else None
    try:
        if version is None and isinstance(message, Request):
            raise InvalidParams(f'params._meta must carry "{META_VERSION}"', http_status=400)
        _check_headers(scope, message, version or header_value(scope, b"mcp-protocol-version"))
        if isinstance(message, Notification):
            await asgi.respond(send, 202, b"", None)  # cancellation is the closing of a stream here
            return
        endpoint = app.server.modern
        ctx = endpoint.open(message, meta, principal.name, principal.scopes, principal.rollout_key)
    except McpError as exc:
        refused = failed(request_id, message.method, exc)
        await asgi.respond(send, refused.status if refused.status != 200 else 400, refused.data)
        return
    if message.method == "subscriptions/listen":
        refusal = app.table.stream_refusal(principal.name)
        if refusal is not None:
            await asgi.respond(send, refusal.status, jsonrpc.encode_error(request_id, InvalidRequest(refusal.message)),
                               headers=refusal.headers)
            return
        with app.table.streams.hold(principal.name):
            await _listen(app, message, ctx, receive, send)
        return
    related: list[bytes] = []
    started = time.perf_counter()
    outcome = endpoint.handle(message, ctx, related.append)
    answer = await _unless_closed(outcome, receive) if type(outcome) is Pending else outcome
    if answer is None:
        return  # the client closed the stream: the request is cancelled and gets nothing more
    assert isinstance(answer, Answer)  # listen was served above
    app.observe([message], answer, time.perf_counter() - started, principal)
    await asgi.respond_messages(send, related, answer.data, status=answer.status)


async def _unless_closed(pending: Pending, receive: asgi.Receive) -> Answer | None:
    """Await a render, cancelling it if the client goes away first."""
    work = asyncio.ensure_future(pending)
    gone = asyncio.ensure_future(asgi.disconnected(receive))
    try:
        done, _ = await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        if work in done:
            return work.result()
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        return None
    finally:
        gone.cancel()


async def _listen(app: ModernHost, message: Request, ctx: Any, receive: asgi.Receive,
                  send: asgi.Send) -> None:
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    push = asgi.from_any_thread(queue.put_nowait)
    outcome = app.server.modern.handle(message, ctx, push, push)
    if not isinstance(outcome, Subscription):
        assert isinstance(outcome, Answer)  # listen is answered at once: a subscription or its error
        await asgi.respond(send, outcome.status, outcome.data)
        return
    follows = outcome.follows
    if follows is not None:  # what it follows of the resources, taken now: off the loop, as it may block
        resources = app.server.resources
        await in_threads(lambda: follows.settle(resources))
    app.server.listeners.add(outcome)
    app.table.subscriptions[outcome] = queue
    try:
        await send({"type": "http.response.start", "status": 200, "headers": asgi.SSE_HEADERS})
        await send({"type": "http.response.body", "body": asgi.sse_event(outcome.acknowledgement()),
                    "more_body": True})
        await asgi.stream_queue(send, receive, queue, asgi.sse_event)
    except OSError:
        return
    finally:
        app.server.listeners.discard(outcome)
        app.table.subscriptions.pop(outcome, None)


def plain_get(app: ModernHost, scope: asgi.Scope, body: bytes, principal: Principal) -> tuple[str, bytes] | None:
    """``serve_modern``'s answer to the common ``prompts/get``, made in one pass (``ModernEndpoint.plain_get``)
    once the headers say plainly what the body says: (the prompt's name, the answer). The body is decoded once,
    straight into the method's params struct (``ModernEndpoint.plain_call``). None when anything is out of the
    common case, and the request is then served as any other (nothing here has an effect)."""
    headers = asgi.headers_of(scope)
    method = headers.get(b"mcp-method")
    if method is None:
        return None
    endpoint = app.server.modern
    call = endpoint.plain_call(method.decode("latin-1"), body)
    if call is None:
        return None
    meta, name = call.params.meta, call.params.name
    if type(meta) is not dict or META_VERSION not in meta:  # a legacy request (``modern_meta``)
        return None
    if not (_says(headers.get(b"mcp-protocol-version"), meta[META_VERSION]) and _says(headers.get(b"mcp-name"), name)):
        return None
    data = endpoint.plain_get(call, meta, principal.scopes)
    return None if data is None else (name, data)


def _says(raw: bytes | None, expected: object) -> bool:
    """Whether a header is ``expected`` written plainly (no ``=?base64?`` wrapping, no spaces around), which
    ``header_value`` reads as ``expected``."""
    return raw is not None and type(expected) is str and raw.decode("latin-1") == expected \
        and expected == expected.strip() and not expected.startswith("=?base64?")
