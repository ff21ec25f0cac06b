"""Streamable HTTP (2025-03-26 … 2025-11-25) as a plain ASGI app.

One endpoint takes POST (a JSON-RPC message: a request is answered as JSON
or as an SSE stream, a notification or response with 202), GET (the
session's SSE stream: list_changed and log messages, with event ids and
``Last-Event-ID`` replay from a bounded buffer) and DELETE (ends the session).
Every method goes through the same ``LegacySession`` as stdio.

The 2024-11-05 HTTP+SSE transport is served beside it on ``/sse`` and
``/messages`` (stateful mode only; see ``legacy_sse``).

Stateful mode mints a random ``Mcp-Session-Id`` on initialize. Stateless mode
(``stateless=True``, for replicas behind a load balancer) keeps nothing: each
POST gets a fresh session that assumes the revision in ``MCP-Protocol-Version``
(2025-03-26 when absent), so any replica answers any request; GET and DELETE
are 405 there.

Host and Origin are checked on every request (DNS rebinding): by default only
loopback names are accepted, any port. Then the ``Authenticator`` (static
bearer tokens or OAuth JWTs, see ``guard`` and ``oauth``) names the principal;
its scopes decide which prompts its sessions see.

With ``ui=True`` (``serve --http`` unless ``--no-ui``) the same app serves the web catalog and
playground on ``/`` and ``/ui/`` (see ``ui``), behind the same Host and Origin checks; its pages hold no
data and talk to this endpoint with the user's token. When the server serves a store label, the page's
versions view reads and writes the store through ``/api/store`` (see ``store_api``), behind the same
checks, authentication and rate limit as this endpoint.

What one principal may hold (sessions, streams, subscriptions) is capped as well
as the total, and a batch's answer in size: see ``limits``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ...protocol import jsonrpc
from ...protocol.errors import AuthError, InvalidRequest, McpError, ParseError
from ...protocol.jsonrpc import Invalid, Notification, Request
from ...protocol.revisions import HTTP_DEFAULT, MODERN, REVISIONS, Revision
from ..asgi import (
    BODY_SECONDS,
    SSE_HEADERS,
    BodyTooLarge,
    BodyTooSlow,
    Disconnected,
    Receive,
    Scope,
    Send,
    accepts_all,
    from_any_thread,
    header,
    headers_of,
    media_type,
    read_body,
    respond,
    respond_error,
    respond_messages,
    sse_event,
    sse_priming,
    stream_queue,
)
from ..legacy import METHODS as LEGACY_METHODS
from ..legacy import LegacySession
from ..modern import METHODS as MODERN_METHODS
from ..modern import Subscription, modern_meta
from ..outcome import Answer, assemble
from ..security.guard import (
    DEFAULT_WRITE_SCOPE,
    Metrics,
    Principal,
    RateLimiter,
    log_call,
    log_get,
    retry_after,
    too_many,
)
from ..watch import watch_folders
from ..web.page import WebUi
from ..web.signin import PATH as SIGNIN_PATH
from . import limits
from .legacy_sse import LegacySseTransport
from .modern import end_subscriptions, serve_modern

if TYPE_CHECKING:
    from ..app import PromptServer
    from ..web.signin import SignIn
    from ..web.store_api import StoreApi

log = logging.getLogger("promptdeck.http")

LOOPBACK = ("localhost", "127.0.0.1", "[::1]", "::1")
REPLAY_EVENTS = 1000
#: Methods counted by name in /metrics. The method is client input: any other name is counted as
#: "other", so label values stay few (memory) and cannot forge lines of the metrics text.
METRIC_METHODS = frozenset(LEGACY_METHODS) | frozenset(MODERN_METHODS)


class Authenticator(Protocol):
    """Names the principal behind a request's ``Authorization`` header, or raises ``AuthError``."""

    async def authenticate(self, authorization: str | None) -> Principal: ...

    def challenge(self, error: AuthError) -> bytes:
        """The ``WWW-Authenticate`` value for a 401 or 403."""
        ...


