"""``serve --http``: uvicorn (httptools, uvloop) runs the ASGI app, configured for what MCP faces.

uvicorn does the HTTP/1.1 work: keep-alive, pipelining with back-pressure (a
pipelined request is not read until the one before is answered; a response
waits for the socket to drain), ``limit_concurrency`` (503 past it), TLS, a
graceful stop. What it lacks for an endpoint open to hostile clients is added
here as a thin subclass of its httptools protocol, not a fork:

- the request head is counted read by read and refused past ``MAX_HEAD``
  (431): httptools gathers a header whole before handing it over, so a header
  that never ends would otherwise grow without bound;
- the head must arrive within ``HEAD_SECONDS`` of the connection opening (or of
  the previous answer): a client that trickles its headers is disconnected;
- pipelined requests are read only once the ones already queued are answered
  (uvicorn resumes reading after every answer, so its queue could grow without
  bound for a client that pipelines and never reads).

The request body's deadline is the app's (``asgi.read_body``). ``serve`` puts it together: the app (or
one app per endpoint), uvicorn's settings, one process or several.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...protocol.errors import LibraryError

log = logging.getLogger("promptdeck.http")

if TYPE_CHECKING:
    from ..app import PromptServer

#: The most a request head (request line and headers) may hold.
MAX_HEAD = 64 * 1024
#: How long a client has to send a whole request head.
HEAD_SECONDS = 10.0
#: Connections and requests in flight at once; past it, new requests get 503.
MAX_CONNECTIONS = 1000
KEEP_ALIVE_SECONDS = 5.0


def _protocol_class() -> type:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class BoundedHttpTools(HttpToolsProtocol):
        """uvicorn's httptools protocol with the head bounded in size and in time."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._head_bytes = 0
            self._heads = 0  # heads completed on this connection
            self._in_head = True
            self._head_timer: asyncio.TimerHandle | None = None
            self._arm()

        def _arm(self) -> None:
            self._head_timer = self.loop.call_later(HEAD_SECONDS, self._too_slow)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _too_slow(self) -> None:
            self._head_timer = None
            if self._in_head and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            # Counted after parsing, so a read that finishes one head (and carries bodies or pipelined
            # requests after it) is not mistaken for a long head: memory stays within MAX_HEAD and one read.
            heads = self._heads
            super().data_received(data)
            if self._heads != heads:
                self._head_bytes = 0  # a head ended in this read; whatever follows starts afresh
            elif self._in_head and not self.transport.is_closing():
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD:
                    self._disarm()
                    self._in_head = False
                    self._refuse_head()

        def _refuse_head(self) -> None:
            message = f"request head larger than {MAX_HEAD} bytes"
            self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\n"
                                 b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
                                 % (len(message), message.encode()))
            self.transport.close()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if not self._in_head:  # the next request on a kept-alive connection
                self._in_head = True
                self._arm()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._heads += 1
            self._disarm()
            # A head that arrived within one read was never counted above: measure it whole.
            if len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers) > MAX_HEAD:
                self._refuse_head()
                return
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # uvicorn resumes reading after every answer, even with pipelined requests still queued, so
            # a client that pipelines and never reads grows that queue by a read's worth of requests
            # per answer. Reading waits until the queue is empty.
            if self.pipeline and not self.transport.is_closing():
                self.flow.pause_reading()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return BoundedHttpTools


def config(app: Any, host: str, port: int, **extra: Any) -> Any:
    """The ``uvicorn.Config`` promptdeck serves with (``extra`` overrides, e.g. TLS files)."""
    import uvicorn

    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:  # pragma: no cover - uvloop is not built for every platform
        loop = "asyncio"
    settings: dict[str, Any] = {
        "http": _protocol_class(), "loop": loop, "lifespan": "on", "log_level": "warning", "access_log": False,
        "server_header": False, "limit_concurrency": MAX_CONNECTIONS, "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "timeout_graceful_shutdown": 10,
        # X-Forwarded-For is believed only from proxies named with --trusted-proxy (uvicorn would
        # otherwise believe it from 127.0.0.1, letting any local client pick its rate-limit bucket).
        "proxy_headers": False,
        # Logging is promptdeck's (logs.setup_logging): uvicorn's records reach its handler, formatted as
        # --log-format says, instead of uvicorn's own unescaped text.
        "log_config": None, **extra}
    return uvicorn.Config(app, host=host, port=port, **settings)


