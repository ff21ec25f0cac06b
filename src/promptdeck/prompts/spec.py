"""A prompt as the server knows it: what clients see in a listing, and how to render it."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.content import Message
from ..protocol.revisions import Revision
from .arguments import Argument

if TYPE_CHECKING:
    from .composition import Uses
    from .render import TemplateText
    from .testcases import PromptTests

#: Where the full argument schema goes in a prompt's ``_meta`` (2025-06-18 and later).
META_ARGUMENTS = "promptdeck.dev/arguments"
META_TAGS = "promptdeck.dev/tags"
#: Where a prompt's ``meta`` holds the settings its format gives the model (model, tools, agent, ...), as written.
META_MODEL = "promptdeck.dev/model"
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}\Z")


class RenderContext:
    """Handed to a render: who asked and a way to report progress on slow work."""

    __slots__ = ("prompt", "_progress")

    def __init__(self, prompt: str, progress: Callable[[float, float | None, str | None], None] | None = None):
        self.prompt = prompt
        self._progress = progress

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress; a no-op unless the client asked for it with a progress token."""
        if self._progress is not None:
            self._progress(done, total, message)


class Reach:
    """The library files a prompt may send whole: those its role lines name (an image, audio, an embedded
    resource, a link) and those its ``path`` arguments may name. ``root`` is the library they lie in (a
    ``LibraryRoot``, compared by identity), so a provider of that library's files (``files.resources``)
    finds the prompts that reach into it. What a client may read as a resource is what a prompt it may
    see reaches: nothing more than a ``prompts/get`` of that prompt could send it."""

    __slots__ = ("root", "files", "paths")

    def __init__(self, root: object, files: frozenset[str], paths: tuple[Argument, ...]) -> None:
        self.root = root
        #: paths (relative, as the role lines name them) of the files the prompt names itself
        self.files = files
        #: its ``path`` arguments, whose own rules (pattern, enum, length) say which files they may name
        self.paths = paths


RenderFn = Callable[[dict[str, Any], RenderContext], "list[Message] | Awaitable[list[Message]]"]
#: ``(value typed so far, other arguments already filled) -> suggestions``, or an awaitable of them (a
#: completer that waits on something, such as another server, without holding the event loop)
Completer = Callable[[str, Mapping[str, str]], "Iterable[str] | Awaitable[Iterable[str]]"]
#: A completer that answers at once (a library's file names)
SyncCompleter = Callable[[str, Mapping[str, str]], Iterable[str]]
#: A prompt's messages when each is text that only substitutes names (``TemplateText.simple``, no annotations):
#: its role and template, in order. Rendering it is what the prompt's ``render`` does for these messages (a
#: message whose text renders blank left out), without the layers a render that might read files or run
#: Jinja needs; a fault there is left to ``render`` to report.
PlainMessages = tuple[tuple[str, "TemplateText"], ...]


#: The empty set of names (tags, scopes) every prompt without any shares: ``frozenset()`` makes a new one
#: each call (216 bytes; no singleton since Python 3.10).
NO_NAMES: frozenset[str] = frozenset()
#: The empty mapping (``completers``, ``meta``) every prompt without any shares: read-only, so no holder can
#: fill it for all the others.
NO_MAPPING: Mapping[str, Any] = MappingProxyType({})


class FrozenError(AttributeError):
    """An attempt to change a frozen record in place (a ``Prompt``): ``replace`` makes a changed copy."""


