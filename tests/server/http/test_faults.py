"""Streamable HTTP under faults: dropped connections, garbage and oversized bodies, wrong headers,
expired and abandoned sessions, and a long list walk while the library changes.

Most tests serve an app with promptdeck's HTTP server on a thread (``serve``, tests/support/http_rpc.py), so they can
look at the server's own tables (sessions, streams, tasks) after a fault; connections that must be
dropped or bodies that must never end are written on raw sockets. The list walk runs the real
``promptdeck serve --http`` process with file watching. Spec references are to
../shared/spec/CHECKLIST.md section 4.
"""

from __future__ import annotations

import asyncio
import bisect
import gc
import json
import logging
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import pytest

from promptdeck import Prompt, PromptServer
from promptdeck.server.http.app import StreamableHttpApp
from promptdeck.server.http.legacy_sse import LegacySseTransport
from promptdeck.server.http.sessions import REPLAY_EVENTS
from tests.support.http_rpc import (
    POST_HEADERS,
    _Listener,
    assert_error_body,
    init,
    make_server,
    messages_of,
    rpc,
    serve,
    start_session,
)
from tests.support.http_server import http_server
from tests.support.libraries import write_prompts
from tests.support.listeners import sessions as legacy_sessions
from tests.support.raw_http import connect, read_response, read_until, request_head

PING = json.dumps(rpc("ping")).encode()
T = TypeVar("T")


# -- helpers --------------------------------------------------------------------------------------


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 10) -> None:
    """Poll ``condition`` until it holds; a generous deadline, so a slow machine is not a failure."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[[], T]) -> T:
    """``fn()``, run on the server's event loop: its state is not safe to change from another thread."""

    async def call() -> T:
        return fn()

    return asyncio.run_coroutine_threadsafe(call(), loop).result(10)


def task_count(app: StreamableHttpApp) -> int:
    """Tasks alive on the server's event loop (a session's), not counting the one that asks."""
    return on_loop(next(iter(app.table.streamable.values())).loop, lambda: len(asyncio.all_tasks()) - 1)


def open_get_stream(url: str, headers: dict[str, str]) -> socket.socket:
    """A 2025-11-25 session's GET stream on a raw connection, read up to its priming event."""
    sock = connect(url)
    try:
        sock.sendall(request_head("GET", url, {**headers, "accept": "text/event-stream"}))
        opened = read_until(sock, b"data: \n\n")
        assert opened.startswith(b"HTTP/1.1 200") and b"retry:" in opened, opened
    except BaseException:
        sock.close()
        raise
    return sock


@contextmanager
def logged_errors() -> Iterator[list[logging.LogRecord]]:
    """ERROR records of promptdeck, its HTTP server included (an exception escaping the app is one),
    while the block runs."""
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect(logging.ERROR)
    logger = logging.getLogger("promptdeck")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


def scratch_prompt(name: str, description: str) -> Prompt:
    """A Python prompt made apart from the server under test, to add to it while it serves."""
    scratch = PromptServer("scratch")

    @scratch.prompt(name=name, description=description)
    def body() -> str:
        return description

    prompt: Prompt = scratch.catalog.require(name).parsed()
    return prompt


# -- 1. clients that go away ----------------------------------------------------------------------


def test_dropped_get_stream_is_released_and_the_session_lives_on() -> None:
    server = make_server()
    with serve(server) as (url, app), httpx.Client() as client, logged_errors() as errors:
        headers = start_session(client, url)
        session = app.table.streamable[headers["mcp-session-id"]]
        idle_tasks = task_count(app)
        for _ in range(3):  # every drop must give its stream back, not just the first
            with closing(open_get_stream(url, headers)):
                assert session.stream is not None
            wait_until(lambda: session.stream is None, "the server to notice the dropped stream")
        # Nothing of the three streams is left running: not their handlers, nor their disconnect watchers.
        wait_until(lambda: task_count(app) <= idle_tasks, "the stream tasks to end")
        # The session survives the drops (either side MAY close a GET stream) ...
        answer = client.post(url, json=rpc("prompts/list", id=7), headers=headers)
        assert answer.status_code == 200 and messages_of(answer)[0]["id"] == 7
        # ... and a change told while no stream is open reaches the next one.
        server.add_prompt(scratch_prompt("late", "added after the drops"))
        listener = _Listener(client, url, {**headers, "accept": "text/event-stream"})
        [changed] = listener.wait_for(1)
        assert json.loads(changed["data"])["method"] == "notifications/prompts/list_changed"
        client.delete(url, headers=headers)
        listener.thread.join(5)
        assert errors == []


