"""Streamable HTTP, rule by rule: status codes, SSE framing, sessions, replay, DNS rebinding, stateless.

Each test serves an app made by ``create_app`` as ``serve --http`` does (uvicorn) on a thread (ephemeral
loopback port, lifespan on) and speaks raw HTTP to it with httpx, so options such as session limits and idle
timeouts can be set per test. Spec references are to ../shared/spec/CHECKLIST.md section 4.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from promptdeck import PromptServer
from tests.support.http_rpc import (
    POST_HEADERS,
    _Listener,
    assert_error_body,
    init,
    make_server,
    messages_of,
    rpc,
    serve,
    sse_events,
    start_session,
)
from tests.support.listeners import sessions

# -- POST -----------------------------------------------------------------------------------------


def test_post_status_codes() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        ping = rpc("ping", id=5)
        ok = client.post(url, json=ping, headers=headers)
        assert ok.status_code == 200 and messages_of(ok) == [{"jsonrpc": "2.0", "id": 5, "result": {}}]

        wrong_type = client.post(url, content=json.dumps(ping), headers={**headers, "content-type": "text/plain"})
        assert wrong_type.status_code == 415
        assert_error_body(wrong_type)
        charset = {**headers, "content-type": "application/json; charset=utf-8"}
        assert client.post(url, json=ping, headers=charset).status_code == 200
        for accept in ("application/json", "text/event-stream", "text/html"):
            refused = client.post(url, json=ping, headers={**headers, "accept": accept})
            assert refused.status_code == 406, accept
            assert_error_body(refused)

        garbage = client.post(url, content=b"{not json", headers=headers)
        assert garbage.status_code == 400
        assert_error_body(garbage, -32700)

        no_session = {k: v for k, v in headers.items() if k != "mcp-session-id"}
        missing = client.post(url, json=ping, headers=no_session)
        assert missing.status_code == 400
        assert_error_body(missing)
        unknown = client.post(url, json=ping, headers={**headers, "mcp-session-id": "no-such-session"})
        assert unknown.status_code == 404
        assert_error_body(unknown)

        # A notification or a response (to a request the server never sent) is accepted with 202 and no body.
        note = client.post(url, json=rpc("notifications/cancelled", {"requestId": 99}, id=None), headers=headers)
        assert note.status_code == 202 and note.content == b""
        reply = client.post(url, json={"jsonrpc": "2.0", "id": "s-1", "result": {}}, headers=headers)
        assert reply.status_code == 202 and reply.content == b""

        put = client.put(url, json=ping, headers=headers)
        assert put.status_code == 405 and "POST" in put.headers["allow"]
        assert client.post(url.replace("/mcp", "/other"), json=ping, headers=headers).status_code == 404
        health = client.get(url.replace("/mcp", "/healthz"))
        assert health.status_code == 200 and health.text == "ok"


def test_malformed_messages_get_400_with_the_error() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        empty = client.post(url, content=b"", headers=headers)
        assert empty.status_code == 400
        assert_error_body(empty, -32700)
        for bad in ({"jsonrpc": "2.0", "id": 1}, {"jsonrpc": "1.0", "id": 2, "method": "ping"}, [1, 2]):
            answer = client.post(url, json=bad, headers=headers)
            assert answer.status_code == 400, (bad, answer.status_code)
            assert answer.json()["error"]["code"] == -32600


def test_body_limit() -> None:
    with serve(max_body_bytes=2000) as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        small = rpc("prompts/get", {"name": "greet", "arguments": {"name": "x" * 1000}})
        assert client.post(url, json=small, headers=headers).status_code == 200
        big = rpc("prompts/get", {"name": "greet", "arguments": {"name": "x" * 5000}})
        refused = client.post(url, json=big, headers=headers)
        assert refused.status_code == 413
        assert_error_body(refused)
        # Without Content-Length (chunked upload) the limit still holds.
        chunks = iter([json.dumps(big).encode()[:3000], json.dumps(big).encode()[3000:]])
        assert client.post(url, content=chunks, headers=headers).status_code == 413
        # The session survives a refused body.
        assert client.post(url, json=small, headers=headers).status_code == 200


def test_sse_answer_framing() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url, "2025-06-18")
        answer = client.post(url, json=rpc("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}, id="g"),
                             headers=headers)
        assert answer.status_code == 200
        assert answer.headers["content-type"].split(";")[0] == "text/event-stream"
        assert "no-cache" in answer.headers.get("cache-control", "")
        events = [e for e in sse_events(answer.text) if e.get("data", "").strip()]
        assert len(events) == 1 and events[0].get("event", "message") == "message"
        message = json.loads(events[0]["data"])
        assert message["id"] == "g" and message["result"]["messages"][0]["content"]["text"] == "Hello Ada"
        # Every event ends with a blank line, and no data line holds a raw line break.
        assert answer.text.endswith("\n\n")


def test_json_answers_and_progress_forcing_sse() -> None:
    with serve(json_response=True) as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        plain = client.post(url, json=rpc("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
                            headers=headers)
        assert plain.headers["content-type"].startswith("application/json")
        assert plain.json()["result"]["messages"][0]["content"]["text"] == "Hello Ada"
        # A request that asks for progress gets an SSE stream: the notifications first, then the answer.
        params = {"name": "slow_greet", "arguments": {"name": "Ada"}, "_meta": {"progressToken": "tok"}}
        streamed = client.post(url, json=rpc("prompts/get", params, id=9), headers=headers)
        assert streamed.headers["content-type"].startswith("text/event-stream")
        messages = messages_of(streamed)
        progress = [m for m in messages if m.get("method") == "notifications/progress"]
        assert [p["params"]["progress"] for p in progress] == [1, 2]
        assert all(p["params"]["progressToken"] == "tok" for p in progress)
        assert messages[-1]["id"] == 9 and "result" in messages[-1]


# -- sessions -------------------------------------------------------------------------------------


def test_session_ids_are_random_visible_ascii_and_unique() -> None:
    with serve() as (url, _), httpx.Client() as client:
        ids = {client.post(url, json=init(), headers=POST_HEADERS).headers["mcp-session-id"] for _ in range(20)}
        assert len(ids) == 20
        for session_id in ids:
            assert len(session_id) >= 22 and all(0x21 <= ord(c) <= 0x7E for c in session_id)


def test_delete_ends_the_session() -> None:
    with serve() as (url, app), httpx.Client() as client:
        headers = start_session(client, url)
        assert len(sessions(app.server)) == 1
        ended = client.delete(url, headers=headers)
        assert 200 <= ended.status_code < 300
        assert client.post(url, json=rpc("ping"), headers=headers).status_code == 404
        assert client.get(url, headers={**headers, "accept": "text/event-stream"}).status_code == 404
        assert client.delete(url, headers=headers).status_code == 404
        assert not sessions(app.server)  # LegacySession.close ran: no list_changed goes to it any more
        # The client starts over with a fresh initialize and gets a new session.
        again = start_session(client, url)
        assert again["mcp-session-id"] != headers["mcp-session-id"]


def test_session_cap_answers_503() -> None:
    with serve(max_sessions=2) as (url, _), httpx.Client() as client:
        first = start_session(client, url)
        start_session(client, url)
        full = client.post(url, json=init(), headers=POST_HEADERS)
        assert full.status_code == 503
        assert_error_body(full)
        assert "mcp-session-id" not in full.headers
        # Live sessions keep working, and ending one makes room.
        assert client.post(url, json=rpc("ping"), headers=first).status_code == 200
        client.delete(url, headers=first)
        assert client.post(url, json=init(), headers=POST_HEADERS).status_code == 200


def test_idle_sessions_expire_without_leaking() -> None:
    idle = 1.0
    with serve(session_idle_seconds=idle) as (url, app), httpx.Client() as client:
        for _ in range(25):
            # Each checked as it starts: on a loaded machine 25 starts can take longer than the idle limit,
            # so the first may rightly have expired by the time the last is made.
            started = start_session(client, url)["mcp-session-id"]
            assert started in app.table.streamable
            assert app.table.streamable[started].legacy in sessions(app.server)
        kept = start_session(client, url)
        deadline = time.monotonic() + 30
        while True:
            # One session stays busy; the other 25 are abandoned.
            assert client.post(url, json=rpc("ping"), headers=kept).status_code == 200
            if len(sessions(app.server)) == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert len(sessions(app.server)) == 1 and len(app.table.streamable) == 1
        assert client.post(url, json=rpc("ping"), headers=kept).status_code == 200
        deadline = time.monotonic() + 30
        while app.table.streamable and time.monotonic() < deadline:  # left idle, the last one goes too
            time.sleep(0.1)
        assert client.post(url, json=rpc("ping"), headers=kept).status_code == 404 and not sessions(app.server)


def test_protocol_version_header() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url, "2025-11-25")
        ping = rpc("ping")
        # Any supported revision is accepted (the conformance suite sends 2025-03-26 on a 2025-11-25 session).
        for version in ("2025-11-25", "2025-06-18", "2025-03-26"):
            assert client.post(url, json=ping, headers={**headers, "mcp-protocol-version": version}).status_code == 200
        # Missing: assume 2025-03-26, which is supported.
        bare = {k: v for k, v in headers.items() if k != "mcp-protocol-version"}
        assert client.post(url, json=ping, headers=bare).status_code == 200
        for version in ("1999-01-01", "latest", ""):
            refused = client.post(url, json=ping, headers={**headers, "mcp-protocol-version": version})
            assert refused.status_code == 400, version
            assert_error_body(refused)
        get = {**headers, "accept": "text/event-stream", "mcp-protocol-version": "2099-01-01"}
        assert client.get(url, headers=get).status_code == 400


def test_batches_only_in_2025_03_26_sessions() -> None:
    with serve(json_response=True) as (url, _), httpx.Client() as client:
        old = start_session(client, url, "2025-03-26")
        batch = [rpc("ping", id=1), rpc("prompts/list", id=2), rpc("notifications/cancelled", {"requestId": 7}, None)]
        answer = client.post(url, json=batch, headers=old)
        assert answer.status_code == 200
        assert sorted(m["id"] for m in answer.json()) == [1, 2]
        only_notes = client.post(url, json=[rpc("notifications/cancelled", {"requestId": 8}, None)], headers=old)
        assert only_notes.status_code == 202 and only_notes.content == b""
        new = start_session(client, url, "2025-11-25")
        refused = client.post(url, json=batch[:2], headers=new)
        assert refused.json()["error"]["code"] == -32600


# -- GET: the session's own stream ----------------------------------------------------------------


def test_get_stream_carries_list_changed_and_replays_by_last_event_id() -> None:
    server = make_server()
    with serve(server) as (url, _), httpx.Client() as client:
        headers = start_session(client, url, "2025-06-18")
        get_headers = {**headers, "accept": "text/event-stream"}
        listener = _Listener(client, url, get_headers)
        assert listener.status == 200
        for n in range(3):
            server.add_prompt(_python_prompt(server, f"extra{n}"))
        events = listener.wait_for(3)
        assert [json.loads(e["data"])["method"] for e in events] == ["notifications/prompts/list_changed"] * 3
        ids = [e["id"] for e in events]
        assert len(set(ids)) == 3 and all(ids)
        # Resuming after the first event replays the two after it, and only those.
        resumed = _Listener(client, url, {**get_headers, "last-event-id": ids[0]})
        replayed = resumed.wait_for(2)
        assert [e["id"] for e in replayed] == ids[1:]
        client.delete(url, headers=headers)
        resumed.thread.join(5)
        listener.thread.join(5)
        assert not resumed.thread.is_alive() and not listener.thread.is_alive()  # ending the session ends streams


def test_get_needs_event_stream_accept_and_a_session() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        assert client.get(url, headers={**headers, "accept": "application/json"}).status_code == 406
        no_session = {k: v for k, v in headers.items() if k != "mcp-session-id"}
        assert client.get(url, headers={**no_session, "accept": "text/event-stream"}).status_code == 400
        unknown = {**headers, "accept": "text/event-stream", "mcp-session-id": "nope"}
        assert client.get(url, headers=unknown).status_code == 404


def test_get_stream_primes_2025_11_25_clients() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url, "2025-11-25")
        listener = _Listener(client, url, {**headers, "accept": "text/event-stream"})
        deadline = time.monotonic() + 5
        while not listener.events and time.monotonic() < deadline:
            time.sleep(0.02)
        first = listener.events[0]
        assert first.get("id") and first.get("data", "") == "" and first.get("retry", "").isdigit()
        client.delete(url, headers=headers)
        listener.thread.join(5)


def test_post_stream_primes_2025_11_25_clients() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url, "2025-11-25")
        answer = client.post(url, json=rpc("ping"), headers=headers)
        events = sse_events(answer.text)
        assert events[0].get("id") and events[0].get("data", "") == "" and "retry" in events[0]
        assert all(e.get("id") for e in events)
        # Older revisions get no priming event: their clients may not expect empty data.
        old = start_session(client, url, "2025-06-18")
        assert [e for e in sse_events(client.post(url, json=rpc("ping"), headers=old).text) if not e.get("data")] == []


# -- a question on a POST's stream ----------------------------------------------------------------

ELICITS: dict[str, Any] = {"elicitation": {}}


def test_a_question_goes_out_on_the_posts_stream_and_its_answer_follows_there() -> None:
    """A session that declared elicitation asks for a missing argument as soon as it knows, on the POST's
    own stream (primed and numbered in 2025-11-25), before the answer; the client's reply is a POST of its
    own (202), and the rendered answer ends the same stream. In JSON-response mode too: a question needs SSE."""
    for revision, json_response in (("2025-11-25", False), ("2025-06-18", True)):
        with serve(json_response=json_response) as (url, app), httpx.Client(timeout=10) as client:
            headers = start_session(client, url, revision, ELICITS)
            with client.stream("POST", url, json=rpc("prompts/get", {"name": "greet"}, id=7),
                               headers=headers) as stream:
                assert stream.status_code == 200 and stream.headers["content-type"] == "text/event-stream"
                assert "content-length" not in stream.headers  # it begins before its answer is known
                lines = stream.iter_lines()
                events: list[str] = []
                for line in lines:
                    events.append(line)
                    if line.startswith("data:") and line[5:].strip():
                        break
                question = json.loads(events[-1][5:])
                assert question["method"] == "elicitation/create", question
                assert question["params"]["requestedSchema"]["required"] == ["name"]
                primed = revision == "2025-11-25"
                assert ("id: p2-0" in events and "id: p2-1" in events) is primed  # p1 was initialize's
                reply = rpc("", id=question["id"])
                del reply["method"]
                reply["result"] = {"action": "accept", "content": {"name": "Ada"}}
                assert client.post(url, json=reply, headers=headers).status_code == 202
                rest = "\n".join(lines)
            [answer] = [json.loads(e["data"]) for e in sse_events(rest) if e.get("data", "").strip()]
            assert answer["id"] == 7 and answer["result"]["messages"][0]["content"]["text"] == "Hello Ada"
            assert ("id: p2-2" in rest) is primed
            [session] = app.table.streamable.values()
            assert len(session.legacy.questions) == 0


def test_a_client_that_leaves_while_asked_ends_the_wait() -> None:
    with serve() as (url, app), httpx.Client(timeout=10) as client:
        headers = start_session(client, url, "2025-11-25", ELICITS)
        [session] = app.table.streamable.values()
        with client.stream("POST", url, json=rpc("prompts/get", {"name": "greet"}, id=8), headers=headers) as stream:
            # Held: a generator dropped mid-stream closes the connection as it is collected.
            lines = stream.iter_lines()
            for line in lines:
                if "elicitation/create" in line:
                    break
            assert len(session.legacy.questions) == 1
        # The stream is closed: nothing could reach the client, so its request's work is cancelled.
        deadline = time.monotonic() + 5
        while (len(session.legacy.questions) or session.legacy.in_flight) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(session.legacy.questions) == 0 and session.legacy.in_flight == {}
        assert client.post(url, json=rpc("ping", id=9), headers=headers).status_code == 200  # the session lives on


def test_a_stateless_session_is_never_asked() -> None:
    """Its client's answer would be a POST no session waits for: the missing argument fails as it always did."""
    with serve(stateless=True) as (url, _), httpx.Client(timeout=10) as client:
        client.post(url, json=init("2025-11-25", ELICITS), headers=POST_HEADERS)
        answer = client.post(url, json=rpc("prompts/get", {"name": "greet"}),
                             headers={**POST_HEADERS, "mcp-protocol-version": "2025-11-25"})
        [message] = messages_of(answer)
        assert message["error"]["code"] == -32602 and message["error"]["data"]["missing"] == ["name"]


