"""HTTP for the MCP client, on aiohttp: its C parser and limits, connection pool, TLS and cookie jar.

This module adapts aiohttp to what the channels in ``http.py`` need, and adds what an MCP client
facing an unknown server needs beyond it:

- bounds: a response head (aiohttp's ``max_line_size``, ``max_field_size`` and ``max_headers``,
  which also bound the reason phrase), a body read whole (``MAX_BODY``), and an event stream's
  lines and events (``text_lines`` here, in linear time; ``sse_events`` in ``http.py``);
- redirects followed here rather than by aiohttp: a 307/308 keeps method and body, and leaving the
  origin drops every header the client was given (``-H``, a bearer token), where aiohttp would
  drop only Authorization. aiohttp's cookie jar keeps cookies with the host that set them;
- proxies from HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY, chosen here (``proxy_for``), so
  a loopback target never goes through one;
- one exception, ``TransportError``, for everything below HTTP semantics.

A response left before its end closes its connection: that is how a 2026-07-28 request is
cancelled (the server sees the disconnect).
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import re
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import getproxies_environment, proxy_bypass_environment  # type: ignore[attr-defined]

if TYPE_CHECKING:
    import aiohttp

#: The most a response body read whole may hold (an event stream is read in lines and has no bound).
MAX_BODY = 64 * 1024 * 1024
#: Longest line of a response head (status line or one header), and most headers it may have.
MAX_HEAD_LINE = 16 * 1024
MAX_HEADERS = 100
#: Longest line of an event stream, and most text one event may gather.
MAX_LINE = MAX_EVENT = 16 * 1024 * 1024
MAX_REDIRECTS = 10
#: How many times a request refused with 401/403 is sent again with the token its ``auth`` gives next.
AUTH_RETRIES = 2
#: The timer of the request being sent (set by the channel that bounds it), stopped while ``auth`` works.
REQUEST_TIMER: ContextVar[asyncio.Timeout | None] = ContextVar("promptdeck_request_timer", default=None)
#: Connections kept open per host.
POOL_SIZE = 16
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_UNBOUNDED = contextlib.nullcontext()
_DEFAULT = object()


class TransportError(Exception):
    """The exchange failed below HTTP semantics: no connection, a reset, a timeout, or not HTTP."""


class Auth(Protocol):
    """What supplies the bearer token of requests to one server, and reacts when the server refuses it
    (``client.oauth.OAuth`` is one; anything with these methods will do). While it reacts, the timer of
    the request that met the refusal is stopped: a person signing in takes longer than any request may."""

    async def token(self, url: str) -> str | None:
        """The access token for the server at ``url``, or None to send none."""

    async def unauthorized(self, url: str, status: int, challenge: str, sent: str | None) -> bool:
        """The server refused ``sent`` with ``status`` and the WWW-Authenticate ``challenge``: True to retry."""


class Headers(Mapping[str, str]):
    """Response headers by lower-case name; a repeated header's values are joined with ", "."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any) -> None:
        self._raw = raw  # aiohttp's case-insensitive multidict

    def __getitem__(self, name: str) -> str:
        values = self._raw.getall(name, None)
        if values is None:
            raise KeyError(name)
        return ", ".join(values)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(key.lower() for key in self._raw))

    def __len__(self) -> int:
        return len(set(key.lower() for key in self._raw))

    def all(self, name: str) -> list[str]:
        """Every value of a header that may repeat (set-cookie)."""
        return list(self._raw.getall(name, []))


