"""Issue 13, items 6, 7 and 11: batches, sessions and streams per principal, and the requestState store.

Each case is an attack that worked: one request or one principal taking what everyone shares. The
server cases run ``promptdeck serve --http`` as a real process over real sockets.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from promptdeck.protocol.errors import InvalidParams
from promptdeck.server.request_state import RequestStates, request_digest
from tests.support.http_rpc import init, start_session
from tests.support.http_server import http_server
from tests.support.modern import batch, headers_for, listen

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdefgh"}
#: The revision of the sessions these tests open: the one that accepts batches.
BATCHES = "2025-03-26"
IDLE_SECONDS = 1800  # the default session idle time, which Retry-After must reflect
BIG_TEXT = 120_000  # characters in the big prompt: 100 of its answers pass the 8 MiB batch limit


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("limits")
    (root / "hello.md").write_text("---\ndescription: Hi\n---\nHello!\n")
    (root / "big.md").write_text("---\ndescription: Large\n---\n" + ("lorem ipsum " * (BIG_TEXT // 12)) + "\n")
    # The same as a Jinja template: its render runs in a thread, so the batch's outcomes are awaitables.
    (root / "big-jinja.md").write_text("---\ndescription: Large\n---\n{% for _ in range(" + str(BIG_TEXT // 12)
                                       + ") %}lorem ipsum {% endfor %}\n")
    return root


@pytest.fixture
def url(library: Path, tmp_path: Path) -> Iterator[str]:
    """A fresh server for each test: each one fills a cap. Its stderr must stay free of tracebacks and warnings."""
    tokens = tmp_path / "tokens"
    tokens.write_text("".join(f"{name}:{token}\n" for name, token in TOKENS.items()))
    log = tmp_path / "server.log"
    with http_server(str(library), "--no-watch", "--json-response", "--token-file", str(tokens),
                     log=log) as endpoint:
        yield endpoint
    text = log.read_text()
    assert "Traceback" not in text and "Warning" not in text and "ERROR" not in text, text


def auth(who: str) -> dict[str, str]:
    return {**ACCEPT, "authorization": f"Bearer {TOKENS[who]}"}


# -- 6. batches ------------------------------------------------------------------------------------


def test_an_over_long_batch_is_refused_whole_and_the_server_serves_on(url: str) -> None:
    with httpx.Client(timeout=60) as client:
        headers = start_session(client, url, BATCHES, headers=auth("alice"))
        refused = client.post(url, content=json.dumps(batch("prompts/list", 5000)), headers=headers)
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["code"] == -32600 and "at most 100" in error["message"] and "5000" in error["message"]
        # The session and the server go on: a batch of the largest size allowed is answered in full.
        answered = client.post(url, json=batch("prompts/list", 100), headers=headers)
        assert answered.status_code == 200
        assert sorted(item["id"] for item in answered.json()) == list(range(100))
        assert all(len(item["result"]["prompts"]) == 3 for item in answered.json())


@pytest.mark.parametrize("prompt", ["big", "big-jinja"])
def test_a_batch_whose_answers_grow_too_large_is_cut_short_with_errors(url: str, prompt: str) -> None:
    with httpx.Client(timeout=60) as client:
        headers = start_session(client, url, BATCHES, headers=auth("alice"))
        answer = client.post(url, json=batch("prompts/get", 100, {"name": prompt}), headers=headers)
        assert answer.status_code == 200
        assert len(answer.content) < 8 * 1024 * 1024 + 100 * 300  # the limit, plus a short error per request
        items = answer.json()
        assert sorted(item["id"] for item in items) == list(range(100))  # every request is answered once
        results = [item for item in items if "result" in item]
        refused = [item for item in items if "error" in item]
        assert results and refused
        assert all(item["error"]["code"] == -32600 and "8388608 bytes" in item["error"]["message"]
                   for item in refused)
        assert all(len(item["result"]["messages"][0]["content"]["text"]) >= BIG_TEXT - 12 for item in results)
        assert len(results) > 50  # about 69 answers of 121 KB fit in 8 MiB
        ping = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
        assert ping.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


# -- 7. sessions and streams per principal ---------------------------------------------------------


def test_one_principal_filling_its_sessions_leaves_room_for_others_and_retry_after_is_true(url: str) -> None:
    with httpx.Client(timeout=30) as client:
        first = time.monotonic()
        opened: list[str] = []
        refusal = None
        for _ in range(1001):
            answer = client.post(url, json=init(), headers=auth("alice"))
            if answer.status_code != 200:
                refusal = answer
                break
            opened.append(answer.headers["mcp-session-id"])
        assert refusal is not None, "1001 sessions for one principal"
        elapsed = time.monotonic() - first
        assert refusal.status_code == 429, refusal.text
        assert refusal.json()["error"]["code"] == -32600 and "this principal" in refusal.json()["error"]["message"]
        # The first session opened expires IDLE_SECONDS after it was last used: that is when a slot frees.
        retry_after = int(refusal.headers["retry-after"])
        assert IDLE_SECONDS - elapsed - 2 <= retry_after <= IDLE_SECONDS + 1, (retry_after, elapsed)
        # Another principal is not locked out.
        assert client.post(url, json=init(BATCHES), headers=auth("bob")).status_code == 200
        # Ending one of alice's sessions makes room for her at once.
        ended = client.delete(url, headers={**auth("alice"), "mcp-session-id": opened[0]})
        assert ended.status_code == 200
        assert client.post(url, json=init(BATCHES), headers=auth("alice")).status_code == 200


def test_when_all_principals_together_fill_the_total_the_refusal_is_503_with_a_true_retry_after(
        library: Path, tmp_path: Path) -> None:
    names = [f"user{n}" for n in range(11)]
    tokens = tmp_path / "tokens"
    tokens.write_text("".join(f"{name}:{name}-token-0123456789abcdef\n" for name in names))
    with http_server(str(library), "--no-watch", "--json-response", "--token-file", str(tokens)) as url, \
            httpx.Client(timeout=30) as client:
        first = time.monotonic()
        for name in names[:10]:  # ten principals with 100 sessions each: the total of 1,000
            headers = {**ACCEPT, "authorization": f"Bearer {name}-token-0123456789abcdef"}
            statuses = [client.post(url, json=init(BATCHES), headers=headers).status_code for _ in range(101)]
            assert statuses == [200] * 100 + [429], (name, statuses.count(200))
        elapsed = time.monotonic() - first
        last = {**ACCEPT, "authorization": f"Bearer {names[10]}-token-0123456789abcdef"}
        full = client.post(url, json=init(BATCHES), headers=last)
        assert full.status_code == 503, full.text
        assert full.json()["error"]["code"] == -32600
        # The first session of all expires first, IDLE_SECONDS after it was opened.
        retry_after = int(full.headers["retry-after"])
        assert IDLE_SECONDS - elapsed - 2 <= retry_after <= IDLE_SECONDS + 1, (retry_after, elapsed)


def _open_listen(url: str, who: str, request_id: int) -> tuple[socket.socket, int, bytes]:
    """POST subscriptions/listen on a raw socket; (the socket, left open, the status, the head and,
    for a refusal, its body)."""
    parts = urlsplit(url)
    message = listen(request_id, promptsListChanged=True)
    body = json.dumps(message).encode()
    headers = {**headers_for(message), "authorization": f"Bearer {TOKENS[who]}",
               "host": parts.netloc, "content-length": str(len(body))}
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(f"POST {parts.path} HTTP/1.1\r\n".encode()
                 + "".join(f"{k}: {v}\r\n" for k, v in headers.items()).encode() + b"\r\n" + body)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
    if status != 200:  # a refusal has a body of known length, which may come in a write of its own
        length = int(next((line.split(b":", 1)[1] for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), b"0"))
        while len(head.partition(b"\r\n\r\n")[2]) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            head += chunk
    return sock, status, head


def test_one_principal_filling_its_streams_leaves_room_for_others(url: str) -> None:
    with ExitStack() as stack:
        refusal = None
        for n in range(1001):
            sock, status, head = _open_listen(url, "alice", n)
            stack.enter_context(closing(sock))
            if status != 200:
                refusal = (status, head)
                break
        assert refusal is not None, "1001 open subscriptions for one principal"
        status, head = refusal
        assert status == 429, head
        assert b"retry-after" not in head.lower()  # a slot frees when a client closes a stream: no time to tell
        assert b"too many open streams for this principal" in head
        bob, bob_status, _ = _open_listen(url, "bob", 0)
        stack.enter_context(closing(bob))
        assert bob_status == 200


def test_subscriptions_made_inside_sessions_count_against_the_same_caps(url: str) -> None:
    with httpx.Client(timeout=30) as client:
        headers = start_session(client, url, BATCHES, headers=auth("alice"))
        listens = [listen(f"s{n}", promptsListChanged=True) for n in range(100)]
        assert client.post(url, json=listens, headers=headers).status_code == 202  # all 100 open, none answered
        more = client.post(url, json=[listen("one-more", promptsListChanged=True)], headers=headers)
        assert more.status_code == 429, more.text
        assert "too many open streams for this principal" in more.json()["error"]["message"]
        assert client.delete(url, headers=headers).status_code == 200  # ending the session ends them
        bob, bob_status, _ = _open_listen(url, "bob", 0)
        with closing(bob):
            assert bob_status == 200
        again = start_session(client, url, BATCHES, headers=auth("alice"))
        assert client.post(url, json=listens[:1], headers=again).status_code == 202


def _open_sse(url: str, who: str) -> tuple[socket.socket, str]:
    """GET /sse (the 2024-11-05 transport) on a raw socket; (the socket, the messages URL it names)."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.sendall(f"GET /sse HTTP/1.1\r\nhost: {parts.netloc}\r\naccept: text/event-stream\r\n"
                 f"authorization: Bearer {TOKENS[who]}\r\n\r\n".encode())
    opened = b""
    while b"\n\n" not in opened.partition(b"event: endpoint\ndata: ")[2]:
        chunk = sock.recv(65536)
        assert chunk, opened
        opened += chunk
    assert opened.startswith(b"HTTP/1.1 200"), opened
    endpoint = opened.split(b"event: endpoint\ndata: ", 1)[1].split(b"\n", 1)[0].decode()
    return sock, f"{parts.scheme}://{parts.netloc}{endpoint}"


