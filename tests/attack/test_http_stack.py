"""The HTTP stack ``serve --http`` runs (uvicorn, configured by ``server/serving.py``) on real sockets.

What the MCP app does over HTTP is tested in tests/server/http (test_app, test_faults, test_modern),
all served this way; here are the server's own duties and what an attacker tries on them (issue 13,
items 5, 8, 9 and 16): framing, keep-alive and pipelining, malformed and oversized heads, heads sent
slowly or growing in small pieces, Host and protocol-version tricks, failing apps, a port in use,
and serving without the HTTP extra.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import pytest

from promptdeck.extras import install_command
from promptdeck.server.asgi import Receive, Scope, Send
from promptdeck.server.http import runner as served
from tests.support.http_rpc import POST_HEADERS, init, rpc, serve, serving, start_session
from tests.support.http_server import free_port
from tests.support.libraries import EXAMPLES
from tests.support.raw_http import connect, parse_head, read_response, read_until, request_head


def exchange(sock: socket.socket, data: bytes) -> tuple[int, dict[str, str], bytes]:
    sock.sendall(data)
    return read_response(sock)


def test_pipelined_requests_are_answered_in_order_on_one_connection() -> None:
    with serve() as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        bodies = [json.dumps(rpc("ping", id=n)).encode() for n in range(5)]
        with closing(connect(url)) as sock:
            sock.sendall(b"".join(request_head("POST", url, {**headers, "content-length": str(len(body))}) + body
                                  for body in bodies))
            answers = read_responses(sock, len(bodies))
        assert [status for status, _, _ in answers] == [200] * 5
        assert all("date" in found for _, found, _ in answers)
        assert [json.loads(body.split(b"data: ")[-1])["id"] for _, _, body in answers] == [0, 1, 2, 3, 4]


def read_responses(sock: socket.socket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """``count`` responses with a Content-Length each, however the bytes are split into reads."""
    data = b""
    found: list[tuple[int, dict[str, str], bytes]] = []
    while len(found) < count:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep:
            status, headers = parse_head(head)
            length = int(headers["content-length"])
            if len(rest) >= length:
                found.append((status, headers, rest[:length]))
                data = rest[length:]
                continue
        chunk = sock.recv(65536)
        assert chunk, "connection closed before every answer came"
        data += chunk
    return found


def test_http_1_0_gets_its_answer_and_the_connection_closes() -> None:
    with serve() as (url, _), closing(connect(url)) as sock:
        body = json.dumps(init()).encode()
        head = request_head("POST", url, {**POST_HEADERS, "content-length": str(len(body))})
        sock.sendall(head.replace(b"HTTP/1.1", b"HTTP/1.0", 1) + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        assert data.startswith(b"HTTP/1.1 200 OK\r\n") and b"connection: close" in data.lower()
        assert b'"protocolVersion":"2025-11-25"' in data and data.rstrip().endswith(b"}")


def test_malformed_and_oversized_heads_are_refused_and_the_server_goes_on() -> None:
    with serve() as (url, _):
        with closing(connect(url)) as sock:
            status, _, _ = exchange(sock, b"NOT HTTP AT ALL\r\n\r\n")
            assert status == 400
        with closing(connect(url)) as sock:
            huge = request_head("GET", url, {"x-padding": "a" * 70_000})
            status, _, body = exchange(sock, huge)
            assert status == 431 and b"65536" in body
        with closing(connect(url)) as sock:
            status, _, body = exchange(sock, request_head("GET", url.replace("/mcp", "/healthz"), {}))
            assert (status, body) == (200, b"ok")


def test_a_head_growing_in_small_pieces_is_cut_off_as_it_arrives() -> None:
    """A header value sent a little at a time, never ending: refused once the head passes the limit."""
    with serve() as (url, _), closing(connect(url)) as sock:
        sock.sendall(request_head("GET", url, {})[:-2] + b"x-grow: ")
        sent = 0
        try:
            while sent < 4 * served.MAX_HEAD:
                sock.sendall(b"a" * 1024)
                sent += 1024
        except OSError:
            pass  # the server closed the connection: what is expected
        answer = sock.recv(65536)
        # Refused at the limit, while the value was still growing (the rest sat in socket buffers).
        assert answer.startswith(b"HTTP/1.1 431"), answer[:100]


def test_a_head_sent_too_slowly_loses_its_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(served, "HEAD_SECONDS", 0.5)
    with serve() as (url, _), closing(connect(url)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # and never the blank line
        sock.settimeout(30)
        assert sock.recv(10) == b""  # closed by the server, not by this test's timeout
        with closing(connect(url)) as good:
            status, _, body = exchange(good, request_head("GET", url.replace("/mcp", "/healthz"), {}))
            assert (status, body) == (200, b"ok")


@pytest.mark.parametrize("head, status", [
    (b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nhost: evil.example\r\n\r\n", 400),
    (b"GET /healthz HTTP/1.1\r\nhost: evil.example\r\nhost: 127.0.0.1\r\n\r\n", 400),
    (b"GET /healthz HTTP/1.1\r\nx-no-host: 1\r\n\r\n", 400),
    (b"GET /healthz HTTP/2.0\r\nhost: 127.0.0.1\r\n\r\n", 505),
    (b"GET /healthz HTTP/1.1\r\nhost: evil.example\r\n\r\n", 403),
])
def test_host_and_version_tricks(head: bytes, status: int) -> None:
    with serve() as (url, _), closing(connect(url)) as sock:
        sock.sendall(head)
        sock.settimeout(10)
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 %d" % status), answer[:200]


def test_expect_continue_gets_an_interim_answer_before_the_body() -> None:
    with serve() as (url, _), closing(connect(url)) as sock:
        body = json.dumps(init()).encode()
        sock.sendall(request_head("POST", url, {**POST_HEADERS, "content-length": str(len(body)),
                                                "expect": "100-continue"}))
        assert read_until(sock, b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        status, headers, answer = read_response(sock)
        assert status == 200 and b"2025-11-25" in answer


async def failing_app(scope: Scope, receive: Receive, send: Send) -> None:
    """An ASGI app that fails in every way a server must survive, chosen by the path."""
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/raise":
        raise RuntimeError("boom")
    if path == "/nothing":
        return
    if path == "/half":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"part", "more_body": True})
        raise RuntimeError("died mid-answer")
    if path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        for piece in (b"one ", b"two ", b"", b"three"):
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    body = path.encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


def test_a_failing_app_gets_a_500_or_a_cut_connection_and_the_server_goes_on() -> None:
    with serving(failing_app) as port, httpx.Client() as client:
        base = f"http://127.0.0.1:{port}"
        raised = client.get(base + "/raise")
        assert raised.status_code == 500
        assert client.get(base + "/nothing").status_code == 500
        try:
            client.get(base + "/half")
            raise AssertionError("a response the app never finished must not look complete")
        except httpx.RemoteProtocolError:
            pass
        streamed = client.get(base + "/stream")
        assert streamed.text == "one two three" and streamed.headers["transfer-encoding"] == "chunked"
        assert client.get(base + "/fine").text == "/fine"


def test_idle_keep_alive_connections_are_closed() -> None:
    with serving(failing_app, timeout_keep_alive=0.3) as port, \
            closing(connect(f"http://127.0.0.1:{port}/")) as sock:
        status, _, _ = exchange(sock, request_head("GET", f"http://127.0.0.1:{port}/a", {}))
        assert status == 200
        sock.settimeout(30)
        assert sock.recv(10) == b""


def test_many_slow_uploads_leave_room_for_good_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 clients that open a POST and trickle its body; a good request is still answered."""
    with serve(body_seconds=1.0) as (url, _), httpx.Client() as client:
        headers = start_session(client, url)
        body = json.dumps(rpc("ping", id=7)).encode()
        slow = []
        for _ in range(200):
            sock = connect(url)
            sock.sendall(request_head("POST", url, {**headers, "content-length": str(len(body) + 1000)}) + b"{")
            slow.append(sock)
        try:
            good = client.post(url, json=rpc("ping", id=8), headers=headers, timeout=30)
            assert good.status_code == 200 and '"id":8' in good.text
            # The slow ones are answered 408 once their body deadline passes, not left open.
            slow[0].settimeout(30)
            status, _, _ = read_response(slow[0])
            assert status == 408
        finally:
            for sock in slow:
                sock.close()


