"""``Prompts``: a prompt library rendered where the model is called.

``Prompts(source)`` takes a folder, a store URL (``sqlite:///…``, ``postgresql://…``) or the URL of any MCP
server (``http(s)://…``). Folders and stores render in this process (``local.LocalLibrary``: the
server's own render path, no network per render); a server renders through ``prompts/get``
(``client.library.RemoteLibrary``), and when it cannot be reached the cache of an earlier sync
(``cache=``) or a folder (``fallback=``) renders instead, and the result says ``stale``.

Who is asking: with no ``token``, a local source renders as a trusted local client does (``serve`` over
stdio, the CLI): every prompt. With ``token``, a local source looks it up in the tokens ``serve
--token-file`` reads (``tokens=`` a file, else ``$PROMPTDECK_TOKENS``) and sees what that principal sees
over MCP; a remote gets it as its bearer token.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from ..prompts.plain import PlainRender
from ..protocol.errors import ConnectionFailed, LibraryError
from ..server import handlers
from ..sources.store.model import StoreError
from . import tracing
from .local import LocalLibrary, folder_problems, is_store_url
from .rendered import PromptListing, Rendered

if TYPE_CHECKING:
    from ..client.cache import RenderCache
    from ..client.library import RemoteLibrary
    from ..prompts.spec import Offered

log = logging.getLogger("promptdeck.application")
#: How long a request to a remote server may take (each try), unless ``timeout=`` says otherwise.
TIMEOUT = 5.0
#: Listings kept per prompt object (a folder's catalog holds each prompt until it changes).
_MAX_LISTINGS = 65_536


class Prompts:
    """The prompts of a folder, a store label or an MCP server, rendered for an application.

    >>> with Prompts("examples/prompts") as prompts:          # doctest: +SKIP
    ...     rendered = prompts.render("summarize", text="...")
    ...     rendered.messages, rendered.model
    """

    def __init__(self, source: str, *, label: str = "production", token: str | None = None,
                 tokens: str | None = None, auth: Any = None, fallback: str | None = None, cache: str | None = None,
                 timeout: float = TIMEOUT, retries: int = 2, watch: bool = True, trace: bool | None = None,
                 span: bool = False) -> None:
        """``label``: a store's label to follow. ``token``: who asks (see the module); ``auth``, for a server,
        what supplies its bearer token instead (an ``OAuth()``, docs/client.md). ``fallback``: a folder
        rendered when the source cannot be reached (refused now if ``promptdeck check`` would find a problem
        in it). ``cache``: for a server, a folder that keeps the last good listing and renders
        (``client.cache``; a folder not the user's alone, or open to others' writes, is a LibraryError, now or
        when read). ``timeout``: each request to a server, tried ``retries`` more times when it
        cannot reach it. ``watch``: a folder follows its file changes. ``trace``: put renders on
        OpenTelemetry spans (None: when the application has imported ``opentelemetry``); ``span``: open a
        span per render rather than annotate the current one."""
        self.source = source
        self.label = label
        self._trace = trace
        self._span = span
        self._local: LocalLibrary | None = None
        self._remote: RemoteLibrary | None = None
        self._cache: RenderCache | None = None
        self._fallback: LocalLibrary | None = None
        self._listings: dict[int, tuple[Offered, PromptListing]] = {}
        self._listings_lock = threading.Lock()
        self._plains: dict[int, tuple[Offered, tuple[PlainRender, Rendered] | None]] = {}
        self._cached_listing: object = None
        self._scopes: frozenset[str] | None = None
        self.remote = source.startswith(("http://", "https://"))
        self._closed = False
        _check_options(source, self.remote, tokens=tokens, auth=auth, fallback=fallback, cache=cache)
        if fallback is not None:
            problems = folder_problems(fallback)
            if problems:
                raise LibraryError(f"the fallback folder {fallback!r} has {len(problems)} problem"
                                   f"{'s' * (len(problems) != 1)} (promptdeck check {fallback}):\n"
                                   + "\n".join(problems))
            self._fallback = LocalLibrary(fallback, watch=False)
        try:
            if self.remote:
                from ..client.library import RemoteLibrary

                self._remote = RemoteLibrary(source, token=token, auth=auth, timeout=timeout, retries=retries)
                if cache is not None:
                    from ..client.cache import RenderCache

                    self._cache = RenderCache(cache, source, token)
            else:
                self._scopes = _scopes_of(token, tokens)
                try:
                    self._local = LocalLibrary(source, label=label, watch=watch)
                except StoreError as exc:
                    if self._fallback is None:
                        raise
                    # A store away when the application starts: the fallback serves, stale, for this Prompts'
                    # life (once open, a label keeps its own last good copy through an outage).
                    log.error("%s; rendering from the fallback folder %s", exc, fallback)
        except BaseException:
            self.close()
            raise

    # -- rendering ------------------------------------------------------------------------------

    def render(self, name: str, /, **arguments: Any) -> Rendered:
        """Render ``name`` with ``arguments``: the messages ``prompts/get`` gives. An unknown prompt or
        argument raises ``InvalidParams`` naming it; a server that cannot be reached, with nothing to fall
        back on, ``ConnectionFailed`` naming the server and the cause. Safe from any number of threads."""
        trace = tracing.api(self._trace)
        if trace is None or not self._span:
            rendered = self._render(name, arguments)
            if trace is not None:
                tracing.record(trace, rendered)
            return rendered
        return self._traced(trace, name, lambda: self._render(name, arguments))

    async def arender(self, name: str, /, **arguments: Any) -> Rendered:
        """``render`` for coroutines: it never blocks the event loop."""
        trace = tracing.api(self._trace)
        with tracing.own_span(trace, name) if trace is not None and self._span else nullcontext() as span:
            rendered = await self._arender(name, arguments)
            if trace is not None:
                tracing.record(trace, rendered, span)
            return rendered

    def _traced(self, trace: Any, name: str, render: Callable[[], Rendered]) -> Rendered:
        with tracing.own_span(trace, name) as span:
            rendered = render()
            tracing.record(trace, rendered, span)
            return rendered

    def _render(self, name: str, arguments: dict[str, Any]) -> Rendered:
        self._check_open()
        if self._local is not None:
            return self._rendered_locally(self._local, name, arguments, self._scopes, False)
        if self._remote is None:  # a store that could not be opened
            return self._from_fallback(name, arguments)
        try:
            result, entry = self._remote.call(self._remote.render(name, arguments))
        except ConnectionFailed as exc:
            return self._instead(name, arguments, exc)
        return self._rendered_remotely(name, arguments, result, entry)

    async def _arender(self, name: str, arguments: dict[str, Any]) -> Rendered:
        self._check_open()
        if self._local is not None:
            prompt = self._local.find(name, arguments, self._scopes)
            rendered = self._plainly(self._local, prompt, arguments, False)
            if rendered is not None:
                return rendered
            result = await self._local.arender(prompt, arguments)
            return self._made(self._local, prompt, result, False)
        if self._remote is None:
            return self._from_fallback(name, arguments)
        try:
            result, entry = await self._remote.acall(self._remote.render(name, arguments))
        except ConnectionFailed as exc:
            return self._instead(name, arguments, exc)
        return self._rendered_remotely(name, arguments, result, entry)

    def _rendered_locally(self, library: LocalLibrary, name: str, arguments: dict[str, Any],
                          scopes: frozenset[str] | None, stale: bool) -> Rendered:
        prompt = library.find(name, arguments, scopes)
        rendered = self._plainly(library, prompt, arguments, stale)
        if rendered is not None:
            return rendered
        return self._made(library, prompt, library.render(prompt, arguments), stale)

    def _plainly(self, library: LocalLibrary, prompt: Offered, arguments: dict[str, Any],
                 stale: bool) -> Rendered | None:
        """``prompt`` rendered by its precompiled render (``_plain_of``); None when it has none or cannot."""
        plain = self._plain_of(library, prompt)
        if plain is None:
            return None
        messages = plain[0].messages(arguments)
        return None if messages is None else plain[1].with_messages(messages, stale or library.unreachable)

    def _plain_of(self, library: LocalLibrary, prompt: Offered) -> tuple[PlainRender, Rendered] | None:
        """For a plain prompt (text that only substitutes names), its precompiled render (``prompts.plain``) and
        what every render of it says besides its messages, made on its first render; None for any other.

        Its renders are then a check of the arguments, a join per message and one ``Rendered``: what
        ``library.render`` then ``_made`` make of it, without the calls between (``prompts/get``'s params, the
        general render, the result's ``_meta`` read back). Scopes were applied in finding ``prompt``; a plain
        prompt reads no file and cannot loop, so no deadline is needed (``plain_render``)."""
        held = self._plains.get(id(prompt))
        if held is not None and held[0] is prompt:
            return held[1]
        if prompt.unprepared() is not None:  # not parsed yet: the general way parses it, off any event loop
            return None
        parsed = prompt.parsed()
        made = PlainRender.of(parsed)
        plain = None
        if made is not None:
            result: dict[str, Any] = {"description": parsed.description, "messages": [],
                                      "_meta": handlers.served_meta(prompt)}
            plain = made, Rendered.of_result(prompt.name, result, self._listing_of(prompt), False, library.shown,
                                             library.label)
        with self._listings_lock:
            if len(self._plains) >= _MAX_LISTINGS:
                self._plains.clear()
            self._plains[id(prompt)] = (prompt, plain)
        return plain

    def _made(self, library: LocalLibrary, prompt: Offered, result: dict[str, Any], stale: bool) -> Rendered:
        # A store serving its last good copy because it cannot be reached renders stale too.
        return Rendered.of_result(prompt.name, result, self._listing_of(prompt), stale or library.unreachable,
                                  library.shown, library.label)

    def _rendered_remotely(self, name: str, arguments: dict[str, Any], result: dict[str, Any],
                           entry: Mapping[str, Any] | None) -> Rendered:
        listing = PromptListing.from_wire(entry) if entry is not None else PromptListing(name)
        if self._cache is not None:
            self._cache.put_render(name, arguments, result)
            self._keep_listing()
        return Rendered.of_result(name, result, listing, False, self.source)

    def _instead(self, name: str, arguments: dict[str, Any], failure: ConnectionFailed) -> Rendered:
        """What renders when the server cannot be reached: the cache's copy of exactly this render, else the
        fallback folder; else ``failure``, saying what was tried."""
        if self._cache is not None:
            result = self._cache.render(name, arguments)
            if result is not None:
                entry = next((e for e in self._cache.listing() or () if e.get("name") == name), None)
                listing = PromptListing.from_wire(entry) if entry is not None else PromptListing(name)
                return Rendered.of_result(name, result, listing, True, str(self._cache.path))
        if self._fallback is not None:
            return self._from_fallback(name, arguments)
        tried = "; the cache holds no render of it with these arguments" if self._cache is not None else ""
        raise ConnectionFailed(f"{failure}{tried}") from failure

    def _from_fallback(self, name: str, arguments: dict[str, Any]) -> Rendered:
        assert self._fallback is not None
        return self._rendered_locally(self._fallback, name, arguments, self._scopes, True)

    # -- listing --------------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The names of the prompts this source offers (to this token), sorted."""
        return sorted(self._entries())

    def get(self, name: str) -> PromptListing:
        """The listing of ``name``: its arguments, description and settings for the model."""
        found = self._entries().get(name)
        if found is None:
            from ..prompts.catalog import unknown_prompt

            raise unknown_prompt(name, list(self._entries()))
        return found

    def _entries(self) -> dict[str, PromptListing]:
        self._check_open()
        if self._local is not None:
            return {p.name: self._listing_of(p) for p in self._local.catalog(self._scopes)}
        if self._remote is None:
            assert self._fallback is not None
            return {p.name: self._listing_of(p) for p in self._fallback.catalog(self._scopes)}
        try:
            entries = self._remote.call(self._remote.entries())
        except ConnectionFailed as exc:
            cached = self._cache.listing() if self._cache is not None else None
            if cached is not None:
                return {e["name"]: PromptListing.from_wire(e) for e in cached}
            if self._fallback is not None:
                return {p.name: self._listing_of(p) for p in self._fallback.catalog(self._scopes)}
            raise ConnectionFailed(str(exc)) from exc
        if self._cache is not None:
            self._keep_listing()
        return {name: PromptListing.from_wire(entry) for name, entry in entries.items()}

    def _keep_listing(self) -> None:
        """Write the remote's listing to the cache when it is not the one written last."""
        assert self._remote is not None and self._cache is not None
        entries = self._remote.last_entries
        if entries is not self._cached_listing:
            self._cached_listing = entries
            self._cache.put_listing(list(entries.values()))

    def _listing_of(self, prompt: Offered) -> PromptListing:
        held = self._listings.get(id(prompt))
        if held is not None and held[0] is prompt:
            return held[1]
        listing = PromptListing.from_wire(prompt.listing())
        with self._listings_lock:
            if len(self._listings) >= _MAX_LISTINGS:
                self._listings.clear()
            self._listings[id(prompt)] = (prompt, listing)
        return listing

    # -- ending ---------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise LibraryError(f"{self!r} is closed")

    def close(self) -> None:
        """Stop following the source and end any connection."""
        self._closed = True
        for part in (self._local, self._remote, self._fallback):
            if part is not None:
                part.close()
        self._local = self._fallback = None

    def __enter__(self) -> Prompts:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Prompts({self.source!r})"


def _check_options(source: str, remote: bool, *, tokens: str | None, auth: Any, fallback: str | None,
                   cache: str | None) -> None:
    """Refuse options that do not fit the kind of source, before anything is opened."""
    if remote and tokens is not None:
        raise ValueError("tokens= is for a folder or a store; a server checks the token itself")
    if not remote and auth is not None:
        raise ValueError("auth= is for an MCP server; a folder or a store takes token= and tokens=")
    if not remote and cache is not None:
        raise ValueError("cache= is for an MCP server; a folder or a store is its own copy")
    if not remote and fallback is not None and not is_store_url(source):
        raise ValueError("fallback= is for a store or an MCP server; a folder is read from disk")


def _scopes_of(token: str | None, tokens: str | None) -> frozenset[str] | None:
    """The scopes of the principal ``token`` names in the server's token configuration; None (trusted, as a
    local client) without a token."""
    if token is None:
        if tokens is not None:
            raise ValueError("tokens= names who may ask; give the token= that asks too")
        return None
    from ..server.security.tokens import BearerTokens

    known = BearerTokens.load(tokens)
    if known is None:
        raise LibraryError("a token was given, but no tokens are configured to look it up in: pass tokens= (the "
                           "file `serve --token-file` reads) or set $PROMPTDECK_TOKENS")
    principal = known.principal(f"Bearer {token}")
    if principal is None:
        raise LibraryError(f"the token is not one of those in {tokens or '$PROMPTDECK_TOKENS'}")
    return principal.scopes


__all__ = ["Prompts"]
