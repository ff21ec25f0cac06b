"""The client's channel contract (client/channel.py): JSON-RPC frames read strictly, answers matched to their
requests by id, timeouts that cancel, a failed connection failing every request, and requests from the server
answered."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

from promptdeck.client.channel import Multiplexed, decode, result_of
from promptdeck.protocol.errors import (
    ConnectionFailed,
    InvalidParams,
    ProtocolViolation,
    RequestTimeout,
)
from tests.support.client_servers import run


class Loopback(Multiplexed):
    """A channel whose frames go to a list; the test plays the server by calling ``receive``."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[dict[str, Any]] = []
        self.out = asyncio.Event()

    async def send(self, data: bytes) -> None:
        self.sent.append(json.loads(data))
        self.out.set()

    async def wait_closed(self) -> None:
        await asyncio.Event().wait()

    async def next_sent(self) -> dict[str, Any]:
        while not self.sent:
            self.out.clear()
            await self.out.wait()
        return self.sent.pop(0)


# -- JSON-RPC frames --------------------------------------------------------------------------------


def test_decode_reads_one_message_or_a_batch() -> None:
    [one] = decode(b'{"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}')
    assert one.id == 1 and bytes(one.result) == b'{"x": 1}'
    batch = decode('[{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}, '
                   '{"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "no"}}]')
    assert [message.method for message in batch] == ["notifications/prompts/list_changed", None]
    assert batch[1].error == {"code": -32601, "message": "no"}


@pytest.mark.parametrize("frame", [b"not json", b'{"id": 1, "result": {}}', b'{"jsonrpc": "1.0", "id": 1}',
                                   b"[1, 2]", b'{"jsonrpc": "2.0", "id": [1]}', b"[" * 100_000])
def test_decode_refuses_what_is_not_json_rpc(frame: bytes) -> None:
    with pytest.raises(ProtocolViolation, match="JSON-RPC|jsonrpc"):
        decode(frame)


def test_result_of_raises_the_error_a_response_carries_or_a_violation_for_neither() -> None:
    [answer] = decode(b'{"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "unknown prompt"}}')
    with pytest.raises(InvalidParams, match="unknown prompt"):
        result_of(answer)
    [empty] = decode(b'{"jsonrpc": "2.0", "id": 7}')
    with pytest.raises(ProtocolViolation, match="request 7 has neither a result nor an error"):
        result_of(empty)


def test_answers_are_matched_by_id_whatever_their_order() -> None:
    async def main() -> None:
        channel = Loopback()
        first = asyncio.ensure_future(channel.request("prompts/list", None, timeout=None))
        second = asyncio.ensure_future(channel.request("prompts/get", {"name": "a"}, timeout=None))
        one, two = await channel.next_sent(), await channel.next_sent()
        assert (one["method"], two["method"], two["params"]) == ("prompts/list", "prompts/get", {"name": "a"})
        assert one["id"] != two["id"]
        channel.receive(json.dumps({"jsonrpc": "2.0", "id": two["id"], "result": {"n": 2}}).encode())
        channel.receive(json.dumps({"jsonrpc": "2.0", "id": one["id"], "error":
                                    {"code": -32602, "message": "bad cursor"}}).encode())
        assert msgspec.json.decode(await second) == {"n": 2}
        with pytest.raises(InvalidParams, match="bad cursor"):
            await first

    run(main())


def test_a_timeout_cancels_the_request_on_the_server() -> None:
    async def main() -> None:
        channel = Loopback()
        with pytest.raises(RequestTimeout, match=r"prompts/get: no answer within 0.01 s"):
            await channel.request("prompts/get", None, timeout=0.01)
        request, cancel = await channel.next_sent(), await channel.next_sent()
        assert cancel == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": request["id"], "reason": "timed out"}}

    run(main())


def test_a_failed_connection_fails_waiting_and_later_requests() -> None:
    async def main() -> None:
        channel = Loopback()
        waiting = asyncio.ensure_future(channel.request("ping", None, timeout=None))
        await channel.next_sent()
        channel.receive(b"this is not json")
        with pytest.raises(ProtocolViolation, match="not JSON-RPC"):
            await waiting
        with pytest.raises(ProtocolViolation):
            await channel.request("ping", None, timeout=None)
        with pytest.raises(ProtocolViolation):
            await channel.notify("notifications/initialized")
        channel.fail(ConnectionFailed("later"))
        assert isinstance(channel.failure, ProtocolViolation)  # the first reason stays

    run(main())


def test_notifications_go_to_their_handler_and_requests_are_answered() -> None:
    async def main() -> None:
        channel = Loopback()
        heard: list[tuple[str, dict[str, Any] | None]] = []
        channel.on_notification = lambda method, params: heard.append((method, params))
        channel.receive(b'{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}')
        assert heard == [("notifications/prompts/list_changed", None)]
        channel.receive(b'{"jsonrpc": "2.0", "id": "s1", "method": "ping"}')  # not handled: refused
        assert await channel.next_sent() == {"jsonrpc": "2.0", "id": "s1", "error": {
            "code": -32601, "message": "this client does not handle ping"}}

        async def answer(method: str, params: dict[str, Any] | None) -> Any:
            if params is None:
                raise InvalidParams(f"{method} needs params")
            return {"echo": params}

        channel.on_request = answer
        channel.receive(b'{"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": {"a": 1}}')
        assert await channel.next_sent() == {"jsonrpc": "2.0", "id": 5, "result": {"echo": {"a": 1}}}
        channel.receive(b'{"jsonrpc": "2.0", "id": 6, "method": "elicitation/create"}')
        assert (await channel.next_sent())["error"] == {"code": -32602,
                                                       "message": "elicitation/create needs params"}
        await channel.aclose()

    run(main())
