"""Prompts offered as tools, for the many clients that call tools but never show prompts.

``serve --tools`` (``PromptServer(tools=True)``) adds ``tools/list`` and
``tools/call`` to both eras. What they offer is derived from the catalog a
principal sees, so access control is the prompts' own:

- *One tool per prompt* while that catalog holds at most
  ``ToolOptions.per_prompt_limit`` prompts. A tool's input schema is the
  prompt's typed argument schema (the one already published in its listing's
  ``_meta``), so enums, bounds and defaults reach the model.
- *Two tools* past that size (or when a prompt's name cannot be a tool name
  that clients accept): one lists and searches the prompts, one renders a
  prompt by name. Their names are ``list_name`` and ``get_name``.

A call's result is the rendered messages as content (each message's role said
before it when the assistant speaks too), and in revisions that have
it, the ``prompts/get`` result itself as ``structuredContent``. Mistakes the
model can fix (a missing or malformed argument, an unknown prompt named to the
get tool) come back as ``isError`` results it can read; an unknown tool is a
-32602 error, as an unknown prompt is.

Tool sets are derived once per catalog snapshot (and per principal's view) and
their pages encoded once per revision, like prompt pages.

``serve --store URL --write-tools`` adds the store's write tools (``WriteTools``, made by
``server.web.store_tools``): they are listed beside these, and only to a principal holding the write scope;
``tools/call`` hands a call of one of them to it before anything here looks at the name.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..prompts.catalog import decode_cursor, encode_cursor
from ..prompts.spec import META_ARGUMENTS, Offered
from ..protocol import jsonrpc
from ..protocol.errors import InvalidParams
from ..protocol.revisions import LATEST, Revision
from . import handlers
from .handlers import Send

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog

#: What most clients accept as a tool name (several model APIs allow no '.' and at most 64 characters):
#: per-prompt tools are offered only when every name fits, so a name never needs guessing back.
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
#: Prompts the search tool examines per call: a page may then hold fewer matches than its size, and its
#: ``nextCursor`` goes on from where the scan stopped. Bounds a call's work on a 100,000-prompt store.
SCAN_LIMIT = 5000
MAX_QUERY_LENGTH = 200
#: Results of the search tool per call: a page small enough for a model's context.
LIST_PAGE_SIZE = 50
TOOLS_LIST_CHANGED = jsonrpc.encode_notification("notifications/tools/list_changed")
META_PROMPT = "promptdeck.dev/prompt"

#: What every prompt tool does: it reads, and nothing it returns changes anything.
_ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
_MESSAGES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "messages": {"type": "array", "items": {
            "type": "object",
            "properties": {"role": {"type": "string", "enum": ["user", "assistant"]}, "content": {"type": "object"}},
            "required": ["role", "content"],
        }},
    },
    "required": ["messages"],
}
_LISTING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompts": {"type": "array", "items": {"type": "object"}},
        "nextCursor": {"type": "string"},
    },
    "required": ["prompts"],
}


@dataclass(frozen=True)
class ToolOptions:
    """How prompts are offered as tools."""

    #: one tool per prompt while a principal sees at most this many prompts; 0: always the two tools
    per_prompt_limit: int = 16
    #: the tool that lists and searches prompts, and the one that renders a prompt by name
    list_name: str = "list_prompts"
    get_name: str = "get_prompt"
    #: put before each prompt's name to make its tool's name
    prefix: str = ""

    def __post_init__(self) -> None:
        if self.per_prompt_limit < 0:
            raise ValueError("per_prompt_limit must not be negative")
        for name in (self.list_name, self.get_name):
            if not TOOL_NAME_RE.match(name):
                raise ValueError(f"tool name {name!r} must be 1-64 letters, digits, '_' or '-'")
        if self.list_name == self.get_name:
            raise ValueError(f"the list and get tools need two names, not {self.list_name!r} twice")
        if self.prefix and not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", self.prefix):
            raise ValueError(f"tool prefix {self.prefix!r} must be 1-32 letters, digits, '_' or '-'")


class WriteTools(Protocol):
    """The store's tools for agents (``serve --write-tools``; ``server.web.store_tools`` makes them)."""

    #: every write tool's name, whoever asks: a call of one of them is the write tools' to answer or refuse
    names: frozenset[str]

    def listed(self, scopes: frozenset[str] | None) -> tuple[dict[str, Any], ...]:
        """The tools a principal holding ``scopes`` is shown: none without the write scope."""
        ...

    def call(self, name: str, arguments: dict[str, Any] | None, principal: str, scopes: frozenset[str] | None,
             rev: Revision) -> Awaitable[dict[str, Any]]:
        """The ``tools/call`` result; ``InvalidParams`` (-32602) for a principal without the write scope and
        for arguments that are not what the tool takes, naming the scope or the field."""
        ...


