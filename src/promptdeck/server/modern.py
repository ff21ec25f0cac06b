"""The 2026-07-28 era: stateless requests that carry their version and capabilities in ``_meta``.

A request is modern when ``params._meta`` names ``io.modelcontextprotocol/protocolVersion``;
everything else belongs to a legacy session (``session.py``). Transports route
each request here or there, so one stdio process or one HTTP endpoint serves
both eras. Nothing here depends on an earlier request: ``open`` checks the
request's own ``_meta`` (version, capabilities, log level) and every result
carries ``resultType`` and the server's identity.

``prompts/get`` may answer ``input_required``: a client that declared
elicitation and left out required arguments is sent a form for them, with a
signed ``requestState`` (see ``request_state``) that its retry must echo.
``subscriptions/listen`` returns a ``Subscription`` that the transport keeps
open: acknowledged first, then list_changed for as long as it lives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..prompts.arguments import Argument, bind
from ..prompts.execution import when_ready
from ..prompts.forms import answered, form, missing
from ..protocol import jsonrpc
from ..protocol.errors import InvalidParams, MethodNotFound, UnsupportedVersion
from ..protocol.jsonrpc import Request, RequestId
from ..protocol.revisions import META_VERSION, MODERN, NEWEST_MODERN, PREFIX, SUPPORTED, Revision
from . import handlers, tools
from .handlers import LOG_LEVELS, SKILLS_EXTENSION, Send
from .outcome import Outcome, answer, failed
from .request_state import RequestStates, request_digest

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.resources import ResourceCatalog, Sight
    from ..prompts.skill_catalog import SkillCatalog
    from ..prompts.spec import Prompt
    from .resources import Follows
    from .served import Served
    from .tools import PromptTools

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

    def plain_get(self, req: Request, meta: dict[str, Any], scopes: frozenset[str] | None) -> bytes | None:
        """The encoded answer to the common ``prompts/get`` in one pass: a plain prompt (``Prompt.plain``)
        ready to read, given its arguments, with no request state, form or progress to handle.

        It checks what ``open`` and ``handle`` check and makes the same bytes. None for any other request, one
        that fails included: nothing here has an effect, so the caller then answers it as any other (``open``,
        ``handle``), from the start, and that path says what went wrong.
        """
        params = req.params
        if params is None or "requestState" in params or "inputResponses" in params or "progressToken" in meta:
            return None
        version = meta.get(META_VERSION)
        capabilities = meta.get(META_CAPABILITIES)
        level = meta.get(META_LOG_LEVEL)
        if type(version) is not str or version not in MODERN or type(capabilities) is not dict or \
                (level is not None and level not in LOG_LEVELS):
            return None
        name = params.get("name")
        given = params.get("arguments")
        if type(name) is not str or (given is not None and type(given) is not dict):
            return None
        forms = MODERN[version].elicits_forms(capabilities)
        try:
            prompt = self.server.catalog.view(scopes).get(name)
            if prompt is None or prompt.unprepared() is not None or prompt.plain is None \
                    or name in self.server.rolling_out():
                return None  # a rollout's choice needs the request's key: the general path
            if forms and missing(prompt.arguments, given or {}):
                return None  # a form to send: see _inputs
            values = bind(prompt.arguments, given, name)
            messages = []
            for role, template in prompt.plain:
                text = template.render(values)
                if text.strip():  # as render_blocks: a message whose text renders blank is left out
                    messages.append({"role": role, "content": {"type": "text", "text": text}})
        except Exception:
            return None  # an argument refused, a render fault, a store that failed: the general path says which
        result: dict[str, Any] = {} if prompt.description is None else {"description": prompt.description}
        result["messages"] = messages
        served = handlers.served_meta(prompt)
        if served:
            result["_meta"] = served
        return jsonrpc.encode_result(req.id, self._envelope(result))

    def handle(self, req: Request, ctx: Context, related: Send, send: Send | None = None) -> Outcome | Subscription:
        """An ``outcome`` for the request, or a ``Subscription`` for listen.

        ``send`` is where a subscription's later messages go (the stdio output); HTTP passes
        none and streams them itself.
        """
        if req.method == "subscriptions/listen":
            listened: Outcome | Subscription = answer(req, self._listen, req, ctx, send or related)
            return listened
        handler = METHODS.get(req.method)
        if handler is None:
            return failed(req.id, req.method,
                          MethodNotFound(f"method {req.method!r} is not offered by this server", http_status=404))
        outcome: Outcome = answer(req, handler, self, req.params or {}, req, ctx, related)
        return outcome

    def _envelope(self, result: dict[str, Any], kind: str = "complete") -> dict[str, Any]:
        result["resultType"] = kind
        own = result.get("_meta")  # a result's own (--text-resources says how many blocks went as text)
        result["_meta"] = self._meta if own is None else {**own, **self._meta}
        return result

    @property
    def _meta(self) -> dict[str, Any]:
        # The server's identity does not change while it runs: made once, encoded into every result.
        if self._meta_cache is None:
            self._meta_cache = {META_SERVER_INFO: self.server.server_info(NEWEST_MODERN)}
        return self._meta_cache

    def _cache_scope(self, restricted: bool | None = None) -> str:
        # One scope for a whole listing: private whenever what is listed depends on who asks (by default, as
        # the prompts do; the resources and skills methods say whether their answers do).
        return "private" if (self.server.catalog.restricted if restricted is None else restricted) else "public"

    def _discover(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        capabilities: dict[str, Any] = {"prompts": {"listChanged": True}, "completions": {}}
        if self.server.tools is not None:
            capabilities["tools"] = {"listChanged": True}
        if self.server.offers_resources:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if self.server.offers_skills:
            capabilities["extensions"] = {SKILLS_EXTENSION: {"directoryRead": True}}
        result: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED),
            "capabilities": capabilities,
            "ttlMs": self.ttl_ms,
            "cacheScope": self._cache_scope(),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return self._envelope(result)

    def _page_fields(self, restricted: bool | None = None) -> tuple[dict[str, Any], str]:
        """The fields every modern list page carries, and the key they are cached under with the page."""
        scope = self._cache_scope(restricted)
        extra = {"ttlMs": self.ttl_ms, "cacheScope": scope, "resultType": "complete", "_meta": self._meta}
        return extra, f"modern:{self.ttl_ms}:{scope}"

    def _list(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        # Pages are encoded once per catalog snapshot, with the fields every modern page carries.
        return handlers.list_prompts(self._catalog(ctx), ctx.revision, params, *self._page_fields())

    def _complete(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        result = handlers.complete(self.server, self._catalog(ctx), params)
        return self._envelope(result) if isinstance(result, dict) else self._enveloped(result)

    def _catalog(self, ctx: Context) -> Catalog:
        return self.server.catalog.view(ctx.scopes)

    def _get(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        prompt, given = handlers.find_prompt(self._catalog(ctx), params)
        prompt = handlers.split(self.server, prompt, params, ctx.sticky)
        # Whether to ask for arguments reads them: a stored prompt's file is parsed first, off the loop.
        return when_ready(prompt, lambda: self._get_ready(prompt, given, params, ctx, related))

    def _get_ready(self, prompt: Prompt, given: dict[str, Any] | None, params: dict[str, Any], ctx: Context,
                   related: Send) -> Any:
        arguments = dict(given or {})
        asked = self._inputs("prompts/get", prompt.name, given, prompt, arguments, params, ctx)
        if asked is not None:
            return asked
        # Ready already (``_get`` waited for it): rendered without asking ``when_ready`` a second time.
        result = handlers.render_ready(self.server, prompt, arguments, params, ctx.revision, related)
        return self._envelope(result) if isinstance(result, dict) else self._enveloped(result)

    def _inputs(self, method: str, name: str, given: dict[str, Any] | None, prompt: Prompt,
                arguments: dict[str, Any], params: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
        """Add to ``arguments`` what an answered form carries; an input_required result when required
        arguments are still missing and the client can be asked for them (None: render now).

        The state is bound to the method, the name it was asked of (a prompt or a tool) and what was given.
        """
        # The digest (canonical JSON and SHA-256, ~4 us) is made only when a state is redeemed or issued: most
        # requests carry none and ask for nothing (issue 29).
        state = params.get("requestState")
        responses = params.get("inputResponses")
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
            return self._envelope({
                "inputRequests": {ARGUMENTS_INPUT: {"method": "elicitation/create", "params": form(prompt.name,
                                                                                                     asked)}},
                "requestState": self.states.issue(ctx.principal, request_digest(method, name, given)),
            }, "input_required")
        return None

    def _tools(self, method: str) -> PromptTools:
        if self.server.tools is None:
            raise MethodNotFound(f"method {method!r} is not offered by this server (serve --tools offers it)",
                                 http_status=404)
        return self.server.tools

    def _list_tools(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        return tools.list_tools(self._tools(req.method).of(self._catalog(ctx)), ctx.revision, params,
                                *self._page_fields())

    def _call_tool(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        catalog = self._catalog(ctx)
        call = tools.prepare(catalog, self._tools(req.method).of(catalog), params)
        if isinstance(call, dict):
            return self._envelope(call)
        if call.prompt is not None:  # a render, as prompts/get's: a rollout's version for its key
            call.prompt = handlers.split(self.server, call.prompt, params, ctx.sticky)
            return when_ready(call.prompt, lambda: self._call_ready(call, catalog, params, ctx, related))
        return self._call_ready(call, catalog, params, ctx, related)

    def _call_ready(self, call: tools.Call, catalog: Catalog, params: dict[str, Any], ctx: Context,
                    related: Send) -> Any:
        if call.prompt is not None:
            asked = self._inputs("tools/call", call.tool, params.get("arguments"), call.prompt, call.given,
                                 params, ctx)
            if asked is not None:
                return asked
        result = tools.run(self.server, catalog, call, params, ctx.revision, related)
        return self._envelope(result) if isinstance(result, dict) else self._enveloped(result)

    async def _enveloped(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        return self._envelope(await pending)

    # -- resources (server/resources.py) --------------------------------------------------------

    def _resources(self, method: str, ctx: Context) -> tuple[ResourceCatalog, Sight]:
        if not self.server.offers_resources:
            raise MethodNotFound(f"method {method!r} is not offered by this server (it serves no resources)",
                                 http_status=404)
        resources = self.server.resources
        return resources, resources.sight(ctx.scopes)

    def _resources_restricted(self) -> bool:
        """Whether what the resource methods answer depends on who asks: the prompts', or the skills'."""
        return self.server.catalog.restricted or (self.server.offers_skills and self.server.skills.restricted)

    def _cached(self, result: dict[str, Any], restricted: bool | None = None) -> dict[str, Any]:
        """A cacheable result (a read, the templates, a folder): ``ttlMs`` and ``cacheScope`` as a listing's."""
        result["ttlMs"] = self.ttl_ms
        result["cacheScope"] = self._cache_scope(self._resources_restricted() if restricted is None else restricted)
        return self._envelope(result)

    def _list_resources(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        from . import resources as methods

        resources, sight = self._resources(req.method, ctx)
        return methods.list_resources(resources, sight, ctx.revision, params,
                                      *self._page_fields(self._resources_restricted()))

    def _read_resource(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        from . import resources as methods

        result = methods.read_resource(*self._resources(req.method, ctx), ctx.revision, params, ctx.principal)
        return self._cached(result) if isinstance(result, dict) else self._cached_later(result)

    async def _cached_later(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        return self._cached(await pending)

    def _list_templates(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        from . import resources as methods

        return self._cached(methods.list_templates(self._resources(req.method, ctx)[0], ctx.revision, params))

    # -- skills (the skills extension, SEP-2640: prompts/skill_catalog.py) ----------------------

    def _skills(self, method: str) -> SkillCatalog:
        if not self.server.offers_skills:
            raise MethodNotFound(f"method {method!r} is not offered by this server (it serves no skills)",
                                 http_status=404)
        return self.server.skills

    def _list_skills(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        skills = self._skills(req.method)
        return skills.page(ctx.scopes, params.get("cursor"), *self._page_fields(skills.restricted))

    def _get_skill(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        # GetSkillResult extends CacheableResult in the extension's final text: ttlMs and cacheScope are
        # required, as on resources/read, and the scope follows who may see the skills.
        skills = self._skills(req.method)
        return self._cached(skills.get(params.get("uri"), ctx.scopes), skills.restricted)

    def _read_directory(self, params: dict[str, Any], req: Request, ctx: Context, related: Send) -> Any:
        skills = self._skills(req.method)
        result = skills.directory(params.get("uri"), ctx.scopes, ctx.revision, params.get("cursor"))
        return self._cached(result, skills.restricted)

    def _listen(self, req: Request, ctx: Context, send: Send) -> Subscription:
        params = req.params or {}
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            # A required field missing: 400 over HTTP, as for a missing _meta field.
            raise InvalidParams('subscriptions/listen needs a "notifications" object', http_status=400)
        # A library whose loading was deferred (stdio) is loaded now: a change can only be noticed,
        # and told, against a listing that exists.
        self.server.catalog  # noqa: B018
        subscription = Subscription(req.id, wanted.get("promptsListChanged") is True, send,
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


#: The methods of the 2026-07-28 era, by name (``subscriptions/listen`` opens a stream: see ``handle``).
METHODS: dict[str, Callable[[ModernEndpoint, dict[str, Any], Request, Context, Send], Any]] = {
    "server/discover": ModernEndpoint._discover,
    "prompts/list": ModernEndpoint._list,
    "prompts/get": ModernEndpoint._get,
    "completion/complete": ModernEndpoint._complete,
    "tools/list": ModernEndpoint._list_tools,
    "tools/call": ModernEndpoint._call_tool,
    "resources/list": ModernEndpoint._list_resources,
    "resources/read": ModernEndpoint._read_resource,
    "resources/templates/list": ModernEndpoint._list_templates,
    "resources/directory/read": ModernEndpoint._read_directory,
    "skills/list": ModernEndpoint._list_skills,
    "skills/get": ModernEndpoint._get_skill,
    "subscriptions/listen": lambda *_: None,
}
