"""``Prompts``: a prompt library rendered where the model is called.

``Prompts(source)`` takes a folder, a store URL (``sqlite:///…``, ``postgresql://…``) or the URL of any MCP
server (``http(s)://…``). Folders and stores render in this process (``local.LocalLibrary``: the
server's own render path, no network per render); a server renders through ``prompts/get``
(``client.library.RemoteLibrary``), and when it cannot be reached the cache of an earlier sync
(``cache=``) or a folder (``fallback=``) renders instead, and the result says ``stale``.

A bundle (``bundle=``, ``sources.store.bundle``: a label's files in one file, made by ``promptdeck bundle``)
serves from the start without reaching the source, stale, while a thread (``bundled.Revalidation``) tries the
source every ``refresh`` seconds; once it answers, it replaces the bundle for good. A ``fallback=`` may also be
a callable, called with the prompt's name and arguments when nothing else can render.

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
from .bundled import Bundled, Revalidation, refresh_seconds
from .local import LocalLibrary, folder_problems, is_store_url
from .rendered import PromptListing, Rendered

if TYPE_CHECKING:
    from ..client.cache import RenderCache
    from ..client.library import RemoteLibrary
    from ..prompts.spec import Offered
    from ..sources.store.bundle import Bundle

#: A ``fallback=`` that is code: (name, arguments) -> a ``Rendered`` or a ``prompts/get`` result.
Fallback = Callable[[str, dict[str, Any]], "Rendered | Mapping[str, Any]"]

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
                 tokens: str | None = None, auth: Any = None, fallback: str | Fallback | None = None,
                 cache: str | None = None, timeout: float = TIMEOUT, retries: int = 2, watch: bool = True,
                 trace: bool | None = None, span: bool = False, bundle: str | None = None,
                 bundle_key: str | bytes | None = None, refresh: float = 30.0,
                 app: str | None = None, key: Callable[[], str | None] | None = None) -> None:
        """``label``: a store's label to follow. ``token``: who asks (see the module); ``auth``, for a server,
        what supplies its bearer token instead (an ``OAuth()``, docs/client.md). ``fallback``: a folder
        rendered when the source cannot be reached (refused now if ``promptdeck check`` would find a problem
        in it). ``cache``: for a server, a folder that keeps the last good listing and renders
        (``client.cache``; a folder not the user's alone, or open to others' writes, is a LibraryError, now or
        when read). ``timeout``: each request to a server, tried ``retries`` more times when it
        cannot reach it. ``watch``: a folder follows its file changes. ``trace``: put renders on
        OpenTelemetry spans (None: when the application has imported ``opentelemetry``); ``span``: open a
        span per render rather than annotate the current one. ``fallback`` may also be a callable, given the
        name and arguments, returning a ``Rendered`` or a ``prompts/get`` result. ``bundle``: a file made by
        ``promptdeck bundle`` for this source and label, served (stale) until the source answers, tried every
        ``refresh`` seconds; ``bundle_key``: the PEM Ed25519 public key (or a file holding it) its signature
        must match. ``app``: the application's name, which its renders are counted under in usage
        (``promptdeck usage``), as an MCP client's ``clientInfo.name`` is. ``key``: called at each render that is
        given no ``key=``, its rollout key (say the user's or the tenant's id; None: none)."""
        self.source = source
        self.label = label
        self._app = app
        self._trace = trace
        self._span = span
        self._local: LocalLibrary | None = None
        self._remote: RemoteLibrary | None = None
        self._cache: RenderCache | None = None
        self._fallback: LocalLibrary | None = None
        self._fallback_call: Fallback | None = None
        self._bundled: Bundled | None = None
        self._revalidation: Revalidation | None = None
        self._swap = threading.Lock()
        #: id of a prompt (or of a server's listing entry) -> (it, its listing): made once, not per render
        self._listings: dict[int, tuple[object, PromptListing]] = {}
        self._listings_lock = threading.Lock()
        self._plains: dict[int, tuple[Offered, tuple[PlainRender, Rendered] | None]] = {}
        self._cached_listing: object = None
        self._scopes: frozenset[str] | None = None
        #: what keeps a token's renders on one arm of a rollout when no key is given: its principal's key, as
        #: the server has it (``Principal.rollout_key``); None without a token
        self._sticky: str | None = None
        self._key = key
        self.remote = source.startswith(("http://", "https://"))
        self._closed = False
        _check_options(source, self.remote, tokens=tokens, auth=auth, fallback=fallback, cache=cache, bundle=bundle)
        refresh = refresh_seconds(refresh)
        if callable(fallback):
            self._fallback_call = fallback
        elif fallback is not None:
            problems = folder_problems(fallback)
            if problems:
                raise LibraryError(f"the fallback folder {fallback!r} has {len(problems)} problem"
                                   f"{'s' * (len(problems) != 1)} (promptdeck check {fallback}):\n"
                                   + "\n".join(problems))
            self._fallback = LocalLibrary(fallback, watch=False, app=app)
        try:
            if self.remote:
                from ..client.library import RemoteLibrary

                self._remote = RemoteLibrary(source, token=token, auth=auth, timeout=timeout, retries=retries)
                if cache is not None:
                    from ..client.cache import RenderCache

                    self._cache = RenderCache(cache, source, token)
                if bundle is not None:
                    self._start_from(bundle, bundle_key, refresh, watch)
            else:
                self._scopes, self._sticky = _principal_of(token, tokens)
                if bundle is not None:
                    self._start_from(bundle, bundle_key, refresh, watch)
                    return
                try:
                    self._local = LocalLibrary(source, label=label, watch=watch, app=app)
                except StoreError as exc:
                    if self._fallback is None and self._fallback_call is None:
                        raise
                    # A store away when the application starts: the fallback serves, stale, for this Prompts'
                    # life (once open, a label keeps its own last good copy through an outage).
                    log.error("%s; rendering from the fallback %s", exc,
                              f"folder {fallback}" if self._fallback is not None else "callable")
        except BaseException:
            self.close()
            raise

    # -- a bundle, then the source ----------------------------------------------------------------

    def _start_from(self, bundle: str, key: str | bytes | None, refresh: float, watch: bool) -> None:
        """Serve ``bundle`` now, and try the source in the background until it answers."""
        from ..sources.store.urls import shown_url

        shown = self.source if self.remote else shown_url(self.source)
        self._bundled = Bundled(bundle, source=shown, label=self.label, key=_key_bytes(key))
        self._revalidation = Revalidation(lambda: self._try_source(watch), refresh, shown)
        self._revalidation.start()

    def _try_source(self, watch: bool) -> bool:
        """Reach the source once; True when it answered (and, for a store, is now what renders)."""
        if self._remote is not None:
            try:
                self._remote.call(self._remote.entries())
            finally:
                # These tries are not renders: their failures must neither open the breaker (which would hold
                # the next try back for its 30 s rather than ``refresh``) nor keep it open against the renders
                # once the server answers.
                self._remote.breaker.succeeded("prompts/list")
            return True
        library = LocalLibrary(self.source, label=self.label, watch=watch, app=self._app)
        with self._swap:
            if self._closed:
                library.close()
            else:
                self._local = library  # one assignment: a render reads either library whole
        log.info("%s answered; rendering from it rather than the bundle %s", library.shown,
                 self._bundled.path if self._bundled is not None else "")
        return True

    def _on_bundle(self) -> Bundled | None:
        """The bundle, while it is what renders: the source has not answered yet."""
        bundled = self._bundled
        if bundled is None or self._local is not None:
            return None
        revalidation = self._revalidation
        if self._remote is not None and revalidation is not None and revalidation.answered.is_set():
            return None
        return bundled

    def _from_bundle(self, bundled: Bundled, name: str, arguments: dict[str, Any]) -> Rendered:
        prompt = bundled.library.find(name, arguments, self._scopes)
        result = bundled.library.render(prompt, arguments)
        return Rendered.of_result(prompt.name, result, bundled.listing(prompt, self._listing_of(prompt)), True,
                                  bundled.path, bundled.bundle.label)

    @property
    def bundle(self) -> Bundle | None:
        """The bundle given (its source, label, position, and the principal it was cut to), or None."""
        return self._bundled.bundle if self._bundled is not None else None

    @property
    def stale(self) -> bool:
        """Whether renders come from a copy now, not the source: a bundle the source has not replaced yet, a
        store's last good copy, the fallback of a store that could not be opened. (A server away once it
        answered shows on each render's ``stale``: whether it answers is known only by asking.)"""
        if self._local is not None:
            return self._local.unreachable
        return self._remote is None or self._on_bundle() is not None

    # -- rendering ------------------------------------------------------------------------------

    def render(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, key: str | None = None,
               **more: Any) -> Rendered:
        """Render ``name`` with ``arguments`` (a mapping, and/or as keywords): the messages ``prompts/get``
        gives. ``key``: the rollout key (the request's ``_meta["promptdeck.dev/rollout-key"]``): during a store's
        rollout, the version it gives is rendered, the same for the same key, as for an MCP client sending it
        (default: the ``key`` function given to ``Prompts``). An unknown prompt or argument raises
        ``InvalidParams`` naming it; a server that cannot be reached, with nothing to fall back on,
        ``ConnectionFailed`` naming the server and the cause. Safe from any number of threads."""
        asked, chosen = _arguments(arguments, more), self._key_of(key)
        trace = tracing.api(self._trace)
        if trace is None or not self._span:
            rendered = self._render(name, asked, chosen)
            if trace is not None:
                tracing.record(trace, rendered)
            return rendered
        return self._traced(trace, name, lambda: self._render(name, asked, chosen))

    async def arender(self, name: str, arguments: Mapping[str, Any] | None = None, /, *, key: str | None = None,
                      **more: Any) -> Rendered:
        """``render`` for coroutines: it never blocks the event loop."""
        asked = _arguments(arguments, more)
        trace = tracing.api(self._trace)
        with tracing.own_span(trace, name) if trace is not None and self._span else nullcontext() as span:
            rendered = await self._arender(name, asked, self._key_of(key))
            if trace is not None:
                tracing.record(trace, rendered, span)
            return rendered

    def _traced(self, trace: Any, name: str, render: Callable[[], Rendered]) -> Rendered:
        with tracing.own_span(trace, name) as span:
            rendered = render()
            tracing.record(trace, rendered, span)
            return rendered

    def _key_of(self, key: str | None) -> str | None:
        return key if key is not None or self._key is None else self._key()

    def _render(self, name: str, arguments: dict[str, Any], key: str | None) -> Rendered:
        self._check_open()
        if self._local is not None:
            return self._rendered_locally(self._local, name, arguments, self._scopes, False, key)
        bundled = self._on_bundle()
        if bundled is not None:
            return self._from_bundle(bundled, name, arguments)
        if self._remote is None:  # a store that could not be opened
            return self._from_fallback(name, arguments)
        try:
            result, entry = self._remote.call(self._remote.render(name, arguments, key))
        except ConnectionFailed as exc:
            return self._instead(name, arguments, key, exc)
        return self._rendered_remotely(name, arguments, key, result, entry)

    async def _arender(self, name: str, arguments: dict[str, Any], key: str | None) -> Rendered:
        self._check_open()
        if self._local is not None:
            prompt = self._local.find(name, arguments, self._scopes, key, self._sticky)
            rendered = self._plainly(self._local, prompt, arguments, False)
            if rendered is not None:
                return rendered
            result = await self._local.arender(prompt, arguments)
            return self._made(self._local, prompt, result, False)
        bundled = self._on_bundle()
        if bundled is not None:
            return self._from_bundle(bundled, name, arguments)
        if self._remote is None:
            return self._from_fallback(name, arguments)
        try:
            result, entry = await self._remote.acall(self._remote.render(name, arguments, key))
        except ConnectionFailed as exc:
            return self._instead(name, arguments, key, exc)
        return self._rendered_remotely(name, arguments, key, result, entry)

    def _rendered_locally(self, library: LocalLibrary, name: str, arguments: dict[str, Any],
                          scopes: frozenset[str] | None, stale: bool, key: str | None = None) -> Rendered:
        prompt = library.find(name, arguments, scopes, key, self._sticky)
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

    def _rendered_remotely(self, name: str, arguments: dict[str, Any], key: str | None, result: dict[str, Any],
                           entry: Mapping[str, Any] | None) -> Rendered:
        listing = self._listing_of(entry) if entry is not None else PromptListing(name)
        if self._cache is not None:
            self._cache.put_render(name, arguments, result, key)
            self._keep_listing()
        return Rendered.of_result(name, result, listing, False, self.source)

    def _instead(self, name: str, arguments: dict[str, Any], key: str | None, failure: ConnectionFailed) -> Rendered:
        """What renders when the server cannot be reached: the cache's copy of exactly this render (the same
        arguments and rollout key, so a key is never given another arm's copy), else the fallback folder; else
        ``failure``, saying what was tried."""
        if self._cache is not None:
            result = self._cache.render(name, arguments, key)
            if result is not None:
                entry = next((e for e in self._cache.listing() or () if e.get("name") == name), None)
                listing = PromptListing.from_wire(entry) if entry is not None else PromptListing(name)
                return Rendered.of_result(name, result, listing, True, str(self._cache.path))
        if self._bundled is not None:
            return self._from_bundle(self._bundled, name, arguments)
        if self._fallback is not None or self._fallback_call is not None:
            return self._from_fallback(name, arguments)
        tried = "; the cache holds no render of it with these arguments" if self._cache is not None else ""
        raise ConnectionFailed(f"{failure}{tried}") from failure

    def _from_fallback(self, name: str, arguments: dict[str, Any]) -> Rendered:
        if self._fallback_call is not None:
            given = self._fallback_call(name, dict(arguments))
            if isinstance(given, Rendered):
                return given
            return Rendered.of_result(name, given, PromptListing(name), True, "fallback")
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
        bundled = self._on_bundle()
        if bundled is not None:
            return self._bundle_entries(bundled)
        if self._remote is None:
            return self._fallback_entries(None)
        try:
            entries = self._remote.call(self._remote.entries())
        except ConnectionFailed as exc:
            cached = self._cache.listing() if self._cache is not None else None
            if cached is not None:
                return {e["name"]: PromptListing.from_wire(e) for e in cached}
            if self._bundled is not None:
                return self._bundle_entries(self._bundled)
            return self._fallback_entries(exc)
        if self._cache is not None:
            self._keep_listing()
        return {name: PromptListing.from_wire(entry) for name, entry in entries.items()}

    def _bundle_entries(self, bundled: Bundled) -> dict[str, PromptListing]:
        return {p.name: bundled.listing(p, self._listing_of(p)) for p in bundled.library.catalog(self._scopes)}

    def _fallback_entries(self, failure: ConnectionFailed | None) -> dict[str, PromptListing]:
        """The fallback folder's listing; a callable fallback lists nothing, so the failure stands."""
        if self._fallback is not None:
            return {p.name: self._listing_of(p) for p in self._fallback.catalog(self._scopes)}
        if failure is not None:
            raise ConnectionFailed(str(failure)) from failure
        raise LibraryError(f"{self.source} could not be reached when {self!r} was made, and a callable fallback "
                           "lists no prompts")

    def _keep_listing(self) -> None:
        """Write the remote's listing to the cache when it is not the one written last."""
        assert self._remote is not None and self._cache is not None
        entries = self._remote.last_entries
        if entries is not self._cached_listing:
            self._cached_listing = entries
            self._cache.put_listing(list(entries.values()))

    def _listing_of(self, listed: Offered | Mapping[str, Any]) -> PromptListing:
        """The listing of a prompt, or of a server's ``prompts/list`` entry (replaced, never changed, when the
        server's listing changes)."""
        held = self._listings.get(id(listed))
        if held is not None and held[0] is listed:
            return held[1]
        listing = PromptListing.from_wire(listed if isinstance(listed, Mapping) else listed.listing())
        with self._listings_lock:
            if len(self._listings) >= _MAX_LISTINGS:
                self._listings.clear()
            self._listings[id(listed)] = (listed, listing)
        return listing

    # -- ending ---------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise LibraryError(f"{self!r} is closed")

    def usage(self, since: str = "30d") -> dict[str, Any]:
        """The renders counted here since ``since`` (``24h``, ``7d``, epoch seconds), in ``/api/store/usage``'s
        shape (docs/usage.md): a folder's, kept in this process's memory. A store's are written to the store
        (read them with ``promptdeck usage``); a server's, on the server: both are a LibraryError here."""
        if self._local is None:
            raise LibraryError("usage is counted where the prompts live: ask the server (promptdeck usage --server)")
        return self._local.usage_shown(since)

    def close(self) -> None:
        """Stop following the source and end any connection."""
        with self._swap:
            self._closed = True
        if self._revalidation is not None:
            self._revalidation.stop()
        for part in (self._local, self._remote, self._fallback, self._bundled):
            if part is not None:
                part.close()
        self._local = self._fallback = self._bundled = None

    def __enter__(self) -> Prompts:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Prompts({self.source!r})"


