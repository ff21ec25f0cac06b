"""A request's params as typed structs (server/params.py): decoded before any handler runs, unknown fields
ignored, and one -32602 naming the first wrong field in declared order, in each field's own words."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.protocol.errors import InvalidParams, McpError
from promptdeck.server.params import (
    LOG_LEVELS,
    CallTool,
    Empty,
    GetPrompt,
    Initialize,
    Listen,
    Page,
    ReadResource,
    SetLevel,
    decode,
)


def test_decode_gives_the_typed_params_and_ignores_unknown_fields() -> None:
    p = decode(GetPrompt, {"name": "a", "arguments": {"x": "1"}, "_meta": {"progressToken": 1}, "other": True})
    assert (p.name, p.arguments, p.meta) == ("a", {"x": "1"}, {"progressToken": 1})
    assert decode(Page, None).cursor is None
    assert decode(Empty, {"anything": [1]}).meta is None
    init = decode(Initialize, {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}})
    assert (init.protocol_version, init.capabilities) == ("2025-06-18", {"elicitation": {}})


@pytest.mark.parametrize(("kind", "raw", "message"), [
    (GetPrompt, {}, '"name" must be a string naming a prompt'),
    (GetPrompt, {"name": 5, "arguments": 5}, '"name" must be a string naming a prompt'),  # the first declared
    (GetPrompt, {"name": "a", "arguments": []}, '"arguments" must be an object mapping names to strings'),
    (CallTool, {"name": "t", "arguments": "x"}, '"arguments" must be an object'),
    (Page, {"cursor": 1}, "invalid cursor 1"),
    (ReadResource, {"uri": None}, "Resource not found: ''"),
])
def test_the_first_wrong_field_is_refused_in_its_own_words(kind: type[Any], raw: dict[str, Any], message: str) -> None:
    with pytest.raises(McpError) as refused:
        decode(kind, raw)
    assert (refused.value.code, refused.value.message) == (-32602, message)


def test_a_log_level_is_one_of_the_specs_and_the_refusal_lists_them() -> None:
    assert decode(SetLevel, {"level": "warning"}).level == "warning"
    assert LOG_LEVELS[0] == "debug" and LOG_LEVELS[-1] == "emergency"
    with pytest.raises(InvalidParams, match=r"unknown log level 'loud'; use one of debug, info"):
        decode(SetLevel, {"level": "loud"})


def test_a_listen_without_its_notifications_is_a_bad_request_over_http() -> None:
    with pytest.raises(InvalidParams) as refused:
        decode(Listen, {})
    assert refused.value.http_status == 400