def test_a_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--http", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr == f"promptdeck: cannot listen on 127.0.0.1:{port}: the port is already in use\n"


def test_serve_http_without_the_http_extra_says_so_before_serving(tmp_path: Path) -> None:
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass _Gone:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('uvicorn', 'httptools'):\n"
        "            raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, _Gone())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--http", str(free_port())],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"promptdeck: serving over HTTP needs the http extra: {install_command('http')}"]


def test_tls_with_a_certificate_and_key(tmp_path: Path) -> None:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    port = free_port()
    trust = ssl.create_default_context(cafile=str(tmp_path / "cert.pem"))
    tls = ["--tls-cert", str(tmp_path / "cert.pem"), "--tls-key", str(tmp_path / "key.pem")]
    proc = subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-watch", "--http",
                             str(port), *tls, "--stateless", "--json-response"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = httpx.get(f"https://127.0.0.1:{port}/healthz", verify=trust, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "the https server did not start"
                time.sleep(0.1)
        assert health.status_code == 200
        listed = httpx.post(f"https://127.0.0.1:{port}/mcp", json=rpc("prompts/list"), timeout=10,
                            verify=trust,
                            headers={**POST_HEADERS, "mcp-protocol-version": "2025-06-18"}).json()
        assert len(listed["result"]["prompts"]) >= 10
        with pytest.raises(httpx.TransportError):  # plain http to a TLS port is no answer at all
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert b"serving" in stderr and b"https://127.0.0.1" in stderr


@pytest.mark.parametrize("trusted", [False, True])
def test_forwarded_addresses_count_only_from_a_trusted_proxy(trusted: bool) -> None:
    """Rate limits key on the client's address; X-Forwarded-For may choose it only via a trusted proxy."""
    from tests.support.http_server import http_server

    options = ["--no-watch", "--stateless", "--json-response", "--rate-limit", "2"]
    if trusted:
        options += ["--trusted-proxy", "127.0.0.1"]
    with http_server(str(EXAMPLES), *options) as url:
        statuses = [httpx.post(url, json=rpc("ping"), timeout=10,
                               headers={**POST_HEADERS, "mcp-protocol-version": "2025-06-18",
                                        "x-forwarded-for": f"10.0.0.{n}"}).status_code for n in range(4)]
    # Behind a trusted proxy each forwarded client has its own bucket; otherwise the header is ignored
    # and the four requests share this connection's bucket of two.
    assert statuses == ([200] * 4 if trusted else [200, 200, 429, 429])


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry))
    return found


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_workers_each_listen_and_share_the_connections() -> None:
    refused = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--http",
                              str(free_port()), "--workers", "2"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--workers needs --stateless" in refused.stderr

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-watch", "--http",
                             str(port), "--workers", "2", "--stateless", "--json-response"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while len(_children(proc.pid)) < 2 or not _answers(url):
            assert proc.poll() is None and time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.1)
        workers = _children(proc.pid)
        before = {pid: _cpu_ticks(pid) for pid in workers}
        body = rpc("prompts/get", {"name": "code-review", "arguments": {"code": "x = 1\n" * 200}})
        # A fresh connection each time (the server closes it): the kernel picks a worker per connection. Sent
        # until each worker has served its share, at most 300: one worker that never accepts still fails.
        worked = dict.fromkeys(workers, 0)
        with httpx.Client(timeout=10) as client:
            for _ in range(300):
                answer = client.post(url + "/mcp", json=body, headers={
                    **POST_HEADERS, "mcp-protocol-version": "2025-06-18", "connection": "close"})
                assert answer.status_code == 200
                worked = {pid: _cpu_ticks(pid) - before[pid] for pid in workers}
                if all(ticks >= 3 for ticks in worked.values()):
                    break
        assert all(ticks >= 3 for ticks in worked.values()), worked  # each worker served its share
    finally:
        proc.terminate()
        proc.wait(30)
    assert not any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text()
                   for pid in workers), "a worker outlived the server"


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def serve_process(*options: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``promptdeck serve EXAMPLES --no-watch --http PORT *options`` in a process, once it answers /healthz."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-watch", "--http",
                             str(port), *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not _answers(url):
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(30)


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_client_that_pipelines_and_never_reads_is_held_back() -> None:
    """Item 5: answers wait for the socket to drain and pipelined requests wait for their turn, so a
    client that only sends finds its sends blocking, while the server's memory stays where it was."""
    with serve_process("--stateless", "--json-response") as (proc, url):
        before = _rss_bytes(proc.pid)
        body = json.dumps(rpc("prompts/list")).encode()
        one = request_head("POST", url + "/mcp", {**POST_HEADERS, "mcp-protocol-version": "2025-06-18",
                                                   "content-length": str(len(body))}) + body
        batch = one * 1000
        sent = 0
        with closing(socket.socket()) as sock:
            # A small receive buffer, set before connecting so it holds: the answers back up at once.
            # A large send buffer, so the server always finds a full read of requests waiting.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 * 1024 * 1024)
            sock.connect(("127.0.0.1", int(url.rpartition(":")[2])))
            sock.settimeout(5)
            try:
                while sent < 300_000:  # about 100 MB of requests, and far more of answers
                    sock.sendall(batch)
                    sent += 1000
            except TimeoutError:
                pass  # the server stopped reading: back-pressure reached the sender
            grown = _rss_bytes(proc.pid) - before
            assert sent < 300_000, "300,000 pipelined requests went in without the server pausing"
            assert grown < 64 * 1024 * 1024, f"the server grew by {grown} bytes after {sent} requests"
        assert _answers(url)  # and it serves on


def test_the_caps_are_set_from_the_command_line() -> None:
    """Connection, session and body caps are options of serve --http, refused without --http."""
    alone = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--max-body", "2048",
                            "--session-idle", "60"], capture_output=True, text=True, timeout=60)
    assert alone.returncode == 2
    assert "--session-idle, --max-body: HTTP options, which go with --http" in alone.stderr
    upside_down = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--http",
                                  str(free_port()), "--max-sessions", "2", "3"], capture_output=True, text=True,
                                 timeout=60)
    assert upside_down.returncode == 2 and "cannot exceed the total" in upside_down.stderr

    with serve_process("--max-sessions", "5", "2", "--max-body", "2048", "--max-connections", "50") as (_, url), \
            httpx.Client(base_url=url, headers=POST_HEADERS, timeout=10) as client:
        opened = [client.post("/mcp", json=init()).status_code for _ in range(3)]
        assert opened == [200, 200, 429]  # two sessions for this principal, then its share is used
        big = client.post("/mcp", json=rpc("ping", {"pad": "x" * 4096}), headers={"mcp-protocol-version": "2025-11-25"})
        assert big.status_code == 413
