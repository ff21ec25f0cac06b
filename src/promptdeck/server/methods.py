"""Every MCP method the server answers, declared once for both eras: the one method table.

A ``Method`` says its name, its params (a struct of ``params``, decoded before the handler runs), its handler,
the eras that offer it, the capability it makes the server declare, the optional feature it needs (its guard:
-32601 naming what offers it when the server lacks it), what it names that is looked up before its other
params are checked (``find``), how a 2026-07-28 result is wrapped, and whether what it answers depends on who
asks. ``Method.prepare`` orders the refusals for both eras: the guard, then the params (a subscription's first).
The eras supply only their envelope:

- a legacy session (``legacy.py``) the lifecycle, negotiation, log level, resource subscriptions, and asking
  its client for missing arguments (``elicit``);
- the 2026-07-28 endpoint (``modern.py``) ``_meta``, ``resultType``, ``ttlMs``/``cacheScope``, input_required
  with its ``requestState``, ``subscriptions/listen``, and the HTTP status of a refusal.

A handler is given a ``Turn`` (one request as its era serves it: who asks, what they may see, and the era's
hooks) and its params. It returns a result dict, pre-encoded result bytes (a list page), or an awaitable of
either, and raises ``McpError``; ``outcome.answer`` makes that the response. The initialize result's
capabilities and ``server/discover``'s are derived from this table (``capabilities``), and so is the fast
``prompts/get`` (``Method.plain``; ``ModernEndpoint.plain_get`` runs it).

To add a method: a params struct in ``params.py`` and a ``Method`` in ``METHODS`` below, with its handler.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ..prompts.execution import off_loop
from ..prompts.usage import NO_ARM
from ..protocol.errors import InvalidParams, MethodNotFound
from ..protocol.revisions import NEWEST_MODERN, SUPPORTED, Revision
from . import handlers, params
from .handlers import META_CLIENT_INFO, SKILLS_EXTENSION, Send

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.spec import Offered
    from .resources import Follows
    from .served import Served
    from .tools import Call, PromptTools

LEGACY = "legacy"
MODERN = "modern"
BOTH = frozenset({LEGACY, MODERN})


class Turn(Protocol):
    """One request as its era serves it (``legacy.LegacyTurn``, ``modern.ModernTurn``)."""

    server: Served
    related: Send

    @property
    def revision(self) -> Revision: ...

    @property
    def scopes(self) -> frozenset[str] | None: ...

    @property
    def principal(self) -> str: ...

    @property
    def sticky(self) -> str | None: ...

    def client(self, meta: object) -> object:
        """Who renders, as usage counts it: the session's ``clientInfo.name`` (legacy), the request's (2026)."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The prompts the asker may see."""
        ...

    def page(self) -> tuple[dict[str, Any] | None, str]:
        """The fields the era adds to a list page, and the key they are cached under with it."""
        ...

    def follows(self) -> Follows | None:
        """What the asker follows of the resources once it has read a list (a legacy session that announces)."""
        ...

    def get(self, prompt: Offered, p: params.GetPrompt) -> Any:
        """Render ``prompt`` as the era does: asking for missing arguments where it may."""
        ...

    def call(self, call: Call, catalog: Catalog, p: params.CallTool) -> Any:
        """Run a tool call as the era does: asking for missing arguments where it may."""
        ...


class LegacyTurn(Turn, Protocol):
    """What a legacy session adds: its lifecycle and what it follows."""

    @property
    def announces(self) -> bool: ...

    def begin(self, p: params.Initialize) -> Revision:
        """Negotiate and start the session's lifecycle; the revision agreed."""
        ...

    def set_level(self, level: str) -> None: ...

    def following(self) -> Follows: ...

    def unfollow(self, uri: str) -> None: ...


class ModernTurn(Turn, Protocol):
    """What the 2026-07-28 endpoint adds: its caching fields and the subscription it opens."""

    @property
    def ttl_ms(self) -> int: ...

    def cache_scope(self, private: bool) -> str: ...

    def listen(self, p: params.Listen) -> Any: ...


