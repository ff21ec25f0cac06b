"""The elicitation form for missing arguments (prompts/forms.py): what it asks, per revision, and how an
answer is read, both when the answer is held to a known form (a legacy session's own question) and when not."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.prompts.arguments import Argument, make_argument
from promptdeck.prompts.forms import answered, form, missing, unanswered
from promptdeck.protocol.errors import InvalidParams
from tests.support.schema import schema_available, schema_missing_reason, validate_message

TOPIC = make_argument("topic", title="Topic", description="What it is about", required=True, min=3, max=80)
PAGES = make_argument("pages", type="integer", required=True, min=1, max=5)
SHARE = make_argument("share", type="number", required=True)
URGENT = make_argument("urgent", type="boolean", required=True)
AUDIENCE = make_argument("audience", enum=["engineers", "managers"], required=True)
LEVEL = make_argument("level", type="integer", enum=[1, 2, 3], required=True)
FILE = make_argument("file", type="path", required=True)
TONE = make_argument("tone", enum=["plain", "formal"], default="plain")
NOTE = make_argument("note")
ASKED = [TOPIC, PAGES, SHARE, URGENT, AUDIENCE, LEVEL, FILE]
ALL = [*ASKED, TONE, NOTE]
GOOD = {"topic": "caching", "pages": 2, "share": 0.5, "urgent": True, "audience": "managers", "level": "2",
        "file": "notes/a.txt"}


def refusal(answer: object, asked: list[Argument] | None = ASKED) -> InvalidParams:
    with pytest.raises(InvalidParams) as err:
        answered(answer, "brief", asked)
    assert err.value.code == -32602
    return err.value


def test_missing_is_the_required_arguments_without_a_default_left_out() -> None:
    assert missing(ALL, {}) == ASKED
    assert missing(ALL, {"topic": "x", "file": "a"}) == [PAGES, SHARE, URGENT, AUDIENCE, LEVEL]
    assert missing([TONE, NOTE], {}) == []


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25"])
def test_the_form_is_a_valid_elicitation_request_of_each_revision(revision: str) -> None:
    params = form("brief", ASKED, modes=revision != "2025-06-18")
    # 2025-06-18 has form mode alone, and no field that names it; the strict check refuses one it lacks.
    assert ("mode" in params) is (revision != "2025-06-18")
    assert params["requestedSchema"]["required"] == [a.name for a in ASKED]
    assert params["requestedSchema"]["properties"]["audience"] == {"type": "string",
                                                                   "enum": ["engineers", "managers"]}
    assert params["requestedSchema"]["properties"]["level"] == {"type": "string", "enum": ["1", "2", "3"]}
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))
    validate_message(revision, {"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create", "params": params})


def test_an_answer_held_to_its_form_gives_the_wire_strings() -> None:
    values = answered({"action": "accept", "content": GOOD}, "brief", ASKED)
    assert values == {"topic": "caching", "pages": "2", "share": "0.5", "urgent": "true", "audience": "managers",
                      "level": "2", "file": "notes/a.txt"}
    # An integer field takes a JSON number without a fraction, as JSON Schema does.
    assert answered({"action": "accept", "content": {"pages": 3.0}}, "brief", [PAGES]) == {"pages": "3"}


@pytest.mark.parametrize(("field", "value", "shown"), [
    ("topic", 5, "int"), ("topic", None, "null"), ("topic", ["a"], "list"), ("topic", {"a": 1}, "dict"),
    ("pages", "2", "str"), ("pages", 2.5, "float"), ("pages", True, "bool"),
    ("share", "0.5", "str"), ("share", False, "bool"),
    ("urgent", "true", "str"), ("urgent", 1, "int"),
    ("audience", 1, "int"), ("level", 2, "int"), ("file", 1, "int"),
])
def test_a_value_of_the_wrong_json_type_is_refused_naming_its_argument(field: str, value: Any, shown: str) -> None:
    error = refusal({"action": "accept", "content": {**GOOD, field: value}})
    assert error.data == {"prompt": "brief", "argument": field}
    assert f"argument {field!r} must be a " in error.message and f"not {shown}" in error.message


def test_a_field_the_form_did_not_ask_for_is_refused() -> None:
    error = refusal({"action": "accept", "content": {**GOOD, "tone": "formal"}})
    assert error.data == {"prompt": "brief", "unknown": ["tone"]}


@pytest.mark.parametrize("content", [{}, None, {"topic": "caching"}])
def test_an_answer_that_leaves_a_field_out_is_the_missing_argument_error(content: Any) -> None:
    answer = {"action": "accept"} if content is None else {"action": "accept", "content": content}
    error = refusal(answer)
    left_out = [a.name for a in ASKED if a.name not in (content or {})]
    assert error.data == {"prompt": "brief", "missing": left_out}
    assert error.message.startswith("prompt 'brief' is missing required argument ")
    assert "left it out" in error.message


@pytest.mark.parametrize("answer", [{"action": "decline"}, {"action": "cancel"}, {"action": "accepted"},
                                    {"content": GOOD}, None, "accept", [], {"action": None}])
def test_anything_but_an_acceptance_is_the_missing_argument_error(answer: object) -> None:
    error = refusal(answer)
    assert error.data == {"prompt": "brief", "missing": [a.name for a in ASKED]}
    action = answer.get("action") if isinstance(answer, dict) else None
    assert error.message.endswith(f"(the user chose {action!r})")


def test_content_that_is_not_an_object_is_refused() -> None:
    for asked in (ASKED, None):
        assert "must be an object" in refusal({"action": "accept", "content": ["x"]}, asked).message


def test_without_a_form_to_hold_it_to_the_answer_is_read_as_given() -> None:
    # The 2026-07-28 retry: its form is not kept, and the values are bound as arguments next.
    assert answered({"action": "accept", "content": {"pages": 2, "extra": "x"}}, "brief") == {"pages": "2",
                                                                                                "extra": "x"}
    declined = refusal({"action": "decline"}, None)
    assert declined.data is None and "the user chose 'decline'" in declined.message


def test_unanswered_is_the_error_of_a_client_that_was_not_asked_with_a_reason() -> None:
    error = unanswered("brief", [TOPIC, PAGES], "no answer came within 1 s")
    assert error.message == "prompt 'brief' is missing required argument 'topic', 'pages' (no answer came within 1 s)"
    assert error.data == {"prompt": "brief", "missing": ["topic", "pages"]}
