"""Issue 38, finding 12: a hostile client answering the form for a prompt's missing arguments is refused alike
in both eras.

The same answers go to a 2025-11-25 session (``elicitation/create`` sent to the client, answered in its
response) and to 2026-07-28 requests (an ``input_required`` result, answered in the retry's
``inputResponses``), each through ``promptdeck serve`` as a real process over stdio. Whatever the legacy path
refuses the modern one refuses with the same error, code, message and data: a cancel or decline names the
missing arguments (``data.missing``), a value of the wrong JSON type names its argument, a field the form did
not ask for is named as unknown. Before the fix the 2026-07-28 answers were read as plain strings: ``{"code":
5}`` rendered, an extra field went into the render, and a cancel's error named no argument.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.libraries import BRIEF, BRIEF_ANSWER, BRIEF_RENDERED
from tests.support.modern import (
    Message,
    StdioPeer,
    answer_to,
    error_code,
    get_prompt,
    initialize,
    legacy,
    notification,
    reply,
)

REVISION = "2025-11-25"
ELICITS: dict[str, Any] = {"elicitation": {}}
SNIPPET = ("---\ndescription: Explains a snippet\narguments:\n  - {name: code, required: true}\n"
           "  - {name: language, required: true}\n---\nExplain this {{ language }}: {{ code }}\n")
ids = itertools.count(1)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("form-answers")
    (folder / "brief.md").write_text(BRIEF)
    (folder / "snippet.md").write_text(SNIPPET)
    return folder


@pytest.fixture(scope="module")
def old(library: Path) -> Iterator[StdioPeer]:
    """A 2025-11-25 stdio session whose client declared form elicitation."""
    with StdioPeer(library, "--no-watch", "--elicit-timeout", "30") as peer:
        assert peer.call(initialize(0, REVISION, ELICITS))["result"]["protocolVersion"] == REVISION
        peer.send(notification("notifications/initialized"))
        yield peer
        assert "Traceback" not in peer.stderr, peer.stderr


@pytest.fixture(scope="module")
def new(library: Path) -> Iterator[StdioPeer]:
    """A stdio connection serving 2026-07-28."""
    with StdioPeer(library, "--no-watch") as peer:
        yield peer
        assert "Traceback" not in peer.stderr, peer.stderr


def legacy_answer(peer: StdioPeer, prompt: str, given: dict[str, str], answer: object) -> Message:
    """prompts/get leaving arguments out, the question it brings answered with ``answer``: the final response."""
    request_id = next(ids)
    peer.send(legacy(request_id, "prompts/get", {"name": prompt, "arguments": given}))
    question = peer.take(lambda m: m.get("method") == "elicitation/create")
    peer.send(reply(question, result=answer))
    return peer.take(answer_to(request_id))


def modern_answer(peer: StdioPeer, prompt: str, given: dict[str, str], answer: object) -> Message:
    """The same at 2026-07-28: the input_required result, then its retry carrying ``answer`` and the state."""
    asked = peer.call(get_prompt(next(ids), prompt, given, capabilities=ELICITS))["result"]
    assert asked["resultType"] == "input_required", asked
    return peer.call(get_prompt(next(ids), prompt, given, capabilities=ELICITS, requestState=asked["requestState"],
                                inputResponses={"arguments": answer}))


def both(old: StdioPeer, new: StdioPeer, prompt: str, given: dict[str, str], answer: object) -> dict[str, Any]:
    """The error both eras give ``answer``, once it is the same error in both (the modern one carries no more)."""
    before = legacy_answer(old, prompt, given, answer)
    after = modern_answer(new, prompt, given, answer)
    assert "error" in before and "error" in after, (before, after)
    assert after["error"] == before["error"], (before, after)
    assert error_code(after) == -32602
    error: dict[str, Any] = after["error"]
    return error


def accept(content: object) -> dict[str, Any]:
    return {"action": "accept", "content": content}


@pytest.mark.parametrize("action", ["cancel", "decline"])
def test_a_cancelled_or_declined_form_names_the_missing_arguments(old: StdioPeer, new: StdioPeer,
                                                                  action: str) -> None:
    error = both(old, new, "brief", {"topic": "caching"}, {"action": action})
    assert error["data"] == {"prompt": "brief", "missing": ["pages", "audience", "urgent"]}
    assert "missing required argument 'pages', 'audience', 'urgent'" in error["message"], error
    assert f"the user chose {action!r}" in error["message"], error


@pytest.mark.parametrize(("field", "value", "kind"), [
    ("code", 5, "string"), ("code", True, "string"), ("code", None, "string"), ("code", ["x"], "string"),
    ("language", {"nested": 1}, "string"),
])
def test_a_value_of_the_wrong_type_is_refused_naming_its_argument(old: StdioPeer, new: StdioPeer, field: str,
                                                                  value: object, kind: str) -> None:
    answer = accept({"code": "x = 1", "language": "python", field: value})
    error = both(old, new, "snippet", {}, answer)
    assert error["data"] == {"prompt": "snippet", "argument": field}, error
    assert f"argument {field!r} must be a {kind}" in error["message"], error


@pytest.mark.parametrize(("field", "value"), [("pages", "2"), ("pages", 2.5), ("urgent", "true"), ("urgent", 1),
                                              ("audience", 3), ("topic", 12345)])
def test_typed_fields_take_only_their_json_type(old: StdioPeer, new: StdioPeer, field: str, value: object) -> None:
    error = both(old, new, "brief", {}, accept({**BRIEF_ANSWER, field: value}))
    assert error["data"] == {"prompt": "brief", "argument": field}, error


def test_a_field_the_form_did_not_ask_for_is_refused(old: StdioPeer, new: StdioPeer) -> None:
    # One the prompt does not have, and one it has but that was given already (so not on the form).
    error = both(old, new, "snippet", {}, accept({"code": "x = 1", "language": "python", "admin": "yes"}))
    assert error["data"] == {"prompt": "snippet", "unknown": ["admin"]}, error
    error = both(old, new, "snippet", {"code": "x = 1"}, accept({"language": "python", "code": "rm -rf /"}))
    assert error["data"] == {"prompt": "snippet", "unknown": ["code"]}, error


def test_an_answer_that_is_no_form_answer_is_refused(old: StdioPeer, new: StdioPeer) -> None:
    for answer in (["accept"], {"code": 5}, {"action": "accept", "content": ["x"]}, "accept", None):
        error = both(old, new, "snippet", {}, answer)
        assert "snippet" in error["message"], error


def test_a_value_outside_the_arguments_rules_is_refused_alike(old: StdioPeer, new: StdioPeer) -> None:
    error = both(old, new, "brief", {}, accept({**BRIEF_ANSWER, "topic": "x" * 100}))
    assert error["data"] == {"argument": "topic"}, error


def test_both_eras_still_render_a_good_answer(old: StdioPeer, new: StdioPeer) -> None:
    for got in (legacy_answer(old, "brief", {}, accept(BRIEF_ANSWER)),
                modern_answer(new, "brief", {}, accept(BRIEF_ANSWER))):
        assert got["result"]["messages"][0]["content"]["text"] == BRIEF_RENDERED, got
