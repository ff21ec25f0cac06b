"""Resources: what a client reads by URI, from every provider a server has, as one principal may see them.

A ``ResourceProvider`` answers for the URIs it owns: it lists the resources a ``Sight`` (a principal and
the prompts it may see) may read, reads one, and stamps one so that a change can be told to subscribers.
A source gives its providers (``Source.resources``): a folder of prompt files gives its library files
(``sources.files.resources``), a store's label the same of its copy. Another kind (an Agent Skill's files
under ``skill://``) is one more provider, and the methods in ``server.resources`` answer for it unchanged.

``ResourceCatalog`` is the server's resources for one catalog snapshot, as ``Catalog`` is its prompts:
listings are made once per snapshot and principal's view, sorted by URI and paged with opaque cursors
(the last URI of the page before, as prompt pages name their last prompt), and each page is encoded once
per revision. A URI that two providers list is the first one's, as a prompt name is the first source's.

Whatever a principal may not read answers exactly as a URI nobody serves: -32602 "Resource not found"
(``not_found``), with nothing read. Providers say None for both, and never why.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ..protocol.content import MAX_URI_CHARS as MAX_URI_CHARS  # where the catalogs and their tests read it
from ..protocol.content import ResourceLink, resource_to_wire
from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import encode_json
from ..protocol.revisions import Revision
from .catalog import DEFAULT_PAGE_SIZE, decode_cursor, encode_cursor

if TYPE_CHECKING:
    from ..protocol.content import ResourceContents
    from .catalog import Catalog

#: A ``resources/list`` entry: the spec's ``Resource`` is a ``resource_link`` block without its type.
Resource = ResourceLink

#: The most resources one listing holds (providers stop there and log it); reading is not bounded by it.
MAX_LISTED = 50_000


class Template(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One entry of ``resources/templates/list``: a URI template (RFC 6570) of resources a provider reads."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None

    def to_wire(self, rev: Revision) -> dict[str, Any]:
        """As ``rev`` shows it: ``title`` from 2025-06-18."""
        given = {"title": self.title if rev.titles else None, "description": self.description,
                 "mimeType": self.mime_type}
        out: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        return out | {key: value for key, value in given.items() if value is not None}


class Sight:
    """Who reads: a principal's scopes (None: trusted, as over stdio) and the prompts it may see.

    One per catalog snapshot, view and scopes (``ResourceCatalog.sight``). ``memo`` is shared by the sights
    of one view: a provider keeps there what it works out from the view alone (which files its prompts
    reach), once for every request of that view; what depends on ``held`` too is not kept there.
    """

    __slots__ = ("held", "prompts", "memo", "listing")

    def __init__(self, held: frozenset[str] | None, prompts: Catalog, memo: dict[object, Any] | None = None) -> None:
        self.held = held
        self.prompts = prompts
        self.memo: dict[object, Any] = {} if memo is None else memo
        #: what it may read, once listed (``ResourceCatalog.listing``)
        self.listing: Listing | None = None


class ResourceProvider:
    """Where some of a server's resources come from. ``resources`` and ``read`` are all a provider must have.

    Every method answers for one ``Sight``: what that principal may not read is not there, exactly as a
    URI the provider does not serve (None from ``read`` and ``stamp``, never an error saying why).
    Methods may block (they read files, a stored prompt may be parsed): on an event loop the server runs
    them in its render threads.
    """

    def resources(self, sight: Sight) -> Iterable[Resource]:
        """What ``sight`` may read and this provider lists, in any order (at most ``MAX_LISTED``)."""
        raise NotImplementedError

    def read(self, uri: str, sight: Sight) -> ResourceContents | None:
        """The contents at ``uri``, or None when this provider serves no such resource to ``sight``."""
        raise NotImplementedError

    def stamp(self, uri: str, sight: Sight) -> Hashable | None:
        """A value that changes when the resource at ``uri`` does (None: not served to ``sight``), for
        ``notifications/resources/updated``. Without one, subscribers of its URIs are never told."""
        return None

    def templates(self) -> Iterable[Template]:
        """URI templates of what this provider reads (``resources/templates/list``)."""
        return ()


def not_found(uri: object) -> InvalidParams:
    """The one answer for a URI that is not read: unknown, hidden, malformed, refused or too large alike."""
    text = uri if isinstance(uri, str) else ""
    shown = repr(text if len(text) <= 200 else text[:200] + "...")
    data = {"uri": text} if isinstance(uri, str) and len(uri) <= MAX_URI_CHARS else None
    return InvalidParams(f"Resource not found: {shown}", data)


class Listing:
    """The resources one view may read, sorted by URI, with its pages encoded on first use."""

    __slots__ = ("uris", "entries", "page_size", "_pages")

    def __init__(self, entries: Iterable[Resource], page_size: int) -> None:
        by_uri: dict[str, Resource] = {}
        for entry in entries:
            by_uri.setdefault(entry.uri, entry)  # the first provider's, as for prompts
        self.uris = sorted(by_uri)[:MAX_LISTED]
        self.entries = [by_uri[uri] for uri in self.uris]
        self.page_size = page_size
        self._pages: dict[tuple[str, int, str], bytes] = {}

    def page(self, rev: Revision, cursor: object, extra: dict[str, Any] | None, extra_key: str) -> bytes:
        start = 0 if cursor is None else bisect_right(self.uris, decode_cursor(cursor))
        key = (rev.version, start, extra_key)
        cached = self._pages.get(key)
        if cached is None:
            shown = self.entries[start:start + self.page_size]
            result: dict[str, Any] = {"resources": [listed_entry(entry, rev) for entry in shown]}
            if start + self.page_size < len(self.uris):
                result["nextCursor"] = encode_cursor(shown[-1].uri)
            if len(self._pages) >= 1024:
                self._pages.clear()
            cached = self._pages[key] = encode_json({**result, **(extra or {})})
        return cached


def listed_entry(resource: Resource, rev: Revision) -> dict[str, Any]:
    """A ``Resource`` as ``rev`` lists it (``resources/list``, ``resources/directory/read``)."""
    out = resource_to_wire(resource, rev)
    if resource.annotations is not None and (annotations := resource.annotations.to_wire(rev)):
        out["annotations"] = annotations
    if resource.meta is not None and rev.meta:
        out["_meta"] = resource.meta
    return out


class ResourceCatalog:
    """The resources of every provider, for one catalog snapshot (``PromptServer.resources``)."""

    __slots__ = ("providers", "prompts", "page_size", "_sights", "_memos", "_templates")

    def __init__(self, providers: Sequence[ResourceProvider], prompts: Catalog,
                 page_size: int = DEFAULT_PAGE_SIZE) -> None:
        self.providers = tuple(providers)
        self.prompts = prompts
        self.page_size = page_size
        #: a sight per view of ``prompts`` and scopes, and the memo of each view (a sight holds its view, so
        #: the id stays its own while the sight is kept)
        self._sights: dict[tuple[int, frozenset[str] | None], Sight] = {}
        self._memos: dict[int, tuple[Catalog, dict[object, Any]]] = {}
        self._templates: list[Template] | None = None

    @property
    def restricted(self) -> bool:
        """Whether what is listed depends on who asks (it follows the prompts each principal may see)."""
        return self.prompts.restricted

    def sight(self, held: frozenset[str] | None) -> Sight:
        """The sight of a principal holding ``held``: its view of the prompts, and what is worked out from it."""
        view = self.prompts.view(held)
        sight = self._sights.get((id(view), held))
        if sight is None or sight.prompts is not view:
            if len(self._sights) >= 256:
                self._sights.clear()
                self._memos.clear()
            memo = self._memos.get(id(view))
            if memo is None or memo[0] is not view:
                memo = self._memos[id(view)] = (view, {})
            sight = self._sights[id(view), held] = Sight(held, view, memo[1])
        return sight

    def listing(self, sight: Sight) -> Listing:
        listing = sight.listing
        if listing is None:
            listing = sight.listing = Listing(
                (entry for provider in self.providers for entry in provider.resources(sight)), self.page_size)
        return listing

    def page(self, sight: Sight, rev: Revision, cursor: object = None, extra: dict[str, Any] | None = None,
             extra_key: str = "") -> bytes:
        """One encoded ``resources/list`` page for ``sight``, with ``extra`` fields (named by ``extra_key``)."""
        return self.listing(sight).page(rev, cursor, extra, extra_key)

    def templates(self, rev: Revision, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``resources/templates/list`` result: every provider's templates, one page."""
        if self._templates is None:
            seen: dict[str, Template] = {}
            for provider in self.providers:
                for template in provider.templates():
                    seen.setdefault(template.uri_template, template)
            self._templates = list(seen.values())
        return {"resourceTemplates": [template.to_wire(rev) for template in self._templates], **(extra or {})}

    def read(self, uri: object, sight: Sight) -> ResourceContents:
        """The contents at ``uri`` for ``sight``, from the first provider that serves it; ``not_found`` else."""
        if isinstance(uri, str) and 0 < len(uri) <= MAX_URI_CHARS:
            for provider in self.providers:
                contents = provider.read(uri, sight)
                if contents is not None:
                    return contents
        raise not_found(uri)

    def stamp(self, uri: str, sight: Sight) -> Hashable | None:
        """What ``uri`` is now for ``sight`` (``ResourceProvider.stamp``); None when it is not served to it."""
        if 0 < len(uri) <= MAX_URI_CHARS:
            for provider in self.providers:
                stamp = provider.stamp(uri, sight)
                if stamp is not None:
                    return stamp
        return None

    def signature(self, sight: Sight) -> tuple[str, ...]:
        """Which URIs ``sight`` may read now: ``notifications/resources/list_changed`` when this changes."""
        return tuple(self.listing(sight).uris)