class ToolSet:
    """The tools one catalog (one principal's view of a snapshot) offers; ``extra``: the write tools it is shown
    (``options`` None: only those, without ``--tools``)."""

    __slots__ = ("options", "per_prompt", "_tools", "_targets", "page_size", "_pages", "_signature")

    def __init__(self, catalog: Catalog, options: ToolOptions | None,
                 extra: tuple[dict[str, Any], ...] = ()) -> None:
        self.options = options
        self.page_size = catalog.page_size
        self._pages: dict[tuple[str, int, str], bytes] = {}
        self._signature: bytes | None = None
        found = None if options is None else _per_prompt(catalog, options, frozenset(t["name"] for t in extra))
        self.per_prompt = found is not None
        tools: dict[str, dict[str, Any]] = {}
        self._targets: dict[str, str | None] = {}
        if found is not None:
            tools, self._targets = found, {name: tool["_meta"][META_PROMPT] for name, tool in found.items()}
        elif options is not None:
            tools = {options.list_name: _list_tool(options), options.get_name: _get_tool(options)}
            self._targets = {options.list_name: None, options.get_name: None}
        tools.update({tool["name"]: tool for tool in extra})
        self._tools = [tools[name] for name in sorted(tools)]

    def __len__(self) -> int:
        return len(self._tools)

    def target(self, name: object) -> str | None:
        """The prompt a per-prompt tool renders (None for the list and get tools); -32602 for no such tool."""
        if not isinstance(name, str):
            raise InvalidParams('"name" must be a string naming a tool')
        if name not in self._targets:
            raise InvalidParams(f"unknown tool {name!r}", {"tool": name})
        return self._targets[name]

    def page(self, rev: Revision, cursor: object = None, extra: dict[str, Any] | None = None,
             extra_key: str = "") -> bytes:
        """One encoded ``tools/list`` page; cursors work as prompt cursors do (the last name shown)."""
        start = 0
        if cursor is not None:
            after = decode_cursor(cursor)
            start = next((i for i, tool in enumerate(self._tools) if tool["name"] > after), len(self._tools))
        key = (rev.version, start, extra_key)
        cached = self._pages.get(key)
        if cached is None:
            shown = self._tools[start:start + self.page_size]
            result: dict[str, Any] = {"tools": [tool_for_revision(tool, rev) for tool in shown]}
            if start + self.page_size < len(self._tools):
                result["nextCursor"] = encode_cursor(shown[-1]["name"])
            cached = self._pages[key] = jsonrpc.encode_json({**result, **(extra or {})})
        return cached

    def signature(self) -> bytes:
        if self._signature is None:
            self._signature = jsonrpc.encode_json([tool_for_revision(t, LATEST) for t in self._tools])
        return self._signature


