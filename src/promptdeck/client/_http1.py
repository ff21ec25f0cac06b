"""A small HTTP/1.1 client for the MCP client: keep-alive connections on asyncio protocols.

Why not httpx: an MCP request is one small POST, and httpx's AsyncClient (with httpcore and its
per-request checks of which async library runs it) cost ~1.6 ms of client CPU per prompts/get in
benchmarks/bench_client.py, five times what the server spends answering it. This module sends the
request head and body in one write, lets httptools (llhttp, the parser uvicorn uses) parse the
answer in the protocol callback, and keeps the connection for the next request.

What it does, and what MCP over HTTP needs: http and https (the system's trust store), a pool of
keep-alive connections per origin, request bodies of known length, responses with a length,
chunked or ending at close, streaming bodies (event streams) read as lines, redirects (a 307/308
keeps method and body; leaving the origin drops the client's own headers and cookies), a cookie
jar per host (load balancers pin sessions with them), timeouts, and the proxies named by HTTP_PROXY, HTTPS_PROXY,
ALL_PROXY and NO_PROXY (an http:// proxy: absolute-form requests for http, a CONNECT tunnel for https;
loopback targets never go through one). Not done: HTTP/2, compression, SOCKS proxies.

A response that is left before its end closes its connection: that is how a 2026-07-28 request is
cancelled (the server sees the disconnect).
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import ssl
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import NamedTuple
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import getproxies_environment, proxy_bypass_environment  # type: ignore[attr-defined]

import httptools

#: The most a response body read whole may hold (an event stream is read in lines and has no bound).
MAX_BODY = 64 * 1024 * 1024
#: Most bytes of a response head (status line and headers, interim 1xx heads included).
MAX_HEAD = 64 * 1024
#: Longest line of an event stream, and most text one event may gather.
MAX_LINE = MAX_EVENT = 16 * 1024 * 1024
#: Buffered body bytes past which the socket stops being read until the reader catches up.
HIGH_WATER = 1024 * 1024
MAX_REDIRECTS = 10
#: Idle connections kept per origin.
POOL_SIZE = 16
_REDIRECTS = frozenset((301, 302, 303, 307, 308))
_DEFAULT = object()

Origin = tuple[str, str, int]


class HttpError(Exception):
    """The exchange failed below HTTP semantics: no connection, a reset, a timeout, or not HTTP."""


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection; one response at a time is parsed into it."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[None] | None = None
        self.uses = 0
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = False
        self.done = False
        self.framed = False  # the body's end is known from its length or chunking, not from the close
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.error: HttpError | None = None
        self.received = False
        self.keep_alive = False
        self.head_bytes = 0

    # -- asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.error = HttpError(f"the server's answer is not HTTP/1.1: {exc}")
            self.close()
        if not self.head_done and self.error is None:
            # Counted as bytes arrive: httptools gathers a header (or the reason phrase) whole before
            # handing it over, so a server sending one without end would otherwise fill memory.
            self.head_bytes += len(data)
            if self.head_bytes > MAX_HEAD:
                self.error = HttpError(f"the server's answer has a head over {MAX_HEAD} bytes")
                self.close()
        self._wake()

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.head_done and not self.done and not self.framed and self.error is None:
            self.done = True  # a body delimited by the end of the connection
        elif not self.done and self.error is None:
            self.error = HttpError("the server closed the connection" + (f" ({exc})" if exc else ""))
        self._wake()

    def pause_writing(self) -> None:  # request bodies are small; nothing to pause
        pass

    # -- httptools callbacks --------------------------------------------------------------------

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self.status = self._parser.get_status_code()
        if self.status < 200:  # 1xx: an interim answer; the real one follows on the same connection
            self.reason, self.headers = b"", []
            return
        self.head_done = True
        framing = {name for name, _ in self.headers}
        self.framed = b"content-length" in framing or b"transfer-encoding" in framing or self.status in (204, 304)

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.buffered += len(body)
        if self.buffered > HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        if self.head_done:
            self.done = True
            # Asked now: llhttp forgets the message's flags once it starts on the next one.
            self.keep_alive = self._parser.should_keep_alive()

    # -- used by Response and the pool ----------------------------------------------------------

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Until the parser has more to say (or the connection ends)."""
        if self.error is not None:
            raise self.error
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None
        if self.error is not None:
            raise self.error

    def take(self) -> bytes:
        chunks = self.chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self.chunks = []
        if self.buffered > HIGH_WATER and self.transport is not None and not self.closed:
            self.transport.resume_reading()
        self.buffered = 0
        return data

    def send(self, head: bytes, body: bytes | None) -> None:
        assert self.transport is not None
        self._reset()
        self.uses += 1
        self.transport.write(head + body if body else head)

    @property
    def reusable(self) -> bool:
        return self.done and self.keep_alive and not self.closed and self.error is None

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class Headers(Mapping[str, str]):
    """Response headers by lower-case name; a repeated header's values are joined with ", "."""

    __slots__ = ("_raw", "_map")

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self._raw = raw
        self._map: dict[str, str] | None = None

    def _mapping(self) -> dict[str, str]:
        if self._map is None:
            found: dict[str, str] = {}
            for name, value in self._raw:
                key, text = name.decode("latin-1"), value.decode("latin-1")
                found[key] = f"{found[key]}, {text}" if key in found else text
            self._map = found
        return self._map

    def __getitem__(self, name: str) -> str:
        return self._mapping()[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self._mapping())

    def all(self, name: str) -> list[str]:
        """Every value of a header that may repeat (set-cookie)."""
        key = name.lower().encode()
        return [value.decode("latin-1") for header, value in self._raw if header == key]