class Response:
    """A response whose head has arrived; its body is read with ``read`` or ``lines``."""

    def __init__(self, raw: aiohttp.ClientResponse, url: str, timeout: float | None,
                 live: set[Response] | None = None) -> None:
        self._raw = raw
        self._live = live
        if live is not None:
            live.add(self)
        self.url = url
        self.status_code = raw.status
        self.reason_phrase = raw.reason or ""
        self.headers = Headers(raw.headers)
        self._timeout = timeout

    async def _chunks(self) -> AsyncIterator[bytes]:
        with self._payload_errors():
            async for chunk in self._raw.content.iter_any():
                yield chunk

    @contextmanager
    def _payload_errors(self) -> Iterator[None]:
        """aiohttp's errors while the body is read, as ``TransportError``s."""
        import aiohttp

        try:
            yield
        except aiohttp.ClientPayloadError as exc:
            raise TransportError(f"the server closed the connection before its answer ended ({exc})") from None
        except aiohttp.ClientError as exc:
            raise TransportError(f"{self.url}: {exc}") from None

    async def read(self, limit: int = MAX_BODY) -> bytes:
        """The whole body (at most ``limit`` bytes, else ``TransportError``), within the client's timeout (or
        the timer of the request it answers, ``REQUEST_TIMER``, which bounds the whole exchange)."""
        declared = self._raw.content_length
        if declared is not None and declared > limit:
            raise TransportError(f"the answer from {self.url} is over {limit} bytes")
        timer = REQUEST_TIMER.get()
        if timer is not None and timer.when() is not None:
            return await self._body(limit, declared)  # one timer per request, not two
        try:
            async with asyncio.timeout(self._timeout):
                return await self._body(limit, declared)
        except TimeoutError:
            raise TransportError(f"{self.url} stopped sending its answer (no end within {self._timeout:g} s)") from None

    async def _body(self, limit: int, declared: int | None) -> bytes:
        if declared is not None:  # at most ``declared`` bytes (under the limit) come: read them at once
            with self._payload_errors():
                return await self._raw.content.read()
        parts: list[bytes] = []
        size = 0
        async for chunk in self._chunks():
            size += len(chunk)
            if size > limit:
                raise TransportError(f"the answer from {self.url} is over {limit} bytes")
            parts.append(chunk)
        return b"".join(parts)

    def lines(self) -> AsyncIterator[str]:
        """The body as text lines (see ``text_lines``); no bound on the wait (the caller sets its own)."""
        return text_lines(self._chunks())

    def _finish(self) -> None:
        """Done with: a body read to its end keeps its connection; anything else closes it."""
        if self._live is not None:
            self._live.discard(self)
        if self._raw.content.at_eof():
            self._raw.release()
        else:
            self._raw.close()


