"""MCP 2026-07-28 beside the legacy revisions, over real transports (../shared/spec/CHECKLIST-2026.md).

stdio: ``promptdeck serve`` as a process, spoken to with newline-delimited JSON-RPC over its pipes.
HTTP: ``promptdeck serve --http`` as a process (``tests/support/http_server.py``), requests with
httpx; the tests that must see inside the server (a prompt noticing its cancellation, which
subscriptions are still registered) serve the ASGI app with promptdeck's HTTP server on a thread instead.

Request/response rules run over both transports through the ``peer`` fixture. Every message a
server sends in the modern era is checked against the 2026-07-28 schema on arrival (see
``tests/support/modern.py``), and every legacy one against its own revision, free of modern fields.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from promptdeck import PromptServer
from promptdeck.protocol.revisions import META_VERSION as VERSION_KEY
from promptdeck.server.modern import META_CAPABILITIES as CAPABILITIES_KEY
from promptdeck.server.modern import META_LOG_LEVEL as LOG_LEVEL_KEY
from promptdeck.server.modern import META_SUBSCRIPTION as SUBSCRIPTION_KEY
from tests.support.http_rpc import serve, start_session
from tests.support.http_server import http_server
from tests.support.libraries import BRIEF, BRIEF_ANSWER
from tests.support.listeners import subscriptions
from tests.support.modern import (
    DEADLINE,
    ELICITS,
    MODERN_ONLY,
    REVISION,
    HttpPeer,
    Message,
    StdioPeer,
    answers,
    check,
    check_legacy,
    error_code,
    get_prompt,
    headers_for,
    http_listen,
    initialize,
    is_list_changed,
    keep_editing,
    legacy,
    listen,
    notification,
    on_subscription,
    post,
    request,
    sse_messages,
    subscription_of,
    wrap,
)

#: Every revision promptdeck speaks, newest first: what discover and -32022 list.
SUPPORTED = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
PAGE_SIZE = 3
LIST_TTL = 1234

GREET = """---
description: Greets someone
arguments:
  - {name: name, description: Who to greet, required: true}
  - {name: tone, enum: [warm, dry], default: warm}
