"""A client's view of one server's prompts, in whichever era the server speaks.

``connect`` starts or reaches the server and finds out how it talks (CHECKLIST-2026 section 12):
it asks ``server/discover`` the 2026-07-28 way first; a ``DiscoverResult`` (or a -32022 that lists a
revision we speak) settles it, and any other answer -- a JSON-RPC error (-32601, or a legacy server's
"not initialized"), a result that is no ``DiscoverResult``, an HTTP status with no JSON-RPC in it --
means a legacy server, which gets ``initialize``. No answer is not an answer: a server still starting
(``npx -y``, a first run) is waited for up to the request timeout, and a probe that times out fails
the connection instead of guessing (an ``initialize`` sent after it would reach a modern server that
was merely slow, and be refused). Over HTTP a legacy server that refuses even ``initialize`` is tried
once more with the 2024-11-05 HTTP+SSE transport.

After that the ``Client`` methods read the same in both eras; only the wire differs (per-request
``_meta`` and subscriptions for modern servers, a session and list_changed for legacy ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from .._version import __version__
from ..protocol.errors import (
    ClientError,
    ConnectionFailed,
    McpError,
    MethodNotFound,
    ProtocolViolation,
    RequestTimeout,
    UnsupportedVersion,
)
from ..protocol.revisions import LATEST, NEWEST_MODERN, REVISIONS, SUPPORTED
from .channel import Channel, Multiplexed, RequestId, SessionExpired
from .resources import ResourceMethods
from .types import Completion, ListChange, PromptInfo, PromptMessage, RenderedPrompt

if TYPE_CHECKING:
    from .fetch import Auth, HttpClient

__all__ = ["Client", "Elicit", "Era", "connect"]

Era = Literal["auto", "modern", "legacy"]
#: Asked to fill a form: (message, JSON schema of the fields) -> the values, or None to decline.
Elicit = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
#: Told how a listing goes: (prompts so far, pages so far).
Progress = Callable[[int, int], None]

MODERN_VERSION = NEWEST_MODERN.version
_META = "io.modelcontextprotocol/"
#: A listing with more pages than this is a server gone wrong, not a big library.
MAX_PAGES = 10_000
#: How many times prompts/get may answer input_required before the client gives up.
MAX_INPUT_ROUNDS = 8
_DEFAULT: Any = object()


class _Page(msgspec.Struct, rename="camel"):
    prompts: tuple[PromptInfo, ...]
    next_cursor: str | None = None
    ttl_ms: int | None = None
    result_type: str = "complete"


class _Got(msgspec.Struct, rename="camel"):
    """A prompts/get answer of either kind: the prompt, or (2026-07-28) a request for input."""

    result_type: str = "complete"
    messages: tuple[PromptMessage, ...] | None = None
    description: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")
    input_requests: dict[str, dict[str, Any]] | None = None
    request_state: str | None = None


class _Completed(msgspec.Struct, rename="camel"):
    completion: Completion
    result_type: str = "complete"


class _Discovered(msgspec.Struct, rename="camel"):
    supported_versions: tuple[str, ...]
    capabilities: dict[str, Any] = {}
    instructions: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class _Initialized(msgspec.Struct, rename="camel"):
    protocol_version: str
    capabilities: dict[str, Any] = {}
    server_info: dict[str, Any] = {}
    instructions: str | None = None


_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {
    kind: msgspec.json.Decoder(kind) for kind in (_Page, _Got, _Completed, _Discovered, _Initialized)
}


T = TypeVar("T")


def _decode(kind: type[T], raw: msgspec.Raw, method: str) -> T:
    try:
        value: T = _decoders[kind].decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ProtocolViolation(f"{method}: the server's result does not fit the MCP schema: {exc}") from None
    return value


class _Subscription:
    """One 2026-07-28 ``subscriptions/listen`` stream, told apart by its request id."""

    def __init__(self, changes: asyncio.Queue[None]) -> None:
        self.changes = changes
        self.acknowledged: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()


class Client(ResourceMethods):
    """A connection to one MCP server's prompts; get one from ``connect``.

    After connecting, ``era`` is ``"modern"`` (2026-07-28) or ``"legacy"`` (an ``initialize`` session),
    ``protocol_version`` the revision in use, and ``server_info``, ``capabilities`` and ``instructions``
    what the server said about itself.
    """

    def __init__(self, channel: Channel, *, timeout: float, elicit: Elicit | None, max_pages: int,
                 http: HttpClient | None = None) -> None:
        self.timeout = timeout
        self.max_pages = max_pages
        self.era: Literal["modern", "legacy"] = "legacy"
        self.protocol_version = ""
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._elicit = elicit
        self._http = http
        self._listing: tuple[PromptInfo, ...] | None = None
        self._fresh_until = 0.0
        self._watchers: list[asyncio.Queue[None]] = []
        self._legacy_listener: asyncio.Task[None] | None = None
        self._subscriptions: dict[RequestId, _Subscription] = {}
        #: set by aclose: watches then end with "the client is closed", whatever their stream says
        self._closed = False
        self._renewing = asyncio.Lock()
        capabilities: dict[str, Any] = {"elicitation": {"form": {}}} if elicit is not None else {}
        self._meta = {_META + "protocolVersion": MODERN_VERSION, _META + "clientCapabilities": capabilities,
                      _META + "clientInfo": {"name": "promptdeck", "version": __version__}}
        self._channel = self._attach(channel)

    def _attach(self, channel: Channel) -> Channel:
        channel.on_notification = self._notified
        channel.on_request = self._requested
        self._channel = channel
        return channel

    @property
    def prompts(self) -> tuple[PromptInfo, ...] | None:
        """The last listing fetched (kept current while ``watch`` runs), or None before the first."""
        return self._listing

    # -- requests -------------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None) -> Any:
        """Send any request (with the era's ``_meta`` added) and return its result as plain JSON values."""
        return msgspec.json.decode(await self._call(method, params or {}, name=name))

    async def _call(self, method: str, params: dict[str, Any], *, name: str | None = None,
                    timeout: float | None = _DEFAULT, id: RequestId | None = None) -> msgspec.Raw:
        if self.era == "modern":
            extra = params.get("_meta")
            params = {**params, "_meta": {**self._meta, **extra} if isinstance(extra, dict) else self._meta}
        wait = self.timeout if timeout is _DEFAULT else timeout
        try:
            return await self._channel.request(method, params or None, name=name, id=id, timeout=wait)
        except SessionExpired as expired:
            # A legacy HTTP server forgot our session (2025-03-26+: a 404 to it): start a new one, once.
            await self._renew(expired.session)
            return await self._channel.request(method, params or None, name=name, id=id, timeout=wait)

    async def _renew(self, expired: str) -> None:
        from .http import HttpChannel  # only HTTP sessions expire (and the HTTP modules load if one did)

        async with self._renewing:  # concurrent requests that all met the 404 make one new session
            channel = self._channel
            if isinstance(channel, HttpChannel) and channel.session_id == expired:
                channel.session_id = None
                await self._initialize()

    async def list_prompts(self, *, refresh: bool = False, progress: Progress | None = None) -> tuple[PromptInfo, ...]:
        """Every prompt the server lists, walking all pages.

        A 2026-07-28 listing is reused while its ``ttlMs`` says it is fresh (and until the server says
        the list changed); ``refresh=True`` fetches anew. ``progress(prompts, pages)`` is called per page.
        """
        if not refresh and self._listing is not None and time.monotonic() < self._fresh_until:
            return self._listing
        prompts: dict[str, PromptInfo] = {}
        cursors: set[str] = set()
        cursor: str | None = None
        fresh_until = float("inf") if self.era == "modern" else 0.0
        for pages in range(1, self.max_pages + 1):
            started = time.monotonic()
            page = _decode(_Page, await self._call("prompts/list", {} if cursor is None else {"cursor": cursor}),
                           "prompts/list")
            self._check_complete(page.result_type, "prompts/list")
            # A missing or negative ttlMs means stale at once; only modern servers send one.
            fresh_until = min(fresh_until, started + max(page.ttl_ms or 0, 0) / 1000)
            for prompt in page.prompts:
                prompts.setdefault(prompt.name, prompt)
            if progress is not None:
                progress(len(prompts), pages)
            cursor = page.next_cursor
            if cursor is None:
                break
            if cursor in cursors:
                raise ProtocolViolation(f"prompts/list: the server sent the cursor {cursor!r:.60} twice "
                                        f"(a loop, after {pages} pages)")
            cursors.add(cursor)
        else:
            raise ProtocolViolation(f"prompts/list: still more pages after {self.max_pages}; giving up")
        self._listing = tuple(prompts.values())
        self._fresh_until = fresh_until
        return self._listing

    async def get_prompt(self, name: str, /, **arguments: str) -> RenderedPrompt:
        """Render a prompt with string arguments: ``get_prompt("review", language="python")``."""
        return await self.get_prompt_with(name, arguments)

    async def get_prompt_with(self, name: str, arguments: Mapping[str, str], *,
                              meta: Mapping[str, Any] | None = None) -> RenderedPrompt:
        """``get_prompt`` with the arguments as a mapping, and the request's ``_meta`` (say a rollout key:
        ``{"promptdeck.dev/rollout-key": "user-7"}``), added to the era's own."""
        for key, value in arguments.items():
            if not isinstance(value, str):
                raise TypeError(f"argument {key!r} of prompt {name!r} must be a string, not {type(value).__name__}")
        asked: dict[str, Any] = {"name": name, "arguments": dict(arguments)} if arguments else {"name": name}
        if meta:
            asked["_meta"] = dict(meta)
        params = asked
        for _ in range(MAX_INPUT_ROUNDS):
            got = _decode(_Got, await self._call("prompts/get", params, name=name), "prompts/get")
            if got.result_type == "complete":
                if got.messages is None:
                    raise ProtocolViolation(f"prompts/get {name!r}: the result has no messages")
                return RenderedPrompt(messages=got.messages, description=got.description, meta=got.meta)
            if got.result_type != "input_required" or self.era != "modern":
                raise ProtocolViolation(f"prompts/get {name!r}: unexpected resultType {got.result_type!r}")
            # Every retry is a new request: the answers to all questions, and the state echoed unchanged.
            params = dict(asked)
            if got.input_requests:
                params["inputResponses"] = {key: await self._provide(name, ask)
                                            for key, ask in got.input_requests.items()}
            if got.request_state is not None:
                params["requestState"] = got.request_state
        raise ProtocolViolation(f"prompts/get {name!r}: the server still wants input after {MAX_INPUT_ROUNDS} rounds")

    async def complete(self, prompt: str, argument: str, value: str = "",
                       context: Mapping[str, str] | None = None) -> Completion:
        """Values the server suggests for ``argument`` of ``prompt`` starting from ``value``.

        ``context`` holds the other arguments already chosen (sent to servers from 2025-06-18 on).
        """
        params: dict[str, Any] = {"ref": {"type": "ref/prompt", "name": prompt},
                                  "argument": {"name": argument, "value": value}}
        revision = REVISIONS.get(self.protocol_version)
        if context and (revision is None or revision.completion_context):
            params["context"] = {"arguments": dict(context)}
        answer = _decode(_Completed, await self._call("completion/complete", params), "completion/complete")
        self._check_complete(answer.result_type, "completion/complete")
        return answer.completion

    def _check_complete(self, result_type: str, method: str) -> None:
        if result_type != "complete":
            raise ProtocolViolation(f"{method}: unexpected resultType {result_type!r}")

    # -- what the server asks and says ----------------------------------------------------------

    async def _provide(self, prompt: str, ask: dict[str, Any]) -> dict[str, Any]:
        """Answer one of a 2026-07-28 server's input requests."""
        if ask.get("method") != "elicitation/create" or self._elicit is None:
            raise ProtocolViolation(f"prompts/get {prompt!r}: the server asked for {ask.get('method')!r}, "
                                    "which this client did not offer")
        params = ask.get("params")
        return await self._elicited(params if isinstance(params, dict) else {})

    async def _elicited(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._elicit is None or params.get("mode", "form") != "form":
            return {"action": "decline"}
        schema = params.get("requestedSchema")
        content = await self._elicit(str(params.get("message", "")), schema if isinstance(schema, dict) else {})
        return {"action": "decline"} if content is None else {"action": "accept", "content": content}

    async def _requested(self, method: str, params: dict[str, Any] | None) -> Any:
        if method == "ping":
            return {}
        if method == "elicitation/create" and self._elicit is not None:
            return await self._elicited(params or {})
        raise MethodNotFound(f"promptdeck's client does not handle {method}")

    def _notified(self, method: str, params: dict[str, Any] | None) -> None:
        meta = (params or {}).get("_meta")
        key = meta.get(_META + "subscriptionId") if isinstance(meta, dict) else None
        subscription = self._subscriptions.get(key) if isinstance(key, int | str) else None
        if method == "notifications/prompts/list_changed":
            self._fresh_until = 0.0
            queues = [subscription.changes] if subscription is not None else self._watchers
            for queue in queues:
                queue.put_nowait(None)
        elif method == "notifications/subscriptions/acknowledged" and subscription is not None:
            if not subscription.acknowledged.done():
                honoured = (params or {}).get("notifications")
                subscription.acknowledged.set_result(honoured if isinstance(honoured, dict) else {})

    # -- watching -------------------------------------------------------------------------------

    async def watch(self) -> AsyncGenerator[ListChange, None]:
        """Yield a ``ListChange`` (with the fresh listing) each time the server's prompt list changes.

        Runs until the server ends it or the loop is left; close it with ``contextlib.aclosing``
        to stop listening at once.
        """
        prompts = self.capabilities.get("prompts")
        if not isinstance(prompts, dict) or not prompts.get("listChanged"):
            raise ClientError("the server does not announce prompt list changes (no prompts.listChanged capability)")
        changes: asyncio.Queue[None] = asyncio.Queue()
        async with self._listening(changes) as listener:
            before = await self.list_prompts(refresh=True)
            while True:
                waiting = asyncio.ensure_future(changes.get())
                await asyncio.wait((waiting, listener), return_when=asyncio.FIRST_COMPLETED)
                if not waiting.done():
                    waiting.cancel()
                    if self._closed or listener.cancelled():
                        # Not the listener's own error (a CancelledError would look like our task's).
                        raise ConnectionFailed("the client is closed")
                    listener.result()  # the server's end, or why the stream failed
                    return
                while not changes.empty():  # one refresh for a burst of notifications
                    changes.get_nowait()
                after = await self.list_prompts(refresh=True)
                yield _difference(before, after)
                before = after

    @contextlib.asynccontextmanager
    async def _listening(self, changes: asyncio.Queue[None]) -> AsyncIterator[asyncio.Future[Any]]:
        if self.era == "legacy":
            self._watchers.append(changes)
            try:
                listener = self._shared_listener()
                await self._stream_open(listener)
                yield listener
            finally:
                self._watchers.remove(changes)
            return
        id = self._channel.next_id()
        subscription = self._subscriptions[id] = _Subscription(changes)
        wanted = {"notifications": {"promptsListChanged": True}}
        listen = asyncio.ensure_future(self._call("subscriptions/listen", wanted, timeout=None, id=id))
        try:
            await asyncio.wait((subscription.acknowledged, listen), timeout=self.timeout,
                               return_when=asyncio.FIRST_COMPLETED)
            if listen.done():
                listen.result()
                raise ProtocolViolation("subscriptions/listen ended before it was acknowledged")
            if not subscription.acknowledged.done():
                raise RequestTimeout(f"subscriptions/listen: no acknowledgement within {self.timeout:g} s")
            if not subscription.acknowledged.result().get("promptsListChanged"):
                raise ClientError("the server did not agree to send prompt list changes on its subscription")
            yield listen
        finally:
            listen.cancel()
            await asyncio.gather(listen, return_exceptions=True)
            del self._subscriptions[id]

    async def _stream_open(self, listener: asyncio.Task[None]) -> None:
        """Wait for a legacy HTTP session's GET stream: a change announced before it opens is lost, so
        the watch's first listing must not come earlier (stdio and HTTP+SSE streams are always open)."""
        opened = getattr(self._channel, "streaming", None)
        if not isinstance(opened, asyncio.Event) or opened.is_set():
            return
        waiting = asyncio.ensure_future(opened.wait())
        try:
            await asyncio.wait((waiting, listener), timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if listener.done():
            listener.result()  # why the stream could not be opened (no GET stream, auth, ...)
        if not opened.is_set():
            raise RequestTimeout(f"the server's notification stream did not open within {self.timeout:g} s")

    def _shared_listener(self) -> asyncio.Task[None]:
        """A legacy session has one stream of notifications, however many watchers read it."""
        if self._legacy_listener is None:
            channel = self._channel
            if isinstance(channel, Multiplexed):
                self._legacy_listener = asyncio.ensure_future(_until_closed(channel))
            else:
                from .http import HttpChannel

                assert isinstance(channel, HttpChannel)
                self._legacy_listener = asyncio.ensure_future(channel.listen())
        return self._legacy_listener

    # -- starting and ending --------------------------------------------------------------------

    async def _discover(self, timeout: float) -> bool:
        """Ask the 2026-07-28 way; True (and this client is modern) if the server speaks it, False if it
        answered as a legacy server does. ``RequestTimeout`` when no answer came within ``timeout``."""
        self.era = "modern"
        try:
            raw = await self._call("server/discover", {}, timeout=timeout)
            found = _decoders[_Discovered].decode(raw)
        except UnsupportedVersion as exc:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            if not isinstance(supported, list) or not any(version in REVISIONS for version in supported):
                raise ConnectionFailed(f"the server speaks none of promptdeck's revisions ({', '.join(SUPPORTED)}); "
                                       f"it supports {supported!r}") from None
            found = None
        except ConnectionFailed as exc:
            if exc.status is None or exc.status in (401, 403, 429):
                raise
            found = None  # an HTTP error without a modern JSON-RPC error: a legacy server
        except RequestTimeout:
            raise RequestTimeout(
                f"server/discover: no answer within {timeout:g} s, so the server's protocol era is unknown (a "
                "server that ignores requests before initialize can be reached with era 'legacy')") from None
        except (McpError, ProtocolViolation, msgspec.ValidationError, msgspec.DecodeError):
            found = None  # an answer, though not a discover result: what a legacy server says
        if found is None or MODERN_VERSION not in found.supported_versions:
            self.era = "legacy"
            return False
        self.protocol_version = MODERN_VERSION
        self.capabilities = found.capabilities
        self.instructions = found.instructions
        info = (found.meta or {}).get(_META + "serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        return True

    async def _initialize(self) -> None:
        self.era = "legacy"
        params = {"protocolVersion": LATEST.version,
                  "capabilities": {"elicitation": {}} if self._elicit is not None else {},
                  "clientInfo": self._meta[_META + "clientInfo"]}
        found = _decode(_Initialized, await self._call("initialize", params), "initialize")
        if found.protocol_version not in REVISIONS:
            raise ProtocolViolation(f"the server answered initialize with revision {found.protocol_version!r}; "
                                    f"promptdeck speaks {', '.join(SUPPORTED)}")
        self.protocol_version = found.protocol_version
        self.capabilities = found.capabilities
        self.server_info = found.server_info
        self.instructions = found.instructions
        if hasattr(self._channel, "protocol_version"):
            self._channel.protocol_version = found.protocol_version
        await self._channel.notify("notifications/initialized")

    async def aclose(self) -> None:
        self._closed = True
        if self._legacy_listener is not None:
            self._legacy_listener.cancel()
            await asyncio.gather(self._legacy_listener, return_exceptions=True)
        await self._channel.aclose()
        if self._http is not None:
            await self._http.aclose()


async def _until_closed(channel: Multiplexed) -> None:
    await channel.wait_closed()
    if channel.failure is not None:
        raise channel.failure


def _difference(before: tuple[PromptInfo, ...], after: tuple[PromptInfo, ...]) -> ListChange:
    old = {prompt.name: prompt for prompt in before}
    new = {prompt.name: prompt for prompt in after}
    return ListChange(prompts=after, added=tuple(name for name in new if name not in old),
                      removed=tuple(name for name in old if name not in new),
                      changed=tuple(name for name, prompt in new.items() if name in old and old[name] != prompt))


@contextlib.asynccontextmanager
async def connect(target: str | Sequence[str], *, era: Era = "auto", token: str | None = None,
                  headers: Mapping[str, str] | None = None, timeout: float = 30.0, probe_timeout: float | None = None,
                  elicit: Elicit | None = None, env: Mapping[str, str] | None = None, cwd: str | None = None,
                  max_pages: int = MAX_PAGES, auth: Auth | None = None) -> AsyncIterator[Client]:
    """Connect to an MCP server and yield a ``Client`` for its prompts.

    ``target`` is an http(s) URL (Streamable HTTP, else the 2024-11-05 HTTP+SSE transport) or a
    command line that starts a stdio server (a string split like a shell would, or a list).
    ``era`` forces the protocol era instead of detecting it; ``token`` and ``headers`` go with every
    HTTP request; ``timeout`` bounds each request (a late one is cancelled and raises
    ``RequestTimeout``); ``probe_timeout`` bounds the era probe (``timeout`` when None; no answer in
    time is a ``RequestTimeout``, never taken to mean a legacy server); ``elicit`` answers a server's
    questions (2026-07-28 input_required, legacy elicitation) and is offered to servers only if set.
    ``auth`` supplies and renews the bearer token of an HTTP server instead of a fixed ``token``: an
    ``OAuth()`` signs in to OAuth-protected servers (docs/client.md, "OAuth").
    """
    if token is not None and auth is not None:
        raise ValueError("give a token or an auth, not both")
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        client = await _open_http(target, era, token, headers, timeout, probe_timeout, elicit, max_pages, auth)
    else:
        if token is not None or headers or auth is not None:
            raise ValueError("token, auth and headers are for HTTP servers, not for a command")
        argv = shlex.split(target) if isinstance(target, str) else list(target)
        from .stdio import StdioChannel

        client = Client(await StdioChannel.start(argv, env, cwd), timeout=timeout, elicit=elicit, max_pages=max_pages)
        await _start(client, era, probe_timeout)
    try:
        yield client
    finally:
        await client.aclose()


async def _start(client: Client, era: Era, probe_timeout: float | None,
                 fallback: Callable[[], Awaitable[None]] | None = None) -> None:
    try:
        if era != "legacy" and await client._discover(client.timeout if probe_timeout is None else probe_timeout):
            return
        if era == "modern":
            raise ConnectionFailed("the server does not speak MCP 2026-07-28")
        await (fallback or client._initialize)()
    except BaseException:
        await client.aclose()
        raise


async def _open_http(url: str, era: Era, token: str | None, headers: Mapping[str, str] | None, timeout: float,
                     probe_timeout: float | None, elicit: Elicit | None, max_pages: int, auth: Auth | None) -> Client:
    try:
        from .fetch import HttpClient
        from .http import HttpChannel, LegacySseChannel
    except ImportError:
        from ..extras import needs  # the command that works from a clone: not on PyPI

        raise ClientError(needs("an HTTP server (aiohttp)", "http")) from None
    sent = dict(headers or {})
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    # Redirects are followed (a 307/308 keeps the method and body): servers mounted under a path answer
    # "/mcp/" with a redirect to "/mcp". The Authorization header is dropped when one leaves the origin.
    http = HttpClient(headers=sent, timeout=timeout, auth=auth, auth_url=url)
    channel = HttpChannel(http, url)
    client = Client(channel, timeout=timeout, elicit=elicit, max_pages=max_pages, http=http)

    async def legacy() -> None:
        channel.modern = False
        try:
            await client._initialize()
        except ConnectionFailed as exc:
            # No Streamable HTTP here (a 4xx that is not an auth or rate problem): try the 2024-11-05 transport.
            if exc.status is None or not 400 <= exc.status < 500 or exc.status in (401, 403, 429):
                raise
            client._attach(await LegacySseChannel.open(http, url, timeout))
            await client._initialize()

    await _start(client, era, probe_timeout, legacy)
    return client
