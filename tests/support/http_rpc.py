"""JSON-RPC over Streamable HTTP for the tests: the messages (built as tests/support/modern.py builds them),
POST answers as JSON or SSE, a session's handshake, a GET stream read on a thread, and an app served as
``serve --http`` serves it, on a thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

from promptdeck import PromptServer, RenderContext
from promptdeck.server.http import runner as served
from promptdeck.server.http.app import create_app
from tests.support.modern import check_legacy, legacy, notification

BOTH = "application/json, text/event-stream"
POST_HEADERS = {"accept": BOTH, "content-type": "application/json"}
CLIENT = {"name": "t", "version": "1"}
#: How long a server on a thread, or a GET stream, may take to start: only a guard against a hang, so
#: generous enough for a machine running two suites with several workers each.
STARTUP = 60


def make_server() -> PromptServer:
    server = PromptServer("http-test")

    @server.prompt(description="Greets someone")
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.prompt(description="Reports progress while it renders")
    def slow_greet(name: str, ctx: RenderContext) -> str:
        ctx.progress(1, 2, "half way")
        ctx.progress(2, 2, "done")
        return f"Hello slowly, {name}"

    return server


@contextmanager
def serve(server: PromptServer | None = None, **options: Any) -> Iterator[tuple[str, Any]]:
    """(endpoint URL, app) for an app served as ``serve --http`` serves it (uvicorn, configured by
    ``server/serving.py``) on a thread and an ephemeral loopback port; stopped on exit."""
    app = create_app(server or make_server(), watch=False, **options)
    with serving(app) as port:
        yield f"http://127.0.0.1:{port}/mcp", app


@contextmanager
def serving(app: Any, **config: Any) -> Iterator[int]:
    """Any ASGI app under promptdeck's uvicorn configuration on a thread; yields the port."""
    runner = served.server(app, "127.0.0.1", 0, **{"timeout_graceful_shutdown": 1, **config})
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP
    while not runner.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield runner.servers[0].sockets[0].getsockname()[1]
    finally:
        runner.should_exit = True
        thread.join(30)
        assert not thread.is_alive(), "the HTTP server did not stop"


serve_uvicorn = serve


def rpc(method: str, params: dict[str, Any] | None = None, id: int | str | None = 1) -> dict[str, Any]:
    """A legacy request (a notification when ``id`` is None)."""
    return notification(method, params) if id is None else legacy(id, method, params)


def init(revision: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return rpc("initialize", {"protocolVersion": revision, "capabilities": capabilities or {}, "clientInfo": CLIENT},
               id=0)


def sse_events(text: str) -> list[dict[str, str]]:
    """Parse an SSE body into events: {"id", "event", "data", "retry"} as present (comments dropped)."""
    events: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value
        if fields:
            events.append(fields)
    return events


def messages_of(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages of a POST answer, JSON or SSE."""
    if response.headers["content-type"].startswith("application/json"):
        return [response.json()]
    return [json.loads(e["data"]) for e in sse_events(response.text) if e.get("data", "").strip()]


def succeeded(response: httpx.Response) -> dict[str, Any]:
    """The one message of a POST answer (JSON or SSE) that must be a success: HTTP 200 and a ``result``."""
    assert response.status_code == 200, response.text
    [message] = messages_of(response)
    assert "result" in message, message
    answer: dict[str, Any] = message
    return answer


def start_session(client: httpx.Client, url: str, revision: str = "2025-11-25",
                  capabilities: dict[str, Any] | None = None, *,
                  headers: Mapping[str, str] | None = None, answered_as: str | None = None) -> dict[str, str]:
    """Initialize, send initialized, and return the headers every later request carries.

    ``headers`` (an ``authorization``, say) go on every request, these two and the later ones; ``answered_as``
    is the content type the initialize answer must have. The answer is checked against its revision; the session
    id must be one a client cannot guess (32 characters or more) and, as the spec requires, visible ASCII.
    """
    sent = {**POST_HEADERS, **(headers or {})}
    answer = client.post(url, json=init(revision, capabilities), headers=sent)
    assert answer.status_code == 200, answer.text
    if answered_as is not None:
        assert answer.headers["content-type"] == answered_as, answer.headers
    [result] = messages_of(answer)
    check_legacy(result, revision, "initialize")
    assert result["result"]["protocolVersion"] == revision
    session = answer.headers["mcp-session-id"]
    assert len(session) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in session), session
    headers = {**sent, "mcp-session-id": session, "mcp-protocol-version": revision}
    note = client.post(url, json=rpc("notifications/initialized", id=None), headers=headers)
    assert note.status_code == 202 and note.content == b"", note
    return headers


def assert_error_body(response: httpx.Response, code: int | None = None) -> None:
    """An HTTP error whose body, when there is one, is an id-less JSON-RPC error."""
    if not response.content:
        return
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body.get("id") is None and "message" in body["error"]
    if code is not None:
        assert body["error"]["code"] == code


class _Listener:
    """Reads a GET stream on a thread, collecting its events."""

    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str]) -> None:
        self.events: list[dict[str, str]] = []
        self.status = 0
        self.opened = threading.Event()
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._run, args=(client, url, headers), daemon=True)
        self.thread.start()
        assert self.opened.wait(STARTUP)

    def _run(self, client: httpx.Client, url: str, headers: dict[str, str]) -> None:
        try:
            with client.stream("GET", url, headers=headers, timeout=10) as response:
                self.status = response.status_code
                self.opened.set()
                buffer = ""
                for text in response.iter_text():
                    buffer += text
                    *complete, buffer = buffer.replace("\r\n", "\n").split("\n\n")
                    with self.changed:
                        self.events.extend(sse_events("\n\n".join(complete)))
                        self.changed.notify_all()
        except httpx.TransportError:
            pass  # the test is over and closed the client under us
        finally:
            self.opened.set()

    def wait_for(self, count: int, timeout: float = 30) -> list[dict[str, str]]:
        """The events with data, once there are ``count`` of them."""
        with self.changed:
            self.changed.wait_for(lambda: len(self.data()) >= count, timeout)
            return self.data()

    def data(self) -> list[dict[str, str]]:
        return [e for e in self.events if e.get("data", "").strip()]


def post_legacy(url: str, method: str, params: Mapping[str, Any] | None = None, *, revision: str = "2025-11-25",
                headers: Mapping[str, str] | None = None, timeout: float = 10) -> httpx.Response:
    """One legacy request (id 1) POSTed outside any session, as ``revision`` sends it, with ``headers`` added."""
    sent = {"accept": BOTH, "mcp-protocol-version": revision, **(headers or {})}
    return httpx.post(url, json=legacy(1, method, params), headers=sent, timeout=timeout)


def post_as(url: str, token: str | None, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
    """One stateless 2025-11-25 request (id 1) with ``token`` as its bearer token (none if None)."""
    return post_legacy(url, method, params, headers={} if token is None else {"authorization": f"Bearer {token}"})
