"""Issue 28, item 7: a rate limit counts JSON-RPC requests, not HTTP requests.

With ``--rate-limit 5`` a 2025-03-26 batch of 100 ``prompts/get`` or ``tools/call`` used to cost one token:
about 100 times the limit. Now each request of a batch counts. The first is paid for by the HTTP request
itself (refused whole with 429 and ``Retry-After`` when the bucket is empty, as any request is); each
further one takes a token of its own, and those past the limit are answered with the rate-limit error
(-32600, ``data.retryAfter``) under their own id instead of running, so the client knows which to send
again. Both transports that take 2025-03-26 batches are covered: Streamable HTTP and 2024-11-05 HTTP+SSE.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.http_rpc import init, start_session
from tests.support.http_server import http_server
from tests.support.modern import batch, notification

TOKEN = "alice-token-0123456789abcdef"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "authorization": f"Bearer {TOKEN}"}
LIMIT = 5
#: The params of every request in a batch: both prompts/get and tools/call take a prompt's name and arguments.
HELLO = {"name": "hello", "arguments": {"who": "x"}}


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    library = tmp_path / "library"
    library.mkdir()
    (library / "hello.md").write_text("---\ndescription: Hi\narguments:\n  - name: who\n---\nHello {{ who }}!\n")
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice:{TOKEN}\n")
    log = tmp_path / "server.log"
    with http_server(str(library), "--no-watch", "--json-response", "--tools", "--token-file", str(tokens),
                     "--rate-limit", str(LIMIT), log=log) as endpoint:
        yield endpoint
    assert "Traceback" not in log.read_text()


def check_counted(answers: list[dict[str, Any]], tokens_left: int) -> None:
    """Every request is answered once; only as many ran as the bucket held tokens."""
    assert sorted(item["id"] for item in answers) == list(range(100))
    ran = [item for item in answers if "result" in item]
    refused = [item for item in answers if "error" in item]
    # The bucket refills one token every 12 s: a slow machine may let one more through, never 100.
    assert tokens_left <= len(ran) <= tokens_left + 1, len(ran)
    assert all(item["error"]["code"] == -32600 and item["error"]["message"] == "too many requests; slow down"
               and item["error"]["data"]["retryAfter"] >= 1 for item in refused)
    # The requests in order: the first ones ran, those past the limit did not.
    assert [item["id"] for item in ran] == list(range(len(ran)))


@pytest.mark.parametrize("method", ["prompts/get", "tools/call"])
def test_each_request_of_a_batch_counts_against_the_rate_limit(url: str, method: str) -> None:
    with httpx.Client(timeout=30) as client:
        headers = start_session(client, url, "2025-03-26", headers=HEADERS)
        answer = client.post(url, json=batch(method, 100, HELLO), headers=headers)
        assert answer.status_code == 200  # some of it ran: the answers, not an HTTP refusal
        check_counted(answer.json(), LIMIT - 2)  # initialize and initialized took two tokens
        # The bucket is empty: the next body is refused whole, as any request past the limit is.
        refused = client.post(url, json=batch(method, 100, HELLO), headers=headers)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1
        assert refused.json()["error"]["message"] == "too many requests; slow down"


def test_each_request_of_a_batch_counts_on_the_2024_transport(url: str) -> None:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock, \
            httpx.Client(timeout=30) as client:
        sock.sendall(f"GET /sse HTTP/1.1\r\nhost: {parts.netloc}\r\naccept: text/event-stream\r\n"
                     f"authorization: Bearer {TOKEN}\r\n\r\n".encode())
        events = _events(sock)
        endpoint = next(data for name, data in events if name == "endpoint")
        messages = f"{parts.scheme}://{parts.netloc}{endpoint}"
        assert client.post(messages, json=init("2025-03-26"), headers=HEADERS).status_code == 202
        assert json.loads(next(data for name, data in events if name == "message"))["id"] == 0
        assert client.post(messages, json=notification("notifications/initialized"),
                           headers=HEADERS).status_code == 202
        assert client.post(messages, json=batch("prompts/get", 100, HELLO), headers=HEADERS).status_code == 202
        answers = json.loads(next(data for name, data in events if name == "message"))
        check_counted(answers, LIMIT - 3)  # the GET, initialize and initialized took three tokens


def _events(sock: socket.socket) -> Iterator[tuple[str, str]]:
    """(event name, data) of each SSE event read from ``sock`` (after the response head)."""
    buffer = b""
    head = True
    while True:
        while b"\n\n" not in buffer or (head and b"\r\n\r\n" not in buffer):
            chunk = sock.recv(65536)
            assert chunk, buffer[-200:]
            buffer += chunk
        if head:
            _, buffer = buffer.split(b"\r\n\r\n", 1)
            head = False
            continue
        raw, buffer = buffer.split(b"\n\n", 1)
        # The body is chunked: drop the chunk-size lines, keep the field lines.
        fields = dict(line.split(": ", 1) for line in raw.decode().splitlines() if ": " in line)
        if "data" in fields:
            yield fields.get("event", "message"), fields["data"]
