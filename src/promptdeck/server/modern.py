"""The 2026-07-28 era: stateless requests that carry their version and capabilities in ``_meta``.

A request is modern when ``params._meta`` names ``io.modelcontextprotocol/protocolVersion``;
everything else belongs to a legacy session (``session.py``). Transports route
each request here or there, so one stdio process or one HTTP endpoint serves
both eras. Nothing here depends on an earlier request: ``open`` checks the
request's own ``_meta`` (version, capabilities, log level) and every result
carries ``resultType`` and the server's identity. Every method is declared once in
``methods.py``; this module is the era's envelope (``ModernTurn`` is its side of a request there).

``prompts/get`` may answer ``input_required``: a client that declared
elicitation and left out required arguments is sent a form for them, with a
signed ``requestState`` (see ``request_state``) that its retry must echo.
``subscriptions/listen`` returns a ``Subscription`` that the transport keeps
open: acknowledged first, then list_changed for as long as it lives.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

import msgspec

from ..prompts.arguments import Argument
from ..prompts.execution import when_ready
from ..prompts.forms import answered, form, missing
from ..protocol import jsonrpc
from ..protocol.errors import InvalidParams, McpError, MethodNotFound, UnsupportedVersion
from ..protocol.jsonrpc import Request, RequestId
from ..protocol.revisions import META_VERSION, MODERN, NEWEST_MODERN, PREFIX, SUPPORTED, Revision
from . import handlers, methods, params, tools
from .handlers import LOG_LEVELS, Send
from .methods import Method, Wrap
from .outcome import Outcome, answer, failed
from .request_state import RequestStates, request_digest

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.spec import Offered, Prompt
    from .resources import Follows
    from .served import Served

META_CAPABILITIES = PREFIX + "clientCapabilities"
META_LOG_LEVEL = PREFIX + "logLevel"
META_SERVER_INFO = PREFIX + "serverInfo"
META_SUBSCRIPTION = PREFIX + "subscriptionId"
DEFAULT_TTL_MS = 60_000
#: The key of the one input request promptdeck makes: a form for the missing arguments.
ARGUMENTS_INPUT = "arguments"



class Context:
    """What one modern request says about itself and who sent it."""

    __slots__ = ("revision", "capabilities", "principal", "scopes", "sticky")

    def __init__(self, revision: Revision, capabilities: dict[str, Any], principal: str,
                 scopes: frozenset[str] | None, sticky: str | None = None) -> None:
        self.revision = revision
        self.capabilities = capabilities
        self.principal = principal
        self.scopes = scopes
        #: the rollout key when the request names none: the authenticated principal, or the stdio session
        self.sticky = sticky

    @property
    def elicits_forms(self) -> bool:
        return self.revision.elicits_forms(self.capabilities)


class Subscription:
    """An open ``subscriptions/listen``: what it asked for and where its messages go."""

    def __init__(self, request_id: RequestId, prompts: bool, send: Send,
                 server_info: dict[str, Any] | None = None, tools: bool = False) -> None:
        self.id = request_id
        self.prompts = prompts
        self.tools = tools
        self.send = send
        #: what every message of the subscription carries: its id
        self.meta: dict[str, Any] = {META_SUBSCRIPTION: request_id}
        self._server_info = server_info
        #: the resources it follows (``resourcesListChanged``, ``resourceSubscriptions``), or None
        self.follows: Follows | None = None

    def acknowledgement(self) -> bytes:
        honoured: dict[str, Any] = {}
        if self.prompts:
            honoured["promptsListChanged"] = True
        if self.tools:
            honoured["toolsListChanged"] = True
        if self.follows is not None:
            if self.follows.listing:
                honoured["resourcesListChanged"] = True
            if self.follows.uris:
                honoured["resourceSubscriptions"] = list(self.follows.uris)
        return jsonrpc.encode_notification("notifications/subscriptions/acknowledged",
                                           {"notifications": honoured, "_meta": self.meta})

    def list_changed(self, tools: bool = False) -> None:
        """The prompt list changed (and the tool list too, when ``tools``): tell what was asked for."""
        if self.prompts:
            self.send(jsonrpc.encode_notification("notifications/prompts/list_changed", {"_meta": self.meta}))
        if tools and self.tools:
            self.send(jsonrpc.encode_notification("notifications/tools/list_changed", {"_meta": self.meta}))

    def ending(self) -> bytes:
        """The listen request's result: the subscription ended gracefully (server shutdown)."""
        meta: dict[str, Any] = dict(self.meta)
        if self._server_info is not None:
            meta[META_SERVER_INFO] = self._server_info  # like every other result
        return jsonrpc.encode_result(self.id, {"resultType": "complete", "_meta": meta})

    def cancelled(self) -> bytes:
        """On stdio, a server-side teardown is also announced with notifications/cancelled.

        Like every message of a subscription, it carries the subscription id in ``_meta``.
        """
        return jsonrpc.encode_notification("notifications/cancelled", {"requestId": self.id, "_meta": self.meta})


