"""Issue 30, item 5: a hostile or broken client answering the questions a legacy session asks it
(``elicitation/create`` for a prompt's missing arguments).

Each case runs ``promptdeck serve`` as a real process, over stdio or Streamable HTTP, with a short
``--elicit-timeout``: answers of the wrong type, answers given twice, answers to ids never sent or to another
session's question, errors, silence, a cancellation while it waits, and more questions at once than a session
may hold. Every message the server sends is checked against its revision's schema (``StdioPeer``, and
``check_legacy`` for HTTP), and nothing it keeps for a question outlives the question.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from promptdeck.server.elicit import MAX_QUESTIONS
from tests.support.http_rpc import start_session
from tests.support.http_server import http_server
from tests.support.libraries import BRIEF, BRIEF_ANSWER, BRIEF_RENDERED
from tests.support.modern import (
    DEADLINE,
    Message,
    StdioPeer,
    answer_to,
    check_legacy,
    error_code,
    initialize,
    legacy,
    notification,
    reply,
    sse_messages,
)

REVISION = "2025-11-25"
ELICITS: dict[str, Any] = {"elicitation": {}}
TIMEOUT = "1"  # --elicit-timeout, in seconds


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("elicit-attack")
    (folder / "brief.md").write_text(BRIEF)
    return folder


@pytest.fixture
def peer(library: Path) -> Iterator[StdioPeer]:
    """A stdio session of 2025-11-25 whose client declared form elicitation."""
    with StdioPeer(library, "--no-watch", "--elicit-timeout", TIMEOUT) as stdio:
        assert stdio.call(initialize(0, REVISION, ELICITS))["result"]["protocolVersion"] == REVISION
        stdio.send(notification("notifications/initialized"))
        yield stdio
        assert "Traceback" not in stdio.stderr, stdio.stderr


def is_question(message: Message) -> bool:
    return message.get("method") == "elicitation/create"


def accepted(content: dict[str, Any]) -> dict[str, Any]:
    return {"result": {"action": "accept", "content": content}}


def ask(peer: StdioPeer, request_id: int, arguments: dict[str, str] | None = None) -> Message:
    """Send a prompts/get of the brief that leaves arguments out; the question it brings."""
    peer.send(legacy(request_id, "prompts/get", {"name": "brief", "arguments": arguments or {}}))
    return peer.take(is_question)


def still_works(peer: StdioPeer, request_id: int) -> None:
    """The session goes on: a question asked now is answered and renders."""
    question = ask(peer, request_id)
    peer.send(reply(question, **accepted(BRIEF_ANSWER)))
    got = peer.take(answer_to(request_id))
    assert got["result"]["messages"][0]["content"]["text"] == BRIEF_RENDERED, got


def test_an_answer_of_the_wrong_type_is_refused_naming_the_argument(peer: StdioPeer) -> None:
    for number, (field, value) in enumerate([("pages", "2"), ("urgent", "true"), ("topic", ["a", "b"]),
                                             ("audience", {"nested": 1}), ("pages", None)], 1):
        question = ask(peer, number)
        peer.send(reply(question, **accepted({**BRIEF_ANSWER, field: value})))
        refused = peer.take(answer_to(number))
        assert error_code(refused) == -32602 and refused["error"]["data"] == {"prompt": "brief", "argument": field}
    # Of the right type but outside the argument's rules: refused as the same value sent in arguments.
    question = ask(peer, 10)
    peer.send(reply(question, **accepted({**BRIEF_ANSWER, "topic": "x" * 2_000_000})))
    too_long = peer.take(answer_to(10))
    assert error_code(too_long) == -32602 and too_long["error"]["data"] == {"argument": "topic"}
    # A field the form did not ask for, and a result that is no form's answer at all.
    question = ask(peer, 11, {"topic": "queues"})
    peer.send(reply(question, **accepted({**BRIEF_ANSWER, "topic": "caching"})))
    assert peer.take(answer_to(11))["error"]["data"] == {"prompt": "brief", "unknown": ["topic"]}
    question = ask(peer, 12)
    peer.send(reply(question, result=["accept"]))
    assert peer.take(answer_to(12))["error"]["data"]["missing"] == ["topic", "pages", "audience", "urgent"]
    still_works(peer, 13)


def test_an_answer_given_twice_or_to_an_id_never_sent_is_ignored(peer: StdioPeer) -> None:
    question = ask(peer, 1)
    # Ids this session never asked with: ignored, and the question still waits for its own answer.
    for forged in ("ask-999", 1, "ask-0", None, True):
        peer.send({"jsonrpc": "2.0", "id": forged, **accepted({**BRIEF_ANSWER, "topic": "forged"})})
    assert peer.poll(answer_to(1), 0.3) is None
    peer.send(reply(question, **accepted(BRIEF_ANSWER)))
    assert peer.take(answer_to(1))["result"]["messages"][0]["content"]["text"] == BRIEF_RENDERED
    # The same answer again, and a different one for the same id: nothing more is sent.
    peer.send(reply(question, **accepted(BRIEF_ANSWER)))
    peer.send(reply(question, result={"action": "decline"}))
    peer.send(reply(question, error={"code": -1, "message": "late"}))
    assert peer.call(legacy(2, "ping")) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    rest, code = peer.finish()
    assert rest == [] and code == 0


def test_an_error_for_an_answer_is_the_missing_argument_error(peer: StdioPeer) -> None:
    question = ask(peer, 1)
    peer.send(reply(question, error={"code": -32600, "message": "Elicitation not supported\nby me"}))
    refused = peer.take(answer_to(1))
    assert error_code(refused) == -32602 and "answered with an error: Elicitation not supported" in \
        refused["error"]["message"]
    still_works(peer, 2)


def test_a_client_that_never_answers_is_given_up_on_and_nothing_is_left_waiting(peer: StdioPeer) -> None:
    # As many silent questions as a session may hold, at once: each is given up after the time limit,
    # the client told, and its get answered.
    for number in range(1, MAX_QUESTIONS + 1):
        peer.send(legacy(number, "prompts/get", {"name": "brief"}))
    questions = [peer.take(is_question) for _ in range(MAX_QUESTIONS)]
    assert len({q["id"] for q in questions}) == MAX_QUESTIONS
    for number in range(1, MAX_QUESTIONS + 1):
        refused = peer.take(answer_to(number), timeout=10)
        assert error_code(refused) == -32602 and "no answer came within 1 s" in refused["error"]["message"]
    cancelled = [peer.take(lambda m: m.get("method") == "notifications/cancelled") for _ in questions]
    assert {c["params"]["requestId"] for c in cancelled} == {q["id"] for q in questions}
    # Late answers are ignored, and none of the slots is still taken: a whole new round is asked.
    for question in questions:
        peer.send(reply(question, **accepted(BRIEF_ANSWER)))
    still_works(peer, 100)


def test_more_questions_at_once_than_a_session_holds_are_refused_not_queued(peer: StdioPeer) -> None:
    questions = []
    for number in range(1, MAX_QUESTIONS + 1):
        questions.append(ask(peer, number))
    peer.send(legacy(99, "prompts/get", {"name": "brief"}))
    refused = peer.take(answer_to(99))
    assert error_code(refused) == -32602 and f"{MAX_QUESTIONS} questions already wait" in refused["error"]["message"]
    assert peer.poll(is_question, 0.2) is None  # the one past the bound was never asked
    for number, question in enumerate(questions, 1):
        peer.send(reply(question, **accepted(BRIEF_ANSWER)))
        assert peer.take(answer_to(number))["result"]["messages"]


def test_a_get_cancelled_while_it_waits_cancels_its_question_and_gets_no_answer(peer: StdioPeer) -> None:
    question = ask(peer, 1)
    peer.send(notification("notifications/cancelled", {"requestId": 1, "reason": "the user gave up"}))
    told = peer.take(lambda m: m.get("method") == "notifications/cancelled")
    assert told["params"]["requestId"] == question["id"]
    peer.send(reply(question, **accepted(BRIEF_ANSWER)))  # too late: ignored
    assert peer.poll(answer_to(1), 0.5) is None  # a cancelled request is never answered
    still_works(peer, 2)


def test_a_client_that_closes_its_input_while_asked_is_not_waited_for(library: Path) -> None:
    with StdioPeer(library, "--no-watch") as stdio:  # the default time limit: minutes
        stdio.call(initialize(0, REVISION, ELICITS))
        ask(stdio, 1)
        started = time.monotonic()
        rest, code = stdio.finish()
        assert code == 0 and time.monotonic() - started < DEADLINE / 2
        assert [error_code(m) for m in rest if m.get("id") == 1] == [-32602]


def test_the_time_limit_must_be_positive(library: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(library), "--elicit-timeout", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--elicit-timeout" in done.stderr


# -- over HTTP ------------------------------------------------------------------------------------


def test_over_http_another_sessions_answer_never_reaches_a_question(library: Path, tmp_path: Path) -> None:
    """Bob's session answers Alice's question with its id (a forged answer, or a stolen id): ignored. A response
    without a session, or to a session id that does not exist, is refused before any session sees it."""
    log = tmp_path / "server.log"
    with http_server(str(library), "--no-watch", "--elicit-timeout", "5", log=log) as url, \
            httpx.Client(timeout=DEADLINE) as client, ThreadPoolExecutor(1) as pool:
        alice, bob = start_session(client, url, REVISION, ELICITS), start_session(client, url, REVISION, ELICITS)

        def alices_get() -> list[Message]:
            with client.stream("POST", url, json=legacy(1, "prompts/get", {"name": "brief"}),
                               headers=alice) as stream:
                lines = stream.iter_lines()
                for line in lines:
                    if "elicitation/create" in line:
                        asked.append(sse_messages(line)[0])
                        break
                return [m for line in lines for m in sse_messages(line)]

        asked: list[Message] = []
        rest = pool.submit(alices_get)
        deadline = time.monotonic() + DEADLINE
        while not asked and time.monotonic() < deadline:
            time.sleep(0.02)
        [question] = asked
        check_legacy(question, REVISION)
        forged = reply(question, **accepted({**BRIEF_ANSWER, "topic": "forged by bob"}))
        assert client.post(url, json=forged, headers=bob).status_code == 202
        no_session = {k: v for k, v in alice.items() if k != "mcp-session-id"}
        assert client.post(url, json=forged, headers=no_session).status_code == 400
        assert client.post(url, json=forged, headers={**alice, "mcp-session-id": "nope"}).status_code == 404
        time.sleep(0.3)
        assert not rest.done()  # still waiting for Alice's own answer
        assert client.post(url, json=reply(question, **accepted(BRIEF_ANSWER)), headers=alice).status_code == 202
        [got] = rest.result(DEADLINE)
        check_legacy(got, REVISION, "prompts/get")
        assert got["result"]["messages"][0]["content"]["text"] == BRIEF_RENDERED
    assert "Traceback" not in log.read_text()


def test_over_http_a_silent_client_is_given_up_on_its_posts_stream(library: Path) -> None:
    with http_server(str(library), "--no-watch", "--elicit-timeout", TIMEOUT) as url, \
            httpx.Client(timeout=DEADLINE) as client:
        session = start_session(client, url, REVISION, ELICITS)
        started = time.monotonic()
        answer = client.post(url, json=legacy(1, "prompts/get", {"name": "brief"}), headers=session)
        assert answer.headers["content-type"] == "text/event-stream"
        question, cancelled, refused = sse_messages(answer.text)
        for message, method in ((question, None), (cancelled, None), (refused, "prompts/get")):
            check_legacy(message, REVISION, method)
        assert question["method"] == "elicitation/create"
        assert cancelled["method"] == "notifications/cancelled" and cancelled["params"]["requestId"] == question["id"]
        assert error_code(refused) == -32602 and "no answer came within 1 s" in refused["error"]["message"]
        assert time.monotonic() - started < DEADLINE / 2
        late = client.post(url, json=reply(question, **accepted(BRIEF_ANSWER)), headers=session)
        assert late.status_code == 202 and late.content == b""
        assert json.loads(client.post(url, json=legacy(2, "ping"), headers=session).text.split("data: ")[-1])[
            "result"] == {}
