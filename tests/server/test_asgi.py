"""``PostStream`` (server/asgi.py) with an in-memory ASGI ``send`` and ``receive``: a POST's answer that begins
when its work asks the client something, and what it does when nothing is asked, when the client leaves,
and when the work or the response itself is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from promptdeck.protocol.errors import HttpError
from promptdeck.protocol.jsonrpc import Request
from promptdeck.server.asgi import PostStream, get_query
from promptdeck.server.outcome import Answer, Pending


class Peer:
    """The ASGI side of one response: what was sent, and a ``receive`` that says the client left when told."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.gone = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")


def stream(peer: Peer, stream_id: str | None = "p3") -> PostStream:
    return PostStream(peer.send, peer.receive, lambda: stream_id, [(b"x-extra", b"1")])  # type: ignore[arg-type]


def pending(work: Callable[[], Awaitable[dict[str, Any]]]) -> Pending:
    return Pending(Request(7, "prompts/get", None), work())


def test_nothing_asked_nothing_sent() -> None:
    async def run() -> None:
        peer = Peer()
        post = stream(peer)

        async def work() -> dict[str, Any]:
            await asyncio.sleep(0)
            return {"messages": []}

        answer = await post.settle(pending(work), [])
        assert isinstance(answer, Answer) and answer.id == 7
        assert not post.started and peer.sent == []  # the caller answers as it always did

    asyncio.run(run())


@pytest.mark.parametrize("stream_id", ["p3", None])
def test_a_question_begins_the_stream_after_what_was_held_and_the_answer_ends_it(stream_id: str | None) -> None:
    async def run() -> None:
        peer = Peer()
        post = stream(peer, stream_id)
        related = [b'{"progress":1}']
        asked = asyncio.Event()

        async def work() -> dict[str, Any]:
            post.ask(b'{"question":1}')
            await asyncio.sleep(0.01)
            related.append(b'{"progress":2}')
            post.ask(b'{"question":2}')
            await asked.wait()
            return {"messages": []}

        settling = asyncio.ensure_future(post.settle(pending(work), related))
        while b"question\":2" not in peer.body:
            await asyncio.sleep(0.001)
        start = peer.sent[0]
        assert start["type"] == "http.response.start" and start["status"] == 200
        assert (b"content-type", b"text/event-stream") in start["headers"] and (b"x-extra", b"1") in start["headers"]
        assert not any(name == b"content-length" for name, _ in start["headers"])
        asked.set()
        answer = await settling
        assert answer is not None and post.started
        body = peer.body.decode()
        order = ['"progress":1', '"question":1', '"progress":2', '"question":2', '"result"']
        assert [body.index(part) for part in order] == sorted(body.index(part) for part in order)
        if stream_id is None:
            assert "id:" not in body
        else:
            assert body.startswith("id: p3-0\nretry: ") and "id: p3-5\n" in body
        assert peer.sent[-1] == {"type": "http.response.body", "body": b""}  # ended

    asyncio.run(run())


def test_a_client_that_leaves_cancels_the_work() -> None:
    async def run() -> None:
        peer = Peer()
        post = stream(peer)
        cancelled = asyncio.Event()

        async def work() -> dict[str, Any]:
            post.ask(b'{"question":1}')
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                post.ask(b'{"cancelled":1}')  # what the work says as it stops still goes out
                cancelled.set()
                raise
            return {"messages": []}

        settling = asyncio.ensure_future(post.settle(pending(work), []))
        while not peer.body:
            await asyncio.sleep(0.001)
        peer.gone.set()
        assert await asyncio.wait_for(settling, 5) is None and cancelled.is_set() and post.left
        assert b'"cancelled":1' in peer.body and b'"result"' not in peer.body
        assert peer.sent[-1] == {"type": "http.response.body", "body": b""}

    asyncio.run(run())


def test_cancelling_the_response_cancels_the_work_too() -> None:
    async def run() -> None:
        peer = Peer()
        post = stream(peer)
        began = asyncio.Event()

        async def work() -> dict[str, Any]:
            began.set()
            await asyncio.sleep(30)
            return {"messages": []}

        settling = asyncio.ensure_future(post.settle(pending(work), []))
        await began.wait()
        settling.cancel()
        # The work's own cancellation is its answer (None: a cancelled request is not answered).
        assert await asyncio.wait_for(settling, 5) is None

    asyncio.run(run())


def test_a_get_query_is_read_and_anything_else_refused() -> None:
    assert get_query({"method": "GET", "query_string": b"prompt=a%20b&since="}, "/api/x") == \
        {"prompt": "a b", "since": ""}
    assert get_query({"method": "GET"}, "/api/x") == {}
    with pytest.raises(HttpError) as refused:
        get_query({"method": "POST", "query_string": b""}, "/api/x")
    assert refused.value.status == 405 and refused.value.headers == [(b"allow", b"GET")]
    for bad in (b"a=\xff", b"a=1&b=2&c=3&d=4&e=5"):
        with pytest.raises(HttpError) as refused:
            get_query({"method": "GET", "query_string": bad}, "/api/x")
        assert refused.value.status == 400, bad
