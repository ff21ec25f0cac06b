"""promptdeck's HTTP/1.1 server: runs an ASGI app on asyncio protocols, parsed by httptools (llhttp).

Why not uvicorn: an MCP request is one small POST answered by one small body, and uvicorn's
per-request machinery (a task, a cycle object, ASGI message dicts, two writes, its middleware) cost
more CPU than promptdeck's own handling of the request (benchmarks/README.md). This server does
what that traffic needs and little else, with the same parser uvicorn uses, so the ASGI app stays
mountable under any ASGI server:

- HTTP/1.1 keep-alive and pipelining (answers in order), HTTP/1.0, ``Expect: 100-continue``;
- request bodies streamed to ``receive`` with flow control, ``http.disconnect`` when the peer goes;
- responses of known length in one write (head and body together), streams chunked, ``Date`` set;
- limits: request head size (431), idle keep-alive connections closed after ``keep_alive`` seconds;
- lifespan startup and shutdown, and a graceful stop on SIGINT/SIGTERM: listening ends, the app's
  ``end_streams`` (if any) closes long-lived responses, requests in flight get ``graceful`` seconds.

Not done: TLS (put a proxy in front), HTTP/2, WebSockets (an Upgrade is served as a plain request).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections import deque
from collections.abc import Callable
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

import httptools

from ._asgi import ASGIApp, Message, Scope

log = logging.getLogger("promptdeck.httpd")

#: The most a request head (request line and headers) may hold.
MAX_HEAD = 64 * 1024
#: Buffered request body past which the socket stops being read until the app catches up.
HIGH_WATER = 256 * 1024
KEEP_ALIVE = 5.0
#: How long a request body that was answered before its end is read away before the connection closes.
LINGER = 2.0
#: How much of such a body is read away at most.
MAX_DROPPED = 16 * 1024 * 1024
_REASONS = {status.value: f"{status.value} {status.phrase}".encode() for status in HTTPStatus}
_ASGI = {"version": "3.0", "spec_version": "2.3"}
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class _Clock:
    """The Date header, formatted once a second rather than per response."""

    def __init__(self) -> None:
        self.second = 0
        self.header = b""

    def date(self) -> bytes:
        now = int(time.time())
        if now != self.second:
            self.second = now
            self.header = b"date: " + formatdate(now, usegmt=True).encode() + b"\r\n"
        return self.header


class _Exchange:
    """One request and its response: the ASGI ``receive`` and ``send`` of one app call."""

    __slots__ = ("conn", "scope", "chunks", "buffered", "more_body", "body_given", "started", "finished",
                 "head", "chunked", "keep_alive", "waiter", "expects_continue", "bodiless")

    def __init__(self, conn: _Connection, scope: Scope, keep_alive: bool, expects_continue: bool) -> None:
        self.conn = conn
        self.scope = scope
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.more_body = True  # the request body has not ended yet
        self.body_given = False  # receive has returned the body's last part
        self.started = False
        self.finished = False
        self.head = b""  # the response head, held back to go out with the first body bytes
        self.chunked = False
        self.keep_alive = keep_alive
        self.waiter: asyncio.Future[None] | None = None
        self.expects_continue = expects_continue
        self.bodiless = scope["method"] == "HEAD"

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self) -> Message:
        conn = self.conn
        if self.expects_continue:
            self.expects_continue = False
            if not conn.closed and not self.started:
                conn.write(_CONTINUE)
        while not self.body_given:
            if conn.closed and (self.more_body or not self.chunks):
                break
            if self.chunks or not self.more_body:
                chunks = self.chunks
                body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self.chunks = []
                if self.buffered > HIGH_WATER:
                    conn.resume_reading()
                self.buffered = 0
                self.body_given = not self.more_body
                return {"type": "http.request", "body": body, "more_body": self.more_body}
            await self._wait()
        # The body is all given: what is left to say is that the client went (or the answer is done).
        while not conn.closed and not self.finished:
            await self._wait()
        return {"type": "http.disconnect"}

    async def _wait(self) -> None:
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None

    async def send(self, message: Message) -> None:
        kind = message["type"]
        conn = self.conn
        if kind == "http.response.body":
            if not self.started or self.finished:
                where = "after the response's end" if self.started else "before http.response.start"
                raise RuntimeError(f"ASGI: {kind} {where}")
            body: bytes = message.get("body", b"")
            more = message.get("more_body", False)
            out = self._frame(body, more)
            if not more:
                self.finished = True
                self.wake()  # a receive() waiting for the disconnect learns the exchange is over
            if conn.closed:
                return
            if out:
                conn.write(out)
            if not more:
                conn.finished(self)
            elif conn.paused_writing:
                await conn.drained()
        elif kind == "http.response.start":
            if self.started:
                raise RuntimeError("ASGI: a second http.response.start")
            self.started = True
            self._start(message["status"], message.get("headers", ()))
        else:
            raise RuntimeError(f"ASGI: unknown message type {kind!r}")

    def _start(self, status: int, headers: Any) -> None:
        lines = [b"HTTP/1.1 " + _REASONS.get(status, b"%d Unknown" % status) + b"\r\n", self.conn.server.clock.date()]
        length = False
        for name, value in headers:
            lowered = name.lower()
            if lowered == b"content-length":
                length = True
            elif lowered == b"connection" and value.lower() == b"close":
                self.keep_alive = False
                continue
            elif lowered == b"transfer-encoding":
                continue  # framing is this server's business
            lines.append(b"%s: %s\r\n" % (name, value))
        if self.conn.server.stopping:
            self.keep_alive = False  # the last answer on this connection: say so
        self.chunked = not length and status not in (204, 304)
        if self.chunked and self.scope["http_version"] == "1.0":
            self.chunked = self.keep_alive = False  # HTTP/1.0 has no chunks: the close ends the body
        if not self.keep_alive:
            lines.append(b"connection: close\r\n")
        self.head = b"".join(lines)

    def _frame(self, body: bytes, more: bool) -> bytes:
        """The bytes that carry ``body``: the held head first, chunk framing when the length is not known."""
        head, self.head = self.head, b""
        if self.bodiless:
            body = b""
        if self.chunked:
            if head and not more:
                # The whole body in one message: say its length rather than chunk it.
                self.chunked = False
                return head + b"content-length: %d\r\n\r\n" % len(body) + body
            if head:
                head += b"transfer-encoding: chunked\r\n\r\n"
            chunk = b"%x\r\n%s\r\n" % (len(body), body) if body else b""
            return head + chunk + (b"" if more else b"0\r\n\r\n")
        return head + b"\r\n" + body if head else body


class _Connection(asyncio.Protocol):
    """One client connection: parses requests, runs the app for each one in turn."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.loop = server.loop
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.closed = False
        self.paused_writing = False
        self.paused_reading = False
        self._drain: asyncio.Future[None] | None = None
        self.client: tuple[str, int] | None = None
        self.local: tuple[str, int] | None = None
        self.url = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_size = 0
        self.parsing: _Exchange | None = None  # the request whose body the parser is reading
        self.active: _Exchange | None = None  # the request the app is answering
        self.queue: deque[_Exchange] = deque()  # pipelined requests waiting their turn
        self.task: asyncio.Task[None] | None = None
        self._linger: asyncio.TimerHandle | None = None
        self.idle_since = self.loop.time()

    # -- asyncio.Protocol -----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio's classes
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        self.client = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else None
        self.local = (str(local[0]), int(local[1])) if isinstance(local, tuple) else None
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass  # served as a plain request; the connection closes after the answer (see on_headers_complete)
        except httptools.HttpParserError as exc:
            # An exception raised in a callback arrives wrapped, the original as its context.
            if isinstance(exc.__context__, _HeadTooLarge):
                self._refuse(431, f"request head over {MAX_HEAD} bytes")
            else:
                self._refuse(400, f"malformed request: {exc}")

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.server.connections.discard(self)
        for exchange in (self.active, self.parsing, *self.queue):
            if exchange is not None:
                exchange.wake()
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def pause_writing(self) -> None:
        self.paused_writing = True

    def resume_writing(self) -> None:
        self.paused_writing = False
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    # -- httptools callbacks --------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.url = b""
        self.headers = []
        self.head_size = 0

    def on_url(self, url: bytes) -> None:
        self.url += url
        self.head_size += len(url)
        if self.head_size > MAX_HEAD:
            raise _HeadTooLarge

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_size += len(name) + len(value) + 4
        if self.head_size > MAX_HEAD:
            raise _HeadTooLarge
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        parser = self.parser
        url = httptools.parse_url(self.url)
        path = url.path.decode("latin-1")
        if "%" in path:
            from urllib.parse import unquote

            path = unquote(path)
        scope: Scope = {
            "type": "http", "asgi": _ASGI, "http_version": parser.get_http_version(),
            "method": parser.get_method().decode("ascii"), "scheme": "http", "path": path,
            "raw_path": url.path, "query_string": url.query or b"", "root_path": "",
            "headers": self.headers, "client": self.client, "server": self.local,
        }
        expects = any(name == b"expect" and value.lower() == b"100-continue" for name, value in self.headers)
        keep_alive = parser.should_keep_alive() and not parser.should_upgrade() and not self.server.stopping
        exchange = _Exchange(self, scope, keep_alive, expects)
        self.parsing = exchange
        if self.active is None:
            self._run(exchange)
        else:
            self.queue.append(exchange)
            self.pause_reading()  # one request waiting is enough; the client waits for its answers anyway

    def on_body(self, body: bytes) -> None:
        exchange = self.parsing
        if exchange is None:
            return
        if exchange.finished:  # the rest of a body answered already (see ``finished``): dropped
            exchange.buffered += len(body)
            if exchange.buffered > MAX_DROPPED:
                self.close()
            return
        exchange.chunks.append(body)
        exchange.buffered += len(body)
        if exchange.buffered > HIGH_WATER:
            self.pause_reading()
        exchange.wake()

    def on_message_complete(self) -> None:
        exchange = self.parsing
        if exchange is not None:
            exchange.more_body = False
            exchange.wake()
            self.parsing = None
            if exchange.finished and self._linger is not None:  # the end of a body read away after its answer
                self._linger.cancel()
                self._linger = None
                self.finished(exchange)

    # -- running the app ------------------------------------------------------------------------

    def _run(self, exchange: _Exchange) -> None:
        self.active = exchange
        self.task = self.loop.create_task(self._call(exchange))

    async def _call(self, exchange: _Exchange) -> None:
        try:
            await self.server.app(exchange.scope, exchange.receive, exchange.send)
        except Exception:
            log.exception("the ASGI app failed on %s %s", exchange.scope["method"], exchange.scope["path"])
            if not exchange.started and not self.closed:
                await self._fail(exchange, b"Internal Server Error")
        if not exchange.finished and not self.closed:
            if exchange.started:
                self.close()  # a response the app began and never ended cannot be framed now
            else:
                log.error("the ASGI app answered nothing to %s %s", exchange.scope["method"], exchange.scope["path"])
                await self._fail(exchange, b"")

    @staticmethod
    async def _fail(exchange: _Exchange, body: bytes) -> None:
        """A 500 in the app's place, on a connection that then closes."""
        exchange.keep_alive = False
        headers = [(b"content-type", b"text/plain")] if body else []
        await exchange.send({"type": "http.response.start", "status": 500, "headers": headers})
        await exchange.send({"type": "http.response.body", "body": body})

    def finished(self, exchange: _Exchange) -> None:
        """The app sent the end of ``exchange``'s response."""
        if exchange.more_body:
            # Answered before the request body ended (a 413): the rest is read and dropped, and the
            # connection goes on if it ends soon. Closing at once would reset a client that is still
            # sending, and a reset loses the answer too.
            exchange.chunks = []
            self._linger = self.loop.call_later(LINGER, self.close)
            self.resume_reading()
            return
        if not exchange.keep_alive:
            self.close()
            return
        self.active = None
        self.idle_since = self.loop.time()
        if self.queue:
            self._run(self.queue.popleft())
        self.resume_reading()

    # -- I/O ------------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(data)

    async def drained(self) -> None:
        if self.paused_writing and not self.closed:
            self._drain = self.loop.create_future()
            await self._drain

    def pause_reading(self) -> None:
        if not self.paused_reading and self.transport is not None and not self.closed:
            self.paused_reading = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.paused_reading and self.transport is not None and not self.closed:
            self.paused_reading = False
            self.transport.resume_reading()

    def _refuse(self, status: int, why: str) -> None:
        if self.active is None or not self.active.started:
            body = why.encode()
            head = b"content-type: text/plain\r\nconnection: close\r\ncontent-length: %d\r\n\r\n" % len(body)
            self.write(b"HTTP/1.1 " + _REASONS[status] + b"\r\n" + self.server.clock.date() + head + body)
        self.close()

    def close(self) -> None:
        if not self.closed and self.transport is not None:
            self.closed = True
            self.transport.close()

    @property
    def idle(self) -> bool:
        return self.active is None and self.parsing is None