# The records are msgspec Structs rather than dataclasses: the table is built as the stdio server starts, and a
# dataclass costs ~0.5 ms to make (with ~1 ms to import its module), a Struct next to nothing.
class Feature(msgspec.Struct, frozen=True):
    """An optional part of the server: the methods that need it are not offered without it."""

    name: str
    offered: Callable[[Served], bool]
    #: what the refusal says offers it
    hint: str


TOOLS = Feature("tools", lambda server: server.tools is not None, "serve --tools offers it")
RESOURCES = Feature("resources", lambda server: server.offers_resources, "it serves no resources")
SKILLS = Feature("skills", lambda server: server.offers_skills, "it serves no skills")


class Capability(msgspec.Struct, frozen=True):
    """A member of the capabilities a server declares (initialize, server/discover), when a method of the era
    that names it is offered."""

    key: str
    value: dict[str, Any]
    #: its value in a session that cannot be told anything (stateless HTTP); None: the same
    quiet: dict[str, Any] | None = None
    #: the revisions that have it (None: all)
    gate: Callable[[Revision], bool] | None = None


PROMPTS_CAP = Capability("prompts", {"listChanged": True}, {})
LOGGING_CAP = Capability("logging", {})
TOOLS_CAP = Capability("tools", {"listChanged": True}, {})
RESOURCES_CAP = Capability("resources", {"subscribe": True, "listChanged": True}, {})
COMPLETIONS_CAP = Capability("completions", {}, gate=lambda rev: rev.completions_capability)
#: SEP-2133: an extension rides in any revision's capabilities
SKILLS_CAP = Capability("extensions", {SKILLS_EXTENSION: {"directoryRead": True}})
#: In the order each era has always declared them: the keys of a JSON object are unordered, but a client that
#: compares or caches the bytes of ``initialize`` or ``server/discover`` sees the same bytes as before the table.
CAPABILITIES = (PROMPTS_CAP, LOGGING_CAP, TOOLS_CAP, RESOURCES_CAP, COMPLETIONS_CAP, SKILLS_CAP)
MODERN_ORDER = (PROMPTS_CAP, COMPLETIONS_CAP, LOGGING_CAP, TOOLS_CAP, RESOURCES_CAP, SKILLS_CAP)


class Wrap(Enum):
    """How the 2026-07-28 era wraps a method's result (a legacy session sends it as it is)."""

    #: a list page: the era's fields are encoded into it (``Turn.page``)
    PAGE = "page"
    #: ``resultType`` and the server's identity in ``_meta``
    RESULT = "result"
    #: as RESULT, with ``ttlMs`` and ``cacheScope``
    CACHED = "cached"


def prompts_private(server: Served) -> bool:
    return server.catalog.restricted


def tools_private(server: Served) -> bool:
    """The tools: the prompts' (prompt tools), and the write tools, shown only to writers."""
    return server.catalog.restricted or server.write_tools is not None


def resources_private(server: Served) -> bool:
    """The resources include the prompts' and the skills' files: private when either depends on who asks."""
    return server.catalog.restricted or (server.offers_skills and server.skills.restricted)


def skills_private(server: Served) -> bool:
    return server.skills.restricted


