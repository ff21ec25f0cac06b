"""A label's prompts as the server lists and finds them, paged from the store's listing rather than held.

``StoredCatalog`` is the catalog of one label position: its first page is one indexed query whatever the
library's size. ``StoredPrompt`` is a prompt known by its listing entry, parsed from its file only when a
request first needs more (its arguments, its render). Both read the store through the ``Label`` that
serves them (``source.StoreSource``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TypeVar

import msgspec

from ...prompts.catalog import SUGGEST_LIMIT, Catalog, decode_cursor, encode_cursor, unknown_prompt
from ...prompts.spec import FrozenError, Offered, Prompt, for_revision
from ...protocol.errors import INTERNAL_ERROR, InvalidParams, McpError
from ...protocol.jsonrpc import encode_json
from ...protocol.revisions import Revision
from ..files.paths import is_prompt_path
from .database import Store
from .model import Entry, StoreError
from .schema import LISTING_HEAD

log = logging.getLogger("promptdeck.store")

META_VERSION = "promptdeck.dev/version"
META_LABEL = "promptdeck.dev/label"
_decode = msgspec.json.Decoder().decode
T = TypeVar("T")


class Label(Protocol):
    """The label a catalog and its prompts come from (``source.StoreSource``)."""

    @property
    def url(self) -> str: ...

    @property
    def label(self) -> str: ...

    def read(self, what: Callable[[Store], T], position: int | None = None) -> T:
        """``what(store)`` on the reading connection, at ``position``."""
        ...

    def load_prompt(self, prompt: StoredPrompt) -> Prompt:
        """``prompt`` parsed from its file."""
        ...


def listed(entry: Entry) -> bool:
    """Whether ``entry`` is a prompt file listed by this promptdeck's format (else it is read at once)."""
    return entry.listing is not None and entry.listing.startswith(LISTING_HEAD) and is_prompt_path(entry.path)


class StoredPrompt:
    """A prompt of a stored label (an ``Offered``): known by its listing entry, and wrapping the ``Prompt``
    its file parses to, parsed on first use.

    Its name, source, scopes, version and listing are known from the start, which is all a listing needs;
    the rest (arguments, render, ...) is its parsed prompt's, read through ``parsed()``, the one way to it.
    Parsing a large template takes seconds of CPU and may read the store, so a server on an event loop has
    it done first in a thread (``unprepared``, see ``execution.when_ready``). A frozen record, as a
    ``Prompt`` is: its parsed prompt is a cache, filled once.
    """

    __slots__ = ("name", "source", "scopes", "meta", "version", "position", "_listing", "_loader", "_parsed",
                 "_wire")
    name: str
    source: str
    scopes: frozenset[str]
    #: its version and label (``META_VERSION``, ``META_LABEL``): more ``_meta`` for its listing entry
    meta: dict[str, Any]
    version: int
    position: int
    _listing: str
    _loader: Callable[[StoredPrompt], Prompt]
    _parsed: Prompt | None
    _wire: dict[str, dict[str, Any]]

    def __init__(self, entry: Entry, position: int, label: str, loader: Callable[[StoredPrompt], Prompt]) -> None:
        _set(self, "name", entry.prompt or "")
        _set(self, "source", entry.path)
        _set(self, "scopes", frozenset(entry.scopes.split()) if entry.scopes else frozenset())
        _set(self, "meta", {META_VERSION: entry.version, META_LABEL: label})
        _set(self, "version", entry.version)
        _set(self, "position", position)
        _set(self, "_listing", entry.listing or "")
        _set(self, "_loader", loader)
        _set(self, "_parsed", None)
        _set(self, "_wire", {})

    def parsed(self) -> Prompt:
        """The prompt its file parses to, with this one's ``meta`` (its version and label): parsed on the
        first call, then kept."""
        parsed = self._parsed
        if parsed is None:
            # The file's own _meta (a model's settings) is in the listing already; what a render says of the
            # version it rendered (``handlers.served_meta``) is this prompt's.
            parsed = self._loader(self).replace(meta=self.meta)
            _set(self, "_parsed", parsed)
        return parsed

    def listing(self) -> dict[str, Any]:
        full: dict[str, Any] = _decode(self._listing)["d"]
        full["_meta"] = {**full.get("_meta", {}), **self.meta}
        return full

    def descriptor(self, rev: Revision) -> dict[str, Any]:
        cached = self._wire.get(rev.version)  # a cache, as a Prompt's: filled in place
        if cached is None:
            cached = self._wire[rev.version] = for_revision(self.listing(), rev)
        return cached

    def unprepared(self) -> Callable[[], object] | None:
        return None if self._parsed is not None else self.parsed

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r}: a stored prompt is read from its label")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r}: a stored prompt is read from its label")

    def __repr__(self) -> str:
        return f"StoredPrompt({self.name!r}, source={self.source!r}, version={self.version})"


_set = object.__setattr__