def _check_options(source: str, remote: bool, *, tokens: str | None, auth: Any, fallback: str | Fallback | None,
                   cache: str | None, bundle: str | None) -> None:
    """Refuse options that do not fit the kind of source, before anything is opened."""
    if remote and tokens is not None:
        raise ValueError("tokens= is for a folder or a store; a server checks the token itself")
    if not remote and auth is not None:
        raise ValueError("auth= is for an MCP server; a folder or a store takes token= and tokens=")
    if not remote and cache is not None:
        raise ValueError("cache= is for an MCP server; a folder or a store is its own copy")
    if not remote and fallback is not None and not is_store_url(source):
        raise ValueError("fallback= is for a store or an MCP server; a folder is read from disk")
    if not remote and bundle is not None and not is_store_url(source):
        raise ValueError("bundle= is for a store or an MCP server; a folder is read from disk")


def _key_bytes(key: str | bytes | None) -> bytes | None:
    """A PEM public key given as its bytes or text, or as the path of a file holding it."""
    if key is None or isinstance(key, bytes):
        return key
    if key.lstrip().startswith("-----BEGIN"):
        return key.encode()
    try:
        with open(key, "rb") as opened:
            return opened.read(64 * 1024)
    except OSError as exc:
        raise LibraryError(f"the bundle key {key}: {exc.strerror}") from None


def _arguments(arguments: Mapping[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    """A render's arguments: the mapping (where an argument named ``key`` goes) and the keywords, together."""
    if arguments is None:
        return more
    return {**arguments, **more} if more else dict(arguments)


def _principal_of(token: str | None, tokens: str | None) -> tuple[frozenset[str] | None, str | None]:
    """The scopes and rollout key of the principal ``token`` names in the server's token configuration; (None,
    None) without a token: trusted, as a local client is, and keyed only by what a render gives."""
    if token is None:
        if tokens is not None:
            raise ValueError("tokens= names who may ask; give the token= that asks too")
        return None, None
    from ..server.security.tokens import BearerTokens

    known = BearerTokens.load(tokens)
    if known is None:
        raise LibraryError("a token was given, but no tokens are configured to look it up in: pass tokens= (the "
                           "file `serve --token-file` reads) or set $PROMPTDECK_TOKENS")
    principal = known.principal(f"Bearer {token}")
    if principal is None:
        raise LibraryError(f"the token is not one of those in {tokens or '$PROMPTDECK_TOKENS'}")
    return principal.scopes, principal.rollout_key


__all__ = ["Prompts"]
