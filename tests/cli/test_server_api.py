"""cli/server_api.py against a hostile server (a real HTTP server in a thread): an answer past the bound is refused
unread, a redirect is not followed (the bearer token never reaches where it points), a refusal's reason is said."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from promptdeck.cli import server_api

#: the Authorization header each request to the second server carried
SEEN: list[str | None] = []


class Hostile(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path.startswith("/api/big"):
            self._answer(200, b"[" + b"1," * 600_000 + b"1]")
        elif self.path.startswith("/api/redirect"):
            self.send_response(302)
            self.send_header("location", f"http://127.0.0.1:{OTHER[0]}/api/ok")
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path.startswith("/api/refused"):
            self._answer(403, b'{"error": "needs the scope prompts:hr"}')
        elif self.path.startswith("/api/ok"):
            SEEN.append(self.headers.get("authorization"))
            self._answer(200, b'{"ok": true}')
        else:
            self._answer(200, b"not json")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


OTHER = [0]


@pytest.fixture
def servers() -> Iterator[str]:
    first, second = ThreadingHTTPServer(("127.0.0.1", 0), Hostile), ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    OTHER[0] = second.server_address[1]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (first, second)]
    for thread in threads:
        thread.start()
    SEEN.clear()
    try:
        yield f"http://127.0.0.1:{first.server_address[1]}/mcp"
    finally:
        for server in (first, second):
            server.shutdown()
            server.server_close()


def failure(capsys: pytest.CaptureFixture[str], call: object) -> str:
    with pytest.raises(SystemExit):
        call()  # type: ignore[operator]
    return capsys.readouterr().err


def test_a_good_answer_is_read_and_the_token_sent(servers: str) -> None:
    assert server_api.get(servers, "/api/ok", {"since": "7d"}, "t0ken-0123456789", 1000) == {"ok": True}
    assert SEEN == ["Bearer t0ken-0123456789"]


def test_an_answer_past_the_bound_is_refused(servers: str, capsys: pytest.CaptureFixture[str]) -> None:
    said = failure(capsys, lambda: server_api.get(servers, "/api/big", {}, None, 100_000))
    assert "answered more than the 100000 bytes /api/big may take" in said


def test_a_redirect_is_not_followed_and_the_token_goes_nowhere_else(servers: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    said = failure(capsys, lambda: server_api.get(servers, "/api/redirect", {}, "t0ken-0123456789", 1000))
    assert "answered 302, a redirect to" in said and "not followed" in said
    assert SEEN == []


def test_a_refusal_and_what_is_not_json_are_said(servers: str, capsys: pytest.CaptureFixture[str]) -> None:
    said = failure(capsys, lambda: server_api.get(servers, "/api/refused", {}, None, 1000))
    assert "answered 403: needs the scope prompts:hr" in said
    said = failure(capsys, lambda: server_api.get(servers, "/api/other", {}, None, 1000))
    assert "answered /api/other with what is not JSON" in said
