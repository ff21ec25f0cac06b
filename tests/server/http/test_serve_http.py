"""Streamable HTTP, spoken with raw requests to a real uvicorn process."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import http_rpc
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES, copy_examples
from tests.support.modern import sse_messages

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        yield endpoint


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


def test_session_lifecycle_and_status_codes(url: str, client: httpx.Client) -> None:
    headers = http_rpc.start_session(client, url, answered_as="text/event-stream")
    listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}, headers=headers)
    [message] = sse_messages(listed.text)
    assert message["id"] == 1 and len(message["result"]["prompts"]) == 11
    no_id = {k: v for k, v in headers.items() if k != "mcp-session-id"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert httpx.post(url, json=ping, headers=no_id).status_code == 400
    assert httpx.post(url, json=ping, headers={**headers, "mcp-session-id": "nope"}).status_code == 404
    assert httpx.post(url, json=ping, headers={**headers, "mcp-protocol-version": "1999-01-01"}).status_code == 400
    # The conformance suite sends an older supported revision on a newer session: accepted.
    assert httpx.post(url, json=ping, headers={**headers, "mcp-protocol-version": "2025-03-26"}).status_code == 200
    assert httpx.post(url, content=b"{nope", headers=headers).status_code == 400
    assert httpx.post(url, json=ping, headers={**headers, "content-type": "text/plain"}).status_code == 415
    assert httpx.post(url, json=ping, headers={**headers, "accept": "application/json"}).status_code == 406
    assert httpx.put(url, headers=headers).status_code == 405
    assert httpx.delete(url, headers=headers).status_code == 200
    assert httpx.post(url, json=ping, headers=headers).status_code == 404


def test_errors_keep_json_rpc_codes(url: str, client: httpx.Client) -> None:
    headers = http_rpc.start_session(client, url, answered_as="text/event-stream")
    get = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "code-review"}}
    [message] = sse_messages(httpx.post(url, json=get, headers=headers).text)
    assert message["error"]["code"] == -32602 and "'code'" in message["error"]["message"]


def test_oversized_body_is_413(url: str, client: httpx.Client) -> None:
    headers = http_rpc.start_session(client, url, answered_as="text/event-stream")
    big = {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"pad": "x" * (5 * 1024 * 1024)}}
    assert httpx.post(url, json=big, headers=headers).status_code == 413


def test_dns_rebinding_is_refused(url: str) -> None:
    evil = {**ACCEPT, "origin": "http://evil.example.com"}
    assert httpx.post(url, json=http_rpc.init(), headers=evil).status_code == 403
    assert httpx.post(url, json=http_rpc.init(), headers={**ACCEPT, "host": "evil.example.com"}).status_code == 403
    ok = httpx.post(url, json=http_rpc.init(), headers={**ACCEPT, "origin": "http://localhost:6274"})
    assert ok.status_code == 200


def test_get_stream_carries_list_changed_and_replays(tmp_path: Path, client: httpx.Client) -> None:
    library = copy_examples(tmp_path / "lib")
    with http_server(str(library)) as url:
        headers = http_rpc.start_session(client, url, answered_as="text/event-stream")
        get_headers = {**headers, "accept": "text/event-stream"}
        seen: list[str] = []
        opened = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", url, headers=get_headers, timeout=20) as response:
                assert response.status_code == 200
                opened.set()
                for line in response.iter_lines():
                    seen.append(line)
                    if "list_changed" in line:
                        return

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert opened.wait(10)
        (library / "fresh.md").write_text("Hello\n")
        thread.join(15)
        assert any("notifications/prompts/list_changed" in line for line in seen)
        ids = [line[4:] for line in seen if line.startswith("id: ")]
        assert ids, seen
        # A new GET with Last-Event-ID from before the change replays it.
        with httpx.stream("GET", url, headers={**get_headers, "last-event-id": "0"}, timeout=20) as response:
            for line in response.iter_lines():
                if "list_changed" in line:
                    break
            else:
                pytest.fail("no replay")


def test_stateless_mode_keeps_no_sessions() -> None:
    with http_server(str(EXAMPLES), "--stateless", "--json-response", "--no-watch") as url:
        init = httpx.post(url, json=http_rpc.init(), headers=ACCEPT)
        assert init.status_code == 200 and "mcp-session-id" not in init.headers
        assert init.headers["content-type"] == "application/json"
        headers = {**ACCEPT, "mcp-protocol-version": "2025-06-18"}
        got = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                                    "params": {"name": "summarize", "arguments": {"text": "hi"}}}, headers=headers)
        assert got.json()["result"]["messages"]
        assert httpx.get(url, headers={**headers, "accept": "text/event-stream"}).status_code == 405
        assert httpx.delete(url, headers=headers).status_code == 405


def test_bearer_tokens_rate_limit_metrics(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:alice-secret-token-0001\nbob:bob-secret-token-000002\n")
    with http_server(str(EXAMPLES), "--no-watch", "--token-file", str(tokens), "--rate-limit", "5") as url:
        refused = httpx.post(url, json=http_rpc.init(), headers=ACCEPT)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        wrong = httpx.post(url, json=http_rpc.init(), headers={**ACCEPT, "authorization": "Bearer nope-nope-nope-nope"})
        assert wrong.status_code == 401
        alice = {**ACCEPT, "authorization": "Bearer alice-secret-token-0001"}
        init = httpx.post(url, json=http_rpc.init(), headers=alice)
        assert init.status_code == 200
        session = {**alice, "mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        get = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "summarize",
                                                                          "arguments": {"text": "x"}}}
        assert httpx.post(url, json=get, headers=session).status_code == 200
        # A session belongs to its principal: bob cannot use alice's id.
        bob = {**session, "authorization": "Bearer bob-secret-token-000002"}
        assert httpx.post(url, json=get, headers=bob).status_code == 404
        metrics = httpx.get(url.replace("/mcp", "/metrics"), headers=alice).text
        assert 'promptdeck_requests_total{method="prompts/get",outcome="ok"} 1' in metrics
        codes = [httpx.post(url, json=get, headers=session).status_code for _ in range(40)]
        assert 429 in codes
        limited = httpx.post(url, json=get, headers=session)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