class Method(msgspec.Struct, frozen=True):
    name: str
    params: type[params.Params]
    handler: Callable[[Any, Any], Any]
    eras: frozenset[str] = BOTH
    capability: Capability | None = None
    feature: Feature | None = None
    wrap: Wrap = Wrap.RESULT
    #: whether its answer depends on who asks (the 2026-07-28 ``cacheScope``)
    private: Callable[[Served], bool] = prompts_private
    #: whether a legacy session that may ask its client for missing arguments gives it ``ask``
    asks: bool = False
    #: the common case answered in one pass, with no effect: (server, scopes, params, forms) -> a result, or
    #: None to answer it the general way (``ModernEndpoint.plain_get``)
    plain: Callable[[Served, frozenset[str] | None, Any, bool], dict[str, Any] | None] | None = None

    #: what the request names, looked up before its other fields are checked (an unknown prompt, tool or
    #: directory is refused as such whatever else is wrong, as both eras always answered): (turn, params)
    find: Callable[[Any, dict[str, Any]], object] | None = None
    #: whether its params are refused before its guard runs (a subscription's URI always was)
    params_first: bool = False

    def guard(self, server: Served, status: int | None = None) -> None:
        """-32601 when the server lacks the feature the method needs (``status``: its HTTP status)."""
        feature = self.feature
        if feature is not None and not feature.offered(server):
            raise MethodNotFound(f"method {self.name!r} is not offered by this server ({feature.hint})",
                                 http_status=status)

    def prepare(self, turn: Any, raw: dict[str, Any] | None, status: int | None = None) -> Any:
        """The request's params as the method's struct, once its guard has passed: the one place that orders
        -32601 (``guard``), an unknown name (``find``) and a wrong field (``params.decode``) in every era."""
        if not self.params_first:
            self.guard(turn.server, status)
        try:
            decoded = params.decode(self.params, raw)
        except InvalidParams:
            if self.find is not None and type(raw) is dict:
                self.find(turn, raw)
            raise
        if self.params_first:
            self.guard(turn.server, status)
        return decoded


def capabilities(server: Served, era: str, rev: Revision, announces: bool = True) -> dict[str, Any]:
    """The capabilities a server declares in ``era`` (``rev``'s): those of the methods it offers there."""
    declared: dict[str, Any] = {}
    for capability in MODERN_ORDER if era == MODERN else CAPABILITIES:
        if capability.gate is not None and not capability.gate(rev):
            continue
        if any(method.capability is capability and era in method.eras
               and (method.feature is None or method.feature.offered(server)) for method in METHODS.values()):
            quiet = capability.quiet
            declared[capability.key] = capability.value if announces or quiet is None else quiet
    return declared


def offered(name: str, era: str) -> Method | None:
    """The method called ``name`` in ``era``, or None (-32601)."""
    method = METHODS.get(name)
    return method if method is not None and era in method.eras else None


# -- the handlers ---------------------------------------------------------------------------------


def _initialize(t: LegacyTurn, p: params.Initialize) -> dict[str, Any]:
    rev = t.begin(p)
    result: dict[str, Any] = {
        "protocolVersion": rev.version,
        "capabilities": capabilities(t.server, LEGACY, rev, t.announces),
        "serverInfo": t.server.server_info(rev),
    }
    if t.server.instructions:
        result["instructions"] = t.server.instructions
    return result


def _discover(t: ModernTurn, p: params.Empty) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(SUPPORTED),
        "capabilities": capabilities(t.server, MODERN, NEWEST_MODERN),
        "ttlMs": t.ttl_ms,
        "cacheScope": t.cache_scope(prompts_private(t.server)),
    }
    if t.server.instructions:
        result["instructions"] = t.server.instructions
    return result


def _list_prompts(t: Turn, p: params.Page) -> bytes:
    return t.catalog.page(t.revision, p.cursor, *t.page())


def _get_prompt(t: Turn, p: params.GetPrompt) -> Any:
    return t.get(handlers.chosen(t.server, t.catalog.require(p.name), p.meta, t.sticky, t.client(p.meta)), p)


def _find_prompt(t: Turn, raw: dict[str, Any]) -> None:
    name = raw.get("name")
    if type(name) is str:
        t.catalog.require(name)


