"""Asking a legacy session's client for missing arguments (server/elicit.py), in memory: ``Questions`` (ids,
answers, the time limit, cancellation, the bound, closing) and a ``LegacySession`` that asks, per revision and
capability, for ``prompts/get`` and for the tools of ``serve --tools``."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from promptdeck import PromptServer
from promptdeck.protocol.jsonrpc import Response
from promptdeck.server.elicit import MAX_QUESTIONS, Questions, Unanswered
from promptdeck.server.legacy import LegacySession
from promptdeck.server.outcome import Answer, Pending
from promptdeck.server.tools import ToolOptions
from tests.support.libraries import BRIEF, BRIEF_ANSWER, BRIEF_RENDERED

FORMS: dict[str, Any] = {"elicitation": {}}


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


# -- a legacy session that asks ---------------------------------------------------------------------


def make_server(tmp_path: Path, **options: Any) -> PromptServer:
    (tmp_path / "brief.md").write_text(BRIEF)
    (tmp_path / "hello.md").write_text("Hello!\n")
    server = PromptServer("elicit-test", **options)
    server.add_folder(tmp_path)
    return server


class Client:
    """A legacy session spoken to in memory: what it sends at once, and what it asks (on ``ask``)."""

    def __init__(self, server: PromptServer, revision: str, capabilities: Any, announces: bool = True) -> None:
        self.session = LegacySession(server, lambda _message: None, announces=announces)
        self.asked: list[dict[str, Any]] = []
        self.related: list[dict[str, Any]] = []
        self._ids = 0
        init = self.send("initialize", {"protocolVersion": revision, "capabilities": capabilities,
                                        "clientInfo": {"name": "t", "version": "1"}})
        assert isinstance(init, Answer) and decoded(init.data)["result"]["protocolVersion"] == revision

    def send(self, method: str, params: dict[str, Any]) -> Any:
        self._ids += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})
        return self.session.handle_bytes(line.encode(), lambda data: self.related.append(decoded(data)),
                                         ask=lambda data: self.asked.append(decoded(data)))

    def reply(self, message: dict[str, Any]) -> None:
        assert self.session.handle_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode(),
                                         lambda _message: None) is None  # a response is never answered

    async def request(self, method: str, params: dict[str, Any],
                      answer: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> dict[str, Any]:
        """The answer to a request; ``answer(question)`` gives the reply to each question it asks (None: none)."""
        outcome = self.send(method, params)
        if isinstance(outcome, Answer):
            return decoded(outcome.data)
        assert isinstance(outcome, Pending)
        task = asyncio.ensure_future(outcome)
        seen = len(self.asked)
        while not task.done():
            await asyncio.sleep(0.001)
            if len(self.asked) > seen and answer is not None:
                question = self.asked[seen]
                seen += 1
                reply = answer(question)
                if reply is not None:
                    self.reply({"id": question["id"], **reply})
        settled = task.result()
        assert settled is not None
        return decoded(settled.data)


def accept(content: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda _question: {"result": {"action": "accept", "content": content}}


def test_a_2025_06_18_session_asks_for_what_is_missing_and_renders_with_the_answer(tmp_path: Path) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), "2025-06-18", FORMS)
        got = await client.request("prompts/get", {"name": "brief", "arguments": {"topic": "caching"}},
                                   accept({"pages": 2, "audience": "managers", "urgent": True}))
        assert got["result"]["messages"][0]["content"]["text"] == BRIEF_RENDERED
        [question] = client.asked
        params = question["params"]
        assert question["method"] == "elicitation/create" and "mode" not in params  # 2025-06-18 has no modes
        assert params["requestedSchema"] == {"type": "object", "required": ["pages", "audience", "urgent"],
                                             "properties": {
            "pages": {"type": "integer", "description": "How many pages", "minimum": 1, "maximum": 5},
            "audience": {"type": "string", "enum": ["engineers", "managers"], "description": "Who reads it"},
            "urgent": {"type": "boolean", "description": "Whether it is urgent"}}}
        # Nothing missing, nothing asked.
        whole = await client.request("prompts/get", {"name": "brief", "arguments": {
            "topic": "caching", "pages": "2", "audience": "managers", "urgent": "yes"}})
        assert whole["result"]["messages"][0]["content"]["text"] == BRIEF_RENDERED and len(client.asked) == 1
        assert len(client.session.questions) == 0

    asyncio.run(run())


@pytest.mark.parametrize(("reply", "why"), [
    ({"result": {"action": "decline"}}, "the user chose 'decline'"),
    ({"result": {"action": "cancel"}}, "the user chose 'cancel'"),
    ({"error": {"code": -32600, "message": "Elicitation not supported"}}, "answered with an error"),
    ({"result": {"action": "accept", "content": {"topic": "caching"}}}, "left it out"),
])
def test_a_form_not_filled_in_is_the_missing_argument_error(tmp_path: Path, reply: dict[str, Any], why: str) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), "2025-11-25", FORMS)
        got = await client.request("prompts/get", {"name": "brief"}, lambda _question: reply)
        assert client.asked[0]["params"]["mode"] == "form"
        error = got["error"]
        assert error["code"] == -32602 and why in error["message"], error
        assert error["message"].startswith("prompt 'brief' is missing required argument ")
        assert error["data"]["prompt"] == "brief" and "missing" in error["data"]

    asyncio.run(run())


def test_an_answer_of_the_wrong_type_names_its_argument_and_values_are_checked_as_arguments(tmp_path: Path) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), "2025-11-25", FORMS)
        wrong = await client.request("prompts/get", {"name": "brief"}, accept({**BRIEF_ANSWER, "pages": "2"}))
        assert wrong["error"]["code"] == -32602 and wrong["error"]["data"] == {"prompt": "brief", "argument": "pages"}
        # Of the right type, a value is then held to the argument's own rules, as one sent in arguments.
        big = await client.request("prompts/get", {"name": "brief"}, accept({**BRIEF_ANSWER, "pages": 9}))
        assert big["error"]["code"] == -32602 and big["error"]["data"] == {"argument": "pages"}
        short = await client.request("prompts/get", {"name": "brief"}, accept({**BRIEF_ANSWER, "topic": "ab"}))
        assert short["error"]["data"] == {"argument": "topic"}
        other = await client.request("prompts/get", {"name": "brief"}, accept({**BRIEF_ANSWER, "audience": "all"}))
        assert "must be one of" in other["error"]["message"]
        extra = await client.request("prompts/get", {"name": "brief"}, accept({**BRIEF_ANSWER, "tone": "formal"}))
        assert extra["error"]["data"] == {"prompt": "brief", "unknown": ["tone"]}

    asyncio.run(run())


@pytest.mark.parametrize(("revision", "capabilities", "announces"), [
    ("2024-11-05", FORMS, True),  # no elicitation before 2025-06-18
    ("2025-03-26", FORMS, True),
    ("2025-06-18", {}, True),  # nothing declared
    ("2025-11-25", {"elicitation": {"url": {}}}, True),  # URL mode alone
    ("2025-11-25", FORMS, False),  # stateless HTTP: its answer could not come back to this session
])
def test_a_session_that_cannot_be_asked_gets_the_error_it_always_got(tmp_path: Path, revision: str,
                                                                      capabilities: Any, announces: bool) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), revision, capabilities, announces)
        got = await client.request("prompts/get", {"name": "brief"})
        assert got["error"] == {"code": -32602, "message": "prompt 'brief' is missing required argument "
                                                           "'topic', 'pages', 'audience', 'urgent'",
                                "data": {"prompt": "brief", "missing": ["topic", "pages", "audience", "urgent"]}}
        assert client.asked == [] and client.session._questions is None  # not even made

    asyncio.run(run())


def test_arguments_wrong_in_another_way_are_refused_without_a_form(tmp_path: Path) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), "2025-11-25", FORMS)
        unknown = await client.request("prompts/get", {"name": "brief", "arguments": {"colour": "red"}})
        assert unknown["error"]["data"] == {"prompt": "brief", "unknown": ["colour"]}
        bad = await client.request("prompts/get", {"name": "brief", "arguments": {"pages": "many"}})
        assert bad["error"]["data"] == {"argument": "pages"}
        assert (await client.request("prompts/get", {"name": "nope"}))["error"]["code"] == -32602
        assert client.asked == []

    asyncio.run(run())


def test_a_cancelled_get_cancels_its_question(tmp_path: Path) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), "2025-11-25", FORMS)
        outcome = client.send("prompts/get", {"name": "brief"})
        assert isinstance(outcome, Pending)
        task = asyncio.ensure_future(outcome)
        while not client.asked:
            await asyncio.sleep(0.001)
        client.session.handle_bytes(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                "params": {"requestId": 2}}).encode(), lambda _message: None)
        assert await asyncio.wait_for(task, 5) is None  # cancelled: no answer at all
        assert client.asked[1] == {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
            "requestId": client.asked[0]["id"], "reason": "the request it was asked for was cancelled"}}
        assert len(client.session.questions) == 0 and client.session.in_flight == {}
        # The late answer is ignored.
        client.reply({"id": client.asked[0]["id"], "result": {"action": "accept", "content": BRIEF_ANSWER}})

    asyncio.run(run())


def test_a_session_closing_while_it_waits_leaves_nothing_behind(tmp_path: Path) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path), "2025-11-25", FORMS)
        task = asyncio.ensure_future(client.send("prompts/get", {"name": "brief"}))
        while not client.asked:
            await asyncio.sleep(0.001)
        client.session.close()
        assert await asyncio.wait_for(task, 5) is None
        assert len(client.session.questions) == 0 and client.session.in_flight == {}

    asyncio.run(run())


def test_the_time_limit_is_the_servers(tmp_path: Path) -> None:
    async def run() -> None:
        client = Client(make_server(tmp_path, elicit_seconds=0.05), "2025-11-25", FORMS)
        got = await client.request("prompts/get", {"name": "brief"}, lambda _question: None)
        assert "no answer came within 0.05 s" in got["error"]["message"]
        assert client.asked[1]["method"] == "notifications/cancelled"

    asyncio.run(run())
    with pytest.raises(ValueError, match="elicit_seconds"):
        PromptServer(elicit_seconds=0)


@pytest.mark.parametrize("per_prompt", [16, 0])
def test_a_prompts_tool_asks_too(tmp_path: Path, per_prompt: int) -> None:
    """A per-prompt tool, and the get tool naming a prompt: a declined form is a -32602 error as in the
    2026-07-28 era; the values the form brings are checked as the model's, as an isError result."""
    async def run() -> None:
        server = make_server(tmp_path, tools=ToolOptions(per_prompt_limit=per_prompt))
        client = Client(server, "2025-11-25", FORMS)
        name, arguments = ("brief", {"topic": "caching"}) if per_prompt else \
            ("get_prompt", {"name": "brief", "arguments": {"topic": "caching"}})
        called = await client.request("tools/call", {"name": name, "arguments": arguments},
                                      accept({"pages": 2, "audience": "managers", "urgent": True}))
        assert called["result"]["content"][0]["text"] == BRIEF_RENDERED and "isError" not in called["result"]
        assert client.asked[0]["params"]["requestedSchema"]["required"] == ["pages", "audience", "urgent"]
        declined = await client.request("tools/call", {"name": name, "arguments": arguments},
                                        lambda _question: {"result": {"action": "decline"}})
        assert declined["error"]["code"] == -32602 and declined["error"]["data"]["missing"] == ["pages", "audience",
                                                                                            "urgent"]
        big = await client.request("tools/call", {"name": name, "arguments": arguments},
                                   accept({"pages": 9, "audience": "managers", "urgent": False}))
        assert big["result"]["isError"] is True and "'pages'" in big["result"]["content"][0]["text"]
        # The list tool and a prompt without arguments ask nothing.
        listed = await client.request("tools/call", {"name": "hello" if per_prompt else "list_prompts"})
        assert "isError" not in listed["result"] and len(client.asked) == 3
        # Without the capability: the isError result the model always got.
        plain = Client(server, "2025-11-25", {})
        unasked = await plain.request("tools/call", {"name": name, "arguments": arguments})
        assert unasked["result"]["isError"] is True and "missing required argument" in \
            unasked["result"]["content"][0]["text"]

    asyncio.run(run())
