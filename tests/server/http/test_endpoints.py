"""Several endpoints on one port (server/http/endpoints.py): routing by exact path, the first endpoint the
default for every other path, sessions per endpoint, one stream quota for all, and the lifespan of each."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import httpx
import pytest

from promptdeck.server.app import PromptServer
from promptdeck.server.http.endpoints import Endpoints
from tests.support.http_rpc import succeeded

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def server_with(name: str) -> PromptServer:
    server = PromptServer(name)

    @server.prompt(name)
    def only() -> str:
        return name

    return server


def endpoints() -> Endpoints:
    return Endpoints.create({"/mcp": server_with("production"), "/mcp/staging": server_with("staging")},
                            watch=False)


async def call(app: Endpoints, method: str, path: str, **kwargs: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.request(method, path, **kwargs)


def run(app: Endpoints, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return asyncio.run(call(app, method, path, **kwargs))


def test_at_least_one_endpoint() -> None:
    with pytest.raises(ValueError, match="at least one endpoint"):
        Endpoints({})


def test_each_endpoint_has_its_own_server_and_sessions_but_one_stream_quota() -> None:
    app = endpoints()
    default, staging = app.apps["/mcp"], app.apps["/mcp/staging"]
    assert app.default is default
    assert default.server.name == "production" and staging.server.name == "staging"
    assert default.table is not staging.table
    assert default.table.streams is staging.table.streams  # one budget of open streams for the port


def test_a_stream_open_at_one_endpoint_counts_at_every_other() -> None:
    app = Endpoints.create({"/mcp": PromptServer(), "/mcp/staging": PromptServer(), "/mcp/dev": PromptServer()},
                           watch=False, max_streams=2, max_streams_per_principal=2)
    default, staging, dev = app.apps.values()
    with default.table.streams.hold("alice"):
        assert staging.table.stream_refusal("bob") is None
        with dev.table.streams.hold("bob"):
            refusal = staging.table.stream_refusal("carol")
            assert refusal is not None and refusal.status == 503
            assert "at most 2" in refusal.message
    assert staging.table.stream_refusal("carol") is None


def test_only_the_default_speaks_2024_11_05_sse_and_serves_the_page() -> None:
    app = Endpoints.create({"/a": PromptServer(), "/b": PromptServer(), "/c": PromptServer()},
                           watch=False, legacy_sse=True, ui=True)
    assert [a.options.legacy_sse for a in app.apps.values()] == [True, False, False]
    assert [a.ui is not None for a in app.apps.values()] == [True, False, False]


@pytest.mark.parametrize(("path", "name"), [("/mcp", "production"), ("/mcp/staging", "staging")])
def test_a_request_reaches_the_endpoint_its_path_names(path: str, name: str) -> None:
    async def go() -> dict[str, Any]:
        app = endpoints()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            init = await client.post(path, json=INIT, headers=HEADERS)
            assert init.status_code == 200
            session = {"mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            listed = await client.post(path, json={"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
                                       headers={**HEADERS, **session})
            assert succeeded(init)["result"]["serverInfo"]["name"] == name
            return succeeded(listed)

    assert [p["name"] for p in asyncio.run(go())["result"]["prompts"]] == [name]


@pytest.mark.parametrize("path", ["/mcp/staging/", "/mcp/stagingx", "/MCP/staging", "/mcp/staging/x", "/other"])
def test_a_path_that_is_no_endpoint_reaches_the_default_and_its_404(path: str) -> None:
    response = run(endpoints(), "POST", path, json=INIT, headers=HEADERS)
    assert response.status_code == 404


def test_the_default_answers_the_ports_own_paths() -> None:
    response = run(endpoints(), "GET", "/healthz")
    assert (response.status_code, response.text) == (200, "ok")


def test_a_session_of_one_endpoint_is_unknown_at_another() -> None:
    async def go() -> int:
        app = endpoints()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            init = await client.post("/mcp", json=INIT, headers=HEADERS)
            session = {"mcp-session-id": init.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            other = await client.post("/mcp/staging", json={"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
                                      headers={**HEADERS, **session})
            return other.status_code

    assert asyncio.run(go()) == 404


def test_lifespan_starts_and_stops_every_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    app = endpoints()
    calls: list[str] = []
    for path, one in app.apps.items():
        async def shutdown(path: str = path) -> None:
            await asyncio.sleep(0)
            calls.append(f"stop {path}")

        monkeypatch.setattr(one, "startup", lambda path=path: calls.append(f"start {path}"))
        monkeypatch.setattr(one, "shutdown", shutdown)
        monkeypatch.setattr(one, "end_streams", lambda path=path: calls.append(f"end {path}"))

    async def lifespan() -> list[str]:
        incoming: asyncio.Queue[MutableMapping[str, Any]] = asyncio.Queue()
        sent: list[str] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message["type"])

        await incoming.put({"type": "lifespan.startup"})
        await incoming.put({"type": "lifespan.shutdown"})
        await app({"type": "lifespan"}, incoming.get, send)
        return sent

    assert asyncio.run(lifespan()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert calls == ["start /mcp", "start /mcp/staging", "stop /mcp", "stop /mcp/staging"]
    app.end_streams()
    assert calls[-2:] == ["end /mcp", "end /mcp/staging"]