def plain_get(server: Served, scopes: frozenset[str] | None, p: params.GetPrompt,
              forms: bool) -> dict[str, Any] | None:
    """The ``prompts/get`` result of a plain prompt (``Prompt.plain``) ready to read, given its arguments; None
    for anything else, a failure included (nothing here has an effect: the general way says what went wrong)."""
    if p.request_state is not None or p.input_responses is not None:
        return None
    name, given = p.name, p.arguments
    try:
        offered = server.catalog.view(scopes).get(name)
        if offered is None or offered.unprepared() is not None or name in server.rolling_out():
            return None  # a rollout's choice needs the request's key: the general path
        prompt = offered.parsed()
        if prompt.plain is None:
            return None
        if forms:
            from ..prompts.forms import missing  # only where a form may be sent: not on stdio's start-up path

            if missing(prompt.arguments, given or {}):
                return None  # a form to send: the era's
    except Exception:
        return None  # a store that failed: the general path says which
    result = handlers.plain_result(prompt, given)
    if result is not None:
        # Counted as ``handlers.chosen`` counts, written out (the arm is known: a prompt under rollout never
        # comes here): every one-pass get comes this way, and the calls cost more than the count.
        meta = p.meta
        info = meta.get(META_CLIENT_INFO) if type(meta) is dict else None
        client = info.get("name") if type(info) is dict else None
        clients = server.usage.window.get(offered)
        n = None if clients is None else clients.get(client)
        if n is None:
            server.usage.count(offered, NO_ARM, client)
        else:
            clients[client] = n + 1  # type: ignore[index]
    return result


def _complete(t: Turn, p: params.Complete) -> Any:
    return handlers.complete(t.server, t.catalog, p)


def _tools(t: Turn) -> PromptTools:
    tools = t.server.tools
    assert tools is not None  # the method's guard has run
    return tools


def _list_tools(t: Turn, p: params.Page) -> bytes:
    writes = t.server.write_tools
    shown = writes.listed(t.scopes) if writes is not None else ()
    return _tools(t).of(t.catalog, shown).page(t.revision, p.cursor, *t.page())


def _find_tool(t: Turn, raw: dict[str, Any]) -> None:
    name = raw.get("name")
    writes = t.server.write_tools
    if type(name) is str and (writes is None or name not in writes.names):  # a write tool: _call_tool's scope check
        _tools(t).of(t.catalog).target(name)


def _call_tool(t: Turn, p: params.CallTool) -> Any:
    from . import tools

    writes = t.server.write_tools
    if writes is not None and p.name in writes.names:  # they hold the write scope to it themselves
        return writes.call(p.name, p.arguments, t.principal, t.scopes, t.revision)
    catalog = t.catalog
    call = tools.prepare(catalog, _tools(t).of(catalog), p.name, p.arguments)
    if isinstance(call, dict):
        return call
    if call.prompt is not None:  # a render, as prompts/get's: a rollout's version for its key
        call.prompt = handlers.chosen(t.server, call.prompt, p.meta, t.sticky, t.client(p.meta))
    return t.call(call, catalog, p)


def _list_resources(t: Turn, p: params.Page) -> Any:
    from . import resources as methods

    resources = t.server.resources
    return methods.list_resources(resources, resources.sight(t.scopes), t.revision, p.cursor, *t.page(),
                                  follows=t.follows())


def _read_resource(t: Turn, p: params.ReadResource) -> Any:
    from . import resources as methods

    resources = t.server.resources
    return methods.read_resource(resources, resources.sight(t.scopes), t.revision, p.uri, t.principal)


def _list_templates(t: Turn, p: params.Empty) -> dict[str, Any]:
    return t.server.resources.templates(t.revision)


def _subscribe(t: LegacyTurn, p: params.Subscribe) -> Any:
    from . import resources as methods

    uri = p.uri
    resources, follows = t.server.resources, t.following()

    def subscribe() -> dict[str, Any]:
        if not follows.subscribe(uri, resources):
            raise InvalidParams(f"a session may follow at most {methods.MAX_SUBSCRIBED} resources")
        return {}

    return off_loop(subscribe)  # its stamp may read a stored prompt


def _unsubscribe(t: LegacyTurn, p: params.Subscribe) -> dict[str, Any]:
    t.unfollow(p.uri)
    return {}


