"""The 2024-11-05 HTTP+SSE transport (server/http/legacy_sse.py), driven through its two ASGI handlers with the
principal each request was authenticated as: a session belongs to the stream and the principal that opened it
(a forged id, another principal's, or one whose stream has gone is 404 alike), POST bodies that are too large,
cut off or malformed, a stream that goes away mid-answer, a client that posts without reading its stream, and
subscriptions counted however their method is spelled. The official SDK's client on real sockets is
tests/interop/test_sdk_legacy_sse.py's; garbage bodies answered on the stream over HTTP are
tests/server/http/test_faults.py's."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager, closing
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from promptdeck import PromptServer
from promptdeck.protocol.errors import HttpError
from promptdeck.server.asgi import Message, Scope
from promptdeck.server.http import legacy_sse
from promptdeck.server.http.app import create_app
from promptdeck.server.http.legacy_sse import LegacySseTransport
from promptdeck.server.security.principals import Principal
from tests.support import http_rpc, modern
from tests.support.http_rpc import init, rpc, serve
from tests.support.listeners import sessions as legacy_sessions
from tests.support.raw_http import read_until, request_head

ANA, BOB = Principal("ana", frozenset()), Principal("bob", frozenset())
JSON_TYPE = [(b"content-type", b"application/json")]
#: how long a test waits for what must come (a generous bound: the machine may be loaded)
WAIT = 10


class Stream:
    """One ``GET /sse`` as its client sees it: the messages the transport sends, and a way to hang up."""

    def __init__(self) -> None:
        self.sent: asyncio.Queue[Message] = asyncio.Queue()
        self.gone = asyncio.Event()
        #: cleared: the client stops reading, and the transport's next send waits (as uvicorn's does)
        self.reading = asyncio.Event()
        self.reading.set()
        self.endpoint = ""
        self.task: asyncio.Task[None] | None = None

    async def receive(self) -> Message:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        await self.reading.wait()
        await self.sent.put(message)

    @property
    def session_id(self) -> str:
        return parse_qs(urlsplit(self.endpoint).query)["session_id"][0]

    async def next_message(self) -> Any:
        """The next JSON-RPC message on the stream (keep-alive comments skipped)."""
        while True:
            async with asyncio.timeout(WAIT):
                body = (await self.sent.get())["body"]
            if body.startswith(b"event: message\ndata: "):
                return json.loads(body.split(b"data: ", 1)[1])
            assert body.startswith(b":"), body

    async def hang_up(self) -> None:
        self.gone.set()
        assert self.task is not None
        async with asyncio.timeout(WAIT):
            await self.task


def make_server(entered: threading.Event, release: threading.Event) -> PromptServer:
    server = PromptServer("sse-test")

    @server.prompt(description="Greets someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.prompt(description="Waits until the test lets it finish")
    def stall() -> str:
        entered.set()
        release.wait(60)  # the test sets it as it ends
        return "finally"

    return server


Scenario = Callable[[LegacySseTransport, Any], Coroutine[Any, Any, None]]


def run(scenario: Scenario, **options: Any) -> None:
    """``scenario(transport, app)`` on a loop of its own, with an app serving the test server."""
    entered, release = threading.Event(), threading.Event()
    app: Any = create_app(make_server(entered, release), watch=False, **options)
    app.entered, app.release = entered, release  # the stalled render's two ends, for the tests that use it
    transport = app.legacy_sse
    assert transport is not None
    try:
        asyncio.run(scenario(transport, app))
    finally:
        release.set()


async def sent_or_raised(stream: Stream) -> Message:
    """The next message the stream's handler sends; what it raised, when it ends instead (a refusal)."""
    assert stream.task is not None
    getter = asyncio.ensure_future(stream.sent.get())
    done, _ = await asyncio.wait({getter, stream.task}, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
    if getter in done:
        return getter.result()
    getter.cancel()
    stream.task.result()  # raises what the handler raised
    raise AssertionError("the stream sent nothing")


@asynccontextmanager
async def opened(transport: LegacySseTransport, principal: Principal = ANA, root_path: str = "",
                 accept: bytes = b"text/event-stream") -> AsyncIterator[Stream]:
    """A ``GET /sse`` stream read up to its endpoint event; hung up on exit."""
    stream = Stream()
    scope: Scope = {"type": "http", "method": "GET", "path": "/sse", "root_path": root_path, "query_string": b"",
                    "headers": [(b"accept", accept)]}
    stream.task = asyncio.ensure_future(transport.stream(scope, stream.receive, stream.send, principal))
    start = await sent_or_raised(stream)
    assert start["status"] == 200 and (b"content-type", b"text/event-stream") in start["headers"], start
    first = (await sent_or_raised(stream))["body"]
    assert first.startswith(b"event: endpoint\ndata: ") and first.endswith(b"\n\n"), first
    stream.endpoint = first[len(b"event: endpoint\ndata: "):-2].decode()
    try:
        yield stream
    finally:
        if not stream.gone.is_set():
            await stream.hang_up()


async def post(transport: LegacySseTransport, query: str, body: bytes | list[bytes], principal: Principal = ANA,
               headers: list[tuple[bytes, bytes]] | None = None, disconnect: bool = False) -> list[Message]:
    """``POST /messages?{query}``: the messages the handler sent. ``body`` in pieces when a list; ``disconnect``:
    the client goes away after the pieces."""
    pieces = body if isinstance(body, list) else [body]
    incoming: list[Message] = [{"type": "http.request", "body": piece, "more_body": n < len(pieces) - 1 or disconnect}
                               for n, piece in enumerate(pieces)]
    if disconnect:
        incoming.append({"type": "http.disconnect"})
    sent: list[Message] = []

    async def receive() -> Message:
        return incoming.pop(0)

    async def send(message: Message) -> None:
        sent.append(message)

    scope: Scope = {"type": "http", "method": "POST", "path": "/messages", "query_string": query.encode(),
                    "headers": JSON_TYPE if headers is None else headers}
    await transport.post(scope, receive, send, principal)
    return sent


def accepted(sent: list[Message]) -> bool:
    return bool(sent) and sent[0]["status"] == 202 and sent[-1]["body"] == b"Accepted"


async def refused(transport: LegacySseTransport, query: str, body: bytes, principal: Principal = ANA,
                  headers: list[tuple[bytes, bytes]] | None = None) -> HttpError:
    with pytest.raises(HttpError) as raised:
        await post(transport, query, body, principal, headers)
    return raised.value


def message(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode()


async def initialized(transport: LegacySseTransport, stream: Stream, principal: Principal = ANA) -> None:
    assert accepted(await post(transport, f"session_id={stream.session_id}", message(init("2024-11-05")), principal))
    assert (await stream.next_message())["result"]["protocolVersion"] == "2024-11-05"
    note = message(rpc("notifications/initialized", id=None))
    assert accepted(await post(transport, f"session_id={stream.session_id}", note, principal))


# -- the stream ----------------------------------------------------------------------------------------------


def test_the_endpoint_event_names_a_fresh_random_session_below_the_root_path() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport, root_path="/api") as one, opened(transport, accept=b"*/*") as two:
            assert one.endpoint.startswith("/api/messages?session_id=") and two.endpoint.startswith("/messages?")
            assert one.session_id != two.session_id and len(one.session_id) >= 43  # 32 random bytes
            assert set(transport.sessions) == {one.session_id, two.session_id}
            assert app.table.streams.held("ana") == 2

    run(scenario)


@pytest.mark.parametrize("accept", [b"", b"application/json", b"text/html, application/*"])
def test_a_stream_must_accept_event_streams(accept: bytes) -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        scope: Scope = {"type": "http", "headers": [(b"accept", accept)] if accept else []}
        with pytest.raises(HttpError) as raised:
            await transport.stream(scope, Stream().receive, Stream().send, ANA)
        assert raised.value.status == 406 and not transport.sessions

    run(scenario)


def test_a_stream_past_the_principals_cap_is_refused_and_its_slot_given_back() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as first:
            with pytest.raises(HttpError) as raised:
                async with opened(transport):
                    pass
            assert raised.value.status == 429 and list(transport.sessions) == [first.session_id]
            async with opened(transport, BOB):  # the cap is ana's alone
                pass
        assert app.table.streams.held("ana") == 0
        async with opened(transport):  # her stream gone, she may open another
            pass

    run(scenario, max_streams_per_principal=1)


def test_a_stream_the_client_leaves_ends_its_session_and_its_pending_answer() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            await initialized(transport, stream)
            stall = message(rpc("prompts/get", {"name": "stall"}, id=9))
            assert accepted(await post(transport, f"session_id={stream.session_id}", stall))
            async with asyncio.timeout(WAIT):
                while not app.entered.is_set():
                    await asyncio.sleep(0.01)
            session = transport.sessions[stream.session_id]
            [pending] = session.tasks
            await stream.hang_up()  # mid-answer
            await asyncio.wait({pending}, timeout=WAIT)
            assert pending.done() and not app.release.is_set()  # ended with its session, not when the render did
            assert not transport.sessions and not legacy_sessions(app.server)
            assert app.table.streams.held("ana") == 0
            gone = await refused(transport, f"session_id={stream.session_id}", message(rpc("ping")))
            assert gone.status == 404

    run(scenario)


def test_a_stream_whose_connection_breaks_ends_its_session_quietly() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        sent: list[Message] = []

        async def breaks(outgoing: Message) -> None:
            sent.append(outgoing)
            if len(sent) > 2:  # the status and the endpoint went; the first answer does not
                raise OSError("connection reset by peer")

        async def never() -> Message:
            await asyncio.Event().wait()
            raise AssertionError

        scope: Scope = {"type": "http", "headers": [(b"accept", b"text/event-stream")], "query_string": b""}
        task = asyncio.ensure_future(transport.stream(scope, never, breaks, ANA))
        async with asyncio.timeout(WAIT):
            while len(sent) < 2:
                await asyncio.sleep(0.01)
        [session_id] = transport.sessions
        assert accepted(await post(transport, f"session_id={session_id}", message(rpc("ping"))))
        async with asyncio.timeout(WAIT):
            await task  # no exception escapes to the ASGI server
        assert not transport.sessions and not legacy_sessions(app.server)

    run(scenario)


def test_server_shutdown_ends_the_stream() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            app.table.end()
            assert stream.task is not None
            async with asyncio.timeout(WAIT):
                await stream.task
                assert (await stream.sent.get()) == {"type": "http.response.body", "body": b""}
            assert not transport.sessions

    run(scenario)


# -- POST /messages --------------------------------------------------------------------------------------------


def test_answers_travel_on_the_stream_and_the_post_is_202() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            await initialized(transport, stream)
            query = f"session_id={stream.session_id}"
            get = message(rpc("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}, id=3))
            sent = await post(transport, query, [get[:10], get[10:]])  # a body in two pieces
            assert sent[0] == {"type": "http.response.start", "status": 202,
                               "headers": [(b"content-type", b"text/plain"), (b"content-length", b"8")]}
            answer = await stream.next_message()
            assert answer["id"] == 3 and answer["result"]["messages"][0]["content"]["text"] == "Hello Ada"
            batch = b"[" + message(rpc("ping", id="a")) + b"," + message(rpc("ping", id="b")) + b"]"
            assert accepted(await post(transport, query, batch))
            refused_batch = await stream.next_message()  # batches came with 2025-03-26
            assert refused_batch["id"] is None and refused_batch["error"]["code"] == -32600

    run(scenario)


@pytest.mark.parametrize("query", ["", "session_id=", "sessionid=x", "session_id"])
def test_a_post_without_a_session_id_is_400(query: str) -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        error = await refused(transport, query, message(rpc("ping")))
        assert error.status == 400 and "session_id" in error.message

    run(scenario)


def test_a_forged_or_foreign_session_id_is_404_and_the_session_is_unharmed() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            real = stream.session_id
            for query in (f"session_id={real[:-1]}", f"session_id={real}x", f"session_id={real.upper()}",
                          "session_id=%00", "session_id=" + "A" * 10_000, f"session_id=nope&session_id={real}"):
                error = await refused(transport, query, message(rpc("ping")))
                assert error.status == 404 and "open a new /sse stream" in error.message, query
            # Bob knows ana's id (a leaked log line): it is not his session, and he is told no more than that.
            foreign = await refused(transport, f"session_id={real}", message(rpc("ping")), BOB)
            assert (foreign.status, foreign.message) == (404, "session not found; open a new /sse stream")
            assert stream.sent.empty()  # nothing of his reached her stream
            assert accepted(await post(transport, f"session_id={real}&session_id=other", message(rpc("ping", id=5))))
            assert (await stream.next_message())["id"] == 5

    run(scenario)


@pytest.mark.parametrize("content_type", [None, b"text/plain", b"application/jsonl", b"multipart/form-data"])
def test_a_post_that_is_not_json_is_415(content_type: bytes | None) -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            headers = [] if content_type is None else [(b"content-type", content_type)]
            error = await refused(transport, f"session_id={stream.session_id}", message(rpc("ping")), headers=headers)
            assert error.status == 415
            json_with_charset = [(b"content-type", b"Application/JSON; charset=utf-8")]
            assert accepted(await post(transport, f"session_id={stream.session_id}", message(rpc("ping")),
                                       headers=json_with_charset))

    run(scenario)


def test_an_oversized_body_is_413_whether_declared_or_streamed() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            query = f"session_id={stream.session_id}"
            declared = await refused(transport, query, b"{}", headers=[*JSON_TYPE, (b"content-length", b"1025")])
            assert declared.status == 413
            with pytest.raises(HttpError) as streamed:  # no length given: counted as it arrives
                await post(transport, query, [b" " * 600, b" " * 600])
            assert streamed.value.status == 413
            assert stream.sent.empty() and transport.sessions  # nothing was handled; the session lives on
            assert accepted(await post(transport, query, message(rpc("ping", id=1))))
            assert (await stream.next_message())["id"] == 1

    run(scenario, max_body_bytes=1024)


def test_a_body_cut_off_by_the_client_is_dropped_without_an_answer() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            sent = await post(transport, f"session_id={stream.session_id}", [b'{"jsonrpc": "2.0", "id"'],
                              disconnect=True)
            assert sent == [] and stream.sent.empty() and transport.sessions

    run(scenario)


@pytest.mark.parametrize(("body", "code"), [
    (b"{nope", -32700), (b"", -32700), (b"\xff\xfe", -32700),
    (b'{"method": "subscriptions/listen"', -32700), (b'["subscriptions/listen"', -32700),  # past the listen count
    (b'{"jsonrpc": "2.0", "id": 1, "method": "x/y"}', -32600),  # before initialize
])
def test_a_malformed_body_is_accepted_and_answered_on_the_stream(body: bytes, code: int) -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            assert accepted(await post(transport, f"session_id={stream.session_id}", body))
            error = (await stream.next_message())["error"]
            assert error["code"] == code

    run(scenario)


def test_the_principals_scopes_are_those_of_each_post() -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            session = transport.sessions[stream.session_id]
            assert session.legacy.scopes == frozenset() and session.legacy.sticky == "principal:ana"
            narrowed = Principal("ana", frozenset({"hr"}))
            assert accepted(await post(transport, f"session_id={stream.session_id}", message(rpc("ping")), narrowed))
            assert session.legacy.scopes == frozenset({"hr"})
        async with opened(transport, Principal("127.0.0.1", frozenset(), authenticated=False)) as anonymous:
            # A name that is only an address is no rollout key: the session is, so its renders stay on one version.
            assert transport.sessions[anonymous.session_id].legacy.sticky == f"session:{anonymous.session_id}"

    run(scenario)


def test_a_client_that_posts_without_reading_its_stream_is_refused_until_it_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legacy_sse, "MAX_UNSENT_BYTES", 1000)

    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:
            query = f"session_id={stream.session_id}"
            stream.reading.clear()
            statuses = []
            for n in range(100):
                try:
                    statuses.append(accepted(await post(transport, query, message(rpc("ping", id=n)))))
                except HttpError as refusal:
                    assert refusal.status == 429 and "has not been read" in refusal.message
                    break
            # ~36 bytes an answer: the queue stopped growing near the bound, not at what the client sent.
            assert 20 < len(statuses) < 40 and all(statuses), len(statuses)
            stream.reading.set()
            for n in range(len(statuses)):
                assert (await stream.next_message())["id"] == n  # nothing accepted was lost
            assert accepted(await post(transport, query, message(rpc("ping", id="again"))))
            assert (await stream.next_message())["id"] == "again"

    run(scenario)


def test_over_http_an_unread_stream_stops_its_own_posts_not_the_server() -> None:
    # uvicorn's send waits while the client reads nothing, so the answers pile up in the session's queue.
    with serve(http_rpc.make_server()) as (url, app), httpx.Client(timeout=30) as client:
        parts = urlsplit(url)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # little for the kernel to hold for us
        sock.settimeout(WAIT)
        with closing(sock):
            sock.connect((parts.hostname, parts.port))
            sock.sendall(request_head("GET", url.replace("/mcp", "/sse"), {"accept": "text/event-stream"}))
            opened = read_until(sock, b"\n\n").decode()  # the head ends in CRLFs: this is the endpoint event's end
            assert opened.startswith("HTTP/1.1 200"), opened
            messages = url.replace("/mcp", opened.split("event: endpoint\ndata: ", 1)[1].split("\n", 1)[0])
            assert client.post(messages, json=init("2024-11-05")).status_code == 202
            assert client.post(messages, json=rpc("notifications/initialized", id=None)).status_code == 202
            big = {"name": "greet", "arguments": {"name": "x" * 1_000_000}}
            statuses: list[int] = []
            while len(statuses) < 200 and 429 not in statuses:
                statuses.append(client.post(messages, json=rpc("prompts/get", big, id=len(statuses))).status_code)
            assert statuses[-1] == 429 and set(statuses[:-1]) == {202}, statuses
            # 16 MiB waiting, and what the sockets hold: tens of answers, not all the client would send.
            assert 16 <= len(statuses) < 100, len(statuses)
            assert client.post(url, json=init(), headers=http_rpc.POST_HEADERS).status_code == 200  # others served
        transport = app.legacy_sse
        deadline = time.monotonic() + WAIT
        while transport.sessions:  # the client gone, its session and its queue go too
            assert time.monotonic() < deadline, "the session outlived its stream"
            time.sleep(0.02)


# -- subscriptions inside a session ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["subscriptions/listen", "subscriptions\\/listen", "\\u0073ubscriptions/listen"])
def test_a_subscription_counts_as_a_stream_however_its_method_is_spelled(method: str) -> None:
    async def scenario(transport: LegacySseTransport, app: Any) -> None:
        async with opened(transport) as stream:  # one of ana's two streams
            listens = [message(modern.listen(n, promptsListChanged=True)).replace(b"subscriptions/listen",
                                                                                  method.encode()) for n in (1, 2)]
            assert accepted(await post(transport, f"session_id={stream.session_id}", listens[0]))
            error = await refused(transport, f"session_id={stream.session_id}", listens[1])
            assert error.status == 429
            batch = b"[" + message(rpc("ping", id=3)) + b"," + listens[1] + b"]"
            assert (await refused(transport, f"session_id={stream.session_id}", batch)).status == 429

    run(scenario, max_streams_per_principal=2)
