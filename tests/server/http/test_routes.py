"""The route table (server/http/routes.py): every route's guards as declared, a route that declares none
refused, the first matching route serving a path, and the guards run in order before the method check."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from promptdeck.protocol.errors import HttpError
from promptdeck.server.app import PromptServer
from promptdeck.server.asgi import Receive, Scope, Send
from promptdeck.server.http.app import StreamableHttpApp, create_app
from promptdeck.server.http.routes import AUTH, HOST, LIMIT, Checks, Errors, Guard, Route, Router, host_allowed
from promptdeck.server.security.principals import Principal
from promptdeck.server.security.ratelimit import RateLimiter
from promptdeck.server.security.tokens import BearerTokens
from promptdeck.server.web.signin import SignIn

TOKEN = "route-token-0123456789"
PUBLIC, GUARDED, LIMITED = {HOST}, {HOST, AUTH}, {HOST, AUTH, LIMIT}
#: Every route the app can have, and the guards it must declare. A route added to the table fails
#: ``test_every_route_declares_its_guards`` until it is added here, with its guards, on purpose.
EXPECTED: dict[str, set[Guard]] = {
    "health": PUBLIC,
    "signin": PUBLIC,  # it hands out the token: nobody has one yet
    "ui": PUBLIC,  # its pages hold no data
    "oauth metadata": PUBLIC,  # how a client learns where to get a token
    "store api": LIMITED,
    "graph api": LIMITED,
    "usage api": LIMITED,
    "metrics": GUARDED,  # the prompt count is the asker's; a scraper is not rate-limited
    "mcp": LIMITED,
    "sse": LIMITED,
    "messages": LIMITED,
}


def server() -> PromptServer:
    return PromptServer("routes-test")  # no prompt: the routes are what is tested


def full_app(**options: Any) -> StreamableHttpApp:
    """An app with every route it can have (the store API needs a store, so a stand-in holds its place)."""
    app = create_app(server(), auth=BearerTokens([("alice", TOKEN)]), metadata=("/meta", b"{}"),
                     signin=SignIn("x" * 32), watch=False, ui=True, rate_limit=600, **options)
    app.store_api = app.graph_api  # type: ignore[assignment]  # only its place in the table is read
    return app


@pytest.mark.parametrize("stateless", [False, True])
def test_every_route_declares_its_guards(stateless: bool) -> None:
    routes = full_app(stateless=stateless).routes()
    declared = {route.name: set(route.guards) for route in routes}
    # Stateless, there is no 2024-11-05 transport (it needs a session that lives as long as its stream).
    assert declared == {name: guards for name, guards in EXPECTED.items()
                        if not (stateless and name in ("sse", "messages"))}
    assert len(declared) == len(routes), "two routes with one name"
    assert {route.name for route in routes if route.errors is Errors.JSON} == {"signin", "store api", "graph api",
                                                                                     "usage api"}


async def _nothing(scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
    raise AssertionError("not served")


def test_a_route_without_its_guards_is_refused() -> None:
    with pytest.raises(TypeError, match="guards"):
        Route("new", _nothing, paths=("/new",))  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="'new' must declare the Host and Origin guard"):
        Route("new", _nothing, frozenset(), paths=("/new",))
    with pytest.raises(ValueError, match="'new' must declare the Host and Origin guard"):
        Route("new", _nothing, frozenset({AUTH, LIMIT}), paths=("/new",))
    with pytest.raises(ValueError, match="'new': the rate limit counts by principal, so it needs AUTH"):
        Route("new", _nothing, frozenset({HOST, LIMIT}), paths=("/new",))


# -- the router, alone --------------------------------------------------------------------------


def scope(path: str = "/x", method: str = "GET", headers: list[tuple[bytes, bytes]] | None = None) -> Scope:
    return {"type": "http", "http_version": "1.1", "method": method, "path": path, "client": ("10.0.0.1", 5),
            "headers": [(b"host", b"localhost:8000")] if headers is None else headers}


def serve(router: Router, request: Scope) -> tuple[str, list[dict[str, Any]]]:
    """The name of the route that took the request, and what it sent."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    route, endpoint = router.resolve(request["path"])

    async def go() -> None:
        await endpoint(request, receive, send)

    asyncio.run(go())
    return route.name, sent


