"""promptdeck's HTTP/1.1 server (``server/httpd.py``) on real loopback sockets.

What the MCP app does over HTTP is tested in test_http_protocol, test_http_faults and test_modern,
all served by this server; here are the server's own duties: framing, keep-alive and pipelining,
bad requests, interim answers, failing apps, idle connections and a graceful stop, and that the app
still runs under another ASGI server (uvicorn).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from contextlib import closing
from typing import Any

import httpx

from promptdeck.server._asgi import Receive, Scope, Send
from tests.test_http_faults import (
    connect,
    logged_errors,
    parse_head,
    read_response,
    read_until,
    request_head,
    wait_until,
)
from tests.test_http_protocol import POST_HEADERS, init, rpc, serve, serve_uvicorn, serving, start_session


def exchange(sock: socket.socket, data: bytes) -> tuple[int, dict[str, str], bytes]:
    sock.sendall(data)
    return read_response(sock)


def test_pipelined_requests_are_answered_in_order_on_one_connection() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        bodies = [json.dumps(rpc("ping", id=n)).encode() for n in range(5)]
        with closing(connect(url)) as sock:
            sock.sendall(b"".join(request_head("POST", url, {**headers, "content-length": str(len(body))}) + body
                                  for body in bodies))
            answers = read_responses(sock, len(bodies))
        assert [status for status, _, _ in answers] == [200] * 5
        assert all("date" in found for _, found, _ in answers)
        assert [json.loads(body.split(b"data: ")[-1])["id"] for _, _, body in answers] == [0, 1, 2, 3, 4]


def read_responses(sock: socket.socket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """``count`` responses with a Content-Length each, however the bytes are split into reads."""
    data = b""
    found: list[tuple[int, dict[str, str], bytes]] = []
    while len(found) < count:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep:
            status, headers = parse_head(head)
            length = int(headers["content-length"])
            if len(rest) >= length:
                found.append((status, headers, rest[:length]))
                data = rest[length:]
                continue
        chunk = sock.recv(65536)
        assert chunk, "connection closed before every answer came"
        data += chunk
    return found


def test_http_1_0_gets_its_answer_and_the_connection_closes() -> None:
    with serve() as (url, _), closing(connect(url)) as sock:
        body = json.dumps(init()).encode()
        head = request_head("POST", url, {**POST_HEADERS, "content-length": str(len(body))})
        sock.sendall(head.replace(b"HTTP/1.1", b"HTTP/1.0", 1) + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"connection: close" in data.lower()
        assert b'"protocolVersion":"2025-11-25"' in data and data.rstrip().endswith(b"}")


def test_malformed_and_oversized_heads_are_refused_and_the_server_goes_on() -> None:
    with serve() as (url, _), logged_errors() as errors:
        with closing(connect(url)) as sock:
            status, headers, body = exchange(sock, b"NOT HTTP AT ALL\r\n\r\n")
            assert status == 400 and headers["connection"] == "close" and b"malformed" in body
            assert sock.recv(10) == b""
        with closing(connect(url)) as sock:
            huge = request_head("GET", url, {"x-padding": "a" * 70_000})
            status, _, body = exchange(sock, huge)
            assert status == 431 and b"65536" in body
        with closing(connect(url)) as sock:
            status, _, body = exchange(sock, request_head("GET", url.replace("/mcp", "/healthz"), {}))
            assert (status, body) == (200, b"ok")
        assert errors == []


def test_expect_continue_gets_an_interim_answer_before_the_body() -> None:
    with serve() as (url, _), closing(connect(url)) as sock:
        body = json.dumps(init()).encode()
        sock.sendall(request_head("POST", url, {**POST_HEADERS, "content-length": str(len(body)),
                                                "expect": "100-continue"}))
        assert read_until(sock, b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        status, headers, answer = read_response(sock)
        assert status == 200 and b"2025-11-25" in answer


async def failing_app(scope: Scope, receive: Receive, send: Send) -> None:
    """An ASGI app that fails in every way a server must survive, chosen by the path."""
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/raise":
        raise RuntimeError("boom")
    if path == "/nothing":
        return
    if path == "/half":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        raise RuntimeError("died mid-answer")
    if path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        for piece in (b"one ", b"two ", b"", b"three"):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    body = path.encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


def test_a_failing_app_gets_a_500_or_a_cut_connection_and_the_server_goes_on() -> None:
    with serving(failing_app) as runner, logged_errors() as errors, httpx.Client() as client:
        base = f"http://127.0.0.1:{runner.port}"
        raised = client.get(base + "/raise")
        assert (raised.status_code, raised.text) == (500, "Internal Server Error")
        assert client.get(base + "/nothing").status_code == 500
        try:
            client.get(base + "/half")
            raise AssertionError("a response the app never finished must not look complete")
        except httpx.RemoteProtocolError:
            pass
        streamed = client.get(base + "/stream")
        assert streamed.text == "one two three" and streamed.headers["transfer-encoding"] == "chunked"
        assert client.get(base + "/fine").text == "/fine"
    messages = [record.getMessage() for record in errors]
    assert any("failed on GET /raise" in m for m in messages) and any("nothing to GET /nothing" in m for m in messages)
    assert any("failed on GET /half" in m for m in messages)


def test_idle_keep_alive_connections_are_closed() -> None:
    with serving(failing_app, keep_alive=0.3) as runner, closing(connect(f"http://127.0.0.1:{runner.port}/")) as sock:
        status, _, _ = exchange(sock, request_head("GET", f"http://127.0.0.1:{runner.port}/a", {}))
        assert status == 200
        wait_until(lambda: not runner.connections, "the idle connection to be closed")
        assert sock.recv(10) == b""


def test_a_stop_lets_answers_in_flight_finish_on_connections_it_then_closes() -> None:
    release = threading.Event()

    async def slow_app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await asyncio.get_running_loop().run_in_executor(None, release.wait, 10)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"4")]})
        await send({"type": "http.response.body", "body": b"done"})

    results: list[Any] = []
    with serving(slow_app, graceful=10) as runner:
        port = runner.port

        def ask() -> None:
            results.append(httpx.get(f"http://127.0.0.1:{port}/", timeout=20))

        asker = threading.Thread(target=ask)
        asker.start()
        wait_until(lambda: bool(runner.connections), "the request to arrive")
        stopper = threading.Thread(target=lambda: runner.loop.call_soon_threadsafe(runner.stop))
        stopper.start()
        wait_until(lambda: runner.stopping, "the stop to begin")
        release.set()
        asker.join(20)
    assert results and results[0].text == "done" and results[0].headers["connection"] == "close"


def test_the_app_runs_under_uvicorn_too() -> None:
    """The app is plain ASGI: mounted under another server, the protocol is the same."""
    with serve_uvicorn() as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        got = client.post(url, json=rpc("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
                          headers=headers)
        assert got.status_code == 200 and "Hello Ada" in got.text
        with client.stream("GET", url, headers={**headers, "accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200 and stream.headers["content-type"] == "text/event-stream"
        assert client.delete(url, headers=headers).status_code == 200
