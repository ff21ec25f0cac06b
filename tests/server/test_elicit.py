"""Asking a legacy session's client for missing arguments (server/elicit.py), in memory: ``Questions`` (ids,
answers, the time limit, cancellation, the bound, closing)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from promptdeck.protocol.jsonrpc import Response
from promptdeck.server.elicit import MAX_QUESTIONS, Questions, Unanswered


def decoded(data: bytes) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(data)
    return message


# -- Questions --------------------------------------------------------------------------------------


def asking(run: Callable[[Questions, list[dict[str, Any]]], Coroutine[Any, Any, None]], seconds: float = 5) -> None:
    """Run ``run(questions, sent)``, where ``sent`` collects what the questions send, on an event loop."""
    sent: list[dict[str, Any]] = []
    asyncio.run(run(Questions(seconds), sent))


def collect(sent: list[dict[str, Any]]) -> Callable[[bytes], None]:
    return lambda data: sent.append(decoded(data))


async def first_question(sent: list[dict[str, Any]], count: int = 1) -> dict[str, Any]:
    while len(sent) < count:
        await asyncio.sleep(0.001)
    return sent[count - 1]


def test_a_question_is_a_request_and_its_answer_is_its_result() -> None:
    async def run(questions: Questions, sent: list[dict[str, Any]]) -> None:
        waiting = asyncio.ensure_future(questions.ask("elicitation/create", {"message": "m"}, collect(sent)))
        asked = await first_question(sent)
        assert asked == {"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
                         "params": {"message": "m"}}
        assert len(questions) == 1
        assert questions.answer(Response("ask-1", {"action": "accept"}, None)) is True
        assert await waiting == {"action": "accept"}
        # Answered once: the same answer again, and an id never sent, are ignored.
        assert questions.answer(Response("ask-1", {"action": "decline"}, None)) is False
        assert questions.answer(Response("ask-9", {"action": "accept"}, None)) is False
        assert questions.answer(Response(None, {"action": "accept"}, None)) is False
        assert len(questions) == 0
        # Every question has an id of its own.
        again = asyncio.ensure_future(questions.ask("elicitation/create", {}, collect(sent)))
        assert (await first_question(sent, 2))["id"] == "ask-2"
        questions.answer(Response("ask-2", None, {"code": -32600, "message": "Elicitation not supported"}))
        with pytest.raises(Unanswered, match="answered with an error: Elicitation not supported"):
            await again

    asking(run)


def test_a_question_not_answered_in_time_is_given_up_and_the_client_told() -> None:
    async def run(questions: Questions, sent: list[dict[str, Any]]) -> None:
        with pytest.raises(Unanswered, match="no answer came within 0.05 s"):
            await questions.ask("elicitation/create", {}, collect(sent))
        assert [m.get("method") for m in sent] == ["elicitation/create", "notifications/cancelled"]
        assert sent[1]["params"] == {"requestId": "ask-1", "reason": "no answer in time"}
        assert len(questions) == 0
        assert questions.answer(Response("ask-1", {"action": "accept"}, None)) is False  # too late

    asking(run, seconds=0.05)


def test_a_cancelled_wait_tells_the_client_and_leaves_nothing_behind() -> None:
    async def run(questions: Questions, sent: list[dict[str, Any]]) -> None:
        waiting = asyncio.ensure_future(questions.ask("elicitation/create", {}, collect(sent)))
        await first_question(sent)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert sent[1] == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": "ask-1", "reason": "the request it was asked for was cancelled"}}
        assert len(questions) == 0

    asking(run)


def test_questions_are_bounded_per_session() -> None:
    async def run(questions: Questions, sent: list[dict[str, Any]]) -> None:
        waiting = [asyncio.ensure_future(questions.ask("elicitation/create", {}, collect(sent)))
                   for _ in range(MAX_QUESTIONS)]
        await first_question(sent, MAX_QUESTIONS)
        with pytest.raises(Unanswered, match=f"{MAX_QUESTIONS} questions already wait"):
            await questions.ask("elicitation/create", {}, collect(sent))
        assert len(sent) == MAX_QUESTIONS  # the one past the bound was never sent
        for question in waiting:
            question.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        assert len(questions) == 0

    asking(run)


def test_closing_ends_every_wait_at_once_and_every_later_question() -> None:
    async def run(questions: Questions, sent: list[dict[str, Any]]) -> None:
        waiting = [asyncio.ensure_future(questions.ask("elicitation/create", {}, collect(sent))) for _ in range(3)]
        await first_question(sent, 3)
        # From another thread, as stdio's reader closes its session.
        closer = threading.Thread(target=questions.close, args=("the client has gone",))
        closer.start()
        closer.join()
        for outcome in await asyncio.gather(*waiting, return_exceptions=True):
            assert isinstance(outcome, Unanswered) and str(outcome) == "the client has gone"
        with pytest.raises(Unanswered, match="the client has gone"):
            await questions.ask("elicitation/create", {}, collect(sent))
        assert len(sent) == 3  # nothing more was sent: not even a cancellation, to a client that left
        assert len(questions) == 0

    asking(run)


def test_an_answer_from_another_thread_reaches_its_question() -> None:
    async def run(questions: Questions, sent: list[dict[str, Any]]) -> None:
        waiting = asyncio.ensure_future(questions.ask("elicitation/create", {}, collect(sent)))
        await first_question(sent)
        reader = threading.Thread(target=questions.answer, args=(Response("ask-1", {"action": "accept"}, None),))
        reader.start()
        reader.join()
        assert await asyncio.wait_for(waiting, 5) == {"action": "accept"}

    asking(run)
