"""One legacy MCP session: the lifecycle, negotiation, and the methods of the legacy era.

A request whose ``_meta`` names a protocol version belongs to the 2026-07-28
era and is handed to ``server.modern`` (see ``modern.py``) whatever state the
session is in, so one stdio process serves clients of both eras. Every method is
declared once in ``methods.py``; this module adds what only a session has: the
lifecycle and its checks, negotiation, the log level, what it follows of the
resources, and cancellation of its requests in flight (``LegacyTurn`` is this
era's side of a request there).

Transport-neutral: ``handle`` takes a decoded message and returns an
``outcome`` (an ``Answer``, a ``Pending`` render, or None when nothing is
answered). Notifications that belong to a request (progress) go to the
``related`` callback the transport passes in; the rest (list_changed, log
messages) go to ``notify``.

From 2025-06-18, a session whose client declared form elicitation asks it for
a prompt's missing arguments (``elicit``): the ``elicitation/create`` request
goes to the ``ask`` callback the transport passes in (the request's own stream,
at once), and the client's response comes back to ``handle``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..prompts.usage import UNKNOWN, client_name
from ..protocol import jsonrpc
from ..protocol.errors import InvalidRequest, McpError, MethodNotFound
from ..protocol.jsonrpc import Invalid, Notification, Request, RequestId, Response
from ..protocol.lifecycle import Lifecycle, State
from ..protocol.revisions import LATEST, Revision, modern_meta, negotiate
from . import handlers, params
from .handlers import PROMPTS_LIST_CHANGED, Send
from .methods import LEGACY, Method, offered
from .outcome import Outcome, Pending, answer, failed

# ``modern`` (the 2026-07-28 era, with its requestState keys) and ``tools`` (serve --tools) are imported when
# a session first needs them: a legacy stdio client never does, and start-up is what it waits for (issue 29).
if TYPE_CHECKING:
    import asyncio

    from ..prompts.catalog import Catalog
    from ..prompts.spec import Offered
    from .elicit import Questions
    from .modern import ModernEndpoint, Subscription
    from .resources import Follows
    from .served import Served
    from .tools import Call

log = logging.getLogger("promptdeck.server")

if TYPE_CHECKING:
    class LegacyServed(Served, Protocol):
        """What a legacy session reads of its server: a ``Served``, and the 2026-07-28 endpoint that answers
        the modern requests a stdio connection or a legacy session carries."""

        @property
        def modern(self) -> ModernEndpoint: ...

        #: how long a session waits for its client to fill in a form for missing arguments
        elicit_seconds: float

_PY_LEVEL = {"debug": 10, "info": 20, "notice": 25, "warning": 30, "error": 40, "critical": 50,
             "alert": 50, "emergency": 50}

class LegacySession:
    """State of one client that began with ``initialize`` (2024-11-05 … 2025-11-25)."""

    def __init__(self, server: LegacyServed, notify: Send, *, announces: bool = True) -> None:
        self.server = server
        self.notify = notify
        #: whether anything the server says on its own can reach this client, and its answers this session (a
        #: stateless HTTP session has no stream for it): only then is prompts.listChanged offered, or a form sent
        self.announces = announces
        self.lifecycle = Lifecycle()
        self.log_level: int | None = None
        #: the tasks of renders still running, by request id: what notifications/cancelled cancels
        self.in_flight: dict[RequestId, asyncio.Task[Any]] = {}
        #: the scopes of who is asking; None (stdio) sees every prompt
        self.scopes: frozenset[str] | None = None
        #: who is asking (the author of what the write tools record): a transport sets its principal's name
        self.principal = "local"
        #: what keeps this session's renders on one version of a rollout when a request names no key: the
        #: authenticated principal, else the session (a transport sets it; None: no split without a key)
        # os.urandom, not secrets: secrets would bring hashlib and random onto the stdio handshake (tests/test_api.py)
        self.sticky: str | None = f"session:{os.urandom(12).hex()}"
        #: its ``clientInfo.name`` as usage counts it (``prompts.usage.client_name``)
        self.client = UNKNOWN
        #: open 2026-07-28 subscriptions on this connection, by listen request id
        self.subscriptions: dict[RequestId, Subscription] = {}
        #: what it follows of the resources: the list once it has read it, the URIs it subscribed to
        self.follows: Follows | None = None
        #: whether the client may be asked for missing arguments: it declared form elicitation (2025-06-18 on)
        self.elicits = False
        #: the questions (elicitation/create) waiting for the client's answers; made when it is first asked
        self._questions: Questions | None = None

    @property
    def catalog(self) -> Catalog:
        """The prompts this session may see: a prompt it may not see answers like an unknown one."""
        return self.server.catalog.view(self.scopes)

    @property
    def revision(self) -> Revision:
        return self.lifecycle.revision or LATEST

    def list_changed(self, tools: bool) -> None:
        """(A ``Listener``.) The prompt list changed, and the tool list too when ``tools``: say so, once the
        session is initialized."""
        if self.lifecycle.revision is not None:
            self.notify(PROMPTS_LIST_CHANGED)
            if tools and self.server.tools is not None:
                from .tools import TOOLS_LIST_CHANGED

                self.notify(TOOLS_LIST_CHANGED)

    # -- entry points -------------------------------------------------------------------------

    def handle_bytes(self, data: bytes, related: Send, admit: Callable[[Request], McpError | None] | None = None,
                     ask: Send | None = None) -> Outcome | list[Outcome]:
        """Decode a frame and handle it; a batch gives a list of outcomes, one per message
        (``outcome.join`` makes them one answer). ``admit`` is asked about each request of a batch in
        order (a rate limit): a request it gives an error for is answered with that error and not run.
        ``ask`` sends, at once, a request this session makes of its client while it answers the frame
        (``related`` when None: a transport that writes related messages as they come)."""
        try:
            decoded = jsonrpc.decode(data)
        except McpError as exc:
            return failed(None, "", exc)
        if isinstance(decoded, list):
            if not decoded:
                return failed(None, "", InvalidRequest("an empty batch is not a request"))
            if not self.revision.batches or self.lifecycle.revision is None:
                return failed(None, "", InvalidRequest(
                    f"JSON-RPC batches are only accepted in 2025-03-26 sessions, not {self.revision.version}"))
            if any(isinstance(m, Request) and m.method == "initialize" for m in decoded):
                return failed(None, "", InvalidRequest("initialize must not be part of a batch"))
            if admit is None:
                return [self.handle(m, related) for m in decoded]
            return [self._admitted(m, related, admit) for m in decoded]
        return self.handle(decoded, related, ask)

    def _admitted(self, msg: jsonrpc.Message, related: Send, admit: Callable[[Request], McpError | None]) -> Outcome:
        if isinstance(msg, Request):
            refused = admit(msg)
            if refused is not None:
                return failed(msg.id, msg.method, refused)
        return self.handle(msg, related)

    def handle(self, msg: jsonrpc.Message, related: Send, ask: Send | None = None) -> Outcome:
        if isinstance(msg, Request):
            return self._request(msg, related, ask)
        if isinstance(msg, Notification):
            self._notification(msg)
            return None
        if isinstance(msg, Invalid):
            return failed(msg.id, "", msg.error)
        if isinstance(msg, Response):
            # The answer to a question this session asked (elicitation/create); any other one is ignored.
            if self._questions is not None:
                self._questions.answer(msg)
            return None
        raise AssertionError(msg)  # pragma: no cover

    def resume(self, revision: Revision, elicits: bool) -> None:
        """Become a session initialized with ``revision`` and ready, that elicits when ``elicits``: one taken
        up on another HTTP replica from what its id says (``http.session_ids``), as ``begin`` made it."""
        self.assume(revision)
        self.elicits = self.announces and elicits
        self.server.listeners.add(self)

    def assume(self, revision: Revision) -> None:
        """Act as an initialized session of ``revision`` without a handshake (stateless HTTP)."""
        self.lifecycle.initialize(revision)
        self.lifecycle.fire("initialized")

    def close(self) -> None:
        for subscription in self.subscriptions.values():
            self.server.listeners.discard(subscription)
            # 2026-07-28 on stdio: a subscription the server tears down is ended with notifications/cancelled.
            subscription.send(subscription.cancelled())
        self.subscriptions.clear()
        self.hung_up("the session closed")
        self.lifecycle.fire("close")
        for task in list(self.in_flight.values()):
            task.get_loop().call_soon_threadsafe(task.cancel)
        self.server.listeners.discard(self)

    def hung_up(self, reason: str = "the client has gone") -> None:
        """The client can answer no more (its input closed): questions still waiting fail now, not at their
        time limit."""
        if self._questions is not None:
            self._questions.close(reason)

    @property
    def questions(self) -> Questions:
        if self._questions is None:
            from .elicit import Questions

            self._questions = Questions(self.server.elicit_seconds)
        return self._questions

    # -- requests ------------------------------------------------------------------------------

    def _request(self, req: Request, related: Send, ask: Send | None = None) -> Outcome:
        meta = modern_meta(req.params)
        if meta is not None:
            return self._modern(req, meta, related)
        try:
            self.lifecycle.check_request(req.method)
        except McpError as exc:
            return failed(req.id, req.method, exc)
        method = offered(req.method, LEGACY)
        if method is None:
            return failed(req.id, req.method, MethodNotFound(f"method {req.method!r} is not offered by this server"))
        # A method that may ask (``Method.asks``) is given ``ask`` when the client declared form elicitation.
        turn = LegacyTurn(self, related, (ask or related) if self.elicits and method.asks else None)
        outcome: Outcome = answer(req, _run, method, turn, req.params)
        if type(outcome) is Pending:
            outcome.track(self.in_flight)
        return outcome

    def _modern(self, req: Request, meta: dict[str, Any], related: Send) -> Outcome:
        endpoint = self.server.modern
        try:
            ctx = endpoint.open(req, meta, self.principal, self.scopes, self.sticky)
        except McpError as exc:
            return failed(req.id, req.method, exc)
        outcome = endpoint.handle(req, ctx, related, self.notify)
        from .modern import Subscription  # loaded with the endpoint

        if isinstance(outcome, Subscription):
            if outcome.follows is not None:
                outcome.follows.settle(self.server.resources)  # no event loop here: stdio
            related(outcome.acknowledgement())  # before anything else on the subscription
            self.subscriptions[req.id] = outcome
            self.server.listeners.add(outcome)
            return None  # the listen request is answered only when the subscription ends
        if type(outcome) is Pending:
            outcome.track(self.in_flight)  # notifications/cancelled reaches it on stdio too
        return outcome

    def following(self) -> Follows:
        """What it follows of the resources, made when it first follows anything."""
        if self.follows is None:
            from .resources import Follows

            self.follows = Follows(self.scopes, self.notify)
        return self.follows

    # -- notifications -------------------------------------------------------------------------

    def _notification(self, note: Notification) -> None:
        if note.method == "notifications/initialized":
            self.lifecycle.fire("initialized")
        elif note.method == "notifications/cancelled":
            request_id = (note.params or {}).get("requestId")
            task = self.in_flight.pop(request_id, None) if isinstance(request_id, int | str) else None
            if task is not None:
                # The task may run on another thread's loop (the stdio server's async runner).
                task.get_loop().call_soon_threadsafe(task.cancel)
            subscription = self.subscriptions.pop(request_id, None) if isinstance(request_id, int | str) else None
            if subscription is not None:
                self.server.listeners.discard(subscription)  # the client ended its subscription
        # Anything else (progress, roots changes, unknown methods) needs no answer and is ignored.

    def log_to_client(self, level: int, name: str, data: Any) -> None:
        """Forward a log record if the client asked for this level (logging/setLevel)."""
        if self.log_level is None or level < self.log_level or self.lifecycle.state is State.CLOSED:
            return
        wire = "debug" if level < 20 else "info" if level < 30 else "warning" if level < 40 else \
            "error" if level < 50 else "critical"
        self.notify(jsonrpc.encode_notification("notifications/message",
                                                {"level": wire, "logger": name, "data": data}))


def _run(method: Method, turn: LegacyTurn, raw: dict[str, Any] | None) -> Any:
    return method.handler(turn, method.prepare(turn, raw))


class LegacyTurn:
    """One request of a legacy session, as ``methods`` handlers see it (a ``methods.LegacyTurn``): the session's
    view and lifecycle, where its related messages go, and ``ask`` when it may ask its client for arguments."""

    __slots__ = ("session", "server", "related", "ask")

    def __init__(self, session: LegacySession, related: Send, ask: Send | None) -> None:
        self.session = session
        self.server = session.server
        self.related = related
        self.ask = ask

    @property
    def revision(self) -> Revision:
        return self.session.revision

    @property
    def scopes(self) -> frozenset[str] | None:
        return self.session.scopes

    @property
    def principal(self) -> str:
        return self.session.principal

    @property
    def sticky(self) -> str | None:
        return self.session.sticky

    @property
    def announces(self) -> bool:
        return self.session.announces

    def client(self, meta: object) -> str:
        return self.session.client

    @property
    def catalog(self) -> Catalog:
        return self.session.catalog

    def page(self) -> tuple[dict[str, Any] | None, str]:
        return None, ""  # a legacy page is the list alone

    def follows(self) -> Follows | None:
        # A client that has read the list is told when it changes (from what its last first page showed).
        return self.session.following() if self.session.announces else None

    def following(self) -> Follows:
        return self.session.following()

    def unfollow(self, uri: str) -> None:
        if self.session.follows is not None:
            self.session.follows.uris.pop(uri, None)

    def begin(self, p: params.Initialize) -> Revision:
        session = self.session
        rev = negotiate(p.protocol_version)
        session.lifecycle.initialize(rev)
        session.elicits = session.announces and rev.elicits_forms(p.capabilities)
        info = p.client_info
        session.client = client_name(info.get("name") if isinstance(info, dict) else None)
        self.server.listeners.add(session)
        return rev

    def set_level(self, level: str) -> None:
        self.session.log_level = _PY_LEVEL[level]

    def get(self, prompt: Offered, p: params.GetPrompt) -> Any:
        if self.ask is not None:
            from . import elicit

            return elicit.get(self.server, self.session.questions, prompt, p.arguments, p.meta, self.revision,
                              self.related, self.ask)
        return handlers.render(self.server, prompt, p.arguments, p.meta, self.revision, self.related)

    def call(self, call: Call, catalog: Catalog, p: params.CallTool) -> Any:
        if self.ask is not None:
            from . import elicit

            return elicit.call(self.server, self.session.questions, catalog, call, p.meta, self.revision,
                               self.related, self.ask)
        from . import tools

        return tools.run(self.server, catalog, call, p.meta, self.revision, self.related)