class _HeadTooLarge(Exception):
    pass


class Server:
    """Serves ``app`` on ``host:port``; ``await serve()`` until ``stop()`` (or a signal, see ``run``)."""

    loop: asyncio.AbstractEventLoop  # the loop ``serve`` runs on

    def __init__(self, app: ASGIApp, host: str, port: int, *, keep_alive: float = KEEP_ALIVE,
                 graceful: float = 10.0, lifespan: bool = True) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.keep_alive = keep_alive
        self.graceful = graceful
        self.lifespan = lifespan
        self.clock = _Clock()
        self.connections: set[_Connection] = set()
        self.stopping = False
        self._stop: asyncio.Event | None = None

    async def serve(self, ready: Callable[[int], None] | None = None) -> None:
        """Start, call ``ready(port)`` once listening, and serve until ``stop()``."""
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        lifespan = _Lifespan(self.app) if self.lifespan else None
        if lifespan is not None:
            await lifespan.startup()
        listener = await self.loop.create_server(lambda: _Connection(self), self.host, self.port,
                                                 reuse_address=True, backlog=2048)
        self.port = listener.sockets[0].getsockname()[1]
        sweeper = self.loop.create_task(self._sweep())
        if ready is not None:
            ready(self.port)
        try:
            await self._stop.wait()
        finally:
            self.stopping = True
            sweeper.cancel()
            listener.close()
            await self._shut_down()
            if lifespan is not None:
                await lifespan.shutdown()

    def stop(self) -> None:
        """Begin a graceful stop (safe to call from a signal handler on the loop)."""
        if self._stop is not None:
            self._stop.set()

    async def _shut_down(self) -> None:
        ending = getattr(self.app, "end_streams", None)
        if callable(ending):
            ending()  # long-lived responses (event streams) end now instead of holding the stop
        for conn in list(self.connections):
            if conn.idle:
                conn.close()
        deadline = self.loop.time() + self.graceful
        while self.connections and self.loop.time() < deadline:
            await asyncio.sleep(0.05)
            for conn in list(self.connections):
                if conn.idle:
                    conn.close()
        self.abort()

    def abort(self) -> None:
        """Close every connection now, and cancel the app's work on them."""
        for conn in list(self.connections):
            conn.close()
            if conn.task is not None:
                conn.task.cancel()

    async def _sweep(self) -> None:
        """Close keep-alive connections idle for longer than ``keep_alive`` seconds."""
        while True:
            await asyncio.sleep(min(1.0, self.keep_alive))
            limit = self.loop.time() - self.keep_alive
            for conn in list(self.connections):
                if conn.idle and conn.idle_since < limit:
                    conn.close()