def answering(name: str, seen: list[Principal] | None = None) -> Route:
    async def endpoint(scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
        if seen is not None:
            seen.append(principal)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": name.encode()})

    return Route(name, endpoint, frozenset({HOST}), paths=(f"/{name}",))


def checks(**kwargs: Any) -> Checks:
    return Checks(frozenset(), frozenset(), kwargs.get("auth"), kwargs.get("limiter"))


def test_the_first_route_that_takes_a_path_serves_it() -> None:
    public = frozenset({HOST})
    mount = Route("mount", answering("mount").endpoint, public, prefix="/a/")
    shadowed = Route("shadowed", answering("shadowed").endpoint, public, paths=("/a/b", "/c"))
    router = Router([answering("x"), mount, shadowed], checks())
    assert router.resolve("/x")[0].name == "x"
    assert router.resolve("/a/b")[0].name == "mount"  # an exact path under an earlier prefix is the prefix's
    assert router.resolve("/a/zzz")[0].name == "mount"
    assert router.resolve("/c")[0].name == "shadowed"
    assert router.resolve("/a")[0].name == "not found"
    assert serve(router, scope("/nowhere"))[1][1]["body"] == b"not found"


def test_every_route_and_the_fallback_check_the_host_first() -> None:
    router = Router([answering("x")], checks())
    for path in ("/x", "/nowhere"):
        with pytest.raises(HttpError) as refused:
            serve(router, scope(path, headers=[(b"host", b"evil.example")]))
        assert (refused.value.status, refused.value.message) == (403, "Host not allowed")
        with pytest.raises(HttpError) as refused:
            serve(router, scope(path, headers=[(b"host", b"localhost"), (b"origin", b"http://evil.example")]))
        assert (refused.value.status, refused.value.message) == (403, "Origin not allowed")
        with pytest.raises(HttpError) as refused:
            serve(router, scope(path, headers=[(b"host", b"localhost"), (b"host", b"evil.example")]))
        assert refused.value.status == 400
        with pytest.raises(HttpError) as refused:
            serve(router, {**scope(path), "http_version": "2"})
        assert refused.value.status == 505


def test_auth_then_limit_then_method_then_endpoint() -> None:
    seen: list[Principal] = []
    endpoint = answering("x", seen).endpoint
    route = Route("x", endpoint, frozenset({HOST, AUTH, LIMIT}), paths=("/x",), methods=("GET", "POST"))
    router = Router([route], checks(auth=BearerTokens([("alice", TOKEN)]), limiter=RateLimiter(1)))
    with pytest.raises(HttpError) as refused:  # no token: refused before the limit counts anything
        serve(router, scope("/x", "PUT"))
    assert refused.value.status == 401
    signed = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {TOKEN}".encode())]
    # the method is checked after the guards: this 405 spent alice's one request a minute
    start = serve(router, scope("/x", "PUT", signed))[1][0]
    assert (start["status"], dict(start["headers"])[b"allow"]) == (405, b"GET, POST")
    with pytest.raises(HttpError) as refused:
        serve(router, scope("/x", "GET", signed))
    assert refused.value.status == 429 and dict(refused.value.headers)[b"retry-after"]
    assert seen == []


def test_without_auth_the_principal_is_the_address() -> None:
    seen: list[Principal] = []
    route = Route("x", answering("x", seen).endpoint, frozenset({HOST, AUTH}), paths=("/x",))
    serve(Router([route], checks()), scope("/x"))
    assert seen == [Principal("10.0.0.1", authenticated=False)]


def test_host_allowed() -> None:
    loopback = frozenset({"localhost", "[::1]"})
    assert host_allowed("localhost:1234", loopback) and host_allowed("[::1]", loopback)
    assert not host_allowed("localhost.evil:80", loopback) and not host_allowed(None, loopback)


# -- the table in the app: the shape of a refusal is its route's --------------------------------


def call(app: StreamableHttpApp, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.request(method, path, **kwargs)

    return asyncio.run(go())


def test_refusals_take_their_routes_shape() -> None:
    app = create_app(server(), auth=BearerTokens([("alice", TOKEN)]), watch=False, ui=True)
    graph = call(app, "GET", "/api/graph")  # the page's API: JSON
    assert graph.status_code == 401 and graph.json()["error"] == "a bearer token is required"
    mcp = call(app, "GET", "/mcp")  # the MCP endpoint: JSON-RPC
    assert mcp.status_code == 401 and json.loads(mcp.text)["error"]["code"] == -32600
    nowhere = call(app, "GET", "/nowhere")  # no route: 404 before authentication
    assert (nowhere.status_code, nowhere.text) == (404, "not found")
    assert call(app, "GET", "/healthz").text == "ok"


def test_stateless_mcp_takes_post_only() -> None:
    app = create_app(server(), watch=False, stateless=True)
    for method in ("GET", "DELETE", "PUT"):
        answer = call(app, method, "/mcp")
        assert (answer.status_code, answer.headers["allow"], answer.content) == (405, "POST", b"")
    stateful = call(create_app(server(), watch=False), "PUT", "/mcp")
    assert (stateful.status_code, stateful.headers["allow"]) == (405, "GET, POST, DELETE")
    modern = call(create_app(server(), watch=False), "PUT", "/mcp", headers={"mcp-protocol-version": "2026-07-28"})
    assert (modern.status_code, modern.headers["allow"]) == (405, "POST")