class _HttpSession:
    """A legacy session held between requests, with its GET stream and replay buffer."""

    def __init__(self, server: PromptServer, session_id: str, principal: Principal) -> None:
        self.id = session_id
        self.principal = principal.name
        #: the event loop this session lives on (its queues belong to it)
        self.loop = asyncio.get_running_loop()
        self.notify = from_any_thread(self._push)
        self.legacy = LegacySession(server, self.notify)
        self.legacy.scopes = principal.scopes
        self.last_seen = time.monotonic()
        self.buffer: deque[tuple[int, bytes]] = deque(maxlen=REPLAY_EVENTS)
        self.next_event = 0
        self.stream: asyncio.Queue[tuple[int, bytes] | None] | None = None
        # Bounded like the replay buffer: a client that never opens a GET stream must not make the
        # server keep every notification it missed.
        self.undelivered: deque[tuple[int, bytes]] = deque(maxlen=REPLAY_EVENTS)
        self.streams = 0

    def _push(self, message: bytes) -> None:
        self.next_event += 1
        item = (self.next_event, message)
        self.buffer.append(item)
        if self.stream is not None:
            self.stream.put_nowait(item)
        else:
            self.undelivered.append(item)  # sent by the next GET stream that opens

    def stream_id(self) -> int:
        """A number for a new stream's ids, unique in this session."""
        self.streams += 1
        return self.streams

    def close(self) -> None:
        self.legacy.close()
        if self.stream is not None:
            self.stream.put_nowait(None)


def _host_allowed(host: str | None, allowed: frozenset[str]) -> bool:
    if host is None:
        return False
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return host in allowed or name in allowed