class Offered(Protocol):
    """A prompt as a catalog offers it: what a listing needs, known at once, and the ``Prompt`` itself from
    ``parsed()``. A ``Prompt`` is one (``parsed`` is itself); a stored prompt (``sources.store.catalog``) is
    another, known by its listing entry and parsed from its file only when ``parsed`` is first called. So
    listing a large store parses nothing, and whatever needs more than the listing asks ``parsed`` for it."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def scopes(self) -> frozenset[str]:
        """Who may see and get it (``Prompt.scopes``)."""
        ...

    @property
    def meta(self) -> Mapping[str, Any]: ...

    def descriptor(self, rev: Revision) -> dict[str, Any]:
        """Its ``prompts/list`` entry as ``rev`` shows it."""
        ...

    def listing(self) -> dict[str, Any]:
        """Its full listing entry (``Prompt.listing``)."""
        ...

    def unprepared(self) -> Callable[[], object] | None:
        """None when ``parsed`` answers at once; else the blocking call that makes it so (``Prompt.unprepared``)."""
        ...

    def parsed(self) -> Prompt:
        """The ``Prompt`` itself: its arguments, render, reach and the rest (may parse a file: see ``unprepared``)."""
        ...


class Prompt:
    """A prompt: a frozen record (``replace`` makes a changed copy). ``descriptor(rev)`` is its
    ``prompts/list`` entry for a revision. Compared by identity, as a catalog's prompts are.

    Written out rather than made by ``dataclasses``: that module and the class it generates cost the stdio
    server ~2 ms of its start-up, a few percent of it (benchmarks/bench_start.py)."""

    __slots__ = ("name", "render", "title", "description", "arguments", "icons", "tags", "scopes", "source",
                 "completers", "work", "meta", "reach", "plain", "tests", "composes", "_uses", "_wire",
                 "_by_name")
    name: str
    render: RenderFn
    title: str | None
    description: str | None
    arguments: tuple[Argument, ...]
    icons: tuple[dict[str, Any], ...]
    tags: frozenset[str]
    #: who may see and get it: principals holding any of these scopes; empty means everyone
    scopes: frozenset[str]
    source: str
    completers: Mapping[str, Completer]
    #: how its render may be run (``prompts.execution``): "light", "template" or "code"
    work: str
    #: more ``_meta`` for its listing entry (2025-06-18 and later): a stored version and label, say
    meta: Mapping[str, Any]
    #: the library files it may send whole (None: none, as for a prompt written in Python)
    reach: Reach | None
    #: its messages as plain substitutions (``PlainMessages``) when that is all ``render`` makes; else None
    plain: PlainMessages | None
    #: its test cases (``testing.PromptTests``), run by ``promptdeck test``; never part of its listing
    tests: PromptTests | None
    #: what it composes (``uses``), or the call that finds it once its templates are compiled; None: nothing
    composes: Uses | Callable[[], Uses] | None
    #: caches, made from the fields above and never part of a copy
    _uses: Uses | None
    _wire: dict[str, dict[str, Any]] | None
    _by_name: dict[str, Argument] | None

    def __init__(self, name: str, render: RenderFn, *, title: str | None = None, description: str | None = None,
                 arguments: tuple[Argument, ...] = (), icons: tuple[dict[str, Any], ...] = (),
                 tags: frozenset[str] = NO_NAMES, scopes: frozenset[str] = NO_NAMES, source: str = "",
                 completers: Mapping[str, Completer] | None = None, work: str = "code",
                 meta: Mapping[str, Any] | None = None, reach: Reach | None = None,
                 plain: PlainMessages | None = None, tests: PromptTests | None = None,
                 composes: Uses | Callable[[], Uses] | None = None) -> None:
        if not NAME_RE.match(name):
            raise ValueError(f"prompt name {name!r} must be 1-128 letters, digits, '_', '-' or '.'")
        # Field by field, not in a loop over pairs: a 100,000-file library makes as many, and the loop's tuples
        # cost a third of this. Its own copies: a mapping the caller keeps changing must not change a prompt a
        # catalog holds. An empty one is the shared ``NO_MAPPING`` or ``NO_NAMES``: most prompts have no tags,
        # scopes, completers or ``_meta``, and an empty set or dict of their own was 560 bytes of each.
        _set(self, "name", name)
        _set(self, "render", render)
        _set(self, "title", title)
        _set(self, "description", description)
        _set(self, "arguments", arguments)
        _set(self, "icons", icons)
        _set(self, "tags", tags or NO_NAMES)
        _set(self, "scopes", scopes or NO_NAMES)
        _set(self, "source", source)
        _set(self, "completers", dict(completers) if completers else NO_MAPPING)
        _set(self, "work", work)
        _set(self, "meta", dict(meta) if meta else NO_MAPPING)
        _set(self, "reach", reach)
        _set(self, "plain", plain)
        _set(self, "tests", tests)
        _set(self, "composes", composes)
        _set(self, "_uses", None if callable(composes) else composes)
        # caches made on first use (``descriptor``, ``argument``): most prompts of a large library never need one
        _set(self, "_wire", None)
        _set(self, "_by_name", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r}: a Prompt is changed by replace()")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r}: a Prompt is changed by replace()")

    def replace(self, **changes: Any) -> Prompt:
        """A ``Prompt`` with ``changes`` (fields by name) and every other field as this one has it; its caches
        start afresh."""
        return Prompt(**{name: getattr(self, name) for name in FIELDS if name not in changes}, **changes)

    def with_meta(self, extra: Mapping[str, Any]) -> Prompt:
        """The same prompt with more ``_meta`` in its listing entry."""
        return self.replace(meta={**self.meta, **extra})

    @property
    def uses(self) -> Uses:
        """What it composes (``composition.Uses``): the files and prompts its templates pull in by literal
        target. Known for a prompt built from a file once its templates are compiled (a large library
        compiles them on first use; this compiles them then); ``NO_USES`` for one that composes nothing."""
        uses = self._uses
        if uses is None:
            composes = self.composes
            if not callable(composes):
                from .composition import NO_USES  # never on the stdio handshake's path

                return NO_USES
            uses = composes()
            _set(self, "_uses", uses)
        return uses

    def known_uses(self) -> Uses | None:
        """``uses`` when known without compiling anything (None for a template not compiled yet)."""
        return None if self._uses is None and callable(self.composes) else self.uses

    def argument(self, name: str) -> Argument | None:
        by_name = self._by_name
        if by_name is None:
            by_name = {a.name: a for a in self.arguments}
            _set(self, "_by_name", by_name)
        return by_name.get(name)

    def unprepared(self) -> Callable[[], object] | None:
        """None when ``parsed`` answers at once, as a ``Prompt``'s does; else the blocking call that makes it
        so (a stored prompt's first parse, ``Offered``), which ``execution.when_ready`` runs off the event loop."""
        return None

    def parsed(self) -> Prompt:
        """Itself: a ``Prompt`` is an ``Offered`` whose prompt is at hand."""
        return self

    def descriptor(self, rev: Revision) -> dict[str, Any]:
        wire = self._wire  # a cache: filled in place, the record itself never changes
        if wire is None:
            wire = {}
            _set(self, "_wire", wire)
        cached = wire.get(rev.version)
        if cached is None:
            cached = wire[rev.version] = for_revision(self.listing(), rev)
        return cached

    def listing(self) -> dict[str, Any]:
        """The listing entry with everything any revision shows (title, icons, ``_meta``): each revision's
        ``descriptor`` is this, less what that revision lacks (``for_revision``)."""
        out: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.arguments:
            args, schema = _arguments_wire(self.arguments)
            out["arguments"] = args
        if self.icons:
            out["icons"] = list(self.icons)
        meta: dict[str, Any] = {}
        if self.arguments:
            meta[META_ARGUMENTS] = schema
        if self.tags:
            meta[META_TAGS] = sorted(self.tags)
        meta.update(self.meta)
        if meta:
            out["_meta"] = meta
        return out

    def __repr__(self) -> str:
        return f"Prompt({self.name!r}, source={self.source!r})"


#: How a frozen record fills its own caches.
_set = object.__setattr__
#: The fields a ``Prompt`` is made of (its caches aside): what ``replace`` copies.
FIELDS = tuple(name for name in Prompt.__slots__ if not name.startswith("_"))


def for_revision(listing: dict[str, Any], rev: Revision) -> dict[str, Any]:
    """A full listing entry (``Prompt.listing``) as ``rev`` shows it: without titles before 2025-06-18,
    ``_meta`` before 2025-06-18 and icons before 2025-11-25. Stored prompts keep the full entry and
    derive the rest here too, so every source's listing is shaped by this one function."""
    if rev.titles and rev.icons and rev.meta:
        return listing
    out = dict(listing)
    if not rev.titles:
        out.pop("title", None)
        if "arguments" in out:
            out["arguments"] = [{k: v for k, v in a.items() if k != "title"} if "title" in a else a
                                for a in out["arguments"]]
    if not rev.icons:
        out.pop("icons", None)
    if not rev.meta:
        out.pop("_meta", None)
    return out


#: Wire forms of argument lists, shared by every prompt with the same (immutable) arguments: libraries
#: repeat argument lists, and a 10,000-prompt listing then builds each form once.
_ARGS_WIRE: dict[tuple[Argument, ...], tuple[list[dict[str, Any]], dict[str, Any]]] = {}


def _arguments_wire(arguments: tuple[Argument, ...]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    cached = _ARGS_WIRE.get(arguments)
    if cached is not None:
        return cached
    args = []
    for a in arguments:
        entry: dict[str, Any] = {"name": a.name}
        if a.title is not None:
            entry["title"] = a.title
        if a.wire_description is not None:
            entry["description"] = a.wire_description
        entry["required"] = a.required
        args.append(entry)
    schema = {
        "type": "object",
        "properties": {a.name: a.json_schema() for a in arguments},
        "required": [a.name for a in arguments if a.required],
    }
    if len(_ARGS_WIRE) >= 4096:
        _ARGS_WIRE.clear()
    cached = _ARGS_WIRE[arguments] = (args, schema)
    return cached
