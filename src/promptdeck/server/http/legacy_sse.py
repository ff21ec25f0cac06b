"""The 2024-11-05 HTTP+SSE transport, for clients older than Streamable HTTP.

A client opens ``GET /sse``; the stream's first event (``endpoint``) names
the URL to POST messages to, carrying a random session id. Each POST is
answered ``202 Accepted`` at once and its JSON-RPC response travels on the
stream, as do list_changed and log notifications. The session lives exactly
as long as its stream: when the client goes away, the session ends. So it
cannot outlive its replica, nor be answered by another (Streamable HTTP
sessions can: ``session_ids``): the stream ends with the process, and the
client opens a new one, a new session.

Host/Origin checks, authentication and rate limits run before either handler
(in ``StreamableHttpApp``); a session belongs to the principal that opened it.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qs

from ...protocol import jsonrpc
from ...protocol.errors import HttpError, McpError, ParseError
from ...protocol.jsonrpc import Request
from .. import asgi
from ..asgi import Receive, Scope, Send
from ..legacy import LegacySession
from ..outcome import Answer, assemble
from ..security.principals import Principal
from .sessions import count_listens

if TYPE_CHECKING:
    from ..legacy import LegacyServed
    from .options import HttpOptions
    from .sessions import SessionTable

#: What may wait in a session's queue for its stream before its POSTs are refused (429). A POST is answered at
#: once and its answer queued, and the stream takes from the queue only as fast as the client reads: a client
#: that posts without reading would otherwise grow the queue without bound.
MAX_UNSENT_BYTES = 16 * 1024 * 1024


class SseHost(Protocol):
    """What this transport needs of the endpoint that routes to it."""

    @property
    def server(self) -> LegacyServed: ...

    @property
    def options(self) -> HttpOptions: ...

    @property
    def table(self) -> SessionTable: ...

    def admission(self, principal: Principal) -> Callable[[Request], McpError | None] | None: ...


class _SseSession:
    def __init__(self, server: LegacyServed, principal: Principal) -> None:
        self.id = secrets.token_urlsafe(32)
        self.principal = principal.name
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        #: bytes queued for the stream and not yet taken by it (``MAX_UNSENT_BYTES``)
        self.unsent = 0
        self.loop = asyncio.get_running_loop()
        self.push = asgi.from_any_thread(self._queue)
        self.legacy = LegacySession(server, self.push)
        self.legacy.principal, self.legacy.scopes = principal.name, principal.scopes
        self.legacy.sticky = principal.rollout_key or f"session:{self.id}"
        self.tasks: set[asyncio.Task[None]] = set()

    def _queue(self, data: bytes) -> None:
        self.unsent += len(data)
        self.queue.put_nowait(data)

    def frame(self, data: bytes) -> bytes:
        """``data`` as the stream's next event, taken off the queue."""
        self.unsent -= len(data)
        return asgi.sse_event(data)

    def close(self) -> None:
        self.queue.put_nowait(None)  # its stream ends, and with it the session
        self.legacy.close()
        for task in self.tasks:
            task.cancel()


class LegacySseTransport:
    """``GET {sse_path}`` and ``POST {messages_path}?session_id=...``; see the module docstring."""

    def __init__(self, host: SseHost, sse_path: str = "/sse", messages_path: str = "/messages") -> None:
        self.host = host
        self.sse_path = sse_path
        self.messages_path = messages_path

    @property
    def sessions(self) -> dict[str, _SseSession]:
        return self.host.table.sse  # type: ignore[return-value]

    async def stream(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        accept = asgi.headers_of(scope).get(b"accept", b"")
        if b"text/event-stream" not in accept and b"*/*" not in accept:
            raise HttpError(406, "Accept must list text/event-stream")
        # A 2024-11-05 session is its stream: it counts as both.
        table = self.host.table
        refusal = table.session_refusal(principal.name) or table.stream_refusal(principal.name)
        if refusal is not None:
            raise refusal
        with table.streams.hold(principal.name):
            await self._serve(scope, receive, send, principal)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        session = _SseSession(self.host.server, principal)
        self.sessions[session.id] = session
        endpoint = f"{scope.get('root_path', '')}{self.messages_path}?session_id={session.id}"
        try:
            await send({"type": "http.response.start", "status": 200, "headers": asgi.SSE_HEADERS})
            await send({"type": "http.response.body", "more_body": True,
                        "body": b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n"})
            await asgi.stream_queue(send, receive, session.queue, session.frame)
        except OSError:
            return
        finally:
            session.close()
            self.sessions.pop(session.id, None)

    async def post(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        if asgi.media_type(asgi.headers_of(scope).get(b"content-type")) != b"application/json":
            raise HttpError(415, "Content-Type must be application/json")
        ids = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id", [])
        if not ids:
            raise HttpError(400, "the session_id query parameter is required")
        session = self.sessions.get(ids[0])
        if session is None or session.principal != principal.name:
            raise HttpError(404, "session not found; open a new /sse stream")
        if session.unsent > MAX_UNSENT_BYTES:
            raise HttpError(429, "this session's stream has not been read: read its answers before sending more")
        session.legacy.scopes = principal.scopes
        options = self.host.options
        try:
            body = await asgi.read_body(receive, options.max_body_bytes, asgi.headers_of(scope).get(b"content-length"),
                                        options.body_seconds)
        except asgi.Disconnected:
            return
        # A 2026-07-28 subscription inside this session is capped like a stream. The bytes are searched first, to
        # spare most bodies a second decoding; a JSON escape ("subscriptions\/listen") spells the method otherwise.
        if b"subscriptions/listen" in body or b"\\" in body:
            refusal = self._listen_refusal(body, principal)
            if refusal is not None:
                raise refusal
        outcome = session.legacy.handle_bytes(body, session.push, self.host.admission(principal))
        response = assemble(outcome, options.max_batch_response_bytes)
        if isinstance(response, Answer):
            session.push(response.data)
        elif response is not None:
            task = asyncio.ensure_future(self._later(session, response))
            session.tasks.add(task)
            task.add_done_callback(session.tasks.discard)
        await asgi.respond(send, 202, b"Accepted", b"text/plain")

    def _listen_refusal(self, body: bytes, principal: Principal) -> HttpError | None:
        try:
            decoded = jsonrpc.decode(body)
        except ParseError:
            return None  # the session answers that
        listens = count_listens(decoded if isinstance(decoded, list) else [decoded])
        return self.host.table.stream_refusal(principal.name, listens) if listens else None

    @staticmethod
    async def _later(session: _SseSession, pending: Awaitable[Answer | None]) -> None:
        answer = await pending
        if answer is not None:
            session.push(answer.data)