class PromptTools:
    """A server's tool sets, one per catalog (snapshot or view) asked about, made on first use."""

    MAX_SETS = 256

    def __init__(self, options: ToolOptions | None) -> None:
        #: None: no prompt tools, only the write tools (``serve --write-tools`` without ``--tools``)
        self.options = options
        # Keyed by the catalog's id (and whether the write tools are shown), holding the catalog too, so an id
        # reused after a swap never matches.
        self._sets: dict[tuple[int, bool], tuple[Catalog, ToolSet]] = {}

    def of(self, catalog: Catalog, extra: tuple[dict[str, Any], ...] = ()) -> ToolSet:
        """The tool set of ``catalog``, with ``extra`` (the write tools, the same tuple for every writer)."""
        key = (id(catalog), bool(extra))
        held = self._sets.get(key)
        if held is not None and held[0] is catalog:
            return held[1]
        if len(self._sets) >= self.MAX_SETS:
            self._sets.clear()
        tools = ToolSet(catalog, self.options, extra)
        self._sets[key] = (catalog, tools)
        return tools

    def changed(self, old: Catalog, new: Catalog) -> bool:
        """Might a client's tool list differ between two snapshots whose prompt lists differ?

        The two fixed tools never change, nor do the write tools; per-prompt tools follow the prompts. A
        restricted catalog's views may be per-prompt whatever the whole is, so they count as changed.
        """
        if self.options is None:
            return False
        if old.restricted or new.restricted:
            return True
        return self.of(old).per_prompt or self.of(new).per_prompt


# -- the tools ---------------------------------------------------------------------------------


def _per_prompt(catalog: Catalog, options: ToolOptions,
                reserved: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]] | None:
    """One tool per prompt, by tool name; None when the catalog is too large or a name does not fit (or is one
    of the ``reserved`` write tools')."""
    if options.per_prompt_limit == 0 or len(catalog) > options.per_prompt_limit:
        return None
    tools: dict[str, dict[str, Any]] = {}
    for prompt in catalog:
        name = options.prefix + prompt.name.replace(".", "_")
        if (not TOOL_NAME_RE.match(name) or name in tools or name in (options.list_name, options.get_name)
                or name in reserved):
            return None
        tools[name] = _prompt_tool(name, prompt)
    return tools


def _prompt_tool(name: str, prompt: Offered) -> dict[str, Any]:
    listing = prompt.listing()
    schema = dict(listing.get("_meta", {}).get(META_ARGUMENTS) or {"type": "object", "properties": {}})
    schema["additionalProperties"] = False
    what = listing.get("description") or listing.get("title") or prompt.name
    tool: dict[str, Any] = {
        "name": name,
        "description": f"{what}\n\nReturns the prompt {prompt.name!r} filled in with these arguments: "
                       "read it and carry it out as the user's request.",
        "inputSchema": schema,
        "outputSchema": _MESSAGES_SCHEMA,
        "annotations": {"title": listing.get("title") or prompt.name, **_ANNOTATIONS},
        "_meta": {META_PROMPT: prompt.name},
    }
    if "title" in listing:
        tool["title"] = listing["title"]
    if "icons" in listing:
        tool["icons"] = listing["icons"]
    return tool


def _list_tool(options: ToolOptions) -> dict[str, Any]:
    return {
        "name": options.list_name,
        "title": "List prompts",
        "description": "Lists the prompts of this library that match a query (every word must appear in a "
                       "prompt's name, title or description; no query lists them all), with their arguments. "
                       f"Render one with {options.get_name}. Pass nextCursor back as cursor for more.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": MAX_QUERY_LENGTH,
                          "description": "Words to look for; leave out to list every prompt."},
                "cursor": {"type": "string", "description": "The nextCursor of the previous call."},
            },
            "additionalProperties": False,
        },
        "outputSchema": _LISTING_SCHEMA,
        "annotations": {"title": "List prompts", **_ANNOTATIONS},
    }


def _get_tool(options: ToolOptions) -> dict[str, Any]:
    return {
        "name": options.get_name,
        "title": "Get a prompt",
        "description": "Returns a prompt of this library filled in with arguments: read it and carry it out as "
                       f"the user's request. Find prompts and the arguments they take with {options.list_name}.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The prompt's name."},
                "arguments": {"type": "object", "description": "The prompt's arguments by name.",
                              "additionalProperties": {"type": ["string", "number", "boolean"]}},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "outputSchema": _MESSAGES_SCHEMA,
        "annotations": {"title": "Get a prompt", **_ANNOTATIONS},
    }