def test_notifications_for_a_session_without_a_stream_are_bounded() -> None:
    # A client that never opens a GET stream (most only POST) must not make the server keep every
    # list_changed it missed: only the newest REPLAY_EVENTS wait for a stream, like the replay buffer.
    server = make_server()
    told = REPLAY_EVENTS + 200
    with serve(server) as (url, app), httpx.Client() as client:
        headers = start_session(client, url)
        session = app.table.streamable[headers["mcp-session-id"]]
        for n in range(told):  # each version differs, so each swap is a change clients are told about
            server.add_prompt(scratch_prompt("flip", f"version {n}"))
        wait_until(lambda: session.next_event == told, "every list_changed to be queued")
        assert len(session.undelivered) <= REPLAY_EVENTS and len(session.buffer) <= REPLAY_EVENTS
        # The stream that opens next gets the newest ones, in order, ending with the last.
        listener = _Listener(client, url, {**headers, "accept": "text/event-stream"})
        events = listener.wait_for(REPLAY_EVENTS)
        assert [e["id"] for e in events] == [f"g{n}" for n in range(told - REPLAY_EVENTS + 1, told + 1)]
        client.delete(url, headers=headers)
        listener.thread.join(5)


def gated_server() -> tuple[PromptServer, threading.Event, threading.Event, list[str]]:
    """A server with an async prompt ``gated`` that renders only once the test sets ``release``.

    Returns (server, entered, release, outcomes): ``entered`` is set when a render begins, and each
    render appends "finished" or "cancelled" to ``outcomes``.
    """
    server = make_server()
    entered, release = threading.Event(), threading.Event()
    outcomes: list[str] = []

    @server.prompt(description="Waits for the test before it renders")
    async def gated(name: str) -> str:
        entered.set()
        try:
            while not release.is_set():
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            outcomes.append("cancelled")
            raise
        outcomes.append("finished")
        return f"late {name}"

    return server, entered, release, outcomes


def post_and_drop(url: str, headers: dict[str, str], message: dict[str, Any], entered: threading.Event) -> None:
    """POST ``message`` on a raw connection and close it once the render has begun, before any answer."""
    body = json.dumps(message).encode()
    with closing(connect(url)) as sock:
        sock.sendall(request_head("POST", url, {**headers, "content-length": str(len(body))}) + body)
        assert entered.wait(10), "the render never began"


def test_dropped_post_is_not_cancelled_and_others_are_served() -> None:
    server, entered, release, outcomes = gated_server()
    with serve(server) as (url, app), httpx.Client() as client, logged_errors() as errors:
        headers = start_session(client, url)
        session = app.table.streamable[headers["mcp-session-id"]]
        idle_tasks = task_count(app)
        get = rpc("prompts/get", {"name": "gated", "arguments": {"name": "Ada"}}, id="slow")
        post_and_drop(url, headers, get, entered)
        # While that render is pending for nobody, this session and a new one are served.
        greet = rpc("prompts/get", {"name": "greet", "arguments": {"name": "Bo"}}, id=2)
        for who in (headers, start_session(client, url)):
            [answer] = messages_of(client.post(url, json=greet, headers=who))
            assert answer["result"]["messages"][0]["content"]["text"] == "Hello Bo"
        assert outcomes == []
        release.set()
        # A dropped connection SHOULD NOT mean cancellation: the render finishes, its answer goes nowhere.
        wait_until(lambda: outcomes == ["finished"] and not session.legacy.in_flight, "the render to finish")
        wait_until(lambda: task_count(app) <= idle_tasks, "the request task to end")
        assert client.post(url, json=rpc("ping"), headers=headers).status_code == 200
        assert errors == []


