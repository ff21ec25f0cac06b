"""Unit tests for tests/support/schema.py, the validator the protocol tests rely on."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.support.schema import (
    check_no_unknown_fields,
    revisions,
    schema_available,
    schema_missing_reason,
    validate_message,
    validate_result,
)

R1, R2, R3, R4, R5 = "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"
LEGACY = [R1, R2, R3, R4]
ALL = [*LEGACY, R5]

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


#: Tests that work without the schema files.
SCHEMA_FREE_TESTS = {"test_missing_schema_folder_is_reported"}


@pytest.fixture(autouse=True)
def _need_schemas(request: pytest.FixtureRequest) -> None:
    if request.node.originalname in SCHEMA_FREE_TESTS:
        return
    callspec = getattr(request.node, "callspec", None)
    revision = callspec.params.get("revision") if callspec is not None else None
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))


def complete(revision: str, result: dict[str, Any]) -> dict[str, Any]:
    """Add what 2026-07-28 requires on every result."""
    return {**result, "resultType": "complete"} if revision == R5 else result


def prompt_list(revision: str, **prompt_fields: Any) -> dict[str, Any]:
    prompt = {
        "name": "code-review",
        "description": "Review code",
        "arguments": [{"name": "code", "description": "The code", "required": True}],
        **prompt_fields,
    }
    result: dict[str, Any] = {"prompts": [prompt], "nextCursor": "opaque"}
    if revision == R5:
        result.update(resultType="complete", ttlMs=0, cacheScope="public")
    return result


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def prompt_get(revision: str, *contents: dict[str, Any]) -> dict[str, Any]:
    blocks = contents or (
        text("Review print(1)"),
        {"type": "image", "data": PNG_1PX, "mimeType": "image/png"},
        {
            "type": "resource",
            "resource": {"uri": "file:///project/app.py", "mimeType": "text/x-python", "text": "print(1)"},
        },
    )
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(blocks)]
    return complete(revision, {"description": "Review code", "messages": messages})


def initialize_result(revision: str, **server_info: Any) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"prompts": {"listChanged": True}, "logging": {}}
    if revision != R1:
        capabilities["completions"] = {}
    return {
        "protocolVersion": revision,
        "capabilities": capabilities,
        "serverInfo": {"name": "promptdeck", "version": "0.1.0", **server_info},
        "instructions": "Prompts for the team",
    }


def failure(excinfo: pytest.ExceptionInfo[AssertionError]) -> str:
    return str(excinfo.value)


# --------------------------------------------------------------------------------------------- availability


def test_all_revisions_are_present() -> None:
    assert set(ALL) <= set(revisions())


def test_missing_schema_folder_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PROMPTDECK_SCHEMA_DIR", str(tmp_path / "nowhere"))
    assert not schema_available()
    assert not schema_available(R4)
    assert revisions() == ()
    reason = schema_missing_reason(R4)
    assert str(tmp_path / "nowhere" / R4 / "schema.json") in reason
    assert "PROMPTDECK_SCHEMA_DIR" in reason
    with pytest.raises(AssertionError, match="not found"):
        validate_result(R4, "ping", {})


# --------------------------------------------------------------------------------------------- valid results


@pytest.mark.parametrize("revision", ALL)
def test_valid_prompt_results(revision: str) -> None:
    validate_result(revision, "prompts/list", prompt_list(revision))
    validate_result(
        revision,
        "prompts/list",
        complete(revision, {"prompts": []}) | ({"ttlMs": 0, "cacheScope": "public"} if revision == R5 else {}),
    )
    validate_result(revision, "prompts/get", prompt_get(revision))
    validate_result(revision, "completion/complete", complete(revision, {"completion": {"values": ["a"]}}))
    validate_result(
        revision,
        "completion/complete",
        complete(revision, {"completion": {"values": [], "total": 0, "hasMore": False}}),
    )


@pytest.mark.parametrize("revision", LEGACY)
def test_valid_legacy_lifecycle_results(revision: str) -> None:
    validate_result(revision, "initialize", initialize_result(revision))
    validate_result(revision, "ping", {})
    validate_result(revision, "logging/setLevel", {})


def test_newer_fields_are_valid_in_their_revisions() -> None:
    validate_result(R3, "prompts/list", prompt_list(R3, title="Code review", _meta={"com.example/x": 1}))
    icons = [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}]
    validate_result(R4, "prompts/list", prompt_list(R4, title="Code review", icons=icons))
    validate_result(R5, "prompts/list", prompt_list(R5, title="Code review", icons=icons))
    audio = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
    validate_result(R2, "prompts/get", prompt_get(R2, audio))
    link = {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"}
    validate_result(R3, "prompts/get", prompt_get(R3, link))
    validate_result(R4, "initialize", initialize_result(R4, title="Promptdeck", websiteUrl="https://example.com"))


def test_2026_discover_and_input_required() -> None:
    discover = {
        "resultType": "complete",
        "supportedVersions": [R5, R4],
        "capabilities": {"prompts": {"listChanged": True}, "completions": {}},
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "promptdeck", "version": "0.1.0"}},
    }
    validate_result(R5, "server/discover", discover)
    # prompts/get may answer GetPromptResult | InputRequiredResult; both pass the unknown-field check.
    validate_result(R5, "prompts/get", {"resultType": "input_required", "requestState": "opaque"})
    validate_result(R5, "prompts/get", prompt_get(R5))


# --------------------------------------------------------------------------------------------- invalid results


@pytest.mark.parametrize("revision", ALL)
@pytest.mark.parametrize(
    ("method", "breakage", "expected"),
    [
        ("prompts/list", lambda r: r.pop("prompts"), "'prompts' is a required property"),
        ("prompts/list", lambda r: r["prompts"][0].update(name=7), "at $.prompts[0].name: 7 is not of type 'string'"),
        ("prompts/list", lambda r: r["prompts"][0]["arguments"][0].update(required="yes"), "is not of type 'boolean'"),
        ("prompts/list", lambda r: r.update(nextCursor=None), "at $.nextCursor"),
        ("prompts/get", lambda r: r["messages"][0].update(role="system"), "at $.messages[0].role"),
        ("prompts/get", lambda r: r["messages"][0].update(content=[text("a")]), "at $.messages[0].content"),
        ("prompts/get", lambda r: r["messages"][1]["content"].update(data="not base64!"), "is not a 'byte'"),
        ("prompts/get", lambda r: r["messages"][1]["content"].pop("mimeType"), "at $.messages[1].content"),
        ("prompts/get", lambda r: r["messages"][2]["content"]["resource"].update(uri="app.py"), "is not a 'uri'"),
        ("prompts/get", lambda r: r.update(messages={}), "at $.messages"),
    ],
)
def test_invalid_results_fail(revision: str, method: str, breakage: Any, expected: str) -> None:
    result = prompt_list(revision) if method == "prompts/list" else prompt_get(revision)
    breakage(result)
    with pytest.raises(AssertionError) as excinfo:
        validate_result(revision, method, result)
    message = failure(excinfo)
    assert revision in message
    assert expected in message


def test_union_failures_explain_each_alternative() -> None:
    result = prompt_get(R4, {"type": "text", "text": 5})
    with pytest.raises(AssertionError) as excinfo:
        validate_result(R4, "prompts/get", result)
    message = failure(excinfo)
    assert "as TextContent: at $.messages[0].content.text: 5 is not of type 'string'" in message
    assert "as ImageContent" not in message  # the block says it is text: the other kinds are noise
    with pytest.raises(AssertionError) as excinfo:
        validate_result(R4, "prompts/get", prompt_get(R4, {"type": "video", "data": "AA=="}))
    message = failure(excinfo)
    for kind in ("TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource"):
        assert f"as {kind}: " in message
    resource = {"type": "resource", "resource": {"uri": "app.py", "text": "x"}}
    with pytest.raises(AssertionError) as excinfo:
        validate_result(R4, "prompts/get", prompt_get(R4, resource))
    assert "as TextResourceContents: at $.messages[0].content.resource.uri: 'app.py' is not a 'uri'" in failure(excinfo)


def test_2026_results_need_result_type() -> None:
    with pytest.raises(AssertionError, match="'resultType' is a required property"):
        validate_result(R5, "completion/complete", {"completion": {"values": []}})


def test_methods_a_revision_lacks_are_reported() -> None:
    with pytest.raises(AssertionError, match="2026-07-28 has no request method 'ping'"):
        validate_result(R5, "ping", {"resultType": "complete"})
    with pytest.raises(AssertionError, match="2026-07-28 has no request method 'initialize'"):
        validate_result(R5, "initialize", initialize_result(R4))
    with pytest.raises(AssertionError, match="2025-11-25 has no request method 'server/discover'"):
        validate_result(R4, "server/discover", {})
    with pytest.raises(AssertionError, match="has no request method 'prompts/render'"):
        validate_result(R4, "prompts/render", {})


def test_unlisted_methods_use_the_matching_result() -> None:
    validate_result(R4, "tools/list", {"tools": []})
    with pytest.raises(AssertionError, match="'tools' is a required property"):
        validate_result(R4, "tools/list", {})


# --------------------------------------------------------------------------------------------- unknown fields


def test_r1_prompt_with_title_is_flagged() -> None:
    result = prompt_list(R1, title="Code review")
    with pytest.raises(AssertionError) as excinfo:
        check_no_unknown_fields(R1, "ListPromptsResult", result)
    message = failure(excinfo)
    assert "$.prompts[0].title: field 'title' is not defined by 2024-11-05 Prompt" in message
    # JSON Schema alone accepts it: that is why the walk exists.
    validate_result(R1, "prompts/list", result, strict=False)
    with pytest.raises(AssertionError, match=r"\$\.prompts\[0\]\.title"):
        validate_result(R1, "prompts/list", result)
    check_no_unknown_fields(R3, "ListPromptsResult", prompt_list(R3, title="Code review"))
    check_no_unknown_fields(R1, "Prompt", {"name": "x", "arguments": [{"name": "a"}]})
    with pytest.raises(AssertionError, match="'title' is not defined by 2024-11-05 Prompt"):
        check_no_unknown_fields(R1, "Prompt", {"name": "x", "title": "X"})


@pytest.mark.parametrize(
    ("revision", "result", "flagged"),
    [
        (R1, prompt_list(R1, _meta={"k": 1}), "$.prompts[0]._meta: field '_meta' is not defined by 2024-11-05 Prompt"),
        (R2, prompt_list(R2, title="T"), "$.prompts[0].title"),
        (R3, prompt_list(R3, icons=[{"src": "https://example.com/a.png"}]), "$.prompts[0].icons"),
        (
            R1,
            {"prompts": [{"name": "x", "arguments": [{"name": "a", "title": "A"}]}]},
            "$.prompts[0].arguments[0].title",
        ),
        (R1, {"prompts": [], "ttlMs": 5}, "$.ttlMs: field 'ttlMs' is not defined by 2024-11-05 ListPromptsResult"),
        (R4, {"prompts": [], "resultType": "complete"}, "$.resultType"),
        (R1, prompt_get(R1, {"type": "text", "text": "x", "_meta": {}}), "$.messages[0].content._meta"),
        (
            R2,
            prompt_get(R2, {"type": "text", "text": "x", "annotations": {"priority": 1, "lastModified": "2025-01-01"}}),
            "$.messages[0].content.annotations.lastModified",
        ),
        (
            R1,
            prompt_get(R1, {"type": "resource", "resource": {"uri": "file:///a", "text": "a", "_meta": {}}}),
            "$.messages[0].content.resource._meta",
        ),
        (R1, initialize_result(R1, title="Promptdeck"), "$.serverInfo.title"),
        (R3, initialize_result(R3, websiteUrl="https://example.com"), "$.serverInfo.websiteUrl"),
        (R1, initialize_result(R2), "$.capabilities.completions"),
    ],
)
def test_fields_from_newer_revisions_are_flagged(revision: str, result: dict[str, Any], flagged: str) -> None:
    method = "initialize" if "serverInfo" in result else "prompts/get" if "messages" in result else "prompts/list"
    validate_result(revision, method, result, strict=False)
    with pytest.raises(AssertionError) as excinfo:
        validate_result(revision, method, result)
    assert flagged in failure(excinfo)


@pytest.mark.parametrize(
    ("revision", "block", "allowed_from"),
    [
        (R1, {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}, R2),
        (R2, {"type": "resource_link", "uri": "file:///a", "name": "a"}, R3),
    ],
)
def test_content_types_from_newer_revisions(revision: str, block: dict[str, Any], allowed_from: str) -> None:
    with pytest.raises(AssertionError) as excinfo:
        check_no_unknown_fields(revision, "GetPromptResult", prompt_get(revision, block))
    assert "$.messages[0].content: matches none of the alternatives" in failure(excinfo)
    with pytest.raises(AssertionError):
        validate_result(revision, "prompts/get", prompt_get(revision, block), strict=False)
    validate_result(allowed_from, "prompts/get", prompt_get(allowed_from, block))


def test_open_objects_accept_any_keys() -> None:
    # _meta contents, experimental capabilities and logging settings are maps, not records.
    result = initialize_result(R4)
    result["capabilities"]["experimental"] = {"com.example/feature": {"anything": [1, 2]}}
    result["capabilities"]["logging"] = {"whatever": True}
    result["_meta"] = {"com.example/trace": {"id": 1}}
    validate_result(R4, "initialize", result)
    check_no_unknown_fields(R3, "GetPromptResult", prompt_get(R3, {"type": "text", "text": "x", "_meta": {"a/b": 1}}))
    # 2026-07-28 names serverInfo inside _meta: its contents are still checked.
    listing = prompt_list(R5)
    listing["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "p", "version": "1"}, "com.example/x": 1}
    validate_result(R5, "prompts/list", listing)
    listing["_meta"]["io.modelcontextprotocol/serverInfo"]["colour"] = "red"
    with pytest.raises(AssertionError, match="colour"):
        validate_result(R5, "prompts/list", listing)


def test_empty_result_is_closed() -> None:
    with pytest.raises(AssertionError, match=r"\$\.resultType: field 'resultType' is not defined by 2025-06-18"):
        validate_result(R3, "ping", {"resultType": "complete"})


def test_unknown_field_report_lists_every_problem() -> None:
    result = prompt_list(R1, title="T", icons=[])
    result["prompts"].append({"name": "b", "title": "B"})
    with pytest.raises(AssertionError) as excinfo:
        check_no_unknown_fields(R1, "ListPromptsResult", result)
    message = failure(excinfo)
    for path in ("$.prompts[0].title", "$.prompts[0].icons", "$.prompts[1].title"):
        assert path in message


# --------------------------------------------------------------------------------------------- whole messages


@pytest.mark.parametrize("revision", ALL)
def test_valid_messages(revision: str) -> None:
    validate_message(revision, {"jsonrpc": "2.0", "id": 1, "result": prompt_list(revision)}, "prompts/list")
    validate_message(revision, {"jsonrpc": "2.0", "id": "a", "result": prompt_get(revision)}, "prompts/get")
    validate_message(revision, {"jsonrpc": "2.0", "id": 2, "result": complete(revision, {})})
    error = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown prompt", "data": {"x": 1}}}
    validate_message(revision, error)
    validate_message(revision, error, "prompts/get")
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": {"a": 1}}}
    validate_message(revision, log)
    validate_message(revision, log, "notifications/message")
    validate_message(revision, {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
    validate_message(revision, progress)


@pytest.mark.parametrize("revision", LEGACY)
def test_valid_legacy_messages(revision: str) -> None:
    validate_message(revision, {"jsonrpc": "2.0", "id": 0, "result": initialize_result(revision)}, "initialize")
    validate_message(revision, {"jsonrpc": "2.0", "id": 1, "result": {}}, "ping")
    validate_message(revision, {"jsonrpc": "2.0", "id": 1, "method": "ping"})


@pytest.mark.parametrize(
    ("revision", "message", "method", "expected"),
    [
        (R4, {"id": 1, "result": {}}, "ping", "'jsonrpc' is a required property"),
        (R4, {"jsonrpc": "1.0", "id": 1, "result": {}}, "ping", "at $.jsonrpc"),
        (R4, {"jsonrpc": "2.0", "id": None, "result": {}}, "ping", "at $.id"),
        (R4, {"jsonrpc": "2.0", "id": 1, "result": {}, "extra": 1}, "ping", "members MCP 2025-11-25 does not define"),
        (R4, {"jsonrpc": "2.0", "id": 1, "result": {"prompts": 3}}, "prompts/list", "at $.prompts"),
        (R4, {"jsonrpc": "2.0", "id": 1, "error": {"code": "bad", "message": "x"}}, None, "at $.error.code"),
        (R4, {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, None, "'message' is a required property"),
        (R4, {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "m", "hint": 1}}, None, "$.error.hint"),
        (R1, {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}, None, "'id' is a required"),
        (R4, {"jsonrpc": "2.0", "id": 1}, None, "not a JSON-RPC response"),
        (
            R4,
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud", "data": 1}},
            None,
            "level",
        ),
        (R4, {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}, None, "'data'"),
        (R4, {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}, "notifications/message", "expected"),
        (
            R4,
            {"jsonrpc": "2.0", "method": "notifications/made_up"},
            None,
            "has no notification 'notifications/made_up'",
        ),
        (
            R1,
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1, "message": "m"},
            },
            None,
            "$.params.message",
        ),
        (
            R1,
            {"jsonrpc": "2.0", "id": 0, "result": initialize_result(R1, title="X")},
            "initialize",
            "$.serverInfo.title",
        ),
    ],
)
def test_invalid_messages_fail(revision: str, message: dict[str, Any], method: str | None, expected: str) -> None:
    with pytest.raises(AssertionError) as excinfo:
        validate_message(revision, copy.deepcopy(message), method)
    assert expected in failure(excinfo)


def test_error_responses_without_id_are_allowed_since_2025_11_25() -> None:
    validate_message(R4, {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}})


def test_r1_notifications_may_carry_jsonrpc() -> None:
    # Before 2025-11-25 the notification definitions omit the envelope's "jsonrpc".
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    validate_message(R1, log)
    validate_result(R1, "notifications/message", {"method": "notifications/message", "params": log["params"]})
    validate_result(R4, "notifications/message", {"method": "notifications/message", "params": log["params"]})
    with pytest.raises(AssertionError, match="'jsonrpc' is not defined"):
        check_no_unknown_fields(R1, "LoggingMessageNotification", log)
    check_no_unknown_fields(R1, "LoggingMessageNotification", log, allow=("jsonrpc",))