def test_subscriptions_made_on_the_2024_transport_count_against_the_same_caps(url: str) -> None:
    sock, messages = _open_sse(url, "alice")
    with closing(sock), httpx.Client(timeout=30) as client:
        headers = {"content-type": "application/json", "authorization": f"Bearer {TOKENS['alice']}"}
        # The /sse stream itself is one of alice's 100 streams: 99 subscriptions fit beside it.
        statuses = [client.post(messages, json=listen(n, promptsListChanged=True), headers=headers).status_code
                    for n in range(100)]
        assert statuses == [202] * 99 + [429], statuses.count(202)
        bob, bob_status, _ = _open_listen(url, "bob", 0)
        with closing(bob):
            assert bob_status == 200


# -- 11. the requestState replay store -------------------------------------------------------------


def test_one_principal_redeeming_states_in_bulk_does_not_block_anyone_else() -> None:
    states = RequestStates(b"k" * 32)
    digest = request_digest("prompts/get", "brief", {"topic": "caching"})
    start = time.time()
    first = states.issue("mallory", digest, start)
    states.redeem(first, "mallory", digest, start)
    # 100,000 redemptions in 100 s: all of them unexpired (the TTL is 600 s) when bob comes.
    for n in range(1, 100_000):
        now = start + n / 1000
        states.redeem(states.issue("mallory", digest, now), "mallory", digest, now)
    now = start + 100
    bob = states.issue("bob", digest, now)
    states.redeem(bob, "bob", digest, now)  # accepted: the flood cost mallory only
    with pytest.raises(InvalidParams, match="already used"):
        states.redeem(bob, "bob", digest, now)
    # Mallory's first state was forgotten to make room, yet it is still not accepted a second time.
    with pytest.raises(InvalidParams, match="no longer accepted"):
        states.redeem(first, "mallory", digest, now)
    last = states.issue("mallory", digest, now)
    states.redeem(last, "mallory", digest, now)
    with pytest.raises(InvalidParams, match="already used"):
        states.redeem(last, "mallory", digest, now)