def tool_for_revision(tool: dict[str, Any], rev: Revision) -> dict[str, Any]:
    """A tool as ``rev`` shows it: annotations from 2025-03-26, titles, output schemas and ``_meta`` from
    2025-06-18, icons from 2025-11-25, ``additionalProperties: false`` on the input from 2026-07-28."""
    out = dict(tool)
    if not rev.schema_keywords:
        out["inputSchema"] = {k: v for k, v in tool["inputSchema"].items() if k in ("type", "properties", "required")}
    if not rev.tool_annotations:
        out.pop("annotations", None)
    if not rev.titles:
        out.pop("title", None)
    if not rev.structured_output:
        out.pop("outputSchema", None)
    if not rev.meta:
        out.pop("_meta", None)
    if not rev.icons:
        out.pop("icons", None)
    return out


# -- calls -------------------------------------------------------------------------------------


@dataclass
class Call:
    """A ``tools/call`` understood: the prompt it renders and the arguments given, as wire strings
    (``prompt`` is None for the list tool)."""

    tool: str
    prompt: Offered | None
    given: dict[str, str]
    #: the call's own arguments (the list tool's query and cursor)
    raw: dict[str, Any]


def called(tools: ToolSet, name: str, arguments: dict[str, Any] | None) -> tuple[str, str | None, dict[str, Any]]:
    """(tool, the prompt a per-prompt tool renders, the call's arguments). ``InvalidParams`` here is a
    protocol error: no such tool (the params' shape is held by ``params.CallTool``)."""
    return name, tools.target(name), {} if arguments is None else arguments


def understand(catalog: Catalog, tools: ToolSet, tool: str, target: str | None, raw: dict[str, Any]) -> Call:
    """What a call to a known tool asks for. ``InvalidParams`` here is the caller's mistake, answered
    as a result the model reads (``fault``)."""
    options = tools.options
    if options is None:  # only write tools, which ``tools/call`` hands on before this: ``target`` knows none
        raise InvalidParams(f"unknown tool {tool!r}", {"tool": tool})
    if target is None and tool == options.list_name:
        return Call(tool, None, {}, raw)
    if target is None:
        unknown = [k for k in raw if k not in ("name", "arguments")]
        if unknown:
            raise InvalidParams(f"tool {tool!r} takes name and arguments, not {', '.join(map(repr, sorted(unknown)))}")
        target = raw.get("name")
        if not isinstance(target, str):
            raise InvalidParams(f'tool {tool!r} needs "name", the name of a prompt (see {options.list_name})')
        given = raw.get("arguments")
        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise InvalidParams(f'tool {tool!r}: "arguments" must be an object mapping argument names to values')
    else:
        given = raw
    try:
        prompt = catalog.require(target)
    except InvalidParams as exc:  # its "did you mean" kept: these names are the ones this caller sees
        raise InvalidParams(f"{exc.message}; {options.list_name} lists the prompts", exc.data) from None
    return Call(tool, prompt, {k: _wire(prompt.name, k, v) for k, v in given.items() if v is not None}, raw)