# -- DNS rebinding --------------------------------------------------------------------------------


def test_dns_rebinding_protection_is_on_by_default() -> None:
    with serve() as (url, _), httpx.Client() as client:
        port = url.split(":")[2].split("/")[0]
        evil = client.post(url, json=init(), headers={**POST_HEADERS, "host": "evil.example.com",
                                                      "origin": "http://evil.example.com"})
        assert 400 <= evil.status_code < 500 and "mcp-session-id" not in evil.headers
        bad_host = client.post(url, json=init(), headers={**POST_HEADERS, "host": f"evil.example.com:{port}"})
        assert bad_host.status_code in (403, 421)
        for origin in ("http://evil.example.com", f"http://evil.example.com:{port}", "null",
                       "http://localhost.evil.example.com"):
            refused = client.post(url, json=init(), headers={**POST_HEADERS, "origin": origin})
            assert refused.status_code == 403, origin
            assert_error_body(refused)
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
            assert client.post(url, json=init(), headers={**POST_HEADERS, "host": host}).status_code == 200, host
        for origin in (f"http://localhost:{port}", "http://127.0.0.1:6274", "https://localhost"):
            answer = client.post(url, json=init(), headers={**POST_HEADERS, "origin": origin})
            assert answer.status_code == 200, origin


def test_allow_lists_extend_the_defaults() -> None:
    with serve(allowed_hosts=["prompts.internal"], allowed_origins=["https://app.example.com"]) as (url, _), \
            httpx.Client() as client:
        ok_host = {**POST_HEADERS, "host": "prompts.internal", "origin": "https://app.example.com"}
        assert client.post(url, json=init(), headers=ok_host).status_code == 200
        other = client.post(url, json=init(), headers={**POST_HEADERS, "host": "other.internal"})
        assert other.status_code in (403, 421)
        assert client.post(url, json=init(), headers={**POST_HEADERS, "origin": "https://evil.example.com"}
                           ).status_code == 403
        assert client.post(url, json=init(), headers=POST_HEADERS).status_code == 200  # loopback still allowed