def _list_skills(t: Turn, p: params.Page) -> Any:
    skills, cursor = t.server.skills, p.cursor
    follows = t.follows() if cursor is None else None
    if follows is None or follows.listed is not None:
        return skills.page(t.scopes, cursor, *t.page())
    resources = t.server.resources
    fields = t.page()

    def page() -> bytes:
        # The extension has no notification of its own: a session that read the skills hears of their
        # files coming and going through notifications/resources/list_changed, as if it had read that list.
        follows.listing, follows.listed = True, resources.signature(resources.sight(t.scopes))
        return skills.page(t.scopes, cursor, *fields)

    return off_loop(page)  # the list of resources may walk the library


def _get_skill(t: Turn, p: params.GetSkill) -> dict[str, Any]:
    return t.server.skills.get(p.uri, t.scopes)


def _find_directory(t: Turn, raw: dict[str, Any]) -> None:
    uri = raw.get("uri")
    if type(uri) is str:
        t.server.skills.directory(uri, t.scopes, t.revision)


def _read_directory(t: Turn, p: params.ReadDirectory) -> dict[str, Any]:
    return t.server.skills.directory(p.uri, t.scopes, t.revision, p.cursor)


def _set_level(t: LegacyTurn, p: params.SetLevel) -> dict[str, Any]:
    t.set_level(p.level)
    return {}


def _listen(t: ModernTurn, p: params.Listen) -> Any:
    return t.listen(p)


_LEGACY = frozenset({LEGACY})
_MODERN = frozenset({MODERN})

#: Every method, by name (what /metrics counts by name).
METHODS: dict[str, Method] = {method.name: method for method in (
    Method("initialize", params.Initialize, _initialize, _LEGACY),
    Method("ping", params.Empty, lambda t, p: {}, _LEGACY),
    Method("server/discover", params.Empty, _discover, _MODERN),
    Method("prompts/list", params.Page, _list_prompts, capability=PROMPTS_CAP, wrap=Wrap.PAGE),
    Method("prompts/get", params.GetPrompt, _get_prompt, capability=PROMPTS_CAP, asks=True, plain=plain_get,
           find=_find_prompt),
    Method("completion/complete", params.Complete, _complete, capability=COMPLETIONS_CAP),
    Method("tools/list", params.Page, _list_tools, capability=TOOLS_CAP, feature=TOOLS, wrap=Wrap.PAGE,
           private=tools_private),
    Method("tools/call", params.CallTool, _call_tool, capability=TOOLS_CAP, feature=TOOLS, asks=True,
           private=tools_private, find=_find_tool),
    Method("resources/list", params.Page, _list_resources, capability=RESOURCES_CAP, feature=RESOURCES,
           wrap=Wrap.PAGE, private=resources_private),
    Method("resources/read", params.ReadResource, _read_resource, capability=RESOURCES_CAP, feature=RESOURCES,
           wrap=Wrap.CACHED, private=resources_private),
    Method("resources/templates/list", params.Empty, _list_templates, capability=RESOURCES_CAP,
           feature=RESOURCES, wrap=Wrap.CACHED, private=resources_private),
    Method("resources/subscribe", params.Subscribe, _subscribe, _LEGACY, RESOURCES_CAP, RESOURCES,
           params_first=True),
    Method("resources/unsubscribe", params.Subscribe, _unsubscribe, _LEGACY, RESOURCES_CAP, RESOURCES,
           params_first=True),
    Method("resources/directory/read", params.ReadDirectory, _read_directory, capability=SKILLS_CAP,
           feature=SKILLS, wrap=Wrap.CACHED, private=skills_private, find=_find_directory),
    Method("skills/list", params.Page, _list_skills, capability=SKILLS_CAP, feature=SKILLS, wrap=Wrap.PAGE,
           private=skills_private),
    Method("skills/get", params.GetSkill, _get_skill, capability=SKILLS_CAP, feature=SKILLS, wrap=Wrap.CACHED,
           private=skills_private),
    Method("logging/setLevel", params.SetLevel, _set_level, _LEGACY, LOGGING_CAP),
    #: opens a stream: the handler gives a ``Subscription`` (the era's), which the transport keeps open
    Method("subscriptions/listen", params.Listen, _listen, _MODERN),
)}