P = TypeVar("P", bound=params.Params)


class PlainCall(msgspec.Struct, Generic[P], frozen=True, gc=False):
    """A request as ``jsonrpc.decode`` reads it, its params already the method's struct (``Method.prepare``'s):
    the one-pass answer decodes the body once, straight into this, rather than into dicts it then converts."""

    jsonrpc: Literal["2.0"]
    id: int | str
    method: str
    params: P


#: The envelope of each method that has a one-pass answer, typed with its params.
_PLAIN_CALLS: dict[str, msgspec.json.Decoder[Any]] = {
    method.name: msgspec.json.Decoder(cast(Any, PlainCall)[method.params])
    for method in methods.METHODS.values() if method.plain is not None}


class ModernEndpoint:
    """Answers modern requests for one server (a ``Served``: ``PromptServer``)."""

    def __init__(self, server: Served, *, ttl_ms: int = DEFAULT_TTL_MS,
                 states: RequestStates | None = None) -> None:
        if ttl_ms < 0:
            raise ValueError("ttl_ms must not be negative")
        self.server = server
        self.ttl_ms = ttl_ms
        self.states = states or RequestStates()
        self._meta_cache: dict[str, Any] | None = None

    # -- checks that come before any method ----------------------------------------------------

    def open(self, req: Request, meta: dict[str, Any] | None, principal: str,
             scopes: frozenset[str] | None, sticky: str | None = None) -> Context:
        """Check the request's ``_meta`` (``modern_meta``'s); an ``McpError`` here carries its HTTP status (400)."""
        version = meta.get(META_VERSION) if meta is not None else None
        if not isinstance(version, str):
            raise InvalidParams(f'_meta must carry "{META_VERSION}" (a string)', http_status=400)
        revision = MODERN.get(version)
        if revision is None:
            raise UnsupportedVersion(f"protocol version {version!r} is not supported",
                                     {"supported": list(SUPPORTED), "requested": version})
        assert meta is not None
        capabilities = meta.get(META_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise InvalidParams(f'_meta must carry "{META_CAPABILITIES}" (an object)', http_status=400)
        level = meta.get(META_LOG_LEVEL)
        if level is not None and level not in LOG_LEVELS:
            raise InvalidParams(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}", http_status=400)
        return Context(revision, capabilities, principal, scopes, sticky)

    # -- answering -----------------------------------------------------------------------------

    def plain_call(self, name: str, body: bytes) -> PlainCall[Any] | None:
        """``body`` decoded straight into the envelope of method ``name``'s one-pass answer (``Method.plain``),
        when it is a request for that method whose params decode as its struct; None for anything else."""
        decoder = _PLAIN_CALLS.get(name)
        if decoder is None:
            return None
        try:
            call = decoder.decode(body)
        except (msgspec.DecodeError, RecursionError, UnicodeError):  # not that shape: the general path
            return None
        return call if call.method == name else None

    def plain_get(self, call: PlainCall[Any], meta: dict[str, Any], scopes: frozenset[str] | None) -> bytes | None:
        """The encoded answer to the common ``prompts/get`` in one pass (``methods.plain_get``): a plain prompt
        ready to read, given its arguments, with no request state, form or progress to handle.

        It checks what ``open`` and ``handle`` check and makes the same bytes. None for any other request, one
        that fails included: nothing here has an effect, so the caller then answers it as any other (``open``,
        ``handle``), from the start, and that path says what went wrong.
        """
        method = methods.METHODS[call.method]
        if method.plain is None or "progressToken" in meta:
            return None
        version = meta.get(META_VERSION)
        capabilities = meta.get(META_CAPABILITIES)
        level = meta.get(META_LOG_LEVEL)
        if type(version) is not str or version not in MODERN or type(capabilities) is not dict or \
                (level is not None and level not in LOG_LEVELS):
            return None
        if method.feature is not None:
            try:
                method.guard(self.server)
            except McpError:
                return None
        result = method.plain(self.server, scopes, call.params, MODERN[version].elicits_forms(capabilities))
        return None if result is None else jsonrpc.encode_result(call.id, self._envelope(result))

    def handle(self, req: Request, ctx: Context, related: Send, send: Send | None = None) -> Outcome | Subscription:
        """An ``outcome`` for the request, or a ``Subscription`` for listen.

        ``send`` is where a subscription's later messages go (the stdio output); HTTP passes
        none and streams them itself.
        """
        method = methods.offered(req.method, methods.MODERN)
        if method is None:
            return failed(req.id, req.method,
                          MethodNotFound(f"method {req.method!r} is not offered by this server", http_status=404))
        outcome: Outcome | Subscription = answer(req, self._run, ModernTurn(self, method, req, ctx, related, send))
        return outcome

    def _run(self, turn: ModernTurn) -> Any:
        method = turn.method
        return self._wrapped(method, method.handler(turn, method.prepare(turn, turn.request.params, 404)))

    def _envelope(self, result: dict[str, Any]) -> dict[str, Any]:
        # Once per result: input_required says so itself (``_inputs``); ``_meta`` merged again is the same.
        result.setdefault("resultType", "complete")
        own = result.get("_meta")  # a result's own (--text-resources says how many blocks went as text)
        result["_meta"] = self._meta if own is None else {**own, **self._meta}
        return result

    @property
    def _meta(self) -> dict[str, Any]:
        # The server's identity does not change while it runs: made once, encoded into every result.
        if self._meta_cache is None:
            self._meta_cache = {META_SERVER_INFO: self.server.server_info(NEWEST_MODERN)}
        return self._meta_cache

    def cache_scope(self, private: bool) -> str:
        # One scope for a whole listing: private whenever what is listed depends on who asks.
        return "private" if private else "public"

    def _wrapped(self, method: Method, result: Any) -> Any:
        """A handler's result in this era's envelope (``Method.wrap``): a page has its fields already."""
        kind = type(result)
        if method.wrap is Wrap.PAGE or kind is bytes:
            return result
        wrap = self._cached_by(method) if method.wrap is Wrap.CACHED else self._envelope
        if kind is dict:
            return wrap(result)
        return self._later(result, wrap) if inspect.isawaitable(result) else result  # a Subscription as it is

    def _cached_by(self, method: Method) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def cached(result: dict[str, Any]) -> dict[str, Any]:
            """A cacheable result (a read, the templates, a skill): ``ttlMs`` and ``cacheScope`` as a listing's."""
            result["ttlMs"] = self.ttl_ms
            result["cacheScope"] = self.cache_scope(method.private(self.server))
            return self._envelope(result)

        return cached

    async def _later(self, pending: Awaitable[Any], wrap: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
        result = await pending
        return wrap(result) if type(result) is dict else result

    def _inputs(self, method: str, name: str, given: dict[str, Any] | None, prompt: Prompt,
                arguments: dict[str, Any], p: params.Asking, ctx: Context) -> dict[str, Any] | None:
        """Add to ``arguments`` what an answered form carries; an input_required result when required
        arguments are still missing and the client can be asked for them (None: render now).

        The state is bound to the method, the name it was asked of (a prompt or a tool) and what was given.
        """
        # The digest (canonical JSON and SHA-256, ~4 us) is made only when a state is redeemed or issued: most
        # requests carry none and ask for nothing (issue 29).
        state = p.request_state
        responses = p.input_responses
        if state is not None:
            self.states.redeem(state, ctx.principal, request_digest(method, name, given))
            # The state is bound to what was given, so the form it answers asked for what that left out.
            arguments.update(_answered(responses, prompt.name, missing(prompt.arguments, arguments)))
        elif responses is not None:
            raise InvalidParams("inputResponses came without the requestState they answer")
        if not ctx.elicits_forms:
            return None  # a client that takes no forms is not asked: its missing arguments fail in the render
        asked = missing(prompt.arguments, arguments)
        if asked:
            return {  # enveloped as every result is (``_wrapped``), keeping its resultType
                "inputRequests": {ARGUMENTS_INPUT: {"method": "elicitation/create", "params": form(prompt.name,
                                                                                                     asked)}},
                "requestState": self.states.issue(ctx.principal, request_digest(method, name, given)),
                "resultType": "input_required",
            }
        return None

    def listen(self, req: RequestId, ctx: Context, send: Send, wanted: dict[str, Any]) -> Subscription:
        """``subscriptions/listen``: a ``Subscription`` to what ``wanted`` names."""
        # A library whose loading was deferred (stdio) is loaded now: a change can only be noticed,
        # and told, against a listing that exists.
        self.server.catalog  # noqa: B018
        subscription = Subscription(req, wanted.get("promptsListChanged") is True, send,
                                    self._meta[META_SERVER_INFO],
                                    self.server.tools is not None and wanted.get("toolsListChanged") is True)
        if self.server.offers_resources:
            self._follow(subscription, wanted, ctx.scopes)
        return subscription

    def _follow(self, subscription: Subscription, wanted: dict[str, Any], scopes: frozenset[str] | None) -> None:
        """What a listen asks to follow of the resources: their list, and URIs (each a string; past
        ``MAX_SUBSCRIBED`` they are left out of the acknowledgement, and not followed). The transport has
        them taken as they are now (``Follows.settle``) before it acknowledges."""
        listing = wanted.get("resourcesListChanged") is True
        uris = wanted.get("resourceSubscriptions")
        uris = [uri for uri in uris if isinstance(uri, str) and uri] if isinstance(uris, list) else []
        if listing or uris:
            from .resources import Follows

            subscription.follows = Follows(scopes, subscription.send, subscription.meta, listing=listing, uris=uris)


def _answered(responses: object, prompt: str, asked: list[Argument]) -> dict[str, str]:
    """The argument values a form answer carries (none when the form was not answered: it is asked again),
    held to the form that asked for ``asked`` as a 2025-11-25 answer is: a cancel or decline is the
    missing-argument error, a field of the wrong type or one not asked for is refused naming it."""
    if not isinstance(responses, dict) or ARGUMENTS_INPUT not in responses:
        return {}
    return answered(responses[ARGUMENTS_INPUT], prompt, asked, partial=True)


class ModernTurn:
    """One 2026-07-28 request as ``methods`` handlers see it (a ``methods.ModernTurn``): its ``Context``, and the
    endpoint's caching fields and forms."""

    __slots__ = ("endpoint", "server", "method", "request", "ctx", "related", "send")

    def __init__(self, endpoint: ModernEndpoint, method: Method, request: Request, ctx: Context, related: Send,
                 send: Send | None) -> None:
        self.endpoint = endpoint
        self.server = endpoint.server
        self.method = method
        self.request = request
        self.ctx = ctx
        self.related = related
        #: where a subscription's later messages go
        self.send = send or related

    @property
    def revision(self) -> Revision:
        return self.ctx.revision

    @property
    def scopes(self) -> frozenset[str] | None:
        return self.ctx.scopes

    @property
    def principal(self) -> str:
        return self.ctx.principal

    @property
    def sticky(self) -> str | None:
        return self.ctx.sticky

    def client(self, meta: object) -> object:
        return handlers.meta_client(meta)

    @property
    def catalog(self) -> Catalog:
        return self.server.catalog.view(self.ctx.scopes)

    @property
    def ttl_ms(self) -> int:
        return self.endpoint.ttl_ms

    def cache_scope(self, private: bool) -> str:
        return self.endpoint.cache_scope(private)

    def page(self) -> tuple[dict[str, Any] | None, str]:
        """The fields every modern list page carries, and the key they are cached under with the page."""
        endpoint = self.endpoint
        scope = endpoint.cache_scope(self.method.private(self.server))
        extra = {"ttlMs": endpoint.ttl_ms, "cacheScope": scope, "resultType": "complete", "_meta": endpoint._meta}
        return extra, f"modern:{endpoint.ttl_ms}:{scope}"

    def follows(self) -> Follows | None:
        return None  # what a request follows is asked for on subscriptions/listen

    def get(self, prompt: Offered, p: params.GetPrompt) -> Any:
        # Whether to ask for arguments reads them: a stored prompt's file is parsed first, off the loop.
        return when_ready(prompt, lambda: self._get_ready(prompt.parsed(), p))

    def _get_ready(self, prompt: Prompt, p: params.GetPrompt) -> Any:
        arguments = dict(p.arguments or {})
        asked = self.endpoint._inputs("prompts/get", prompt.name, p.arguments, prompt, arguments, p, self.ctx)
        if asked is not None:
            return asked
        # Ready already (``get`` waited for it): rendered without asking ``when_ready`` a second time.
        return handlers.render_ready(self.server, prompt, arguments, p.meta, self.revision, self.related)

    def call(self, call: tools.Call, catalog: Catalog, p: params.CallTool) -> Any:
        if call.prompt is not None:
            return when_ready(call.prompt, lambda: self._call_ready(call, catalog, p))
        return self._call_ready(call, catalog, p)

    def _call_ready(self, call: tools.Call, catalog: Catalog, p: params.CallTool) -> Any:
        if call.prompt is not None:
            asked = self.endpoint._inputs("tools/call", call.tool, p.arguments, call.prompt.parsed(), call.given, p,
                                          self.ctx)
            if asked is not None:
                return asked
        return tools.run(self.server, catalog, call, p.meta, self.revision, self.related)

    def listen(self, p: params.Listen) -> Subscription:
        return self.endpoint.listen(self.request.id, self.ctx, self.send, p.notifications)