# -- stateless ------------------------------------------------------------------------------------


def test_stateless_mode() -> None:
    with serve(stateless=True) as (url, app), httpx.Client() as client:
        answer = client.post(url, json=init(), headers=POST_HEADERS)
        assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
        # Nothing can reach a stateless client unasked (no GET stream), so list changes are not offered.
        assert messages_of(answer)[0]["result"]["capabilities"]["prompts"] == {}
        # No session: every request stands alone, in the revision its header names.
        for version in ("2025-11-25", "2025-06-18"):
            got = client.post(url, json=rpc("prompts/list"), headers={**POST_HEADERS, "mcp-protocol-version": version})
            [listed] = messages_of(got)
            assert "title" not in json.dumps(listed) or version >= "2025-06-18"
            assert {p["name"] for p in listed["result"]["prompts"]} == {"greet", "slow_greet"}
        # Missing header: 2025-03-26, which takes batches.
        batch = client.post(url, json=[rpc("ping", id=1), rpc("ping", id=2)], headers=POST_HEADERS)
        assert sorted(m["id"] for m in messages_of(batch)[0]) == [1, 2]
        refused = client.post(url, json=rpc("ping"), headers={**POST_HEADERS, "mcp-protocol-version": "2099-01-01"})
        assert refused.status_code == 400
        headers = {**POST_HEADERS, "mcp-protocol-version": "2025-11-25"}
        assert client.get(url, headers={**headers, "accept": "text/event-stream"}).status_code == 405
        assert client.delete(url, headers=headers).status_code == 405
        # A session id from elsewhere is no reason to refuse: any replica answers any request.
        assert client.post(url, json=rpc("ping"), headers={**headers, "mcp-session-id": "x"}).status_code == 200
        assert not sessions(app.server) and not app.table.streamable


def _python_prompt(server: PromptServer, name: str) -> Any:
    from promptdeck import Prompt

    source = PromptServer("scratch")

    @source.prompt(name=name, description="added while serving")
    def extra() -> str:
        return "extra"

    prompt: Prompt = source.catalog.require(name).parsed()
    return prompt