def test_cancelled_after_a_dropped_post_ends_the_render() -> None:
    # What the spec asks of a client that gives up: notifications/cancelled, which does stop the work.
    server, entered, release, outcomes = gated_server()
    with serve(server) as (url, app), httpx.Client() as client, logged_errors() as errors:
        headers = start_session(client, url)
        session = app.table.streamable[headers["mcp-session-id"]]
        post_and_drop(url, headers, rpc("prompts/get", {"name": "gated", "arguments": {"name": "Ada"}}, id=41),
                      entered)
        wait_until(lambda: 41 in session.legacy.in_flight, "the render to be in flight")
        cancel = rpc("notifications/cancelled", {"requestId": 41, "reason": "gone"}, id=None)
        assert client.post(url, json=cancel, headers=headers).status_code == 202
        wait_until(lambda: outcomes == ["cancelled"], "the render to be cancelled")
        assert not session.legacy.in_flight
        release.set()
        assert client.post(url, json=rpc("ping"), headers=headers).status_code == 200
        assert errors == []


def sse_transport(app: StreamableHttpApp) -> LegacySseTransport:
    assert app.legacy_sse is not None  # served beside Streamable HTTP in stateful mode
    return app.legacy_sse


def open_legacy_stream(url: str) -> tuple[socket.socket, str]:
    """GET /sse on a raw connection: (the socket, the messages URL its endpoint event names)."""
    sse = url.replace("/mcp", "/sse")
    sock = connect(sse)
    sock.sendall(request_head("GET", sse, {"accept": "text/event-stream"}))
    opened = read_until(sock, b"\n\n").decode()
    assert opened.startswith("HTTP/1.1 200"), opened
    endpoint = opened.split("event: endpoint\ndata: ", 1)[1].split("\n", 1)[0]
    return sock, url.replace("/mcp", endpoint)


def test_dropped_legacy_sse_stream_ends_its_session() -> None:
    with serve() as (url, app), httpx.Client() as client, logged_errors() as errors:
        sessions = sse_transport(app).sessions
        sock, messages = open_legacy_stream(url)
        with closing(sock):
            assert len(sessions) == 1
        # 2024-11-05: the session lives exactly as long as its stream.
        wait_until(lambda: not sessions, "the SSE session to end")
        assert client.post(messages, json=init("2024-11-05"), headers=POST_HEADERS).status_code == 404
        assert not legacy_sessions(app.server)
        assert errors == []


def test_legacy_messages_endpoint_answers_garbage_on_the_stream() -> None:
    with serve(max_body_bytes=4096) as (url, app), httpx.Client() as client, logged_errors() as errors:
        sse = url.replace("/mcp", "/sse")
        listener = _Listener(client, sse, {"accept": "text/event-stream"})
        [endpoint] = listener.wait_for(1)
        messages = url.replace("/mcp", endpoint["data"])
        for body in (b"{nope", b'{"jsonrpc":"2.0","id":1,"method":"p\xffing"}'):
            assert client.post(messages, content=body, headers=POST_HEADERS).status_code == 202
        # Each unreadable body is answered on the stream with an id-less parse error.
        answers = [json.loads(e["data"]) for e in listener.wait_for(3)[1:]]
        assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), (None, -32700)]
        with closing(connect(messages)) as sock:
            sock.sendall(request_head("POST", messages, {**POST_HEADERS, "content-length": str(10**9)}))
            status, _, _ = read_response(sock)
            assert status == 413
        # The session still works.
        assert client.post(messages, json=init("2024-11-05"), headers=POST_HEADERS).status_code == 202
        [answer] = [json.loads(e["data"]) for e in listener.wait_for(4)[3:]]
        assert answer["id"] == 0 and answer["result"]["protocolVersion"] == "2024-11-05"
        transport = sse_transport(app)
        on_loop(next(iter(transport.sessions.values())).loop, app.table.end)
        listener.thread.join(5)
        assert not listener.thread.is_alive()
        assert errors == []