class Response:
    """A response whose head has arrived; its body is read with ``read`` or ``lines``."""

    def __init__(self, connection: _Connection, url: str, timeout: float | None) -> None:
        self._connection = connection
        self.url = url
        self.status_code = connection.status
        self.reason_phrase = connection.reason.decode("latin-1")
        self.headers = Headers(connection.headers)
        self._timeout = timeout

    async def _chunks(self) -> AsyncIterator[bytes]:
        connection = self._connection
        while True:
            if connection.chunks:
                yield connection.take()
            elif connection.done:
                return
            else:
                await connection.wait()

    async def read(self, limit: int = MAX_BODY) -> bytes:
        """The whole body (at most ``limit`` bytes, else ``HttpError``), within the client's timeout."""
        connection = self._connection
        too_big = HttpError(f"the answer from {self.url} is over {limit} bytes")
        if connection.done:  # the common case: a small answer that came with its head
            body = connection.take()
            if len(body) > limit:
                raise too_big
            return body
        parts: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self._timeout):
                async for chunk in self._chunks():
                    size += len(chunk)
                    if size > limit:
                        raise too_big
                    parts.append(chunk)
        except TimeoutError:
            raise HttpError(f"{self.url} stopped sending its answer (no end within {self._timeout:g} s)") from None
        return b"".join(parts)

    def lines(self) -> AsyncIterator[str]:
        """The body as text lines (see ``text_lines``); no bound on the wait (the caller sets its own)."""
        return text_lines(self._chunks())