class StoredCatalog(Catalog):
    """A label position's catalog, paged from the store's listing rather than held: its first page is
    one indexed query whatever the library's size, and a prompt is a ``StoredPrompt`` (then cached)
    once a request names it. ``view`` narrows it in the query, by the scope sets a principal may see.
    """

    __slots__ = ("source", "position", "_allowed", "_count", "_found", "_grouped")
    #: prompts kept once found (their parsed templates with them); past this the cache starts again
    MAX_FOUND = 50_000

    def __init__(self, source: Label, position: int, page_size: int, allowed: tuple[str, ...] | None = None,
                 found: dict[str, StoredPrompt | None] | None = None) -> None:
        # Not Catalog.__init__: it takes every prompt, which is what this does without.
        self.source = source
        self.position = position
        self.page_size = page_size
        #: the scope sets (space-separated) this view may see besides unscoped prompts; None: all
        self._allowed = allowed
        self._pages = {}
        self._signature = None
        self._views = {}
        self._count: int | None = None
        #: name -> its prompt, or None when the position has none by that name; shared by the views
        self._found: dict[str, StoredPrompt | None] = {} if found is None else found
        self._groups = [frozenset(s.split()) for s in allowed] if allowed is not None else []
        #: whether ``_groups`` is known (read on first need: making a catalog never touches the store)
        self._grouped = allowed is not None

    def _scope_groups(self) -> list[frozenset[str]]:
        if not self._grouped:
            sets = self._read(lambda store: store.reads.scope_sets(self.position))
            self._groups = sorted((frozenset(s.split()) for s in sets), key=sorted)
            self._grouped = True
        return self._groups

    def _narrowed(self, visible: tuple[frozenset[str], ...]) -> Catalog:
        return StoredCatalog(self.source, self.position, self.page_size, tuple(" ".join(sorted(g)) for g in visible),
                             self._found)

    def _read(self, what: Callable[[Store], T]) -> T:
        try:
            return self.source.read(what, self.position)
        except StoreError as exc:
            log.error("label %s cannot be listed: %s", self.source.label, exc)
            raise McpError("the prompt list cannot be read from the store now; try again",
                           code=INTERNAL_ERROR) from None

    def _prompt(self, entry: Entry) -> StoredPrompt:
        prompt = StoredPrompt(entry, self.position, self.source.label, self.source.load_prompt)
        if len(self._found) >= self.MAX_FOUND:
            self._found.clear()
        self._found[prompt.name] = prompt
        return prompt

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._read(lambda store: store.reads.listed_count(self.position, self._allowed))
        return self._count

    def __iter__(self) -> Iterator[Offered]:
        return self.after("")

    def after(self, name: str) -> Iterator[Offered]:
        after = name
        while entries := self._read(functools.partial(_listed_after, self.position, after, self._allowed)):
            for entry in entries:
                yield self._found.get(entry.prompt or "") or self._prompt(entry)
            after = entries[-1].prompt or ""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    @property
    def names(self) -> list[str]:
        return [prompt.name for prompt in self]

    def get(self, name: str) -> Offered | None:
        if name in self._found:
            prompt = self._found[name]
        else:
            entries = self._read(lambda store: store.reads.listed(self.position, name=name))
            prompt = self._prompt(entries[0]) if entries else None
            if prompt is None:
                self._found[name] = None
        if prompt is not None and self._allowed is not None and prompt.scopes \
                and " ".join(sorted(prompt.scopes)) not in self._allowed:
            return None
        return prompt

    def require(self, name: object) -> Offered:
        if not isinstance(name, str):
            raise InvalidParams('"name" must be a string naming a prompt')
        prompt = self.get(name)
        if prompt is None:
            # The names this principal's view lists, read only when there are few enough to compare with.
            raise unknown_prompt(name, self.names if len(self) <= SUGGEST_LIMIT else ())
        return prompt

    def page(self, rev: Revision, cursor: object = None, extra: dict[str, Any] | None = None,
             extra_key: str = "") -> bytes:
        after = "" if cursor is None else decode_cursor(cursor)
        key = (rev.version, after, extra_key)
        cached = self._pages.get(key)
        if cached is None:
            entries = self._read(lambda store: store.reads.listed(self.position, after=after, limit=self.page_size + 1,
                                                                  scopes=self._allowed))
            shown = [self._found.get(entry.prompt or "") or self._prompt(entry) for entry in entries[:self.page_size]]
            result: dict[str, Any] = {"prompts": [prompt.descriptor(rev) for prompt in shown]}
            if len(entries) > self.page_size:
                result["nextCursor"] = encode_cursor(shown[-1].name)
            if len(self._pages) >= 1024:
                self._pages.clear()
            cached = self._pages[key] = encode_json({**result, **(extra or {})})
        return cached

    def signature(self) -> bytes:
        # A position is immutable: two catalogs of one position list the same.
        return encode_json(["stored", self.source.url, self.source.label, self.position, self._allowed])


def _listed_after(position: int, after: str, scopes: tuple[str, ...] | None, store: Store) -> list[Entry]:
    return store.reads.listed(position, after=after, limit=1000, scopes=scopes)
