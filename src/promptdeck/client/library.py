"""Another MCP server's prompts rendered for an application (``promptdeck.Prompts`` on an http(s) URL).

``RemoteLibrary`` renders through the server (``prompts/get``) from any thread or event loop. Its connection
is held per event loop (``_Link``): a coroutine renders on its own loop, with no thread in between (an
application on asyncio has one connection, on its loop); code with no loop renders on the library's own loop
(``handoff.DrivenLoop``, run by the calling threads themselves while they wait), whose connection every
thread shares.
A link ends with its loop: ``asyncio.run`` cancels the task that keeps it, which closes the connection. What it
adds to the ``Client``:

- **the listing cached**: for the ``ttlMs`` a 2026-07-28 server gives; while the server announces
  ``listChanged``, a watch keeps it current (a 2026-07-28 subscription, a legacy session's stream);
  otherwise for ``LISTING_SECONDS``;
- **bounded retries**: a request that could not reach the server or got no answer in ``timeout`` is
  tried again ``retries`` times, after a short pause; a server that answered (an MCP error) or answered
  outside the protocol (garbage, a body over the client's limit) is not asked again;
- **a circuit breaker**: after ``BREAKER_FAILURES`` failures in a row, calls fail at once for
  ``BREAKER_SECONDS``, after which one call tries the server again (``Breaker``: a render that works
  closes it, a listing only when listings were what failed);
- **a cache** (``cache.RenderCache``), written after every listing and render that succeeded, which
  ``Prompts`` renders from when the server cannot be reached.

A failure to reach the server is one ``ConnectionFailed`` naming the server and the cause.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec

from ..protocol.content import messages_to_wire
from ..protocol.errors import ClientError, ConnectionFailed, InvalidParams, McpError, ProtocolViolation, RequestTimeout
from ..protocol.revisions import LATEST
from .handoff import DrivenLoop
from .session import Client, connect
from .types import PromptInfo, RenderedPrompt

log = logging.getLogger("promptdeck.client")
T = TypeVar("T")

#: How long a listing is reused from a server that gives no ttlMs and announces no list changes.
LISTING_SECONDS = 5.0
#: Failures in a row that open the circuit, and how long it stays open.
BREAKER_FAILURES = 3
BREAKER_SECONDS = 30.0
#: The first pause before a retry, doubled for each next one.
RETRY_PAUSE = 0.05
#: The revision rendered messages are shaped for (``application.local.REVISION`` too).
REVISION = LATEST
#: Where a request names its rollout key (``server.handlers.META_ROLLOUT_KEY``, which the server reads).
META_ROLLOUT_KEY = "promptdeck.dev/rollout-key"
_to_builtins = msgspec.to_builtins


class Breaker:
    """Closed while calls succeed; open (calls refused at once) for ``seconds`` after ``failures`` in a row;
    then half-open: one call is let through, and its outcome closes or opens it again."""

    def __init__(self, failures: int = BREAKER_FAILURES, seconds: float = BREAKER_SECONDS) -> None:
        self.failures, self.seconds = failures, seconds
        self._count = 0
        self._open_until = 0.0
        self.cause = ""
        #: what the last failure was of
        self._failing = ""
        self._lock = threading.Lock()

    def refusal(self) -> str | None:
        """Why a call may not go now, or None (a half-open trial takes the only place)."""
        with self._lock:
            if self._count < self.failures:
                return None
            now = time.monotonic()
            if now < self._open_until:
                return (f"{self._count} failures in a row, the last: {self.cause}; not tried again for "
                        f"{self._open_until - now:.1f} s")
            self._open_until = now + self.seconds  # this call is the trial; others wait for its outcome
            return None

    def succeeded(self, what: str = "prompts/get") -> None:
        """A request for ``what`` was answered. A render closes the breaker; a listing only when listings were
        what failed last, so that a server that lists but never renders still opens it."""
        with self._lock:
            if what == "prompts/get" or what == self._failing:
                self._count = 0

    def failed(self, cause: str, what: str = "prompts/get") -> None:
        with self._lock:
            self._count += 1
            self.cause = cause
            self._failing = what
            if self._count >= self.failures:
                self._open_until = time.monotonic() + self.seconds


def _worth_retrying(exc: ClientError) -> bool:
    """Whether asking again may help: not for a refusal (401, 403, 404, ...), which another try gets again;
    yes for what did not reach the server, got no answer, or an answer that says "later" (429, 5xx)."""
    status = getattr(exc, "status", None)
    return status is None or status == 429 or status >= 500


@dataclass(eq=False)
class _Link:
    """The connection of one event loop to the server, and the listing read through it."""

    loop: asyncio.AbstractEventLoop
    client: Client | None = None
    stack: contextlib.AsyncExitStack | None = None
    connecting: asyncio.Lock = field(default_factory=asyncio.Lock)
    watching: asyncio.Task[None] | None = None
    #: the task whose end (its loop's shutdown, or ``close``) closes the connection
    keeper: asyncio.Task[None] | None = None
    listed_at: float = 0.0
    listing: tuple[PromptInfo, ...] | None = None
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)


class RemoteLibrary:
    """The prompts of the MCP server at ``url``, rendered through it."""

    def __init__(self, url: str, *, token: str | None = None, auth: Any = None, timeout: float = 5.0,
                 retries: int = 2, breaker: Breaker | None = None) -> None:
        """``auth``: what supplies and renews the bearer token instead of a fixed ``token`` (an ``OAuth()``:
        handed to ``connect(auth=...)``, on the client's side of OAuth; docs/client.md)."""
        if retries < 0 or timeout <= 0:
            raise ValueError("retries must be 0 or more and timeout positive")
        if importlib.util.find_spec("aiohttp") is None:
            from ..extras import needs  # the command that works from a clone: not on PyPI

            raise ClientError(needs("an MCP server over HTTP (aiohttp)", "http"))
        self.url = url
        if token is not None and auth is not None:
            raise ValueError("give a token or an auth, not both")
        self.token = token
        self.auth = auth
        self.timeout = timeout
        self.retries = retries
        self.breaker = breaker or Breaker()
        self._links: dict[asyncio.AbstractEventLoop, _Link] = {}
        self._entries: dict[str, dict[str, Any]] = {}
        self._driven: DrivenLoop | None = None
        self._lock = threading.Lock()
        self._closed = False

    # -- from any thread ------------------------------------------------------------------------

    def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the library's own loop and wait for it (from code not on that loop)."""
        driven = self._driven
        if driven is None:
            with self._lock:
                if self._driven is None and not self._closed:
                    self._driven = DrivenLoop()
                driven = self._driven
        if self._closed or driven is None:
            work.close()
            raise ConnectionFailed(f"the prompts of {self.url} are closed")
        return driven.run(work)

    async def acall(self, work: Coroutine[Any, Any, T]) -> T:
        """``call`` from a coroutine: ``work`` runs right here, on the caller's loop and its connection."""
        if self._closed:
            work.close()
            raise ConnectionFailed(f"the prompts of {self.url} are closed")
        return await work

    def close(self) -> None:
        """End every connection: the library's own loop's here (waited for), another loop's on that loop (soon)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            links, driven = list(self._links.values()), self._driven
        for link in links:
            if driven is not None and link.loop is driven.loop:
                continue
            if link.keeper is not None and not link.loop.is_closed():
                with contextlib.suppress(RuntimeError):  # a loop closed meanwhile: its connection went with it
                    link.loop.call_soon_threadsafe(link.keeper.cancel)
        if driven is None:
            return

        async def end() -> None:
            await self._drop()
            # What the client left waiting (a watch's queue read) ends before the loop does.
            rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        with contextlib.suppress(Exception):
            driven.run(end())
        driven.close()

    # -- on the caller's loop -------------------------------------------------------------------

    def _link(self) -> _Link:
        """The running loop's link, made on its first use there."""
        loop = asyncio.get_running_loop()
        link = self._links.get(loop)
        if link is None:
            with self._lock:
                if self._closed:
                    raise ConnectionFailed(f"the prompts of {self.url} are closed")
                for gone in [other for other in self._links if other.is_closed()]:
                    del self._links[gone]  # a loop closed with its tasks still pending (never asyncio.run's)
                link = self._links[loop] = _Link(loop)
            link.keeper = loop.create_task(self._keep(link))
        return link

    async def _keep(self, link: _Link) -> None:
        """Wait for the end of the link's loop (``asyncio.run`` cancels what is left), then close it."""
        try:
            await link.loop.create_future()
        finally:
            with self._lock:
                if self._links.get(link.loop) is link:
                    del self._links[link.loop]
            await self._drop(link)

    async def entries(self) -> dict[str, dict[str, Any]]:
        """The listing: name -> ``prompts/list`` entry (JSON values), cached as the module says."""
        link = self._link()
        client = link.client  # connected already: no lock, no breaker for what needs no request
        if client is None:
            client = await self._guarded(self._connected, "prompts/list", request=False)
        listing = client.prompts if link.watching is not None and not link.watching.done() else None
        if listing is None:
            if client.era == "legacy" and link.listing is not None \
                    and time.monotonic() - link.listed_at < LISTING_SECONDS:
                listing = link.listing
            else:
                listing = await self._guarded(self._list, "prompts/list")
                link.listed_at = time.monotonic()
        if listing is not link.listing:
            link.listing = listing
            link.entries = {info.name: _to_builtins(info) for info in listing}
        self._entries = link.entries
        return link.entries

    @property
    def last_entries(self) -> dict[str, dict[str, Any]]:
        """The listing ``entries`` gave last (replaced whole, never changed, when the listing changes)."""
        return self._entries

    async def render(self, name: str, arguments: dict[str, str],
                     key: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The ``prompts/get`` result (description, messages as JSON values, its ``_meta``), and the prompt's
        listing entry. ``key``: the rollout key, sent in the request's ``_meta`` (``META_ROLLOUT_KEY``)."""
        entries = await self.entries()
        for argument, value in arguments.items():
            if not isinstance(value, str):
                # In the words a promptdeck server uses (prompts.arguments.bind): MCP arguments are strings.
                raise InvalidParams(f"prompt {name!r}: argument {argument!r} must be a string on the wire, got "
                                    f"{type(value).__name__}", {"argument": argument})
        meta = {META_ROLLOUT_KEY: key} if key is not None else None
        got = await self._guarded(lambda: self._get(name, arguments, meta), "prompts/get")
        result: dict[str, Any] = {}
        if got.description is not None:
            result["description"] = got.description
        result["messages"] = messages_to_wire(list(got.messages), REVISION)
        if got.meta:  # what it says of the version rendered (a rollout's may not be the listing's)
            result["_meta"] = got.meta
        return result, entries.get(name)

    async def _guarded(self, attempt: Any, what: str, *, request: bool = True) -> Any:
        """``attempt()`` with the retries and the breaker; a ``ConnectionFailed`` naming the server when it
        cannot be had. An MCP error the server answered with passes as it is (``InvalidParams`` stays one)."""
        refusal = self.breaker.refusal()
        if refusal is not None:
            raise ConnectionFailed(f"the MCP server at {self.url} is not being asked: {refusal}")
        pause = RETRY_PAUSE
        for tried in range(self.retries + 1):
            try:
                result = await attempt()
            except McpError as exc:
                self.breaker.succeeded(what)  # it answered
                if exc.code == InvalidParams.code:
                    raise InvalidParams(exc.message, exc.data) from None
                raise
            except (ConnectionFailed, RequestTimeout) as exc:
                await self._drop()
                cause = f"{type(exc).__name__}: {exc}"
                if tried < self.retries and _worth_retrying(exc):
                    log.info("%s to %s failed (%s); trying again", what, self.url, cause)
                    await asyncio.sleep(pause)
                    pause *= 2
                    continue
                self.breaker.failed(cause, what)
                tries = f"{tried + 1} {'try' if tried == 0 else 'tries'}"
                raise ConnectionFailed(f"the MCP server at {self.url} cannot be reached ({what}, {tries}): "
                                       f"{cause}") from exc
            except (ProtocolViolation, ClientError, msgspec.MsgspecError) as exc:
                await self._drop()
                cause = f"{type(exc).__name__}: {exc}"
                self.breaker.failed(cause, what)
                raise ConnectionFailed(f"the MCP server at {self.url} answered {what} outside the protocol: "
                                       f"{cause}"[:2000]) from exc
            if request:  # (connecting is not a request: it says nothing of whether renders work)
                self.breaker.succeeded(what)
            return result
        raise AssertionError("unreachable")

    async def _list(self) -> tuple[PromptInfo, ...]:
        return await (await self._connected()).list_prompts()

    async def _get(self, name: str, arguments: dict[str, str], meta: dict[str, str] | None) -> RenderedPrompt:
        return await (await self._connected()).get_prompt_with(name, arguments, meta=meta)

    async def _connected(self) -> Client:
        link = self._link()
        if link.client is not None:
            return link.client
        async with link.connecting:
            if link.client is not None:
                return link.client
            stack = contextlib.AsyncExitStack()
            # ``auth`` is passed only when given: connect takes it once the client's OAuth is in (branch t33-oauth).
            extra: dict[str, Any] = {"auth": self.auth} if self.auth is not None else {}
            try:
                client = await stack.enter_async_context(connect(
                    self.url, token=self.token, timeout=self.timeout, **extra))
            except BaseException:
                await stack.aclose()
                raise
            link.stack, link.client = stack, client
            prompts = client.capabilities.get("prompts")
            if isinstance(prompts, dict) and prompts.get("listChanged"):
                link.watching = asyncio.ensure_future(self._watch(client))
            return client

    async def _watch(self, client: Client) -> None:
        """Keep ``client.prompts`` current while the server tells of changes; on failure, fall back to ttl."""
        try:
            async with contextlib.aclosing(client.watch()) as changes:
                async for _ in changes:
                    pass
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the listing is then fetched per ttl: nothing is lost but freshness
            log.info("the prompt list of %s is no longer watched: %s", self.url, exc)

    async def _drop(self, link: _Link | None = None) -> None:
        """Forget the connection of ``link`` (the running loop's; a failed one): the next call connects again."""
        link = link if link is not None else self._links.get(asyncio.get_running_loop())
        if link is None:
            return
        watching, stack = link.watching, link.stack
        link.watching = link.stack = link.client = None
        link.listing = None
        if watching is not None:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
        if stack is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.timeout):
                    await stack.aclose()