class StreamableHttpApp:
    """The ASGI application; see the module docstring."""

    def __init__(self, server: PromptServer, *, path: str = "/mcp", json_response: bool = False,
                 stateless: bool = False, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = (),
                 session_idle_seconds: float = 1800, max_sessions: int = 1000,
                 max_body_bytes: int = 4 * 1024 * 1024, watch: bool = True, auth: Authenticator | None = None,
                 rate_limit: int | None = None, metadata: tuple[str, bytes] | None = None,
                 legacy_sse: bool = True,
                 max_batch_response_bytes: int = jsonrpc.MAX_BATCH_RESPONSE_BYTES,
                 max_sessions_per_principal: int = 100, max_streams: int = 1000,
                 max_streams_per_principal: int = 100, body_seconds: float = BODY_SECONDS,
                 ui: bool = False, write_scope: str = DEFAULT_WRITE_SCOPE, signin: SignIn | None = None) -> None:
        self.server = server
        self.path = path
        self.json_response = json_response
        self.stateless = stateless
        self.allowed_hosts = frozenset(LOOPBACK) | frozenset(allowed_hosts)
        self.allowed_origins = frozenset(allowed_origins)
        self.session_idle_seconds = session_idle_seconds
        self.max_sessions = max_sessions
        self.max_sessions_per_principal = max_sessions_per_principal
        #: open GET streams, 2024-11-05 /sse streams and 2026-07-28 subscriptions/listen streams
        self.streams = limits.Quota("streams", max_streams, max_streams_per_principal)
        self.max_body_bytes = max_body_bytes
        #: how long a request body may take to arrive (408 past it)
        self.body_seconds = body_seconds
        self.max_batch_response_bytes = max_batch_response_bytes
        self.watch = watch
        self.auth = auth
        #: (path, document) of the RFC 9728 protected-resource metadata, served without authentication
        self.metadata = metadata
        self.limiter = RateLimiter(rate_limit) if rate_limit else None
        self.metrics = Metrics()
        self.sessions: dict[str, _HttpSession] = {}
        self.legacy_sse = LegacySseTransport(self) if legacy_sse and not stateless else None
        #: open 2026-07-28 subscriptions and the queues their streams read
        self.listeners: dict[Subscription, asyncio.Queue[bytes | None]] = {}
        self._stateless_streams = 0
        #: principals by client address, kept because most requests come from a few
        self._peers: dict[str, Principal] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        #: the web catalog and playground on ``/`` and ``/ui/`` (see ``ui``), behind the same Host/Origin checks
        self.ui = WebUi(path) if ui else None
        #: the page's window on the store label the server serves (see ``store_api``), when it serves one
        self.store_api = _store_api(server, write_scope) if ui else None
        #: ``promptdeck ui``'s exchange of a one-time code for a token (``POST /signin``, see ``signin``)
        self.signin = signin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope.get("http_version") not in ("1.1", "1.0"):
            await respond_error(send, 505, InvalidRequest("only HTTP/1.1 is served here"))
            return
        host = header(scope, b"host")
        if host is None or (len(headers_of(scope)) != len(scope["headers"])
                            and sum(name == b"host" for name, _ in scope["headers"]) > 1):
            # RFC 9112 section 3.2: exactly one Host; which of two a proxy would route by is anyone's guess.
            await respond_error(send, 400, InvalidRequest("a request needs exactly one Host header"))
            return
        if not _host_allowed(host, self.allowed_hosts):
            await respond_error(send, 403, InvalidRequest("Host not allowed"))
            return
        origin = header(scope, b"origin")
        if origin is not None and not self._origin_ok(origin):
            await respond_error(send, 403, InvalidRequest("Origin not allowed"))
            return
        path = scope["path"]
        if path == "/healthz":
            await respond(send, 200, b"ok", b"text/plain")
            return
        if self.signin is not None and path == SIGNIN_PATH:
            await self.signin(scope, receive, send)
            return
        if self.ui is not None and self.ui.serves(path):
            await self.ui(scope, receive, send)
            return
        if self.metadata is not None and path in (self.metadata[0], "/.well-known/oauth-protected-resource"):
            await respond(send, 200, self.metadata[1], headers=[(b"cache-control", b"max-age=3600")])
            return
        old = self.legacy_sse
        api = self.store_api is not None and self.store_api.serves(path)
        if path not in (self.path, "/metrics") and not api \
                and (old is None or path not in (old.sse_path, old.messages_path)):
            await respond(send, 404, b"not found", b"text/plain")
            return
        principal = self._peer(scope) if self.auth is None else await self._principal(scope, send)
        if principal is None:
            return
        if path == "/metrics":
            # The prompt count is what this asker may see: counting prompts hidden by scopes would tell
            # a principal that restricted prompts exist. The other series are aggregates that name no prompt.
            body = self.metrics.render(self.session_count(), len(self.server.catalog.view(principal.scopes)))
            await respond(send, 200, body, b"text/plain; version=0.0.4")
            return
        if self.limiter is not None:
            wait = self.limiter.check(principal.name)
            if wait > 0:
                await respond_error(send, 429, too_many(wait), [(b"retry-after", b"%d" % retry_after(wait))])
                return
        if api:
            assert self.store_api is not None
            await self.store_api(scope, receive, send, principal)
            return
        method = scope["method"]
        if old is not None and path != self.path:
            if path == old.sse_path and method == "GET":
                await old.stream(scope, receive, send, principal)
            elif path == old.messages_path and method == "POST":
                await old.post(scope, receive, send, principal)
            else:
                await respond(send, 405, b"", None, [(b"allow", b"GET" if path == old.sse_path else b"POST")])
            return
        if method != "POST" and header(scope, b"mcp-protocol-version") in MODERN:
            await respond(send, 405, b"", None, [(b"allow", b"POST")])  # 2026-07-28 has no GET stream
            return
        if method == "POST":
            await self._post(scope, receive, send, principal)
        elif method == "GET" and not self.stateless:
            await self._get(scope, receive, send, principal)
        elif method == "DELETE" and not self.stateless:
            await self._delete(scope, send, principal)
        else:
            allow = b"POST" if self.stateless else b"GET, POST, DELETE"
            await respond(send, 405, b"", None, [(b"allow", allow)])

    def session_count(self) -> int:
        """Live sessions of both HTTP transports."""
        return len(self.sessions) + (len(self.legacy_sse.sessions) if self.legacy_sse is not None else 0)

    def _peer(self, scope: Scope) -> Principal:
        """Without authentication, who is asking is the client's address."""
        client = scope.get("client")
        address = str(client[0]) if client else "local"
        principal = self._peers.get(address)
        if principal is None:
            if len(self._peers) >= 1024:
                self._peers.clear()
            principal = self._peers[address] = Principal(address)
        return principal

    async def _principal(self, scope: Scope, send: Send) -> Principal | None:
        """Who is asking, by the request's credentials; None once a 401/403 is sent."""
        assert self.auth is not None
        try:
            return await self.auth.authenticate(header(scope, b"authorization"))
        except AuthError as exc:
            await respond_error(send, exc.status, InvalidRequest(exc.message),
                                [(b"www-authenticate", self.auth.challenge(exc))])
            return None

    def _origin_ok(self, origin: str) -> bool:
        if origin in self.allowed_origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and (parts.hostname or "") in ("localhost", "127.0.0.1", "::1")

    # -- lifespan ------------------------------------------------------------------------------

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.startup()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def startup(self) -> None:
        """Load deferred folders before the first request; start the watcher and session expiry."""
        self.server.catalog  # noqa: B018 - reading the catalog is what loads deferred folders
        if self.watch:
            self._tasks.append(asyncio.ensure_future(watch_folders(self.server, self._stop)))
        self._tasks.append(asyncio.ensure_future(self._expire_loop()))

    async def shutdown(self) -> None:
        self.end_streams()
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def end_streams(self) -> None:
        """End every long-lived response: subscriptions get their result, sessions and SSE streams close.

        Idempotent. ``serving.server`` calls it when shutdown begins, because uvicorn waits for open
        responses to finish before it sends the lifespan shutdown.
        """
        end_subscriptions(self)
        for session in list(self.sessions.values()):
            session.close()
        self.sessions.clear()
        if self.legacy_sse is not None:
            self.legacy_sse.close()

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, self.session_idle_seconds / 2))
            self.expire()

    def expire(self) -> None:
        """End sessions idle for longer than the limit (their ids then answer 404)."""
        limit = time.monotonic() - self.session_idle_seconds
        for session_id, session in list(self.sessions.items()):
            if session.last_seen < limit and session.stream is None:
                session.close()
                del self.sessions[session_id]

    # -- POST ----------------------------------------------------------------------------------

    def _revision_header(self, scope: Scope) -> Revision | None | bool:
        """The revision named by MCP-Protocol-Version; the default when absent; False when unsupported."""
        value = header(scope, b"mcp-protocol-version")
        if value is None:
            return None
        return REVISIONS.get(value, False)

    async def _post(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        headers = headers_of(scope)
        if media_type(headers.get(b"content-type")) != b"application/json":
            await respond_error(send, 415, InvalidRequest("Content-Type must be application/json"))
            return
        if not accepts_all(headers.get(b"accept"), b"application/json", b"text/event-stream"):
            await respond_error(send, 406, InvalidRequest(
                "Accept must list both application/json and text/event-stream"))
            return
        try:
            body = await read_body(receive, self.max_body_bytes, headers.get(b"content-length"), self.body_seconds)
        except BodyTooLarge:
            await respond_error(send, 413, InvalidRequest(f"body larger than {self.max_body_bytes} bytes"))
            return
        except BodyTooSlow:
            await respond_error(send, 408, InvalidRequest(f"the body did not arrive within {self.body_seconds:g} s"),
                                [(b"connection", b"close")])
            return
        except Disconnected:
            return
        try:
            decoded = jsonrpc.decode(body)
        except ParseError as exc:  # invalid UTF-8 included
            await respond_error(send, 400, exc)
            return
        if isinstance(decoded, Request | Notification):
            meta = modern_meta(decoded.params)
            if meta is not None or header(scope, b"mcp-protocol-version") in MODERN:
                # 2026-07-28: routed by what the request carries; Mcp-Session-Id is ignored.
                await serve_modern(self, scope, receive, send, principal, decoded, meta)
                return
        messages = decoded if isinstance(decoded, list) else [decoded]
        invalid = [m for m in messages if isinstance(m, Invalid)]
        if not messages or (invalid and len(invalid) == len(messages)):
            # Nothing in the body can be processed: an HTTP error, carrying the JSON-RPC one.
            error = invalid[0].error if invalid else InvalidRequest("an empty batch is not a request")
            await respond(send, 400, jsonrpc.encode_error(invalid[0].id if invalid else None, error))
            return
        listens = limits.count_listens(messages)
        refusal = limits.stream_refusal(self, principal.name, listens) if listens else None
        if refusal is not None:
            await limits.refuse(send, refusal)
            return
        initialize = any(isinstance(m, Request) and m.method == "initialize" for m in messages)
        revision = self._revision_header(scope)
        if revision is False and not initialize:
            await respond_error(send, 400, InvalidRequest(
                f"unsupported MCP-Protocol-Version {header(scope, b'mcp-protocol-version')!r}; "
                f"supported: {', '.join(REVISIONS)}"))
            return
        extra: list[tuple[bytes, bytes]] = []
        session: _HttpSession | None = None
        if self.stateless:
            legacy = LegacySession(self.server, lambda _message: None, announces=False)
            legacy.scopes = principal.scopes
            if not initialize:
                legacy.assume(revision or HTTP_DEFAULT)  # type: ignore[arg-type]
        elif initialize:
            refusal = limits.session_refusal(self, principal.name)
            if refusal is not None:
                await limits.refuse(send, refusal)
                return
            session = _HttpSession(self.server, secrets.token_urlsafe(32), principal)
            legacy = session.legacy
            extra.append((b"mcp-session-id", session.id.encode()))
        else:
            session_id = header(scope, b"mcp-session-id")
            if session_id is None:
                await respond_error(send, 400, InvalidRequest("Mcp-Session-Id header is required"))
                return
            session = self.sessions.get(session_id)
            if session is None or session.principal != principal.name:
                # Another principal's session answers like a missing one: ids are not credentials.
                await respond_error(send, 404, InvalidRequest("session not found; initialize again"))
                return
            session.last_seen = time.monotonic()
            legacy = session.legacy
            legacy.scopes = principal.scopes  # what this request's token grants, not the first one's
        if not any(isinstance(m, Request) for m in messages) and not isinstance(decoded, list):
            legacy.handle(decoded, lambda _message: None)
            await respond(send, 202, b"", None, extra)
            return
        if session is not None and initialize:
            # Registered before answering: the client may send its next request the moment it reads this.
            self.sessions[session.id] = session
        try:
            await self._answer(send, legacy, session, body, messages, extra, principal,
                               batch=isinstance(decoded, list))
        finally:
            if self.stateless:
                legacy.close()  # nothing outlives a stateless request
            elif session is not None and initialize and legacy.lifecycle.revision is None:
                self.sessions.pop(session.id, None)  # initialize failed: no session to keep

    async def _answer(self, send: Send, legacy: LegacySession, session: _HttpSession | None, body: bytes,
                      messages: list[jsonrpc.Message], extra: list[tuple[bytes, bytes]], principal: Principal,
                      batch: bool = False) -> None:
        related: list[bytes] = []
        started = time.perf_counter()
        outcome = legacy.handle_bytes(body, related.append, self.admission(principal))
        if batch and isinstance(outcome, Answer):
            # The session refused the batch whole (none after 2025-03-26, none with initialize): nothing
            # in the body can be processed, so an HTTP error carrying the JSON-RPC one, as above.
            await respond(send, 400, outcome.data)
            return
        pending = assemble(outcome, self.max_batch_response_bytes)
        response = pending if pending is None or isinstance(pending, Answer) else await pending
        if response is None:
            await respond(send, 202, b"", None, extra)
            return
        self.observe(messages, response, time.perf_counter() - started, principal)
        primed = legacy.revision.sse_priming and not (self.json_response and not related)
        await respond_messages(send, related, response.data, json=self.json_response, headers=extra,
                               stream_id=f"p{self._stream_number(session)}" if primed else None)

    def admission(self, principal: Principal) -> Callable[[Request], McpError | None] | None:
        """What decides, request by request, which of a batch's requests the rate limit lets through."""
        return self.limiter.admit(principal.name) if self.limiter is not None else None

    def _stream_number(self, session: _HttpSession | None) -> int:
        if session is not None:
            return session.stream_id()
        self._stateless_streams += 1
        return self._stateless_streams

    def observe(self, messages: list[jsonrpc.Message], response: Answer, seconds: float,
                principal: Principal) -> None:
        """Count a request in /metrics, and write the audit line of a prompts/get."""
        if len(messages) != 1 or not isinstance(messages[0], Request):
            self.metrics.observe("batch", "ok", seconds)
            return
        request = messages[0]
        outcome = "ok" if response.error is None else "error"
        self.metrics.observe(request.method if request.method in METRIC_METHODS else "other", outcome, seconds)
        if request.method == "prompts/get":
            log_get(principal.name, (request.params or {}).get("name"), outcome, seconds)
        elif request.method == "tools/call":
            # A call the model got wrong is an isError result, not a JSON-RPC error. msgspec writes the key
            # with no space, and a string value holding the same text would have its quotes escaped.
            if outcome == "ok" and b'"isError":true' in response.data:
                outcome = "error"
            params = request.params or {}
            arguments = params.get("arguments")
            tools = self.server.tools
            # The get tool names its prompt in its arguments; a per-prompt tool's name says it.
            named = arguments.get("name") if isinstance(arguments, dict) and tools is not None \
                and params.get("name") == tools.options.get_name else None
            log_call(principal.name, params.get("name"), named, outcome, seconds)

    # -- GET and DELETE ------------------------------------------------------------------------

    def _session_for(self, scope: Scope, principal: Principal) -> tuple[_HttpSession | None, int, str]:
        session_id = header(scope, b"mcp-session-id")
        if session_id is None:
            return None, 400, "Mcp-Session-Id header is required"
        session = self.sessions.get(session_id)
        if session is None or session.principal != principal.name:
            return None, 404, "session not found; initialize again"
        session.legacy.scopes = principal.scopes
        return session, 200, ""

    async def _get(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        if not accepts_all(headers_of(scope).get(b"accept"), b"text/event-stream"):
            await respond_error(send, 406, InvalidRequest("Accept must list text/event-stream"))
            return
        session, status, why = self._session_for(scope, principal)
        if session is None:
            await respond_error(send, status, InvalidRequest(why))
            return
        if self._revision_header(scope) is False:
            await respond_error(send, 400, InvalidRequest("unsupported MCP-Protocol-Version"))
            return
        if session.stream is not None:
            session.stream.put_nowait(None)  # one GET stream a session: the newest takes over
        else:
            refusal = limits.stream_refusal(self, principal.name)
            if refusal is not None:
                await limits.refuse(send, refusal)
                return
        with self.streams.hold(principal.name):
            await self._stream(scope, receive, send, session)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, session: _HttpSession) -> None:
        queue: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        session.stream = queue
        last = header(scope, b"last-event-id")
        if last is not None:
            # Resuming: what this stream sent after that event, still in the buffer.
            after = _event_number(last)
            replay = [item for item in session.buffer if after is not None and item[0] > after]
        else:
            replay = list(session.undelivered)
        session.undelivered.clear()
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        opening = b""
        if session.legacy.revision.sse_priming:
            # The id to resume from is unique: it names the position and this stream.
            position = replay[-1][0] if replay else session.next_event
            opening = sse_priming(f"g{position}-{session.stream_id()}")
        opening += b"".join(sse_event(data, f"g{number}") for number, data in replay)
        await send({"type": "http.response.body", "body": opening or b": stream open\n\n", "more_body": True})
        try:
            await stream_queue(send, receive, queue, lambda item: sse_event(item[1], f"g{item[0]}"))
        except OSError:
            return
        finally:
            if session.stream is queue:
                session.stream = None
            session.last_seen = time.monotonic()

    async def _delete(self, scope: Scope, send: Send, principal: Principal) -> None:
        session, status, why = self._session_for(scope, principal)
        if session is None:
            await respond_error(send, status, InvalidRequest(why))
            return
        session.close()
        self.sessions.pop(session.id, None)
        await respond(send, 200, b"", None)


def _event_number(event_id: str) -> int | None:
    """The GET-stream position an event id names (``g12`` or a priming ``g12-3``); None for others."""
    if event_id.startswith("p"):
        return None  # a POST stream's id: that stream was complete when sent, nothing to replay
    number = event_id.removeprefix("g").split("-", 1)[0]
    return int(number) if number.isdigit() else None


def _store_api(server: PromptServer, write_scope: str) -> StoreApi | None:
    from ...sources.store.source import StoreSource
    from ..web.store_api import StoreApi

    stored = [source for source in server.sources if isinstance(source, StoreSource)]
    return StoreApi(server, stored[0], write_scope) if stored else None


def create_app(server: PromptServer, **options: Any) -> StreamableHttpApp:
    """The ASGI app serving ``server`` over Streamable HTTP (options: see ``StreamableHttpApp``)."""
    return StreamableHttpApp(server, **options)


def run(server: PromptServer | Mapping[str, PromptServer], host: str, port: int, *,
        tls: tuple[str, str] | None = None,
        sock: socket.socket | None = None, trusted_proxies: tuple[str, ...] = (), workers: int = 1,
        connection_limits: dict[str, Any] | None = None, **options: Any) -> None:
    """Serve over HTTP with uvicorn (see ``serving``) until SIGINT or SIGTERM. ``server``: one server on
    ``/mcp``, or servers by endpoint path (see ``endpoints``); ``tls``: (cert, key) files;
    ``sock``: a socket already bound (``serving.bind``); ``trusted_proxies``: whose X-Forwarded-For to
    believe; ``workers``: processes (see ``serving.run_workers``); ``connection_limits``: uvicorn settings
    (``limit_concurrency``, ``timeout_keep_alive``) over ``serving``'s defaults."""
    from . import runner as serving

    extra = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
    extra |= serving.trusting(trusted_proxies)
    extra |= connection_limits or {}

    def make_app() -> Any:
        if isinstance(server, Mapping):
            from .endpoints import Endpoints

            return Endpoints.create(server, **options)
        return create_app(server, **options)

    if workers > 1:
        if sock is not None:
            sock.close()  # each worker binds its own
        serving.run_workers(make_app, host, port, workers, **extra)
        return
    serving.run(make_app(), host, port, sock=sock, **extra)