def server(app: Any, host: str, port: int, **extra: Any) -> Any:
    """A ``uvicorn.Server`` for ``app`` that ends the app's long-lived streams as soon as shutdown begins."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            end = getattr(app, "end_streams", None)
            if end is not None:
                end()
            await super().shutdown(sockets)

    return Server(config(app, host, port, **extra))


def bind(host: str, port: int, *, shared: bool = False) -> socket.socket:
    """The listening socket, bound before anything is served: a port in use is one clear error.
    ``shared``: SO_REUSEPORT, so that each worker process listens on a socket of its own."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise LibraryError(f"cannot listen on {host}:{port}: the port is already in use") from None
        raise LibraryError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def trusting(proxies: tuple[str, ...]) -> dict[str, Any]:
    """uvicorn settings that take the client's address from X-Forwarded-For sent by these proxies only."""
    return {"proxy_headers": True, "forwarded_allow_ips": list(proxies)} if proxies else {}


def run(app: Any, host: str, port: int, *, sock: socket.socket | None = None, **extra: Any) -> None:
    """Serve until SIGINT or SIGTERM (on ``sock`` if given, else on a socket bound here)."""
    server(app, host, port, **extra).run(sockets=[sock if sock is not None else bind(host, port)])


def run_workers(make_app: Any, host: str, port: int, workers: int, **extra: Any) -> None:
    """Serve with ``workers`` processes, each with its own listening socket on the same port.

    With one socket shared by all (uvicorn's ``--workers``), the kernel hands connections to whichever
    process accepts first, and keep-alive clients can all land on one. With SO_REUSEPORT each process
    has its own accept queue and the kernel spreads new connections across them. The workers share no
    memory, so this goes with ``--stateless`` (a session lives in one process).
    """
    import os
    import signal

    bind(host, port, shared=True).close()  # a port in use: one clear error before any process starts
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                server(make_app(), host, port, **extra).run(sockets=[bind(host, port, shared=True)])
            except BaseException:
                code = 1
                # its parent sees only the exit: the worker says why it stopped, in the log they share
                log.exception("worker %d stopped", os.getpid())
            finally:
                os._exit(code)
        children.append(pid)

    def forward(signum: int, _frame: Any) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signum)

    def stop(_signum: int, frame: Any) -> None:
        forward(signal.SIGTERM, frame)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if callable(signal.getsignal(signal.SIGHUP)):  # the workers re-read their token file: tell each of them
        signal.signal(signal.SIGHUP, forward)
    failed = 0
    for child in children:
        while True:
            try:
                _, status = os.waitpid(child, 0)
                code = os.waitstatus_to_exitcode(status)
                if code != 0:  # the others go on serving; this one is said, not silently gone
                    log.error("worker %d stopped with exit code %d", child, code)
                    failed += 1
                break
            except InterruptedError:  # pragma: no cover - retried by Python since 3.5
                continue
            except ChildProcessError:
                break
    if failed:  # a supervisor restarts a server whose workers all failed only if it hears of it
        raise LibraryError(f"{failed} of {workers} workers stopped with an error (logged above)")


def serve(server: PromptServer | Mapping[str, PromptServer], host: str, port: int, *,
          tls: tuple[str, str] | None = None, sock: socket.socket | None = None, trusted_proxies: tuple[str, ...] = (),
          workers: int = 1, connection_limits: dict[str, Any] | None = None, **options: Any) -> None:
    """Serve over HTTP with uvicorn until SIGINT or SIGTERM. ``server``: one server on ``/mcp``, or servers
    by endpoint path (see ``endpoints``); ``tls``: (cert, key) files; ``sock``: a socket already bound
    (``bind``); ``trusted_proxies``: whose X-Forwarded-For to believe; ``workers``: processes (see
    ``run_workers``); ``connection_limits``: uvicorn settings (``limit_concurrency``,
    ``timeout_keep_alive``) over this module's defaults; ``options``: ``app.create_app``'s."""
    from .app import create_app
    from .endpoints import Endpoints

    extra = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
    extra |= trusting(trusted_proxies)
    extra |= connection_limits or {}

    def make_app() -> Any:
        if isinstance(server, Mapping):
            return Endpoints.create(server, **options)
        return create_app(server, **options)

    if workers > 1:
        if sock is not None:
            sock.close()  # each worker binds its own
        run_workers(make_app, host, port, workers, **extra)
        return
    run(make_app(), host, port, sock=sock, **extra)