async def text_lines(chunks: AsyncIterator[bytes], limit: int = MAX_LINE) -> AsyncIterator[str]:
    """UTF-8 text lines split at CRLF, LF or CR, as event streams are (never at other Unicode breaks).

    Each chunk is split on its own and an unfinished line is kept in pieces, so a long line costs
    linear time; a line over ``limit`` characters is an ``TransportError``.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending: list[str] = []  # the pieces of the line not yet ended
    pending_size = 0
    after_cr = False  # the last read ended in CR: a LF that starts the next one belongs to it
    async for chunk in chunks:
        text = decoder.decode(chunk)
        if after_cr and text:
            after_cr = False
            if text[0] == "\n":
                text = text[1:]
        if not text:
            continue
        after_cr = text[-1] == "\r"
        *complete, rest = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for line in complete:
            if pending:
                line = "".join(pending) + line
                pending, pending_size = [], 0
            if len(line) > limit:
                raise TransportError(f"an event-stream line is longer than {limit} characters")
            yield line
        if rest:
            pending.append(rest)
            pending_size += len(rest)
            if pending_size > limit:
                raise TransportError(f"an event-stream line is longer than {limit} characters")
    tail = "".join(pending) + decoder.decode(b"", final=True)
    if tail:
        yield tail


class Proxy(NamedTuple):
    host: str
    port: int
    authorization: str | None  # Proxy-Authorization, from the proxy URL's user and password


_LOOPBACK = ("localhost", "::1")


def proxy_for(scheme: str, host: str, proxies: Mapping[str, str]) -> Proxy | None:
    """The proxy a request to ``scheme://host`` goes through, from proxy settings as urllib reads them
    from the environment (``{"https": URL, "no": "a.example,.b.example", ...}``); None for none."""
    if host in _LOOPBACK or host.startswith("127.") or proxy_bypass_environment(host, dict(proxies)):
        return None  # a proxy cannot reach this machine's loopback, and NO_PROXY is obeyed
    url = proxies.get(scheme) or proxies.get("all")
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme != "http" or not parts.hostname:
        raise TransportError(f"proxy {parts.scheme}://{parts.hostname}: only http:// proxies are supported")
    authorization = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode()
    return Proxy(parts.hostname, parts.port or 80, authorization)


@contextmanager
def _timer_stopped() -> Iterator[None]:
    """Stop the current request's timer (``REQUEST_TIMER``) for the block, then give it back what it had
    left: a sign-in is bounded by its own limits (the person's time, each OAuth request's timeout)."""
    timer = REQUEST_TIMER.get()
    when = timer.when() if timer is not None else None
    if timer is None or when is None:
        yield
        return
    loop = asyncio.get_running_loop()
    left = max(when - loop.time(), 0.0)
    timer.reschedule(None)
    try:
        yield
    finally:
        timer.reschedule(loop.time() + left)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


_BAD_NAME = re.compile("[\r\n\0: ]").search
_BAD_VALUE = re.compile("[\r\n\0]").search


def _check_header(name: str, value: str) -> None:
    """Refuse what would end the header early (CR, LF, NUL): it could smuggle headers or requests."""
    if _BAD_NAME(name) or _BAD_VALUE(value):
        raise TransportError(f"header {name!r} holds a line break or NUL, which HTTP/1.1 headers cannot carry")


class HttpClient:
    """Keep-alive HTTP/1.1 connections to any number of origins, with default headers and a timeout."""

    def __init__(self, headers: Mapping[str, str] | None = None, timeout: float | None = 30.0, *,
                 trust_env: bool = True, ssl_context: ssl.SSLContext | None = None, auth: Auth | None = None,
                 auth_url: str = "") -> None:
        """``trust_env``: use the proxies the environment names; ``ssl_context``: whom https trusts
        (the system's trust store by default); ``auth``: the bearer token of requests to ``auth_url``'s
        origin (and the retry once after a 401 or 403 it can do something about)."""
        self.timeout = timeout
        self.auth = auth
        self.auth_url = auth_url
        self._auth_origin = _origin(auth_url) if auth is not None else None
        self._proxies = getproxies_environment() if trust_env else {}
        self._headers = {name.lower(): value for name, value in (headers or {}).items()}
        for name, value in self._headers.items():
            _check_header(name, value)
        self._ssl = ssl_context
        self._session: aiohttp.ClientSession | None = None
        self._live: set[Response] = set()  # responses being read: closing the client ends them
        self._closed = False

    def _open(self) -> aiohttp.ClientSession:
        if self._closed:
            raise TransportError("the HTTP client is closed")
        if self._session is None:
            import aiohttp

            # unsafe=True: keep cookies set by hosts named by IP address too (a load balancer on
            # 10.0.0.5 pins sessions the same way); they still go back only to the host that set them.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit_per_host=POOL_SIZE, ssl=self._ssl if self._ssl else True),
                cookie_jar=aiohttp.CookieJar(unsafe=True), trust_env=False, auto_decompress=False,
                max_line_size=MAX_HEAD_LINE, max_field_size=MAX_HEAD_LINE, max_headers=MAX_HEADERS,
                skip_auto_headers=("User-Agent", "Accept-Encoding"), timeout=aiohttp.ClientTimeout(total=None))
        return self._session

    @asynccontextmanager
    async def stream(self, method: str, url: str, *, content: bytes | None = None,
                     headers: Mapping[str, str] | None = None, head_timeout: float | None | object = _DEFAULT,
                     ) -> AsyncIterator[Response]:
        """Send a request and yield its response once the head is in; redirects are followed.

        The head is awaited within the client's timeout (``head_timeout`` to change it); ``read``
        is bounded by it too, ``lines`` is not (a stream's caller bounds its own waits). Leaving the
        block before the body's end closes the connection.
        """
        wait = self.timeout if head_timeout is _DEFAULT else head_timeout
        assert wait is None or isinstance(wait, float | int)
        ours = self.auth is not None and _origin(url) == self._auth_origin
        sent = await self.bearer() if ours else None
        response = await self._follow(method, url, content, headers, wait, sent)
        if ours:
            response = await self._authorized(response, sent, method, url, content, headers, wait)
        try:
            yield response
        finally:
            response._finish()

    async def _authorized(self, response: Response, sent: str | None, method: str, url: str, content: bytes | None,
                          headers: Mapping[str, str] | None, wait: float | None) -> Response:
        """After a 401/403 that ``auth`` can do something about (a refresh, a sign-in), send the request again:
        at most ``AUTH_RETRIES`` times (a token another request got meanwhile, then a refreshed one)."""
        assert self.auth is not None
        for attempt in range(AUTH_RETRIES + 1):
            if response.status_code not in (401, 403) or _origin(response.url) != self._auth_origin:
                return response
            challenge = response.headers.get("www-authenticate", "")
            try:
                with _timer_stopped():
                    retry = attempt < AUTH_RETRIES and await self.auth.unauthorized(
                        self.auth_url, response.status_code, challenge, sent)
            except BaseException:
                response._finish()
                raise
            if not retry:
                return response
            response._finish()
            sent = await self.auth.token(self.auth_url)
            response = await self._follow(method, url, content, headers, wait, sent)
        return response

    async def bearer(self) -> str | None:
        """The token ``auth`` gives for the next request (None without ``auth``)."""
        return await self.auth.token(self.auth_url) if self.auth is not None else None

    async def _follow(self, method: str, url: str, content: bytes | None, headers: Mapping[str, str] | None,
                      wait: float | None, token: str | None) -> Response:
        """One request and its redirects; the bearer ``token`` is sent only while on the first origin."""
        credentials = True
        for _ in range(MAX_REDIRECTS + 1):
            # The bearer token is a credential like the client's own headers: it never leaves the origin.
            bearer = {"authorization": f"Bearer {token}"} if token is not None and credentials else {}
            response = await self._exchange(method, url, {**(headers or {}), **bearer}, content, wait, credentials)
            location = response.headers.get("location") if response.status_code in _REDIRECTS else None
            if location is None:
                return response
            response._finish()
            target = urljoin(url, location)
            # Credentials belong to the origin they were given for (as browsers and httpx have it).
            credentials = credentials and urlsplit(target)[:2] == urlsplit(url)[:2]
            if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                method, content = "GET", None
            url = target
        raise TransportError(f"{url}: more than {MAX_REDIRECTS} redirects")

    async def request(self, method: str, url: str, *, content: bytes | None = None,
                      headers: Mapping[str, str] | None = None) -> tuple[Response, bytes]:
        """Send a request and read its whole answer: (response, body)."""
        async with self.stream(method, url, content=content, headers=headers) as response:
            return response, await response.read()

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._closed = True
        for response in list(self._live):  # a stream being read ends with an error, not a silent wait
            response._raw.close()
        self._live.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _exchange(self, method: str, url: str, headers: Mapping[str, str] | None, body: bytes | None,
                        timeout: float | None, credentials: bool) -> Response:
        """Send one request and wait for the head of its answer."""
        import aiohttp

        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise TransportError(f"not an http(s) URL: {url!r}")
        # The client's own headers (the user's -H, a bearer token) are credentials of a kind: an API key
        # travels in any header. They go to the origin they were given for, never past a redirect to
        # another; the protocol's per-request headers go everywhere.
        sent = dict(self._headers) if credentials else {}
        for name, value in (headers or {}).items():
            _check_header(name, value)
            sent[name.lower()] = value
        proxy = proxy_for(scheme, parts.hostname, self._proxies) if self._proxies else None
        options: dict[str, Any] = {}
        if proxy is not None:
            options["proxy"] = f"http://{proxy.host}:{proxy.port}"
            if proxy.authorization is not None:
                # Sent on the CONNECT of a tunnel (https) and with each absolute-form request (http).
                options["proxy_headers"] = {"Proxy-Authorization": proxy.authorization}
                if scheme == "http":
                    sent["proxy-authorization"] = proxy.authorization
        if body is None and method == "POST":
            body = b""
        session = self._open()
        try:
            # No timer at all when the caller's bounds the exchange (a channel's request): each costs a heap entry.
            async with asyncio.timeout(timeout) if timeout is not None else _UNBOUNDED:
                for attempt in (1, 2):
                    try:
                        raw = await session.request(method, url, data=body, headers=sent, allow_redirects=False,
                                                    **options)
                        break
                    except aiohttp.ClientOSError as exc:
                        # A kept connection the server had closed: the request could not be written, so it
                        # never reached the server and is sent again on a new one.
                        if attempt == 2 or "write request body" not in str(exc):
                            raise
        except TimeoutError:
            raise TransportError(f"no answer from {url} within {timeout:g} s") from None
        except aiohttp.ClientHttpProxyError as exc:
            raise TransportError(f"the proxy refused a tunnel to {parts.hostname}:{parts.port or 443}: "
                            f"HTTP {exc.status}") from None
        except aiohttp.ClientResponseError as exc:  # the head did not parse: too long, or not HTTP
            raise TransportError(f"the server's answer is not HTTP/1.1: {exc.message}") from None
        except aiohttp.ServerDisconnectedError:
            raise TransportError("the server closed the connection") from None
        except aiohttp.ClientConnectorError as exc:
            raise TransportError(f"cannot connect to {parts.hostname}:{exc.port}: {exc.os_error.strerror or exc}") \
                from None
        except (aiohttp.ClientError, ValueError) as exc:
            raise TransportError(f"{url}: {exc}") from None
        return Response(raw, url, self.timeout, self._live)
