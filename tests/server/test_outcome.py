"""The error boundary (server/outcome.py): what a handler returns or raises becomes one typed outcome, and a
batch's outcomes become one answer within its byte bound."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from promptdeck.protocol.errors import INTERNAL_ERROR, InternalError, InvalidParams, McpError, UnsupportedVersion
from promptdeck.protocol.jsonrpc import Request
from promptdeck.server.outcome import Answer, Pending, answer, assemble, failed, join


def req(id: int | str = 1, method: str = "prompts/get") -> Request:
    return Request(id, method, {})


def wire(data: bytes) -> Any:
    return json.loads(data)


def settle(response: Any) -> Answer | None:
    """Await a response that is an awaitable (a batch with pending renders, or a Pending)."""
    async def run() -> Answer | None:
        result: Answer | None = await response
        return result

    return asyncio.run(run())


# -- answer -------------------------------------------------------------------------------------------


def test_a_dict_result_is_encoded_with_the_request_id() -> None:
    out = answer(req(7), lambda: {"prompts": []})
    assert type(out) is Answer
    assert out.id == 7 and out.error is None and out.status == 200
    assert wire(out.data) == {"jsonrpc": "2.0", "id": 7, "result": {"prompts": []}}


def test_pre_encoded_bytes_are_spliced_in_unchanged() -> None:
    out = answer(req("a"), lambda: b'{"prompts":[{"name":"x"}]}')
    assert type(out) is Answer
    assert wire(out.data) == {"jsonrpc": "2.0", "id": "a", "result": {"prompts": [{"name": "x"}]}}


def test_the_handler_gets_the_arguments_given() -> None:
    out = answer(req(), lambda a, b: {"sum": a + b}, 2, 3)
    assert wire(out.data)["result"] == {"sum": 5}


def test_an_mcp_error_is_an_error_answer_carrying_the_error() -> None:
    error = InvalidParams("no prompt named 'x'", data={"name": "x"})

    def handler() -> dict[str, Any]:
        raise error

    out = answer(req(3), handler)
    assert type(out) is Answer and out.error is error
    assert wire(out.data) == {"jsonrpc": "2.0", "id": 3,
                              "error": {"code": -32602, "message": "no prompt named 'x'", "data": {"name": "x"}}}
    assert out.status == 200  # an ordinary error is still HTTP 200


def test_the_status_is_the_errors_http_status() -> None:
    def handler() -> dict[str, Any]:
        raise UnsupportedVersion("unsupported")

    assert answer(req(), handler).status == 400


def test_any_other_exception_is_a_generic_internal_error_logged_with_its_details(
        caplog: pytest.LogCaptureFixture) -> None:
    def handler() -> dict[str, Any]:
        raise RuntimeError("the database password is hunter2")

    with caplog.at_level(logging.ERROR, logger="promptdeck.server"):
        out = answer(req(9, "prompts/get"), handler)
    assert isinstance(out.error, InternalError)
    body = wire(out.data)
    assert body["error"] == {"code": INTERNAL_ERROR, "message": "Internal error"}
    assert "hunter2" not in out.data.decode()
    assert any("hunter2" in r.getMessage() and "prompts/get" in r.getMessage() for r in caplog.records)


def test_an_ordinary_error_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    def handler() -> dict[str, Any]:
        raise InvalidParams("bad")

    with caplog.at_level(logging.DEBUG, logger="promptdeck.server"):
        answer(req(), handler)
    assert caplog.records == []


def test_an_awaitable_is_pending_and_settles_to_its_answer() -> None:
    async def render() -> dict[str, Any]:
        return {"messages": []}

    out = answer(req(4), render)
    assert type(out) is Pending and out.id == 4
    settled = settle(out)
    assert settled is not None and settled.error is None
    assert wire(settled.data) == {"jsonrpc": "2.0", "id": 4, "result": {"messages": []}}


def test_a_pending_that_raises_settles_to_an_error_answer() -> None:
    async def bad() -> dict[str, Any]:
        raise InvalidParams("missing argument")

    async def broken() -> dict[str, Any]:
        raise ValueError("secret detail")

    settled = settle(answer(req(1), bad))
    assert settled is not None and wire(settled.data)["error"]["code"] == -32602
    settled = settle(answer(req(2), broken))
    assert settled is not None and isinstance(settled.error, InternalError)
    assert b"secret detail" not in settled.data


def test_a_cancelled_pending_settles_to_none_and_leaves_in_flight() -> None:
    in_flight: dict[Any, asyncio.Task[Any]] = {}

    async def run() -> tuple[Answer | None, bool]:
        started = asyncio.Event()

        async def slow() -> dict[str, Any]:
            started.set()
            await asyncio.sleep(60)
            return {}

        pending = answer(req("r"), slow)
        assert type(pending) is Pending
        pending.track(in_flight)

        async def await_pending() -> Answer | None:
            result: Answer | None = await pending
            return result

        task = asyncio.ensure_future(await_pending())
        await started.wait()
        tracked = "r" in in_flight  # notifications/cancelled finds the task here
        in_flight["r"].cancel()
        return await task, tracked

    result, tracked = asyncio.run(run())
    assert tracked
    assert result is None
    assert in_flight == {}


def test_other_results_pass_through_as_they_are() -> None:
    marker = object()
    assert answer(req(), lambda: marker) is marker
    assert answer(req(), lambda: None) is None


def test_failed_without_an_id() -> None:
    out = failed(None, "?", McpError("bad", code=-32600))
    assert out.id is None and wire(out.data) == {"jsonrpc": "2.0", "id": None,
                                                  "error": {"code": -32600, "message": "bad"}}


# -- assemble and join --------------------------------------------------------------------------------


def test_a_single_outcome_is_passed_on_as_it_is() -> None:
    one = Answer(1, b"{}")
    assert assemble(one) is one
    assert assemble(None) is None


def test_a_batch_is_joined_into_one_array_in_order() -> None:
    a = answer(req(1), lambda: {"a": 1})
    b = answer(req(2), lambda: {"b": 2})
    out = assemble([a, None, b])  # None: a notification in the batch
    assert isinstance(out, Answer) and out.id is None
    assert [m["id"] for m in wire(out.data)] == [1, 2]
    assert out.data == b"[" + a.data + b"," + b.data + b"]"


def test_a_batch_of_notifications_only_is_answered_with_nothing() -> None:
    assert assemble([None, None]) is None
    assert join([]) is None


def test_a_batch_past_its_bound_refuses_the_rest_by_id() -> None:
    answers = [answer(req(i), lambda: {"text": "x" * 100}) for i in range(5)]
    size = len(answers[0].data)
    limit = 2 + 2 * (size + 1)  # room for exactly two answers
    out = join(answers, limit)
    assert isinstance(out, Answer)
    body = wire(out.data)
    assert [m["id"] for m in body] == [0, 1, 2, 3, 4]
    assert [("result" in m) for m in body] == [True, True, False, False, False]
    for refused in body[2:]:
        assert refused["error"]["code"] == -32600
        assert str(limit) in refused["error"]["message"]


def test_a_batch_within_its_bound_fits_exactly() -> None:
    answers = [answer(req(i), lambda: {"n": 1}) for i in range(3)]
    limit = 2 + sum(len(a.data) + 1 for a in answers)
    body = wire(join(answers, limit).data)  # type: ignore[union-attr]
    assert all("result" in m for m in body)
    body = wire(join(answers, limit - 1).data)  # type: ignore[union-attr]
    assert "error" in body[2] and all("result" in m for m in body[:2])


def test_a_batch_with_pending_renders_is_awaited_in_order() -> None:
    async def render(n: int) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"n": n}

    outcomes = [answer(req(1), lambda: {"n": 1}), answer(req(2), render, 2), None, answer(req(3), render, 3)]
    out = join(outcomes)
    assert not isinstance(out, Answer)  # it must be awaited
    settled = settle(out)
    assert settled is not None
    assert [(m["id"], m["result"]["n"]) for m in wire(settled.data)] == [(1, 1), (2, 2), (3, 3)]


def test_pending_renders_past_the_bound_are_dropped_unrun() -> None:
    ran: list[int] = []

    async def render(n: int) -> dict[str, Any]:
        ran.append(n)
        return {"text": "y" * 200}

    first = answer(req(0), lambda: {"text": "y" * 200})
    limit = len(first.data) + 3  # the first answer fills the array
    outcomes = [first] + [answer(req(i), render, i) for i in (1, 2, 3)]
    settled = settle(join(outcomes, limit))
    assert settled is not None
    body = wire(settled.data)
    assert "result" in body[0]
    assert [m["id"] for m in body[1:]] == [1, 2, 3] and all("error" in m for m in body[1:])
    # the one that overflowed ran; the two after it never did
    assert ran == [1]


def test_a_pending_batch_whose_renders_are_all_cancelled_gives_none() -> None:
    async def cancelled() -> dict[str, Any]:
        raise asyncio.CancelledError

    assert settle(join([answer(req(1), cancelled)])) is None


def test_discard_closes_a_render_never_awaited_without_a_warning() -> None:
    async def inner() -> dict[str, Any]:
        return {}

    async def outer() -> dict[str, Any]:
        return await inner()

    pending = answer(req(), outer)
    assert type(pending) is Pending
    pending.discard()  # filterwarnings=error: a "never awaited" RuntimeWarning would fail this test
    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine|closed"):
        settle(pending)