def _wire(prompt: str, name: str, value: object) -> str:
    """A JSON argument value as the string ``prompts/get`` would have carried."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    raise InvalidParams(f"prompt {prompt!r}: argument {name!r} must be a string, number or boolean, "
                        f"not {type(value).__name__}")


def fault(exc: InvalidParams) -> dict[str, Any]:
    """An ``isError`` result telling the model what was wrong with its call."""
    return {"content": [{"type": "text", "text": exc.message}], "isError": True}


def listing_result(catalog: Catalog, call: Call, rev: Revision) -> dict[str, Any]:
    """The list tool's result: the page of matching prompts after the cursor."""
    query = call.raw.get("query")
    cursor = call.raw.get("cursor")
    if query is not None and not isinstance(query, str):
        raise InvalidParams('"query" must be a string')
    if query is not None and len(query) > MAX_QUERY_LENGTH:
        raise InvalidParams(f'"query" is longer than {MAX_QUERY_LENGTH} characters')
    if cursor is not None and not isinstance(cursor, str):
        raise InvalidParams('"cursor" must be the nextCursor string of a previous call')
    after = "" if not cursor else decode_cursor(cursor)
    words = (query or "").casefold().split()
    found: list[dict[str, Any]] = []
    last = after
    more = False
    scanned = 0
    for prompt in catalog.after(after):
        if len(found) == LIST_PAGE_SIZE or scanned == SCAN_LIMIT:
            more = True
            break
        scanned += 1
        last = prompt.name
        entry = prompt.listing()
        if words:
            text = " ".join((entry["name"], entry.get("title", ""), entry.get("description", ""))).casefold()
            if not all(word in text for word in words):
                continue
        found.append(entry)
    shown: dict[str, Any] = {"prompts": [_short_entry(entry) for entry in found]}
    if more:
        shown["nextCursor"] = encode_cursor(last)
    lines = [_entry_line(entry) for entry in found] or ["No prompt matches." if words else "No prompts."]
    if more:
        lines.append(f"More may match: call {call.tool} again with cursor {shown['nextCursor']!r}.")
    result: dict[str, Any] = {"content": [{"type": "text", "text": "\n".join(lines)}]}
    if rev.structured_output:
        result["structuredContent"] = shown
    return result


def _short_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A listing entry as the list tool gives it: the prompt list entry, its arguments typed."""
    out = {k: v for k, v in entry.items() if k in ("name", "title", "description", "arguments")}
    schema = entry.get("_meta", {}).get(META_ARGUMENTS)
    if schema is not None:
        out["inputSchema"] = schema
    return out


def _entry_line(entry: dict[str, Any]) -> str:
    head = str(entry["name"])
    if entry.get("title"):
        head += f" ({entry['title']})"
    if entry.get("description"):
        head += f": {entry['description']}"
    arguments = entry.get("arguments") or []
    if arguments:
        head += "\n  arguments: " + ", ".join(a["name"] + (" (required)" if a.get("required") else "")
                                               for a in arguments)
    return "- " + head


def rendered(get_result: dict[str, Any], rev: Revision) -> dict[str, Any]:
    """A ``prompts/get`` result as a tool result: the messages as content, the result as structured content."""
    messages = get_result["messages"]
    # Roles matter only where the assistant speaks too (a few-shot prompt): then each message says whose it is.
    labelled = any(m["role"] != "user" for m in messages)
    content: list[dict[str, Any]] = []
    for message in messages:
        block = message["content"]
        if labelled and block.get("type") == "text":
            block = {**block, "text": f"[{message['role']}]\n{block['text']}"}
        elif labelled:
            content.append({"type": "text", "text": f"[{message['role']}]"})
        content.append(block)
    result: dict[str, Any] = {"content": content}
    if rev.structured_output:
        result["structuredContent"] = get_result
    return result


async def rendered_later(pending: Awaitable[dict[str, Any]], rev: Revision) -> dict[str, Any]:
    try:
        return rendered(await pending, rev)
    except InvalidParams as exc:
        return fault(exc)


# -- the methods, for both eras ----------------------------------------------------------------


def prepare(catalog: Catalog, tools: ToolSet, name: str, arguments: dict[str, Any] | None) -> Call | dict[str, Any]:
    """The call a ``tools/call`` makes, or the ``isError`` result for a known tool called wrongly."""
    tool, target, raw = called(tools, name, arguments)
    try:
        return understand(catalog, tools, tool, target, raw)
    except InvalidParams as exc:
        return fault(exc)


def run(server: handlers.Renders, catalog: Catalog, call: Call, meta: object, rev: Revision,
        related: Send) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The ``tools/call`` result: a listing, or the prompt rendered as ``prompts/get`` renders it."""
    try:
        if call.prompt is None:
            return listing_result(catalog, call, rev)
        result = handlers.render(server, call.prompt, call.given, meta, rev, related)
    except InvalidParams as exc:
        return fault(exc)
    return rendered(result, rev) if isinstance(result, dict) else rendered_later(result, rev)