# -- 2. garbage bodies ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]]:
    """One server and one 2025-11-25 session for tests that only send bad requests to it."""
    with serve() as (url, app), httpx.Client() as client:
        yield url, app, client, start_session(client, url)


GARBAGE: dict[str, tuple[bytes, int]] = {
    "truncated": (b'{"jsonrpc": "2.0", "id": 1, "method": "pi', -32700),
    "plain text": (b"ping", -32700),
    "trailing garbage": (PING + b" x", -32700),
    "two objects": (PING + PING, -32700),
    "whitespace": (b" \r\n\t ", -32700),
    "nul bytes": (b"\x00" * 16, -32700),
    "invalid utf-8": (b"\xff\xfe{}", -32700),
    "invalid utf-8 in a string": (b'{"jsonrpc": "2.0", "id": 1, "method": "p\xffing"}', -32700),
    "lone surrogate": (b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}', -32700),
    "deep array": (b"[" * 100_000 + b"]" * 100_000, -32700),
    "deep object": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, -32700),
    "number": (b"42", -32600),
    "string": (b'"ping"', -32600),
    "null": (b"null", -32600),
    "boolean": (b"true", -32600),
    # 2025-06-18 and later have no batches: the whole body is an invalid request.
    "batch": (b"[" + PING + b"," + json.dumps(rpc("ping", id=2)).encode() + b"]", -32600),
    "batch of a notification": (b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]', -32600),
}


