"""``serve --http``'s runner (server/http/runner.py): uvicorn's settings, binding the listening socket with one
clear error, whose X-Forwarded-For is believed, and the request head bounded in size (to the byte) and in time
(on every request of a kept-alive connection), over a trivial ASGI app on a loopback port."""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
from contextlib import closing
from typing import Any

import pytest

from promptdeck.protocol.errors import LibraryError
from promptdeck.server.http import runner
from tests.support.http_rpc import serving


class Hello:
    """An ASGI app answering every request with its path; notes end_streams and lifespan."""

    def __init__(self) -> None:
        self.ended = threading.Event()

    def end_streams(self) -> None:
        self.ended.set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        body = scope["path"].encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


# -- settings -----------------------------------------------------------------------------------------


def test_uvicorn_is_configured_for_an_endpoint_facing_hostile_clients() -> None:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    cfg = runner.config(Hello(), "127.0.0.1", 8000)
    assert issubclass(cfg.http, HttpToolsProtocol) and cfg.http is not HttpToolsProtocol
    assert cfg.limit_concurrency == runner.MAX_CONNECTIONS == 1000
    assert cfg.timeout_keep_alive == runner.KEEP_ALIVE_SECONDS
    assert cfg.proxy_headers is False  # X-Forwarded-For believed from nobody unless told
    assert cfg.server_header is False and cfg.access_log is False and cfg.log_config is None
    assert cfg.lifespan == "on"
    assert runner.config(Hello(), "h", 1, limit_concurrency=5).limit_concurrency == 5  # extra overrides


def test_trusting_names_the_proxies_or_nothing() -> None:
    assert runner.trusting(()) == {}
    assert runner.trusting(("10.0.0.1", "10.0.0.2")) == {"proxy_headers": True,
                                                         "forwarded_allow_ips": ["10.0.0.1", "10.0.0.2"]}


# -- bind ---------------------------------------------------------------------------------------------


def test_bind_gives_a_listening_inheritable_socket() -> None:
    with closing(runner.bind("127.0.0.1", 0)) as sock:
        assert sock.family == socket.AF_INET and sock.get_inheritable()
        port = sock.getsockname()[1]
        with closing(socket.create_connection(("127.0.0.1", port), timeout=5)):
            pass  # it listens: the connection is queued before anything serves it


def test_a_port_in_use_is_one_clear_error() -> None:
    with closing(runner.bind("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(LibraryError, match=f"cannot listen on 127.0.0.1:{port}: the port is already in use"):
            runner.bind("127.0.0.1", port)


def test_shared_sockets_bind_the_same_port_once_each() -> None:
    with closing(runner.bind("127.0.0.1", 0, shared=True)) as first:
        port = first.getsockname()[1]
        with closing(runner.bind("127.0.0.1", port, shared=True)) as second:
            assert second.getsockname()[1] == port


def test_an_address_not_of_this_machine_says_why() -> None:
    with pytest.raises(LibraryError) as caught:
        runner.bind("192.0.2.1", 0)  # TEST-NET-1: never assigned here
    assert str(caught.value) == f"cannot listen on 192.0.2.1:0: {os.strerror(errno.EADDRNOTAVAIL)}"


def test_an_ipv6_host_gets_an_ipv6_socket() -> None:
    try:
        sock = runner.bind("::1", 0)
    except LibraryError:
        pytest.skip("no IPv6 loopback here")
    with closing(sock):
        assert sock.family == socket.AF_INET6


# -- the request head ---------------------------------------------------------------------------------


def head_of(size: int) -> bytes:
    """A request head whose measure (path, and each header's name and value plus 4) is ``size``."""
    fixed = len("/x") + (len("host") + len("127.0.0.1") + 4) + (len("x-pad") + 4)
    return b"GET /x HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * (size - fixed) + b"\r\n\r\n"


def test_a_head_is_allowed_to_the_byte_and_refused_past_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "MAX_HEAD", 1000)
    with serving(Hello()) as port:
        with closing(connect(port)) as sock:
            sock.sendall(head_of(1000))
            assert answer(sock).startswith(b"HTTP/1.1 200")
        with closing(connect(port)) as sock:
            sock.sendall(head_of(1001))
            refused = b""
            while chunk := sock.recv(65536):  # the server closes the connection after its answer
                refused += chunk
            assert refused.startswith(b"HTTP/1.1 431 Request Header Fields Too Large")
            assert b"connection: close" in refused
            assert refused.endswith(b"\r\n\r\nrequest head larger than 1000 bytes")


def test_a_head_arriving_in_pieces_is_cut_off_once_it_passes_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "MAX_HEAD", 1000)
    with serving(Hello()) as port, closing(connect(port)) as sock:
        sock.sendall(b"GET /x HTTP/1.1\r\nhost: 127.0.0.1\r\nx-grow: ")
        time.sleep(0.1)
        for _ in range(20):  # 20 reads of 100 bytes: past 1000 while the header never ends
            try:
                sock.sendall(b"a" * 100)
            except OSError:
                break
            time.sleep(0.02)
        assert answer(sock).startswith(b"HTTP/1.1 431")


def test_pipelined_requests_in_one_read_are_not_a_long_head(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "MAX_HEAD", 1000)
    with serving(Hello()) as port, closing(connect(port)) as sock:
        one = head_of(600)
        sock.sendall(one + one.replace(b"/x", b"/y"))  # 1,200 bytes of two heads of 600 each
        data = b""
        while data.count(b"HTTP/1.1 200") < 2:
            chunk = sock.recv(65536)
            assert chunk, data
            data += chunk
        assert data.endswith(b"/y")


def test_a_head_must_arrive_in_time_on_every_request_of_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "HEAD_SECONDS", 0.3)
    with serving(Hello()) as port:
        with closing(connect(port)) as sock:
            sock.sendall(b"GET /x HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # never the blank line
            started = time.monotonic()
            assert sock.recv(100) == b""
            assert time.monotonic() - started < 5
        with closing(connect(port)) as sock:
            sock.sendall(head_of(100))
            assert answer(sock).endswith(b"/x")
            sock.sendall(b"GET /y HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # the next head, trickled
            assert sock.recv(100) == b""


def test_shutdown_ends_the_apps_streams_first() -> None:
    app = Hello()
    with serving(app):
        assert not app.ended.is_set()
    assert app.ended.is_set()


def test_a_worker_that_cannot_serve_says_why_and_its_parent_says_it_stopped() -> None:
    """A ``--workers`` child that raises used to exit 1 with nothing said: a real parent process forks two
    workers whose app cannot be made; each logs its traceback, and the parent names each one that stopped."""
    import subprocess
    import sys

    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = ("import logging, sys\n"
              "logging.basicConfig(stream=sys.stderr, level=logging.INFO)\n"
              "from promptdeck.server.http import runner\n"
              "def make_app():\n"
              "    raise RuntimeError('no app for this worker')\n"
              f"runner.run_workers(make_app, '127.0.0.1', {port}, 2)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # the parent fails once its workers have gone, saying how many
    assert "LibraryError: 2 of 2 workers stopped with an error (logged above)" in done.stderr
    assert done.stderr.count("RuntimeError: no app for this worker") == 2, done.stderr
    assert done.stderr.count("stopped with exit code 1") == 2, done.stderr