class _Lifespan:
    """The ASGI lifespan protocol: startup before the first request, shutdown after the last.

    An app that returns or raises at once does not do lifespan (the ASGI spec): it is served without.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.outbox: asyncio.Queue[Message] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        try:
            await self.app({"type": "lifespan", "asgi": _ASGI, "state": {}}, self.inbox.get, self.outbox.put)
        except Exception:
            log.debug("the app's lifespan ended with an error", exc_info=True)
        finally:
            self.outbox.put_nowait({"type": "lifespan.ended"})  # wakes a wait for an answer that will not come

    async def startup(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())
        await self.inbox.put({"type": "lifespan.startup"})
        answer = await self.outbox.get()
        if answer["type"] == "lifespan.startup.failed":
            raise RuntimeError(f"the app failed to start: {answer.get('message', '')}")

    async def shutdown(self) -> None:
        if self.task is None or self.task.done():
            return
        await self.inbox.put({"type": "lifespan.shutdown"})
        try:
            await asyncio.wait_for(self.outbox.get(), 10)
        except TimeoutError:
            self.task.cancel()


def new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop when it is installed (it halves the loop's share of a request), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


def run(app: ASGIApp, host: str, port: int, **options: Any) -> None:
    """Serve until SIGINT or SIGTERM (a second one stops at once)."""
    server = Server(app, host, port, **options)
    loop = new_loop()
    asyncio.set_event_loop(loop)

    def on_signal() -> None:
        if server._stop is not None and server._stop.is_set():
            server.abort()  # a second signal: no more waiting for answers in flight
        server.stop()

    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, on_signal)
    try:
        loop.run_until_complete(server.serve())
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)
