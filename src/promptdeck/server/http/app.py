"""Streamable HTTP (2025-03-26 … 2025-11-25) as a plain ASGI app.

One endpoint takes POST (a JSON-RPC message: a request is answered as JSON
or as an SSE stream, a notification or response with 202), GET (the
session's SSE stream: list_changed and log messages, with event ids and
``Last-Event-ID`` replay from a bounded buffer) and DELETE (ends the session).
Every method goes through the same ``LegacySession`` as stdio.

The 2024-11-05 HTTP+SSE transport is served beside it on ``/sse`` and
``/messages`` (stateful mode only; see ``legacy_sse``).

Stateful mode mints a signed ``Mcp-Session-Id`` on initialize that says what the session negotiated
(``session_ids``): replicas of one store take up each other's sessions from it. Stateless mode
(``stateless=True``, for replicas behind a load balancer) keeps nothing: each
POST gets a fresh session that assumes the revision in ``MCP-Protocol-Version``
(2025-03-26 when absent), so any replica answers any request; GET and DELETE
are 405 there.

The paths are a table (``StreamableHttpApp.routes``, in the shape ``routes`` defines): each route
declares its guards. Host and Origin are checked on every request (DNS rebinding): by default only
loopback names are accepted, any port. On the routes that hold data the ``Authenticator`` (static
bearer tokens or OAuth JWTs, see ``tokens`` and ``oauth``) then names the principal, whose scopes
decide which prompts its sessions see, and the rate limit counts its requests.

With ``ui=True`` (``serve --http`` unless ``--no-ui``) the same app serves the web catalog and
playground on ``/`` and ``/ui/`` (see ``ui``), behind the same Host and Origin checks; its pages hold no
data and talk to this endpoint with the user's token. When the server serves a store label, the page's
versions view reads and writes the store through ``/api/store`` (see ``store_api``), behind the same
checks, authentication and rate limit as this endpoint.

What one principal may hold (sessions, streams, subscriptions) is capped as well
as the total (``sessions.SessionTable``), and a batch's answer in size.

Every refusal a route or its guards make is an ``HttpError`` they raise; ``__call__`` is the one place
that turns it into a response, in the shape of the route it came from (``Route.errors``): a JSON-RPC
error on the MCP paths, a JSON object on the store and graph APIs and the sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...prompts.read_budget import answering
from ...protocol import jsonrpc
from ...protocol.errors import HttpError, InvalidRequest, McpError, ParseError
from ...protocol.jsonrpc import Invalid, Notification, Request
from ...protocol.revisions import HTTP_DEFAULT, MODERN, REVISIONS, Revision, modern_meta
from ..asgi import (
    SSE_HEADERS,
    Disconnected,
    PostStream,
    Receive,
    Scope,
    Send,
    accepts_all,
    header,
    headers_of,
    media_type,
    read_body,
    respond,
    respond_messages,
    respond_refusal,
    sse_event,
    sse_priming,
    stream_queue,
)
from ..legacy import LegacySession
from ..methods import METHODS
from ..outcome import Answer, assemble
from ..security.audit import Metrics, log_call, log_get
from ..security.principals import Authenticator, Principal
from ..security.quotas import Quota
from ..security.ratelimit import RateLimiter
from ..watch import watch_folders
from ..web.graph_api import PATH as GRAPH_PATH
from ..web.graph_api import GraphApi
from ..web.page import PREFIX as UI_PREFIX
from ..web.page import WebUi
from ..web.signin import PATH as SIGNIN_PATH
from ..web.usage_api import PATH as USAGE_PATH
from ..web.usage_api import UsageApi
from .legacy_sse import LegacySseTransport
from .modern import plain_get, serve_modern
from .options import HttpOptions
from .routes import AUTH, HOST, LIMIT, Checks, Errors, Route, Router
from .session_ids import session_ids
from .sessions import HttpSession, SessionTable, count_listens

if TYPE_CHECKING:
    from ..app import PromptServer
    from ..security.store_metrics import StoreMetrics
    from ..web.signin import SignIn
    from ..web.store_api import StoreApi

log = logging.getLogger("promptdeck.http")

#: where the RFC 9728 protected-resource metadata is also served, whatever path it is given
METADATA_PATH = "/.well-known/oauth-protected-resource"
#: Methods counted by name in /metrics. The method is client input: any other name is counted as
#: "other", so label values stay few (memory) and cannot forge lines of the metrics text.
METRIC_METHODS = frozenset(METHODS)


class StreamableHttpApp:
    """The ASGI application; see the module docstring."""

    def __init__(self, server: PromptServer, options: HttpOptions | None = None, *, auth: Authenticator | None = None,
                 metadata: tuple[str, bytes] | None = None, signin: SignIn | None = None,
                 streams: Quota | None = None) -> None:
        options = options or HttpOptions()
        self.server = server
        self.options = options
        self.auth = auth
        #: (path, document) of the RFC 9728 protected-resource metadata, served without authentication
        self.metadata = metadata
        self.limiter = RateLimiter(options.rate_limit) if options.rate_limit else None
        self.metrics = Metrics()
        #: the store's series in /metrics (``security.store_metrics``), made at the first scrape
        self.store_metrics: StoreMetrics | None = None
        #: sessions, subscriptions and open streams, shared by every route; ``streams`` is given when
        #: several endpoints share one port's stream quota (``endpoints``)
        self.table = SessionTable(options, streams, None if options.stateless else
                                  session_ids(server, options.session_lifetime_seconds), server)
        self.legacy_sse = LegacySseTransport(self) if options.legacy_sse and not options.stateless else None
        self._stateless_streams = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        #: the web catalog and playground on ``/`` and ``/ui/`` (see ``page``), behind the same Host/Origin checks
        self.ui = WebUi(options.path) if options.ui else None
        #: the page's window on the store label the server serves (see ``store_api``), when it serves one
        self.store_api = _store_api(server, options.write_scope) if options.ui else None
        # a folder's counts are shown here (docs/usage.md): kept hour by hour (a store's writer does it for a store)
        server.usage.keep_hours()
        #: the page's view of the composition graph (``/api/graph``, see ``graph_api``)
        self.graph_api = GraphApi(server) if options.ui else None
        #: the page's view of the renders counted (``/api/usage``, see ``usage_api``), a store's or in memory
        self.usage_api = UsageApi(server, self.store_api) if options.ui else None
        #: ``promptdeck ui``'s exchange of a one-time code for a token (``POST /signin``, see ``signin``)
        self.signin = signin
        #: what the routes' guards check against (see ``routes``)
        self.checks = Checks(options.allowed_hosts, options.allowed_origins, auth, self.limiter)
        self.router = Router(self.routes(), self.checks)

    def routes(self) -> list[Route]:
        """The table: the first route that takes a path serves it, behind the guards it declares."""
        public, guarded, limited = frozenset({HOST}), frozenset({HOST, AUTH}), frozenset({HOST, AUTH, LIMIT})
        options, old = self.options, self.legacy_sse
        table = [Route("health", _health, public, paths=("/healthz",))]
        if self.signin is not None:
            signin = self.signin
            table.append(Route("signin", lambda scope, receive, send, _: signin(scope, receive, send), public,
                               paths=(SIGNIN_PATH,), errors=Errors.JSON))
        if self.ui is not None:  # its pages hold no data: no authentication
            ui = self.ui
            table.append(Route("ui", lambda scope, receive, send, _: ui(scope, receive, send), public,
                               paths=("/",), prefix=UI_PREFIX))
        if self.metadata is not None:
            table.append(Route("oauth metadata", self._metadata, public, paths=(self.metadata[0], METADATA_PATH)))
        if self.store_api is not None:
            from ..web.store_api import PREFIX as STORE_PREFIX  # loaded already: the app made its StoreApi

            table.append(Route("store api", self.store_api, limited, paths=(STORE_PREFIX,), prefix=STORE_PREFIX + "/",
                               errors=Errors.JSON))
        if self.graph_api is not None:
            table.append(Route("graph api", self.graph_api, limited, paths=(GRAPH_PATH,), errors=Errors.JSON))
        if self.usage_api is not None:
            table.append(Route("usage api", self.usage_api, limited, paths=(USAGE_PATH,), errors=Errors.JSON))
        # The prompt count in /metrics is what its asker may see, so it authenticates; it is not rate-limited.
        table.append(Route("metrics", self._metrics, guarded, paths=("/metrics",)))
        # Stateless, the endpoint takes POST only (2026-07-28 has no GET stream either); stateful, ``_mcp``
        # answers each method, as a 2026-07-28 GET or DELETE is refused with a narrower Allow.
        table.append(Route("mcp", self._post, limited, paths=(options.path,), methods=("POST",))
                     if options.stateless else Route("mcp", self._mcp, limited, paths=(options.path,)))
        if old is not None:
            table.append(Route("sse", old.stream, limited, paths=(old.sse_path,), methods=("GET",)))
            table.append(Route("messages", old.post, limited, paths=(old.messages_path,), methods=("POST",)))
        return table

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        route, endpoint = self.router.resolve(scope["path"])
        try:
            with answering():  # reads' bytes count against their budget until the answer is written
                await endpoint(scope, receive, send)
        except HttpError as refusal:  # the one place a refusal becomes a response
            await respond_refusal(send, refusal, rpc=route.errors is Errors.RPC)
        except Exception:
            if route.errors is Errors.RPC:
                raise
            # The JSON API answers JSON even for a fault of ours; the details go to the log only.
            log.exception("%s failed", scope["path"])
            await respond_refusal(send, HttpError(500, "internal error"), rpc=False)

    async def _metadata(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        assert self.metadata is not None
        await respond(send, 200, self.metadata[1], headers=[(b"cache-control", b"max-age=3600")])

    async def _metrics(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        # The prompt count is what this asker may see: counting prompts hidden by scopes would tell
        # a principal that restricted prompts exist. The other series are aggregates that name no prompt.
        body = self.metrics.render(self.table.count(), len(self.server.catalog.view(principal.scopes)))
        if self.store_metrics is None:
            self.store_metrics = _store_metrics(self.server)
        if self.store_metrics.stores:  # the store may be read (at most every few seconds): not on the loop
            lines = await asyncio.to_thread(self.store_metrics.render, principal.scopes)
            body += ("\n".join(lines) + "\n").encode()
        await respond(send, 200, body, b"text/plain; version=0.0.4")

    async def _mcp(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        """The stateful MCP endpoint: POST a message, GET the session's stream, DELETE the session."""
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, principal)
        elif header(scope, b"mcp-protocol-version") in MODERN:
            await respond(send, 405, b"", None, [(b"allow", b"POST")])  # 2026-07-28 has no GET stream
        elif method == "GET":
            await self._get(scope, receive, send, principal)
        elif method == "DELETE":
            await self._delete(scope, send, principal)
        else:
            await respond(send, 405, b"", None, [(b"allow", b"GET, POST, DELETE")])

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
        if self.options.watch:
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

        Idempotent. ``runner`` calls it when shutdown begins, because uvicorn waits for open responses
        to finish before it sends the lifespan shutdown. The store API's test runs stop too: each holds a
        thread that the loop's executor would otherwise wait for.
        """
        self.table.end()
        if self.store_api is not None:
            self.store_api.stop_runs()

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, self.options.session_idle_seconds / 2))
            self.table.expire()

    # -- POST ----------------------------------------------------------------------------------

    def _revision_header(self, scope: Scope) -> Revision | None | bool:
        """The revision named by MCP-Protocol-Version; the default when absent; False when unsupported."""
        value = header(scope, b"mcp-protocol-version")
        if value is None:
            return None
        return REVISIONS.get(value, False)

    async def _post(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        """A JSON-RPC message (or a legacy batch): 2026-07-28 by what it carries, else to a legacy session."""
        headers = headers_of(scope)
        _check_post(headers)
        options = self.options
        try:
            body = await read_body(receive, options.max_body_bytes, headers.get(b"content-length"),
                                   options.body_seconds)
        except Disconnected:
            return
        started = time.perf_counter()
        plain = plain_get(self, scope, body, principal)
        if plain is not None:  # the common 2026-07-28 get, in one pass: counted and audited as any answer
            self.audit("prompts/get", {"name": plain[0]}, "ok", time.perf_counter() - started, principal, plain[1])
            await respond(send, 200, plain[1])
            return
        try:
            decoded = jsonrpc.decode(body)
        except ParseError as exc:  # invalid UTF-8 included
            raise HttpError(400, exc.message, error=exc) from None
        if isinstance(decoded, Request | Notification):
            meta = modern_meta(decoded.params)
            if meta is not None or header(scope, b"mcp-protocol-version") in MODERN:
                # 2026-07-28: routed by what the request carries; Mcp-Session-Id is ignored.
                await serve_modern(self, scope, receive, send, principal, decoded, meta)
                return
        messages = decoded if isinstance(decoded, list) else [decoded]
        refused = _unprocessable(messages)
        if refused is not None:  # nothing in the body can be processed: an HTTP error, carrying the JSON-RPC one
            await respond(send, 400, refused)
            return
        await self._post_legacy(scope, receive, send, principal, body, decoded, messages)

    async def _post_legacy(self, scope: Scope, receive: Receive, send: Send, principal: Principal, body: bytes,
                           decoded: jsonrpc.Message | list[jsonrpc.Message], messages: list[jsonrpc.Message]) -> None:
        initialize = next((m for m in messages if isinstance(m, Request) and m.method == "initialize"), None)
        revision = self._admit(scope, principal, messages, initialize is not None)
        legacy, session, extra = self._legacy_for(scope, principal, initialize, revision)
        if not any(isinstance(m, Request) for m in messages) and not isinstance(decoded, list):
            legacy.handle(decoded, lambda _message: None)
            await respond(send, 202, b"", None, extra)
            return
        if session is not None and initialize is not None:
            # Registered before answering: the client may send its next request the moment it reads this.
            self.table.streamable[session.id] = session
        try:
            await self._answer(send, receive, legacy, session, body, messages, extra, principal,
                               batch=isinstance(decoded, list))
        finally:
            if self.options.stateless:
                legacy.close()  # nothing outlives a stateless request
            elif session is not None and initialize is not None and legacy.lifecycle.revision is None:
                self.table.streamable.pop(session.id, None)  # initialize failed: no session to keep

    def _admit(self, scope: Scope, principal: Principal, messages: list[jsonrpc.Message],
               initialize: bool) -> Revision | None | bool:
        """Refuse listens past the stream cap and an unsupported MCP-Protocol-Version (but on initialize);
        else the revision the header names (``_revision_header``)."""
        listens = count_listens(messages)
        refusal = self.table.stream_refusal(principal.name, listens) if listens else None
        if refusal is not None:
            raise refusal
        revision = self._revision_header(scope)
        if revision is False and not initialize:
            raise HttpError(400, f"unsupported MCP-Protocol-Version {header(scope, b'mcp-protocol-version')!r}; "
                                 f"supported: {', '.join(REVISIONS)}")
        return revision

    def _legacy_for(self, scope: Scope, principal: Principal, initialize: Request | None,
                    revision: Revision | None | bool,
                    ) -> tuple[LegacySession, HttpSession | None, list[tuple[bytes, bytes]]]:
        """The legacy session a POST goes to, its HTTP session (None when stateless), and the headers its
        answer carries (the new session's id, which says what its ``initialize`` negotiates: ``session_ids``)."""
        if self.options.stateless:
            legacy = LegacySession(self.server, lambda _message: None, announces=False)
            legacy.principal, legacy.scopes = principal.name, principal.scopes
            legacy.sticky = principal.rollout_key  # no session to keep a rollout's choice by
            if initialize is None:
                legacy.assume(revision or HTTP_DEFAULT)  # type: ignore[arg-type]
            return legacy, None, []
        if initialize is not None:
            refusal = self.table.session_refusal(principal.name)
            if refusal is not None:
                raise refusal
            session = self.table.begin(principal, initialize.params)
            return session.legacy, session, [(b"mcp-session-id", session.id.encode())]
        session = self._session(scope, principal)
        session.last_seen = time.monotonic()
        return session.legacy, session, []

    async def _answer(self, send: Send, receive: Receive, legacy: LegacySession, session: HttpSession | None,
                      body: bytes, messages: list[jsonrpc.Message], extra: list[tuple[bytes, bytes]],
                      principal: Principal, batch: bool = False) -> None:
        related: list[bytes] = []
        started = time.perf_counter()
        # A session that may ask its client for missing arguments sends the question on this POST's stream,
        # which then begins before the answer is ready (``PostStream``).
        stream = PostStream(send, receive, lambda: self._stream_id(legacy, session), extra) if legacy.elicits \
            else None
        outcome = legacy.handle_bytes(body, related.append, self.admission(principal),
                                      None if stream is None else stream.ask)
        if batch and isinstance(outcome, Answer):
            # The session refused the batch whole (none after 2025-03-26, none with initialize): nothing
            # in the body can be processed, so an HTTP error carrying the JSON-RPC one, as above.
            await respond(send, 400, outcome.data)
            return
        pending = assemble(outcome, self.options.max_batch_response_bytes)
        if pending is None or isinstance(pending, Answer):
            response = pending
        else:
            response = await pending if stream is None else await stream.settle(pending, related)
        if stream is not None and stream.started:  # answered on its stream already
            if response is not None:
                self.observe(messages, response, time.perf_counter() - started, principal)
            return
        if response is None:
            await respond(send, 202, b"", None, extra)
            return
        self.observe(messages, response, time.perf_counter() - started, principal)
        json_response = self.options.json_response
        primed = not (json_response and not related)
        await respond_messages(send, related, response.data, json=json_response, headers=extra,
                               stream_id=self._stream_id(legacy, session) if primed else None)

    def _stream_id(self, legacy: LegacySession, session: HttpSession | None) -> str | None:
        """The id of a POST's event stream, which is primed in revisions that prime streams; else None."""
        epoch = session.epoch if session is not None else ""
        return f"p{self._stream_number(session)}{epoch}" if legacy.revision.sse_priming else None

    def admission(self, principal: Principal) -> Callable[[Request], McpError | None] | None:
        """What decides, request by request, which of a batch's requests the rate limit lets through."""
        return self.limiter.admit(principal.name) if self.limiter is not None else None

    def _stream_number(self, session: HttpSession | None) -> int:
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
        # A call the model got wrong is an isError result, not a JSON-RPC error. msgspec writes the key with no
        # space, and a string value holding the same text would have its quotes escaped.
        if request.method == "tools/call" and outcome == "ok" and b'"isError":true' in response.data:
            outcome = "error"
        self.audit(request.method, request.params, outcome, seconds, principal, response.data)

    def audit(self, method: str, params: dict[str, Any] | None, outcome: str, seconds: float,
              principal: Principal, answer: bytes | None = None) -> None:
        """The one place an answer is counted in /metrics and a prompts/get or tools/call gets its audit line:
        ``observe`` for every answer, and the one-pass prompts/get directly (it has no ``Answer`` to look at).
        ``answer``: the encoded response, whose ``_meta`` names the version and label rendered."""
        self.metrics.observe(method if method in METRIC_METHODS else "other", outcome, seconds)
        if method == "prompts/get":
            log_get(principal.name, (params or {}).get("name"), outcome, seconds, answer)
        elif method == "tools/call":
            params = params or {}
            arguments = params.get("arguments")
            options = self.server.tools.options if self.server.tools is not None else None
            # The get tool names its prompt in its arguments; a per-prompt tool's name says it.
            named = arguments.get("name") if isinstance(arguments, dict) and options is not None \
                and params.get("name") == options.get_name else None
            log_call(principal.name, params.get("name"), named, outcome, seconds)

    # -- GET and DELETE ------------------------------------------------------------------------

    def _session(self, scope: Scope, principal: Principal) -> HttpSession:
        found = self.table.session_for(header(scope, b"mcp-session-id"), principal)
        if isinstance(found, HttpError):
            raise found
        return found

    async def _get(self, scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        if not accepts_all(headers_of(scope).get(b"accept"), b"text/event-stream"):
            raise HttpError(406, "Accept must list text/event-stream")
        session = self._session(scope, principal)
        if self._revision_header(scope) is False:
            raise HttpError(400, "unsupported MCP-Protocol-Version")
        if session.stream is not None:
            session.stream.put_nowait(None)  # one GET stream a session: the newest takes over
        else:
            refusal = self.table.stream_refusal(principal.name)
            if refusal is not None:
                raise refusal
        with self.table.streams.hold(principal.name):
            await self._stream(scope, receive, send, session)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, session: HttpSession) -> None:
        queue: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        session.stream = queue
        last, epoch = header(scope, b"last-event-id"), session.epoch
        if last is not None and not _elsewhere(last, epoch):
            # Resuming: what this stream sent after that event, still in the buffer.
            after = _event_number(last, epoch)
            replay = [item for item in session.buffer if after is not None and item[0] > after]
        else:  # new, or resuming what another process sent (this one has none of it): what waits here
            replay = list(session.undelivered)
        session.undelivered.clear()
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        # Every revision is told when to reconnect: a client that gives up after a few tries (the SDK's, twice)
        # then outlasts a replica's restart (``stream_retry_seconds``).
        retry = round(self.options.stream_retry_seconds * 1000)
        opening = b"retry: %d\n\n" % retry
        if session.legacy.revision.sse_priming:
            # The id to resume from is unique: it names the position and this stream.
            position = replay[-1][0] if replay else session.next_event
            opening = sse_priming(f"g{position}{epoch}-{session.stream_id()}", retry)
        opening += b"".join(sse_event(data, f"g{number}{epoch}") for number, data in replay)
        await send({"type": "http.response.body", "body": opening, "more_body": True})
        session.resumed()  # when taken up here: what it may have missed elsewhere is said again
        try:
            await stream_queue(send, receive, queue, lambda item: sse_event(item[1], f"g{item[0]}{epoch}"))
        except OSError:
            return
        finally:
            if session.stream is queue:
                session.stream = None
            session.last_seen = time.monotonic()

    async def _delete(self, scope: Scope, send: Send, principal: Principal) -> None:
        self.table.end_session(self._session(scope, principal))
        await respond(send, 200, b"", None)


async def _health(scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
    await respond(send, 200, b"ok", b"text/plain")


def _check_post(headers: dict[bytes, bytes]) -> None:
    """A POST's Content-Type and Accept, before its body is read (415, 406)."""
    if media_type(headers.get(b"content-type")) != b"application/json":
        raise HttpError(415, "Content-Type must be application/json")
    if not accepts_all(headers.get(b"accept"), b"application/json", b"text/event-stream"):
        raise HttpError(406, "Accept must list both application/json and text/event-stream")


def _unprocessable(messages: list[jsonrpc.Message]) -> bytes | None:
    """The JSON-RPC error answering a body with nothing to process (an empty batch, or only invalid
    messages); None when something in it can be processed."""
    invalid = [m for m in messages if isinstance(m, Invalid)]
    if messages and not (invalid and len(invalid) == len(messages)):
        return None
    error = invalid[0].error if invalid else InvalidRequest("an empty batch is not a request")
    return jsonrpc.encode_error(invalid[0].id if invalid else None, error)


def _event_number(event_id: str, epoch: str = "") -> int | None:
    """The GET-stream position an event id names (``g12`` or a priming ``g12-3``; ``g12.EPOCH`` in a session
    taken up, see ``HttpSession.epoch``); None for others."""
    if event_id.startswith("p"):
        return None  # a POST stream's id: that stream was complete when sent, nothing to replay
    number = event_id.removeprefix("g").split("-", 1)[0].removesuffix(epoch)
    return int(number) if number.isdigit() else None


def _elsewhere(event_id: str, epoch: str) -> bool:
    """Whether ``event_id`` names a GET-stream event this session's process did not send: of another epoch."""
    if not event_id.startswith("g"):
        return False
    number = event_id[1:].split("-", 1)[0]
    return number.partition(".")[1:] != tuple(epoch.partition(".")[1:])


def _store_api(server: PromptServer, write_scope: str) -> StoreApi | None:
    from ...sources.store.source import StoreSource
    from ..web.store_api import StoreApi

    stored = [source for source in server.sources if isinstance(source, StoreSource)]
    return StoreApi(server, stored[0], write_scope) if stored else None


def _store_metrics(server: PromptServer) -> StoreMetrics:
    from ..security.store_metrics import StoreMetrics

    return StoreMetrics(server.sources)


def create_app(server: PromptServer, *, auth: Authenticator | None = None, metadata: tuple[str, bytes] | None = None,
               signin: SignIn | None = None, streams: Quota | None = None, **settings: Any) -> StreamableHttpApp:
    """The ASGI app serving ``server`` over Streamable HTTP; ``settings`` are ``HttpOptions`` fields."""
    for name in ("allowed_hosts", "allowed_origins"):
        if name in settings:
            settings[name] = frozenset(settings[name])
    return StreamableHttpApp(server, HttpOptions(**settings), auth=auth, metadata=metadata, signin=signin,
                             streams=streams)