@pytest.mark.parametrize("name", GARBAGE)
def test_garbage_body_is_400_with_the_json_rpc_error(
        name: str, shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    url, app, client, headers = shared
    body, code = GARBAGE[name]
    answer = client.post(url, content=body, headers=headers)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert_error_body(answer, code)
    # The server, the connection and the session are all fine afterwards.
    assert client.post(url, content=PING, headers=headers).status_code == 200


def test_batched_initialize_opens_no_session(
        shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    url, app, client, _ = shared
    before = set(app.table.streamable)
    answer = client.post(url, json=[init("2025-06-18")], headers=POST_HEADERS)
    assert answer.status_code == 400 and "mcp-session-id" not in answer.headers
    assert_error_body(answer, -32600)
    assert set(app.table.streamable) == before


def test_hostile_method_names_do_not_grow_the_metrics(
        shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    # The method is client input: counting requests by any name would grow /metrics (and memory)
    # without bound, and a name with a quote or a line break could forge metric lines.
    url, app, client, headers = shared
    assert client.post(url, content=PING, headers=headers).status_code == 200
    names = [f"x/{n}" for n in range(300)] + ['x"} 1\npromptdeck_forged_total 1\n#']
    for method in names:
        [answer] = messages_of(client.post(url, json=rpc(method), headers=headers))
        assert answer["error"]["code"] == -32601
    assert all(method not in names for method, _ in app.metrics.requests)
    metrics = client.get(url.replace("/mcp", "/metrics")).text
    assert "x/1" not in metrics and "promptdeck_forged_total" not in metrics
    assert 'promptdeck_requests_total{method="ping",outcome="ok"}' in metrics
    assert 'promptdeck_requests_total{method="other",outcome="error"}' in metrics


# -- 3. wrong Content-Type and Accept -------------------------------------------------------------


@pytest.mark.parametrize("content_type", [None, "text/plain", "multipart/form-data; boundary=x",
                                          "application/x-www-form-urlencoded", "application/jsonl", ""])
def test_post_without_a_json_content_type_is_415(
        content_type: str | None, shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    url, app, client, _ = shared
    headers = {"accept": POST_HEADERS["accept"]}
    if content_type is not None:
        headers["content-type"] = content_type
    before = set(app.table.streamable)
    refused = client.post(url, content=json.dumps(init()).encode(), headers=headers)
    assert refused.status_code == 415
    assert_error_body(refused, -32600)
    assert "mcp-session-id" not in refused.headers and set(app.table.streamable) == before


@pytest.mark.parametrize("accept", ["", "text/html", "application/*", "text/event-stream, text/html",
                                    "application/json-seq, text/event-stream"])
def test_post_without_both_media_types_in_accept_is_406(
        accept: str, shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    # The client MUST list both; the spec names no status, 406 Not Acceptable is HTTP's.
    url, app, client, _ = shared
    before = set(app.table.streamable)
    refused = client.post(url, json=init(), headers={"content-type": "application/json", "accept": accept})
    assert refused.status_code == 406
    assert_error_body(refused, -32600)
    assert "mcp-session-id" not in refused.headers and set(app.table.streamable) == before


def test_post_without_accept_is_406(shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    url, app, _, _ = shared
    body = json.dumps(init()).encode()
    with closing(connect(url)) as sock:  # httpx always sends an Accept header
        sock.sendall(request_head("POST", url, {"content-type": "application/json",
                                                "content-length": str(len(body))}) + body)
        status, headers, answer = read_response(sock)
    assert status == 406 and "mcp-session-id" not in headers
    assert json.loads(answer)["error"]["code"] == -32600


def test_a_repeated_header_counts_by_its_first_value(
        shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    url, _, _, _ = shared
    parts = urlsplit(url)
    body = json.dumps(init()).encode()

    def post(origins: list[str]) -> int:
        lines = [f"POST {parts.path} HTTP/1.1", f"host: {parts.netloc}", "content-type: application/json",
                 "accept: application/json, text/event-stream", f"content-length: {len(body)}",
                 *(f"origin: {origin}" for origin in origins)]
        with closing(connect(url)) as sock:
            sock.sendall("\r\n".join(lines).encode() + b"\r\n\r\n" + body)
            return read_response(sock)[0]

    good, evil = f"http://localhost:{parts.port}", "http://evil.example.com"
    assert post([evil, good]) == 403
    assert post([good, evil]) == 200


@pytest.mark.parametrize(("content_type", "accept"), [
    ("Application/JSON; charset=UTF-8", "application/json, text/event-stream"),
    ("application/json", "text/event-stream;q=0.9, application/json;q=1.0"),
    ("application/json", "*/*"),
])
def test_equivalent_spellings_are_accepted(
        content_type: str, accept: str, shared: tuple[str, StreamableHttpApp, httpx.Client, dict[str, str]]) -> None:
    url, _, client, headers = shared
    answer = client.post(url, content=PING, headers={**headers, "content-type": content_type, "accept": accept})
    assert answer.status_code == 200 and messages_of(answer)[0]["result"] == {}


# -- 4. oversized bodies --------------------------------------------------------------------------

LIMIT = 4096


def test_declared_oversized_body_is_refused_unread() -> None:
    with serve(max_body_bytes=LIMIT) as (url, app), httpx.Client() as client:
        headers = start_session(client, url)
        with closing(connect(url)) as sock:
            # No body is sent at all, and the client asks before sending one: the answer must come from
            # the Content-Length alone, and it must not be "100 Continue".
            sock.sendall(request_head("POST", url, {**headers, "content-length": str(10**12),
                                                    "expect": "100-continue"}))
            status, _, body = read_response(sock)
        assert status == 413
        assert json.loads(body)["error"]["code"] == -32600
        assert client.post(url, content=PING, headers=headers).status_code == 200


def test_chunked_body_past_the_limit_is_refused_before_it_ends() -> None:
    with serve(max_body_bytes=LIMIT) as (url, app), httpx.Client() as client, logged_errors() as errors:
        headers = start_session(client, url)
        idle_tasks = task_count(app)
        with closing(connect(url)) as sock:
            sock.sendall(request_head("POST", url, {**headers, "transfer-encoding": "chunked"}))
            chunk = b"%x\r\n%s\r\n" % (512, b" " * 512)
            # Three times the limit, and never the last chunk: the server must answer without the end.
            for _ in range(3 * LIMIT // 512):
                sock.sendall(chunk)
            status, _, body = read_response(sock)
        assert status == 413
        assert json.loads(body)["error"]["code"] == -32600
        wait_until(lambda: task_count(app) <= idle_tasks, "the refused request's task to end")
        assert client.post(url, content=PING, headers=headers).status_code == 200
        assert errors == []


def test_body_limit_is_exact() -> None:
    with serve(max_body_bytes=LIMIT) as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        fits = PING + b" " * (LIMIT - len(PING))  # JSON allows trailing whitespace
        for content in (fits, iter([fits[:1000], fits[1000:]])):  # Content-Length, then chunked
            assert client.post(url, content=content, headers=headers).status_code == 200
        over = fits + b" "
        for content in (over, iter([over[:1000], over[1000:]])):
            assert client.post(url, content=content, headers=headers).status_code == 413


# -- 5. expired sessions and the cap --------------------------------------------------------------


def test_expired_session_is_404_for_every_method_while_a_streaming_one_lives() -> None:
    with serve(session_idle_seconds=0.5) as (url, app), httpx.Client() as client:
        abandoned = start_session(client, url)
        streaming = start_session(client, url)
        with closing(open_get_stream(url, streaming)):
            wait_until(lambda: abandoned["mcp-session-id"] not in app.table.streamable, "the idle session to expire")
            # A session whose client holds its GET stream open is not idle, however long it stays quiet.
            assert streaming["mcp-session-id"] in app.table.streamable
        assert client.post(url, json=rpc("ping"), headers=abandoned).status_code == 404
        assert client.get(url, headers={**abandoned, "accept": "text/event-stream"}).status_code == 404
        assert client.delete(url, headers=abandoned).status_code == 404
        # Once its stream is dropped and it stays quiet, that one expires too.
        wait_until(lambda: streaming["mcp-session-id"] not in app.table.streamable, "the dropped session to expire")
        assert client.post(url, json=rpc("ping"), headers=streaming).status_code == 404
        assert not legacy_sessions(app.server)
        # The client starts over with initialize, as the spec says, and gets a new session.
        assert start_session(client, url)["mcp-session-id"] not in (abandoned["mcp-session-id"],
                                                                    streaming["mcp-session-id"])


def test_session_cap_counts_both_transports_and_expiry_makes_room() -> None:
    with serve(max_sessions=3, session_idle_seconds=0.5) as (url, app), httpx.Client() as client:
        # Two Streamable HTTP sessions, kept from expiring by their open GET streams, and one 2024-11-05
        # SSE session fill the cap.
        streams = [open_get_stream(url, start_session(client, url)) for _ in range(2)]
        legacy, _ = open_legacy_stream(url)
        with closing(legacy):
            full = client.post(url, json=init(), headers=POST_HEADERS)
            # Open streams keep every session: no time to name, so no Retry-After rather than a guess.
            assert full.status_code == 503 and "retry-after" not in full.headers
            assert_error_body(full)
            assert "mcp-session-id" not in full.headers
            assert client.get(url.replace("/mcp", "/sse"), headers={"accept": "text/event-stream"}).status_code == 503
            # Dropped streams leave idle sessions, which expire; the SSE one lives as long as its stream.
            for sock in streams:
                sock.close()
            wait_until(lambda: not app.table.streamable, "the idle sessions to expire")
            assert app.table.count() == 1
            start_session(client, url)


# -- 6. many abandoned sessions -------------------------------------------------------------------


def test_a_thousand_abandoned_sessions_are_freed() -> None:
    server = make_server()
    with serve(server, session_idle_seconds=1.5, max_sessions=2000, max_sessions_per_principal=2000) as (url, app), \
            httpx.Client() as client:
        refs: list[weakref.ref[Any]] = []
        for n in range(1000):
            answer = client.post(url, json=init(), headers=POST_HEADERS)
            assert answer.status_code == 200
            session = app.table.streamable.get(answer.headers["mcp-session-id"])
            if session is None:
                continue  # expired already: only a machine stalled for the whole idle time gets here
            refs += [weakref.ref(session), weakref.ref(session.legacy)]
            if n % 100 == 0:
                # Some sessions get further before they are abandoned: initialized, a GET stream opened
                # and dropped, and a list_changed waiting for a stream that never comes.
                headers = {**POST_HEADERS, "mcp-session-id": session.id, "mcp-protocol-version": "2025-11-25"}
                client.post(url, json=rpc("notifications/initialized", id=None), headers=headers)
                open_get_stream(url, headers).close()
            del session
        server.add_prompt(scratch_prompt("late", "told to every session"))
        wait_until(lambda: not app.table.streamable and not legacy_sessions(server), "every session to expire",
                   timeout=20)
        gc.collect()
        alive = [ref() for ref in refs if ref() is not None]
        assert alive == [], f"{len(alive)} session objects outlived their expiry"


# -- 7. a long list walk while the library changes ------------------------------------------------


def list_page(client: httpx.Client, url: str, headers: dict[str, str], cursor: str | None) -> tuple[list[str], Any]:
    answer = client.post(url, json=rpc("prompts/list", {"cursor": cursor} if cursor else None), headers=headers)
    [message] = messages_of(answer)
    return [p["name"] for p in message["result"]["prompts"]], message["result"].get("nextCursor")


def prompt_file(library: Path, name: str) -> Path:
    folder, stem = name.split(".", 1)
    return library / folder / f"{stem}.md"


def test_list_walk_during_hot_reloads_neither_repeats_nor_skips(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    names = write_prompts(library, 3000)
    page_size = 20
    with http_server(str(library), "--page-size", str(page_size)) as url, httpx.Client(timeout=20) as client:
        headers = start_session(client, url)
        listener = _Listener(client, url, {**headers, "accept": "text/event-stream"})

        def exists(name: str) -> bool:
            get = rpc("prompts/get", {"name": name, "arguments": {"topic": "x"}})
            return "result" in messages_of(client.post(url, json=get, headers=headers))[0]

        seen: list[str] = []
        removed: set[str] = set()
        removed_ahead: set[str] = set()
        added_ahead: set[str] = set()
        added_behind: set[str] = set()

        def edit(here: str, take_cursor: bool) -> None:
            """Remove and add files on both sides of the cursor (or remove the prompt it names, which
            may itself be one added in the round before)."""
            at = bisect.bisect_right(names, here) - 1
            gone = [names[at - 500], here if take_cursor else names[at + 1], names[at + 1000]]
            fresh = [f"{names[at - 400]}b", f"{names[at + 900]}b"]
            assert not removed & set(gone)
            for name in gone:
                prompt_file(library, name).unlink()
            for name in fresh:  # the same arguments as the rest, so ``exists`` can get it
                prompt_file(library, name).write_text(prompt_file(library, name[:-1]).read_text())
            removed.update(gone)
            removed_ahead.update(n for n in gone if n > here)
            added_behind.add(fresh[0])
            added_ahead.add(fresh[1])
            # Walk on only once the server has swapped in the edited library.
            wait_until(lambda: all(exists(n) for n in fresh) and not any(exists(n) for n in gone),
                       "the reload", timeout=20)

        # Two rounds of edits, a fifth and half of the way through (150 pages in all).
        rounds = {30: False, 75: True}
        cursor: str | None = None
        while True:
            batch, cursor = list_page(client, url, headers, cursor)
            seen += batch
            if cursor is None:
                break
            take_cursor = rounds.pop(len(seen) // page_size, None)
            if take_cursor is not None:
                edit(seen[-1], take_cursor)
        assert not rounds, "the walk ended before every round of edits"
        assert seen == sorted(seen) and len(seen) == len(set(seen)), "a prompt was repeated or out of order"
        throughout = set(names) - removed
        assert throughout <= set(seen), f"skipped: {sorted(throughout - set(seen))[:5]}"
        assert added_ahead <= set(seen) and not (added_behind | removed_ahead) & set(seen)
        told = listener.wait_for(2)
        assert [json.loads(e["data"])["method"] for e in told][:2] == ["notifications/prompts/list_changed"] * 2
        client.delete(url, headers=headers)
        listener.thread.join(5)