async def text_lines(chunks: AsyncIterator[bytes], limit: int = MAX_LINE) -> AsyncIterator[str]:
    """UTF-8 text lines split at CRLF, LF or CR, as event streams are (never at other Unicode breaks).

    Each chunk is split on its own and an unfinished line is kept in pieces, so a long line costs
    linear time; a line over ``limit`` characters is an ``HttpError``.
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
                raise HttpError(f"an event-stream line is longer than {limit} characters")
            yield line
        if rest:
            pending.append(rest)
            pending_size += len(rest)
            if pending_size > limit:
                raise HttpError(f"an event-stream line is longer than {limit} characters")
    tail = "".join(pending) + decoder.decode(b"", final=True)
    if tail:
        yield tail


class _Proxy(NamedTuple):
    host: str
    port: int
    authorization: str | None  # Proxy-Authorization, from the proxy URL's user and password


_LOOPBACK = ("localhost", "::1")


def proxy_for(scheme: str, host: str, proxies: Mapping[str, str]) -> _Proxy | None:
    """The proxy a request to ``scheme://host`` goes through, from proxy settings as urllib reads them
    from the environment (``{"https": URL, "no": "a.example,.b.example", ...}``); None for none."""
    if host in _LOOPBACK or host.startswith("127.") or proxy_bypass_environment(host, dict(proxies)):
        return None  # a proxy cannot reach this machine's loopback, and NO_PROXY is obeyed
    url = proxies.get(scheme) or proxies.get("all")
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme != "http" or not parts.hostname:
        raise HttpError(f"proxy {parts.scheme}://{parts.hostname}: only http:// proxies are supported")
    authorization = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode()
    return _Proxy(parts.hostname, parts.port or 80, authorization)


class _Tunnel(asyncio.Protocol):
    """A proxy connection until its answer to CONNECT has arrived."""

    def __init__(self) -> None:
        self.head: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.received = b""

    def data_received(self, data: bytes) -> None:
        self.received += data
        if b"\r\n\r\n" in self.received and not self.head.done():
            self.head.set_result(self.received)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.head.done():
            self.head.set_exception(HttpError("the proxy closed the connection"))


class HttpClient:
    """Keep-alive HTTP/1.1 connections to any number of origins, with default headers and a timeout."""

    def __init__(self, headers: Mapping[str, str] | None = None, timeout: float | None = 30.0, *,
                 trust_env: bool = True, ssl_context: ssl.SSLContext | None = None) -> None:
        """``trust_env``: use the proxies the environment names; ``ssl_context``: whom https trusts
        (the system's trust store by default)."""
        self.timeout = timeout
        self._proxies = getproxies_environment() if trust_env else {}
        self._routes: dict[Origin, _Proxy | None] = {}
        self._headers = {name.lower(): value for name, value in (headers or {}).items()}
        for name, value in self._headers.items():
            _check_header(name, value)
        self._idle: dict[Origin, list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._cookies: dict[str, dict[str, str]] = {}
        self._ssl = ssl_context
        self._closed = False

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
        credentials = True
        for _ in range(MAX_REDIRECTS + 1):
            response = await self._exchange(method, url, headers, content, wait, credentials)
            location = response.headers.get("location") if response.status_code in _REDIRECTS else None
            if location is None:
                break
            self._settle(response)
            target = urljoin(url, location)
            # Credentials belong to the origin they were given for (as browsers and httpx have it).
            credentials = credentials and urlsplit(target)[:2] == urlsplit(url)[:2]
            if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
                method, content = "GET", None
            url = target
        else:
            raise HttpError(f"{url}: more than {MAX_REDIRECTS} redirects")
        try:
            yield response
        finally:
            self._settle(response)

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
        for connection in [*self._busy, *(c for idle in self._idle.values() for c in idle)]:
            connection.close()
        self._idle.clear()
        self._busy.clear()

    # -- one exchange ---------------------------------------------------------------------------

    async def _exchange(self, method: str, url: str, headers: Mapping[str, str] | None, body: bytes | None,
                        timeout: float | None, credentials: bool) -> Response:
        """Send one request and wait for the head of its answer."""
        if self._closed:
            raise HttpError("the HTTP client is closed")
        origin, head = self._head(method, url, headers, body, credentials)
        for attempt in (1, 2):
            connection = await self._connect(origin)
            reused = connection.uses > 0
            self._busy.add(connection)
            try:
                connection.send(head, body)
                async with asyncio.timeout(timeout):
                    while not connection.head_done:
                        await connection.wait()
            except TimeoutError:
                self._drop(connection)
                raise HttpError(f"no answer from {url} within {timeout:g} s") from None
            except HttpError:
                self._drop(connection)
                # A kept-alive connection that the server closed meanwhile: the request never reached it.
                if reused and attempt == 1 and not connection.received:
                    continue
                raise
            except BaseException:
                self._drop(connection)
                raise
            response = Response(connection, url, self.timeout)
            self._remember_cookies(origin[1], response.headers)
            return response
        raise AssertionError("unreachable")

    def _head(self, method: str, url: str, headers: Mapping[str, str] | None, body: bytes | None,
              credentials: bool) -> tuple[Origin, bytes]:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = parts.hostname
        if scheme not in ("http", "https") or not host:
            raise HttpError(f"not an http(s) URL: {url!r}")
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc = f"{netloc}:{parts.port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        origin = (scheme, host, parts.port or (443 if scheme == "https" else 80))
        lines = [f"{method} {target} HTTP/1.1", f"host: {netloc}"]
        proxy = self._route(origin)
        if proxy is not None and scheme == "http":  # (https goes through a tunnel: nothing changes inside)
            lines[0] = f"{method} http://{netloc}{target} HTTP/1.1"
            if proxy.authorization is not None:
                lines.append(f"proxy-authorization: {proxy.authorization}")
        # The client's own headers (the user's -H, a bearer token) are credentials of a kind: an API
        # key travels in any header. They go to the origin they were given for, never past a redirect
        # to another; the protocol's per-request headers go everywhere.
        sent = self._headers if credentials else {}
        if headers:
            for name, value in headers.items():
                _check_header(name, value)
            sent = {**sent, **{name.lower(): value for name, value in headers.items()}}
        lines.extend(f"{name}: {value}" for name, value in sent.items())
        jar = self._cookies.get(host) if credentials else None
        if jar:
            lines.append("cookie: " + "; ".join(f"{name}={value}" for name, value in jar.items()))
        if body is not None or method == "POST":
            lines.append(f"content-length: {len(body or b'')}")
        try:
            head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        except UnicodeEncodeError:
            raise HttpError("a header holds characters that HTTP/1.1 headers cannot carry") from None
        return origin, head

    def _route(self, origin: Origin) -> _Proxy | None:
        if origin not in self._routes:
            self._routes[origin] = proxy_for(origin[0], origin[1], self._proxies) if self._proxies else None
        return self._routes[origin]

    # -- the pool -------------------------------------------------------------------------------

    async def _connect(self, origin: Origin) -> _Connection:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
        scheme, host, port = origin
        context = None
        if scheme == "https":
            context = self._ssl = self._ssl or ssl.create_default_context()
        proxy = self._route(origin)
        try:
            async with asyncio.timeout(self.timeout):
                if proxy is None or context is None:
                    address = (host, port) if proxy is None else (proxy.host, proxy.port)
                    _, connection = await asyncio.get_running_loop().create_connection(
                        lambda: _Connection(origin), *address, ssl=context)
                else:
                    connection = await self._tunnel(origin, proxy, context)
        except TimeoutError:
            raise HttpError(f"no connection to {host}:{port} within {self.timeout:g} s") from None
        except OSError as exc:  # ssl.SSLError is one too
            raise HttpError(exc.strerror or str(exc) or type(exc).__name__) from None
        return connection

    async def _tunnel(self, origin: Origin, proxy: _Proxy, context: ssl.SSLContext) -> _Connection:
        """A TLS connection to ``origin`` inside a CONNECT tunnel through ``proxy``."""
        loop = asyncio.get_running_loop()
        _, host, port = origin
        transport, tunnel = await loop.create_connection(_Tunnel, proxy.host, proxy.port)
        try:
            authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            lines = [f"CONNECT {authority} HTTP/1.1", f"host: {authority}"]
            if proxy.authorization is not None:
                lines.append(f"proxy-authorization: {proxy.authorization}")
            transport.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
            status_line = (await tunnel.head).split(b"\r\n", 1)[0].decode("latin-1")
            status = status_line.split(" ", 2)
            if len(status) < 2 or not status[0].startswith("HTTP/") or not status[1].startswith("2"):
                raise HttpError(f"the proxy {proxy.host}:{proxy.port} refused a tunnel to {authority}: {status_line}")
            connection = _Connection(origin)
            secured = await loop.start_tls(transport, connection, context, server_hostname=host)
        except BaseException:
            transport.close()
            raise
        if secured is None:
            raise HttpError(f"no TLS through the proxy to {authority}")
        connection.connection_made(secured)
        return connection

    def _settle(self, response: Response) -> None:
        """A response is done with: keep its connection if the answer was read to its end."""
        connection = response._connection
        if connection.done:
            self._release(connection)
        else:
            self._drop(connection)

    def _release(self, connection: _Connection) -> None:
        self._busy.discard(connection)
        if connection.reusable and not self._closed:
            idle = self._idle.setdefault(connection.origin, [])
            if len(idle) < POOL_SIZE:
                idle.append(connection)
                return
        connection.close()

    def _drop(self, connection: _Connection) -> None:
        self._busy.discard(connection)
        connection.close()

    def _remember_cookies(self, host: str, headers: Headers) -> None:
        for cookie in headers.all("set-cookie"):
            pair, *attributes = cookie.split(";")
            name, sep, value = pair.partition("=")
            name = name.strip()
            if not sep or not name:
                continue
            jar = self._cookies.setdefault(host, {})
            ages = [a.strip()[8:] for a in attributes if a.strip().lower().startswith("max-age=")]
            if ages and ages[-1].lstrip("-").isdigit() and int(ages[-1]) <= 0:
                jar.pop(name, None)  # the server deletes it
            else:
                jar[name] = value.strip()


def _check_header(name: str, value: str) -> None:
    """Refuse what would end the header early (CR, LF, NUL): it could smuggle headers or requests."""
    if any(c in name for c in "\r\n\0: ") or any(c in value for c in "\r\n\0"):
        raise HttpError(f"header {name!r} holds a line break or NUL, which HTTP/1.1 headers cannot carry")
