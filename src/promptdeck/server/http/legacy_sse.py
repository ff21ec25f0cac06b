"""The 2024-11-05 HTTP+SSE transport, for clients older than Streamable HTTP.

A client opens ``GET /sse``; the stream's first event (``endpoint``) names
the URL to POST messages to, carrying a random session id. Each POST is
answered ``202 Accepted`` at once and its JSON-RPC response travels on the
stream, as do list_changed and log notifications. The session lives exactly
as long as its stream: when the client goes away, the session ends.

Host/Origin checks, authentication and rate limits run before either handler
(in ``StreamableHttpApp``); a session belongs to the principal that opened it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from ...protocol import jsonrpc
from ...protocol.errors import InvalidRequest, ParseError
from .. import asgi
from ..asgi import Receive, Scope, Send
from ..legacy import LegacySession
from ..outcome import Answer, assemble
from ..security.guard import Principal
from . import limits

if TYPE_CHECKING:
    from .app import StreamableHttpApp


class _SseSession:
    def __init__(self, app: StreamableHttpApp, principal: Principal) -> None:
        self.id = secrets.token_urlsafe(32)
        self.principal = principal.name
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.loop = asyncio.get_running_loop()
        self.push = asgi.from_any_thread(self.queue.put_nowait)
        self.legacy = LegacySession(app.server, self.push)
        self.legacy.scopes = principal.scopes
        self.tasks: set[asyncio.Task[None]] = set()

    def close(self) -> None:
        self.legacy.close()
        for task in self.tasks:
            task.cancel()


class LegacySseTransport:
    """``GET {sse_path}`` and ``POST {messages_path}?session_id=...``; see the module docstring."""

    def __init__(self, app: StreamableHttpApp, sse_path: str = "/sse", messages_path: str = "/messages") -> None:
        self.app = app
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.sessions: dict[str, _SseSession] = {}

    async def stream(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        accept = asgi.headers_of(scope).get(b"accept", b"")
        if b"text/event-stream" not in accept and b"*/*" not in accept:
            await asgi.respond_error(send, 406, InvalidRequest("Accept must list text/event-stream"))
            return
        # A 2024-11-05 session is its stream: it counts as both.
        refusal = limits.session_refusal(self.app, principal.name) or limits.stream_refusal(self.app, principal.name)
        if refusal is not None:
            await limits.refuse(send, refusal)
            return
        with self.app.streams.hold(principal.name):
            await self._serve(scope, receive, send, principal)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        session = _SseSession(self.app, principal)
        self.sessions[session.id] = session
        endpoint = f"{scope.get('root_path', '')}{self.messages_path}?session_id={session.id}"
        try:
            await send({"type": "http.response.start", "status": 200, "headers": asgi.SSE_HEADERS})
            await send({"type": "http.response.body", "more_body": True,
                        "body": b"event: endpoint\ndata: " + endpoint.encode() + b"\n\n"})
            await asgi.stream_queue(send, receive, session.queue, asgi.sse_event)
        except OSError:
            return
        finally:
            session.close()
            self.sessions.pop(session.id, None)

    async def post(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        if asgi.media_type(asgi.headers_of(scope).get(b"content-type")) != b"application/json":
            await asgi.respond_error(send, 415, InvalidRequest("Content-Type must be application/json"))
            return
        ids = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id", [])
        if not ids:
            await asgi.respond_error(send, 400, InvalidRequest("the session_id query parameter is required"))
            return
        session = self.sessions.get(ids[0])
        if session is None or session.principal != principal.name:
            await asgi.respond_error(send, 404, InvalidRequest("session not found; open a new /sse stream"))
            return
        session.legacy.scopes = principal.scopes
        try:
            body = await asgi.read_body(receive, self.app.max_body_bytes,
                                        asgi.headers_of(scope).get(b"content-length"), self.app.body_seconds)
        except asgi.BodyTooLarge:
            await asgi.respond_error(send, 413, InvalidRequest(f"body larger than {self.app.max_body_bytes} bytes"))
            return
        except asgi.BodyTooSlow:
            await asgi.respond_error(send, 408, InvalidRequest("the body did not arrive in time"),
                                     [(b"connection", b"close")])
            return
        except asgi.Disconnected:
            return
        if b"subscriptions/listen" in body:  # a 2026-07-28 subscription inside this session: capped like a stream
            refusal = self._listen_refusal(body, principal)
            if refusal is not None:
                await limits.refuse(send, refusal)
                return
        outcome = session.legacy.handle_bytes(body, session.push, self.app.admission(principal))
        response = assemble(outcome, self.app.max_batch_response_bytes)
        if isinstance(response, Answer):
            session.push(response.data)
        elif response is not None:
            task = asyncio.ensure_future(self._later(session, response))
            session.tasks.add(task)
            task.add_done_callback(session.tasks.discard)
        await asgi.respond(send, 202, b"Accepted", b"text/plain")

    def _listen_refusal(self, body: bytes, principal: Principal) -> limits.Refusal | None:
        try:
            decoded = jsonrpc.decode(body)
        except ParseError:
            return None  # the session answers that
        listens = limits.count_listens(decoded if isinstance(decoded, list) else [decoded])
        return limits.stream_refusal(self.app, principal.name, listens) if listens else None

    @staticmethod
    async def _later(session: _SseSession, pending: Awaitable[Answer | None]) -> None:
        answer = await pending
        if answer is not None:
            session.push(answer.data)

    def close(self) -> None:
        for session in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                session.queue.put_nowait(None)
            session.close()
        self.sessions.clear()