---
Say hello to {{ name }} in a {{ tone }} way.
"""
PAYROLL = "---\ndescription: HR only\nscopes: [hr]\n---\nPayroll.\n"
NOTES = [f"note-{c}" for c in "abcde"]
NAMES = sorted(["greet", "brief", *NOTES])

ids = itertools.count(1)


def write_library(folder: Path, *, scoped: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "greet.md").write_text(GREET)
    (folder / "brief.md").write_text(BRIEF)
    for name in NOTES:
        (folder / f"{name}.md").write_text(f"A note called {name}.\n")
    if scoped:
        (folder / "payroll.md").write_text(PAYROLL)
    return folder


Peer = StdioPeer | HttpPeer


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_library(tmp_path_factory.mktemp("modern") / "prompts")


@pytest.fixture(scope="module")
def stdio(library: Path) -> Iterator[StdioPeer]:
    with StdioPeer(library, "--no-watch", "--page-size", str(PAGE_SIZE), "--list-ttl", str(LIST_TTL)) as peer:
        yield peer


@pytest.fixture(scope="module")
def http_url(library: Path) -> Iterator[str]:
    with http_server(str(library), "--no-watch", "--page-size", str(PAGE_SIZE), "--list-ttl", str(LIST_TTL)) as url:
        yield url


@pytest.fixture(scope="module")
def http(http_url: str) -> Iterator[HttpPeer]:
    peer = HttpPeer(http_url)
    yield peer
    peer.close()


@pytest.fixture(params=["stdio", "http"])
def peer(request: pytest.FixtureRequest) -> Peer:
    chosen: Peer = request.getfixturevalue(request.param)
    return chosen


def expect_error(peer: Peer, message: Message, code: int, http_status: int = 200) -> dict[str, Any]:
    """Send ``message``, assert the JSON-RPC error ``code`` (and the HTTP status); the error object."""
    answer = peer.call(message)
    assert error_code(answer) == code, answer
    if peer.http:
        assert peer.status == http_status, answer
    error: dict[str, Any] = answer["error"]
    return error


def result_of(peer: Peer, message: Message) -> dict[str, Any]:
    answer = peer.call(message)
    assert "result" in answer, answer
    if peer.http:
        assert peer.status == 200
    result: dict[str, Any] = answer["result"]
    return result


def walk_listing(peer: Peer) -> list[dict[str, Any]]:
    """Every page of prompts/list, following nextCursor."""
    pages = [result_of(peer, request(next(ids), "prompts/list"))]
    while "nextCursor" in pages[-1]:
        cursor = pages[-1]["nextCursor"]
        pages.append(result_of(peer, request(next(ids), "prompts/list", {"cursor": cursor})))
        assert len(pages) <= 20, "the listing does not end"
    return pages


def names_in(pages: list[dict[str, Any]]) -> list[str]:
    return [prompt["name"] for page in pages for prompt in page["prompts"]]


# -- server/discover and the _meta checks ----------------------------------------------------------


def test_discover_lists_every_revision_and_the_prompt_capabilities(peer: Peer) -> None:
    result = result_of(peer, request(next(ids), "server/discover"))
    assert result["supportedVersions"] == SUPPORTED
    assert result["capabilities"]["prompts"] == {"listChanged": True}
    assert result["capabilities"]["completions"] == {}
    assert result["ttlMs"] == LIST_TTL and result["cacheScope"] == "public"
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "promptdeck"


@pytest.mark.parametrize("version", ["2099-01-01", "2025-11-25", "2024-11-05", ""])
def test_unsupported_version_is_32022_listing_every_supported_revision(peer: Peer, version: str) -> None:
    # Over HTTP the version header repeats the _meta one, so only the version itself is at fault.
    error = expect_error(peer, request(next(ids), "prompts/list", version=version), -32022, 400)
    assert error["data"] == {"supported": SUPPORTED, "requested": version}


def test_a_null_version_over_stdio_is_a_missing_meta_field(stdio: StdioPeer) -> None:
    # The _meta key is there (so the request is modern) but names no version: a required field is
    # missing (-32602), and -32022's "requested" must be a string, so it cannot be that error.
    answer = stdio.call(request(next(ids), "prompts/list", version=None))
    assert error_code(answer) == -32602 and "protocolVersion" in answer["error"]["message"]


def test_a_modern_http_request_without_a_meta_version_is_32602(http: HttpPeer) -> None:
    # The 2026-07-28 header says modern, but _meta lacks a required field (CHECKLIST-2026 section 2).
    for message in (request(next(ids), "prompts/list", omit=(VERSION_KEY,)),
                    request(next(ids), "prompts/list", version=None)):
        assert error_code(http.call(message, mcp_protocol_version=REVISION)) == -32602
        assert http.status == 400


@pytest.mark.parametrize(("omit", "meta"), [
    ((CAPABILITIES_KEY,), {}),
    ((), {CAPABILITIES_KEY: ["elicitation"]}),
    ((), {LOG_LEVEL_KEY: "loud"}),
])
def test_bad_meta_is_32602_and_http_400(peer: Peer, omit: tuple[str, ...], meta: dict[str, Any]) -> None:
    message = request(next(ids), "prompts/list")
    for key in omit:
        del message["params"]["_meta"][key]
    message["params"]["_meta"].update(meta)
    expect_error(peer, message, -32602, 400)
    assert result_of(peer, request(next(ids), "prompts/list"))["prompts"]  # and serving goes on


def test_a_valid_log_level_is_accepted(peer: Peer) -> None:
    assert result_of(peer, request(next(ids), "prompts/list", meta={LOG_LEVEL_KEY: "warning"}))["prompts"]


def test_unknown_method_is_32601(peer: Peer) -> None:
    expect_error(peer, request(next(ids), "tools/list"), -32601, 404)


# -- prompts/list, prompts/get, completion/complete ------------------------------------------------


def test_listing_pages_share_ttl_and_one_cache_scope(peer: Peer) -> None:
    pages = walk_listing(peer)
    assert names_in(pages) == NAMES  # sorted, nothing repeated or skipped
    assert [len(page["prompts"]) for page in pages] == [3, 3, 1]
    assert {page["ttlMs"] for page in pages} == {LIST_TTL}
    assert {page["cacheScope"] for page in pages} == {"public"}
    assert {page["resultType"] for page in pages} == {"complete"}
    expect_error(peer, request(next(ids), "prompts/list", {"cursor": "not-a-cursor"}), -32602)


def test_get_renders_in_modern_form(peer: Peer) -> None:
    result = result_of(peer, get_prompt(next(ids), "greet", {"name": "Ada", "tone": "dry"}))
    assert result["description"] == "Greets someone"
    assert result["messages"] == [{"role": "user", "content": {
        "type": "text", "text": "Say hello to Ada in a dry way."}}]
    assert result["resultType"] == "complete"
    expect_error(peer, get_prompt(next(ids), "no-such-prompt", {}), -32602)
    expect_error(peer, get_prompt(next(ids), "greet", {"name": "Ada", "tone": "loud"}), -32602)


def test_completion_in_modern_form(peer: Peer) -> None:
    result = result_of(peer, request(next(ids), "completion/complete", {
        "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "tone", "value": "d"}}))
    assert result["completion"]["values"] == ["dry"]
    assert result["resultType"] == "complete"
    expect_error(peer, request(next(ids), "completion/complete", {
        "ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}}), -32602)


# -- input_required ------------------------------------------------------------------------------


def ask_for_brief(peer: Peer, arguments: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """A prompts/get of ``brief`` leaving out required arguments: (the form's params, the result)."""
    result = result_of(peer, get_prompt(next(ids), "brief", arguments, capabilities=ELICITS))
    assert result["resultType"] == "input_required"
    assert set(result["inputRequests"]) == {"arguments"}
    form = result["inputRequests"]["arguments"]
    assert form["method"] == "elicitation/create" and form["params"]["mode"] == "form"
    assert isinstance(result["requestState"], str) and result["requestState"]
    params: dict[str, Any] = form["params"]
    return params, result


def answer_form(state: str, content: dict[str, Any], arguments: dict[str, str] | None = None,
                action: str = "accept") -> Message:
    """The retry of a brief request: a new id, the same arguments, the form's answer and the state."""
    reply: dict[str, Any] = {"action": action}
    if action == "accept":
        reply["content"] = content
    return get_prompt(next(ids), "brief", arguments, capabilities=ELICITS,
                      inputResponses={"arguments": reply}, requestState=state)


def test_input_required_asks_with_a_typed_form_and_the_retry_renders(peer: Peer) -> None:
    form, result = ask_for_brief(peer)
    schema = form["requestedSchema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["topic", "pages", "audience", "urgent"]  # not tone: it has a default
    assert schema["properties"] == {
        "topic": {"type": "string", "minLength": 3, "maxLength": 80, "title": "Topic",
                  "description": "What the brief is about"},
        "pages": {"type": "integer", "minimum": 1, "maximum": 5, "description": "How many pages"},
        "audience": {"type": "string", "enum": ["engineers", "managers"], "description": "Who reads it"},
        "urgent": {"type": "boolean", "description": "Whether it is urgent"},
    }
    rendered = result_of(peer, answer_form(result["requestState"], BRIEF_ANSWER))
    assert rendered["resultType"] == "complete"
    assert rendered["messages"][0]["content"]["text"] == "A plain brief of 2 pages on caching for managers, urgent."
    # The state was accepted once: the same retry again (with yet another id) is refused.
    expect_error(peer, answer_form(result["requestState"], BRIEF_ANSWER), -32602)


def test_input_required_asks_only_for_what_is_missing(peer: Peer) -> None:
    given = {"topic": "caching", "tone": "formal"}
    form, result = ask_for_brief(peer, given)
    assert form["requestedSchema"]["required"] == ["pages", "audience", "urgent"]
    # A form answered in part is asked again, with a new state, for what is still missing.
    partial = result_of(peer, answer_form(result["requestState"], {"pages": 1}, given))
    assert partial["resultType"] == "input_required"
    again = partial["inputRequests"]["arguments"]["params"]["requestedSchema"]
    assert again["required"] == ["audience", "urgent"]
    rest = {"pages": 1, "audience": "engineers", "urgent": False}
    rendered = result_of(peer, answer_form(partial["requestState"], rest, given))
    assert rendered["messages"][0]["content"]["text"] == "A formal brief of 1 pages on caching for engineers."


def test_input_required_state_is_bound_to_its_request(peer: Peer) -> None:
    _, result = ask_for_brief(peer, {"topic": "caching"})
    state = result["requestState"]
    # Other arguments than the original request's: another request, whose state this is not.
    expect_error(peer, answer_form(state, BRIEF_ANSWER, {"topic": "queues"}), -32602)
    tampered = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    expect_error(peer, answer_form(tampered, BRIEF_ANSWER, {"topic": "caching"}), -32602)
    # A declined form is an error, not another form.
    _, fresh = ask_for_brief(peer)
    expect_error(peer, answer_form(fresh["requestState"], {}, action="decline"), -32602)
    # Answers without the state they answer are refused.
    expect_error(peer, get_prompt(next(ids), "brief", capabilities=ELICITS,
                                  inputResponses={"arguments": {"action": "accept", "content": BRIEF_ANSWER}}), -32602)


@pytest.mark.parametrize("capabilities", [{}, {"elicitation": {"url": {}}}, {"sampling": {}}])
def test_input_required_only_for_clients_that_show_forms(peer: Peer, capabilities: dict[str, Any]) -> None:
    error = expect_error(peer, get_prompt(next(ids), "brief", {}, capabilities=capabilities), -32602)
    assert "topic" in error["message"]


# -- HTTP headers --------------------------------------------------------------------------------


@pytest.mark.parametrize("override", [
    {"mcp_protocol_version": None},
    {"mcp_protocol_version": "2025-11-25"},
    {"mcp_method": None},
    {"mcp_method": "prompts/list"},
    {"mcp_name": None},
    {"mcp_name": "brief"},
    {"mcp_name": wrap("brief")},
    {"mcp_name": "=?base64?not base64!?="},
    {"mcp_protocol_version": wrap("2025-11-25")},
])
def test_headers_that_disagree_with_the_body_are_32020(http: HttpPeer, override: dict[str, str | None]) -> None:
    answer = http.call(get_prompt(next(ids), "greet", {"name": "Ada"}), **override)
    assert error_code(answer) == -32020 and http.status == 400, answer


def test_base64_wrapped_headers_are_decoded_before_comparing(http: HttpPeer) -> None:
    message = get_prompt(next(ids), "greet", {"name": "Ada"})
    assert "messages" in http.call(message, mcp_name=wrap("greet"), mcp_method=wrap("prompts/get"),
                                   mcp_protocol_version=wrap(REVISION))["result"]
    # A name no header could carry as it is: decoded as UTF-8 it matches the body, so the header
    # check passes and the prompt is simply unknown.
    answer = http.call(get_prompt(next(ids), "café", {}), mcp_name=wrap("café"))
    assert error_code(answer) == -32602, answer


def test_modern_requests_ignore_a_session_id_and_never_mint_one(http: HttpPeer) -> None:
    result = http.call(request(next(ids), "server/discover"), mcp_session_id="no-such-session")["result"]
    assert result["resultType"] == "complete"  # post() also asserts no mcp-session-id came back


# -- scopes make the listing private -------------------------------------------------------------


def test_scoped_prompts_make_every_page_private_and_filter_per_caller(tmp_path: Path) -> None:
    folder = write_library(tmp_path / "prompts", scoped=True)
    tokens = tmp_path / "tokens"
    tokens.write_text("alice: alice-secret-token-0123 hr\nbob: bob-secret-token-0123456\n")
    with http_server(str(folder), "--no-watch", "--page-size", str(PAGE_SIZE), "--token-file", str(tokens)) as url:
        peers = {"alice": HttpPeer(url), "bob": HttpPeer(url)}
        peers["alice"].client.headers["authorization"] = "Bearer alice-secret-token-0123"
        peers["bob"].client.headers["authorization"] = "Bearer bob-secret-token-0123456"
        listings: dict[str, list[str]] = {}
        for who, peer in peers.items():
            pages = walk_listing(peer)
            assert {page["cacheScope"] for page in pages} == {"private"}, who
            assert {page["ttlMs"] for page in pages} == {60_000}, who  # the default TTL
            assert result_of(peer, request(next(ids), "server/discover"))["cacheScope"] == "private"
            listings[who] = names_in(pages)
            payroll = peer.call(get_prompt(next(ids), "payroll", {}))
            assert ("result" in payroll) is (who == "alice"), payroll
        # A requestState is bound to the principal it was issued to.
        _, asked = ask_for_brief(peers["alice"])
        expect_error(peers["bob"], answer_form(asked["requestState"], BRIEF_ANSWER), -32602)
        assert result_of(peers["alice"], answer_form(asked["requestState"], BRIEF_ANSWER))["messages"]
        for peer in peers.values():
            peer.close()
    assert listings["alice"] == sorted([*NAMES, "payroll"])
    assert listings["bob"] == NAMES
    # Over stdio the one local client sees everything, and the listing is still private.
    with StdioPeer(folder, "--no-watch") as stdio:
        pages = walk_listing(stdio)
        assert "payroll" in names_in(pages) and {page["cacheScope"] for page in pages} == {"private"}


# -- legacy sessions beside the modern era -------------------------------------------------------


def test_stdio_legacy_session_and_modern_requests_stay_apart(tmp_path: Path) -> None:
    folder = write_library(tmp_path / "prompts")
    with StdioPeer(folder) as peer:
        assert peer.call(initialize(0, capabilities=ELICITS))["result"]["protocolVersion"] == "2025-11-25"
        peer.send(notification("notifications/initialized"))
        modern = peer.call(request(next(ids), "prompts/list"))["result"]
        assert modern["ttlMs"] == 60_000 and modern["cacheScope"] == "public"  # the default TTL
        listing = peer.call(legacy(next(ids), "prompts/list"))["result"]
        assert [p["name"] for p in listing["prompts"]] == NAMES and not MODERN_ONLY & set(listing)
        # A legacy client that declared elicitation is asked for what is missing with elicitation/create, the
        # form a modern request gets in its input_required result (whose own era it never sees), and the
        # prompt renders with its answer.
        get = legacy(next(ids), "prompts/get", {"name": "brief"})
        peer.send(get)
        asked = peer.take(lambda m: m.get("method") == "elicitation/create")
        modern_form = peer.call(get_prompt(next(ids), "brief", capabilities=ELICITS))["result"]
        assert modern_form["resultType"] == "input_required"
        assert asked["params"] == modern_form["inputRequests"]["arguments"]["params"]
        peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": BRIEF_ANSWER}})
        brief = peer.take(lambda m: m.get("id") == get["id"] and "method" not in m)["result"]
        assert brief["messages"][0]["content"]["text"] == "A plain brief of 2 pages on caching for managers, urgent."
        got = peer.call(legacy(next(ids), "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}))["result"]
        assert got["messages"] and "_meta" not in got
        done = peer.call(legacy(next(ids), "completion/complete", {
            "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "tone", "value": ""}}))["result"]
        assert done["completion"]["values"] == ["warm", "dry"] and "resultType" not in done

        # One edit: the legacy session hears of it plainly, the subscription with its id.
        peer.send(listen("sub", promptsListChanged=True))
        assert peer.take(on_subscription("sub"))["method"] == "notifications/subscriptions/acknowledged"
        plain: list[Message] = []

        def both_told() -> bool:
            if not plain:
                found = peer.poll(lambda m: m.get("method") == "notifications/prompts/list_changed"
                                  and subscription_of(m) is None, 0.5)
                plain.extend([found] if found else [])
            return bool(plain) and peer.poll(is_list_changed("sub"), 0.5) is not None

        keep_editing(folder, both_told)
        assert "params" not in plain[0]


def legacy_call(client: httpx.Client, url: str, headers: dict[str, str], message: Message) -> Message:
    response = client.post(url, json=message, headers=headers)
    assert response.status_code == 200, response.text
    [answer] = answers(response)
    check_legacy(answer, "2025-11-25", message["method"])
    return answer


def test_http_get_and_delete_in_2026_are_405_while_a_legacy_session_keeps_working(http_url: str) -> None:
    with httpx.Client(timeout=DEADLINE) as client:
        session = start_session(client, http_url, "2025-11-25", ELICITS)
        modern = {**session, "mcp-protocol-version": REVISION}
        for method in ("GET", "DELETE"):
            refused = client.request(method, http_url, headers=modern)
            assert refused.status_code == 405 and refused.headers["allow"] == "POST", method
        listing = legacy_call(client, http_url, session, legacy(1, "prompts/list"))["result"]
        assert len(listing["prompts"]) == PAGE_SIZE and "ttlMs" not in listing
        with client.stream("GET", http_url, headers={**session, "accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200  # the legacy session's own GET stream
        # Modern requests on the same endpoint, even carrying the session's id, stay modern.
        status, answer = post(client, http_url, request(2, "prompts/list"), mcp_session_id=session["mcp-session-id"])
        assert status == 200 and answer["result"]["ttlMs"] == LIST_TTL
        # The session declared elicitation: it is asked for what is missing on the POST's own stream, and its
        # answer, POSTed on the session, renders (never an input_required result: that is modern only).
        with client.stream("POST", http_url, json=legacy(3, "prompts/get", {"name": "brief"}),
                           headers=session) as stream:
            assert stream.headers["content-type"] == "text/event-stream"
            events = stream.iter_lines()
            asked = next(sse_messages(line)[0] for line in events if line.startswith("data:") and line[5:].strip())
            check_legacy(asked, "2025-11-25")
            assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "form"
            reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}}
            assert client.post(http_url, json=reply, headers=session).status_code == 202
            [declined] = [message for line in events for message in sse_messages(line)]
        check_legacy(declined, "2025-11-25", "prompts/get")
        assert error_code(declined) == -32602 and declined["error"]["data"]["missing"] == [
            "topic", "pages", "audience", "urgent"]
        got = legacy_call(client, http_url, session, legacy(4, "prompts/get", {"name": "greet",
                                                                                "arguments": {"name": "Ada"}}))
        assert got["result"]["messages"] and not MODERN_ONLY & set(got["result"])
        cancel = notification("notifications/cancelled", {"requestId": 2})
        accepted = client.post(http_url, json=cancel, headers=headers_for(cancel, mcp_protocol_version=REVISION))
        assert accepted.status_code == 202 and accepted.content == b""  # a modern notification
        assert client.delete(http_url, headers=session).status_code == 200
        assert client.post(http_url, json=legacy(5, "ping"), headers=session).status_code == 404


# -- subscriptions/listen ------------------------------------------------------------------------


def test_stdio_subscriptions_ack_first_deliver_what_was_asked_and_end_cleanly(tmp_path: Path) -> None:
    folder = write_library(tmp_path / "prompts")
    with StdioPeer(folder) as peer:
        subscribers: list[int | str] = ["one", 2]
        for sid in [*subscribers, "tools"]:
            wanted = {"toolsListChanged": True} if sid == "tools" else {"promptsListChanged": True}
            peer.send(listen(sid, **wanted))
            first = peer.take(on_subscription(sid))
            assert first["method"] == "notifications/subscriptions/acknowledged"
            honoured = {} if sid == "tools" else {"promptsListChanged": True}
            assert first["params"]["notifications"] == honoured

        def all_told(waiting: list[object]) -> Callable[[], bool]:
            def arrived() -> bool:
                waiting[:] = [s for s in waiting if peer.poll(is_list_changed(s), 0.5) is None]
                return not waiting
            return arrived

        keep_editing(folder, all_told(list(subscribers)))
        # Ending one subscription: once the server has read that (a later request is answered),
        # edits reach only the other one.
        peer.send(notification("notifications/cancelled", {"requestId": "one"}))
        assert peer.call(request(next(ids), "server/discover"))["result"]
        peer.backlog.clear()
        keep_editing(folder, all_told([2]))
        assert peer.call(request(next(ids), "server/discover"))["result"]  # everything before it is in
        told = [subscription_of(m) for m in peer.backlog if m.get("method") == "notifications/prompts/list_changed"]
        assert "one" not in told and "tools" not in told

        # The client goes away: each subscription still open is ended with notifications/cancelled.
        rest, code = peer.finish()
        assert code == 0
        ended = {m["params"]["requestId"]: m for m in rest if m.get("method") == "notifications/cancelled"}
        assert set(ended) == {2, "tools"}
        assert all(subscription_of(m) == sid for sid, m in ended.items())


def test_http_subscriptions_reach_every_concurrent_subscriber(tmp_path: Path) -> None:
    folder = write_library(tmp_path / "prompts")

    async def scenario(url: str) -> None:
        async with httpx.AsyncClient(timeout=DEADLINE) as client, AsyncExitStack() as stack:
            streams = {sid: await stack.enter_async_context(http_listen(client, url, sid, promptsListChanged=True))
                       for sid in ("a", "b", 3)}
            tools = await stack.enter_async_context(http_listen(client, url, "t", toolsListChanged=True))
            for sid, stream in [*streams.items(), ("t", tools)]:
                ack = await stream.next()
                assert ack is not None and ack["method"] == "notifications/subscriptions/acknowledged"
                assert subscription_of(ack) == sid
                assert ack["params"]["notifications"] == ({} if sid == "t" else {"promptsListChanged": True})
            waiting = set(streams)

            async def told() -> bool:
                for sid in list(waiting):
                    message = await streams[sid].poll(0.5)
                    if message is not None:
                        assert message["method"] == "notifications/prompts/list_changed"
                        assert message["params"]["_meta"] == {SUBSCRIPTION_KEY: sid}
                        waiting.discard(sid)
                return not waiting

            for added in range(40):
                (folder / f"added-{added}.md").write_text("New.\n")
                if await told():
                    break
            assert not waiting, f"{waiting} heard of no change"
            # Nothing was asked of the tools-only subscription, and nothing comes on it.
            assert await tools.poll(1.0) is None

    with http_server(str(folder)) as url:
        asyncio.run(scenario(url))


def in_process_server() -> PromptServer:
    server = PromptServer("modern-in-process")

    @server.prompt(description="Greets someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


async def eventually(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def test_http_closing_a_listen_stream_ends_that_subscription_only() -> None:
    server = in_process_server()
    apps: list[Any] = []

    @server.prompt(description="Stands in for a server shutdown: ends every subscription")
    async def shut_down() -> str:
        apps[0].table.end_subscriptions()  # async renders run on the server's event loop, where the queues live
        return "ended"

    def late() -> str:
        return "late"

    async def scenario(url: str) -> None:
        async with httpx.AsyncClient(timeout=DEADLINE) as client, \
                http_listen(client, url, "kept", promptsListChanged=True) as kept:
            assert (await kept.next() or {})["method"] == "notifications/subscriptions/acknowledged"
            async with http_listen(client, url, "closed", promptsListChanged=True) as closed:
                assert (await closed.next() or {})["method"] == "notifications/subscriptions/acknowledged"
                await eventually(lambda: len(subscriptions(server)) == 2, "both subscriptions registered")
            await eventually(lambda: len(subscriptions(server)) == 1 and len(apps[0].table.subscriptions) == 1,
                             "the closed stream's subscription is still registered")
            assert [s.id for s in subscriptions(server)] == ["kept"]
            # A prompt registered on another thread reaches the subscription that is left.
            await asyncio.to_thread(server.prompt(description="Added later")(late))
            changed = await kept.next()
            assert changed is not None and changed["method"] == "notifications/prompts/list_changed"
            assert subscription_of(changed) == "kept"
            # Ending subscriptions gracefully answers the listen request, then closes its stream.
            shut = get_prompt(next(ids), "shut_down", {})
            [done] = answers(await client.post(url, json=shut, headers=headers_for(shut)))
            check(done, "prompts/get")
            ending = await kept.next()
            assert ending is not None and ending["id"] == "kept"
            assert ending["result"]["_meta"][SUBSCRIPTION_KEY] == "kept"
            assert await kept.next() is None

    with serve(server) as (url, app):
        apps.append(app)
        asyncio.run(scenario(url))


def test_http_server_shutdown_ends_subscriptions_with_their_result() -> None:
    received: list[Message] = []
    message = listen("s", promptsListChanged=True)

    def read(url: str) -> None:
        try:
            with httpx.Client(timeout=DEADLINE) as client, \
                    client.stream("POST", url, json=message, headers=headers_for(message)) as response:
                for line in response.iter_lines():
                    if line.startswith("data:"):
                        received.append(json.loads(line[5:]))
        except httpx.HTTPError:
            pass  # the server cut the stream

    with serve(in_process_server()) as (url, _app):
        reader = threading.Thread(target=read, args=(url,))
        reader.start()
        asyncio.run(eventually(lambda: len(received) == 1, "no acknowledgement"))
    reader.join(DEADLINE)
    assert received[-1].get("id") == "s" and received[-1]["result"]["_meta"][SUBSCRIPTION_KEY] == "s"


# -- cancellation by closing the response stream -------------------------------------------------


def test_http_closing_a_modern_post_cancels_its_request() -> None:
    server = in_process_server()
    started, cancelled = threading.Event(), threading.Event()

    @server.prompt(description="Waits until cancelled")
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    with serve(server) as (url, _app):
        message = get_prompt(next(ids), "wait_forever", {})
        body = json.dumps(message).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in headers_for(message).items())
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        with socket.create_connection((parts.hostname, parts.port), timeout=DEADLINE) as sock:
            sock.sendall(f"POST {parts.path} HTTP/1.1\r\nhost: {parts.netloc}\r\n{head}"
                         f"content-length: {len(body)}\r\n\r\n".encode() + body)
            assert started.wait(DEADLINE), "the prompt never started rendering"
            assert not cancelled.is_set()
        assert cancelled.wait(DEADLINE), "closing the stream did not cancel the render"
        with httpx.Client(timeout=DEADLINE) as client:  # and the server goes on serving
            status, answer = post(client, url, get_prompt(next(ids), "greet", {"name": "Ada"}))
        assert status == 200 and answer["result"]["messages"][0]["content"]["text"] == "Hello Ada"


def test_without_the_meta_version_a_stdio_request_is_legacy(stdio: StdioPeer) -> None:
    # It then belongs to a legacy session, and none was started on this process.
    answer = stdio.call(request(next(ids), "prompts/list", omit=(VERSION_KEY,)))
    assert error_code(answer) == -32600 and "initialize" in answer["error"]["message"]