def test_a_stdio_batch_answer_is_capped_like_an_http_one(tmp_path: Path) -> None:
    """Twelve renders of 1 MB each in one 2025-03-26 batch over stdio: about 8 MiB are answered, the
    rest get an error each, by id, instead of a 12 MB line."""
    import subprocess
    import sys

    (tmp_path / "mega.md").write_text("{{ 'x' * 1000000 }}\n")
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        [{"jsonrpc": "2.0", "id": n, "method": "prompts/get", "params": {"name": "mega"}} for n in range(1, 13)]]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(tmp_path), "--no-watch"],
                          input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True, text=True,
                          timeout=120)
    out = done.stdout.splitlines()
    assert len(out) == 2, done.stderr[-1000:]
    assert len(out[1]) < 9 * 1024 * 1024
    answers = {m["id"]: m for m in json.loads(out[1])}
    assert sorted(answers) == list(range(1, 13))
    refused = [n for n, m in answers.items() if "error" in m]
    assert refused and refused == list(range(min(refused), 13)), refused  # the tail, each by its id
    assert all("passed 8388608 bytes" in answers[n]["error"]["message"] for n in refused)
    assert all(len(answers[n]["result"]["messages"][0]["content"]["text"]) == 1_000_000
               for n in range(1, min(refused)))
