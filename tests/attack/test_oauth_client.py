"""The OAuth client against hostile or broken servers: metadata for another resource or issuer, plain http,
oversized documents, redirects, no PKCE; a loopback redirect with the wrong state; tokens that must not
leave their origin; token files that must not be used. The servers are aiohttp apps on real sockets,
answering what each test tells them to."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from promptdeck.client import connect
from promptdeck.client.fetch import HttpClient
from promptdeck.client.oauth import OAuth
from promptdeck.client.oauth_discovery import (
    MAX_METADATA,
    authorization_server,
    bearer_params,
    metadata_urls,
    protected_resource,
)
from promptdeck.client.oauth_loopback import Loopback
from promptdeck.client.oauth_store import TokenStore
from promptdeck.protocol.errors import OAuthError

Answer = tuple[int, dict[str, str], bytes]


class Fake:
    """A web server answering from ``routes`` (path -> (status, headers, body)), 404 elsewhere; ``seen``
    holds the paths asked for, ``auth`` the Authorization header of each request."""

    def __init__(self) -> None:
        self.routes: dict[str, Answer | Callable[[], Answer]] = {}
        #: paths answered by a handler of their own (a stream, a hang)
        self.handlers: dict[str, Callable[[web.Request], Awaitable[web.StreamResponse]]] = {}
        self.seen: list[str] = []
        self.auth: list[str | None] = []
        self.url = ""

    def json(self, path: str, doc: object, status: int = 200) -> None:
        self.routes[path] = (status, {"content-type": "application/json"}, json.dumps(doc).encode())

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(request.path)
        self.auth.append(request.headers.get("authorization"))
        if request.path in self.handlers:
            return await self.handlers[request.path](request)
        found = self.routes.get(request.path)
        if found is None:
            return web.Response(status=404)
        status, headers, body = found() if callable(found) else found
        return web.Response(status=status, headers=headers, body=body)


@asynccontextmanager
async def fake() -> AsyncIterator[Fake]:
    server = Fake()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)  # a hanging handler is not waited for
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    try:
        yield server
    finally:
        await runner.cleanup()


def as_doc(issuer: str, **extra: Any) -> dict[str, Any]:
    return {"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
            "code_challenge_methods_supported": ["S256"], **extra}


async def prm(server: Fake, header_url: str | None = None) -> dict[str, Any] | None:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        return await protected_resource(http, server.url + "/mcp", header_url)


async def asm(issuer: str) -> dict[str, Any]:
    async with httpx.AsyncClient(follow_redirects=False) as http:
        return await authorization_server(http, issuer)


# -- discovery, the ways that work ---------------------------------------------------------------


def test_the_header_url_is_used_first() -> None:
    async def run() -> None:
        async with fake() as server:
            server.json("/elsewhere/prm", {"resource": server.url + "/mcp", "authorization_servers": ["https://a.example"]})
            server.json("/.well-known/oauth-protected-resource/mcp", {"resource": server.url + "/mcp",
                                                                      "authorization_servers": ["https://b.example"]})
            found = await prm(server, server.url + "/elsewhere/prm")
            assert found is not None and found["authorization_servers"] == ["https://a.example"]
            assert server.seen == ["/elsewhere/prm"]
    asyncio.run(run())


def test_without_a_header_the_path_inserted_url_comes_before_the_root() -> None:
    async def run() -> None:
        async with fake() as server:
            doc = {"resource": server.url + "/mcp", "authorization_servers": ["https://b.example"]}
            server.json("/.well-known/oauth-protected-resource", {**doc, "authorization_servers": ["https://root.example"]})
            assert (await prm(server)) is not None
            assert server.seen == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
            server.json("/.well-known/oauth-protected-resource/mcp", doc)
            found = await prm(server)
            assert found is not None and found["authorization_servers"] == ["https://b.example"]
    asyncio.run(run())


def test_a_server_without_any_metadata_is_not_an_oauth_server() -> None:
    async def run() -> None:
        async with fake() as server:
            assert await prm(server) is None
    asyncio.run(run())


def test_authorization_server_metadata_is_tried_in_the_specs_order() -> None:
    async def run() -> None:
        async with fake() as server:
            issuer = server.url + "/tenant"
            server.json("/tenant/.well-known/openid-configuration", as_doc(issuer))
            assert (await asm(issuer))["token_endpoint"] == issuer + "/token"
            assert server.seen == ["/.well-known/oauth-authorization-server/tenant",
                                   "/.well-known/openid-configuration/tenant",
                                   "/tenant/.well-known/openid-configuration"]
            server.seen.clear()
            server.json("/.well-known/openid-configuration", as_doc(server.url))
            await asm(server.url)
            assert server.seen == ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
    asyncio.run(run())
    assert metadata_urls("https://a.example/t/") == ["https://a.example/.well-known/oauth-authorization-server/t",
                                                     "https://a.example/.well-known/openid-configuration/t",
                                                     "https://a.example/t/.well-known/openid-configuration"]


# -- discovery, refused ----------------------------------------------------------------------------


@pytest.mark.parametrize("doc, said", [
    ({"resource": "https://other.example/mcp", "authorization_servers": ["https://a.example"]},
     "is for resource 'https://other.example/mcp'"),
    ({"resource": "{url}/mcp-other", "authorization_servers": ["https://a.example"]}, "is for resource"),
    ({"resource": "{url}/mcp", "authorization_servers": ["http://auth.example.com"]},
     "plain http on another machine; OAuth needs https"),
    ({"resource": "{url}/mcp", "authorization_servers": ["javascript:alert(1)"]}, "is not an https URL"),
    ({"resource": "{url}/mcp", "authorization_servers": []}, "names no authorization_servers"),
    ({"resource": "{url}/mcp"}, "names no authorization_servers"),
])
def test_protected_resource_metadata_that_must_not_be_trusted(doc: dict[str, Any], said: str) -> None:
    async def run() -> None:
        async with fake() as server:
            filled = json.loads(json.dumps(doc).replace("{url}", server.url))
            server.json("/.well-known/oauth-protected-resource/mcp", filled)
            with pytest.raises(OAuthError, match=said):
                await prm(server)
    asyncio.run(run())


def test_a_header_url_on_plain_http_elsewhere_is_refused() -> None:
    async def run() -> None:
        async with fake() as server:
            with pytest.raises(OAuthError, match="plain http on another machine"):
                await prm(server, "http://metadata.example.com/prm")
    asyncio.run(run())


@pytest.mark.parametrize("case", ["issuer", "no-pkce", "plain-pkce", "http-token", "oversized", "redirect",
                                  "not-json", "list", "error"])
def test_authorization_server_metadata_that_must_not_be_trusted(case: str) -> None:
    async def run() -> None:
        async with fake() as server:
            path = "/.well-known/oauth-authorization-server"
            said = {
                "issuer": ("https://evil.example", "names issuer 'https://evil.example'"),
                "no-pkce": (None, "does not advertise PKCE with S256"),
                "plain-pkce": (None, "does not advertise PKCE with S256"),
                "http-token": (None, "token_endpoint .* plain http on another machine"),
            }
            if case in said:
                doc = as_doc(said[case][0] or server.url)
                if case == "no-pkce":
                    del doc["code_challenge_methods_supported"]
                if case == "plain-pkce":
                    doc["code_challenge_methods_supported"] = ["plain"]
                if case == "http-token":
                    doc["token_endpoint"] = "http://tokens.example.com/token"
                server.json(path, doc)
                message = said[case][1]
            elif case == "oversized":
                server.routes[path] = (200, {"content-type": "application/json"},
                                       json.dumps({**as_doc(server.url), "pad": "x" * MAX_METADATA}).encode())
                message = f"over {MAX_METADATA} bytes"
            elif case == "redirect":
                server.routes[path] = (302, {"location": "https://evil.example/meta"}, b"")
                message = "redirects to 'https://evil.example/meta'; promptdeck does not follow"
            elif case == "not-json":
                server.routes[path] = (200, {}, b"<html>")
                message = "is not JSON"
            elif case == "list":
                server.json(path, [as_doc(server.url)])
                message = "is not a JSON object"
            else:
                server.routes[path] = (500, {}, b"")
                message = "HTTP 500"
            with pytest.raises(OAuthError, match=message):
                await asm(server.url)
    asyncio.run(run())


async def endless(request: web.Request) -> web.StreamResponse:
    """A JSON answer that never ends: chunks, no length, until well past any cap."""
    response = web.StreamResponse(headers={"content-type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    for _ in range(MAX_METADATA // 1024 + 10):
        await response.write(b" " * 1024)
    return response


def test_oversized_metadata_without_a_length_is_cut_off() -> None:
    async def run() -> None:
        async with fake() as server:
            server.handlers["/.well-known/oauth-authorization-server"] = endless
            with pytest.raises(OAuthError, match=f"over {MAX_METADATA} bytes"):
                await asm(server.url)
    asyncio.run(run())


def protected_by(server: Fake) -> None:
    """Make ``server`` an OAuth-protected MCP server that is its own authorization server."""
    challenge = f'Bearer resource_metadata="{server.url}/prm"'
    server.routes["/mcp"] = (401, {"www-authenticate": challenge}, b"")
    server.json("/prm", {"resource": server.url + "/mcp", "authorization_servers": [server.url + "/as"]})
    server.json("/.well-known/oauth-authorization-server/as", as_doc(server.url + "/as"))


async def hang(request: web.Request) -> web.StreamResponse:
    await asyncio.sleep(30)
    return web.Response()


@pytest.mark.parametrize("answer, said", [
    ("endless", f"over {MAX_METADATA} bytes"),
    ((200, {"content-type": "application/json"}, b" " * (MAX_METADATA + 1)), f"over {MAX_METADATA} bytes"),
    ((200, {"content-type": "text/html"}, b"<html>"), "the client credentials grant failed"),
    ((200, {"content-type": "application/json"}, b'{"access_token": "t", "token_type": "mac"}'),
     "holds no bearer access token"),
    ((200, {"content-type": "application/json"}, b'{"token_type": "Bearer"}'), "holds no bearer access token"),
    ((400, {"content-type": "application/json"}, b'{"error": "invalid_scope"}'), "refused: invalid_scope"),
    ("hang", "the client credentials grant failed: ReadTimeout"),
])
def test_a_hostile_token_endpoint_is_one_clear_error(answer: Answer | str, said: str) -> None:
    async def run() -> None:
        async with fake() as server:
            protected_by(server)
            if answer == "endless":
                server.handlers["/as/token"] = endless
            elif answer == "hang":
                server.handlers["/as/token"] = hang
            else:
                assert not isinstance(answer, str)
                server.routes["/as/token"] = answer
            auth = OAuth(client_id="svc", client_secret="s", client_credentials=True, store=False, timeout=1)
            started = time.monotonic()
            with pytest.raises(OAuthError, match=said):
                async with connect(server.url + "/mcp", auth=auth, timeout=5):
                    pass
            assert time.monotonic() - started < 5
    asyncio.run(run())


def test_a_protected_server_pointing_at_a_hostile_issuer_fails_at_connect_with_the_reason() -> None:
    async def run() -> None:
        async with fake() as server:
            challenge = f'Bearer error="invalid_token", resource_metadata="{server.url}/prm"'
            server.routes["/mcp"] = (401, {"www-authenticate": challenge}, b"")
            server.json("/prm", {"resource": server.url + "/mcp", "authorization_servers": [server.url + "/as"]})
            server.json("/.well-known/oauth-authorization-server/as", as_doc("https://evil.example"))
            with pytest.raises(OAuthError, match="names issuer 'https://evil.example'.*RFC 8414"):
                async with connect(server.url + "/mcp", auth=OAuth(store=False, open_url=lambda url: None),
                                   timeout=5):
                    pass
    asyncio.run(run())


def test_a_server_without_resource_metadata_may_name_an_issuer_on_its_own_origin_only() -> None:
    """2025-03-26 servers: metadata at the server's origin, its issuer anywhere on that origin, nowhere else."""
    async def run() -> None:
        async with fake() as server:
            server.routes["/mcp"] = (401, {"www-authenticate": 'Bearer error="invalid_token"'}, b"")
            server.json("/.well-known/oauth-authorization-server", as_doc("https://evil.example"))
            with pytest.raises(OAuthError, match="names issuer 'https://evil.example'"):
                async with connect(server.url + "/mcp", auth=OAuth(store=False, open_url=lambda url: None),
                                   timeout=5):
                    pass
            assert server.seen[:4] == ["/mcp", "/.well-known/oauth-protected-resource/mcp",
                                       "/.well-known/oauth-protected-resource",
                                       "/.well-known/oauth-authorization-server"]
    asyncio.run(run())


def test_a_challenge_header_is_parsed_in_linear_time_and_whatever_it_holds() -> None:
    assert bearer_params('Basic realm="x", Bearer resource_metadata="https://a/b", scope="p q", error=x') == {
        "resource_metadata": "https://a/b", "scope": "p q", "error": "x"}
    assert bearer_params('Bearer realm="a \\"quoted\\" b"') == {"realm": 'a "quoted" b'}
    assert bearer_params("Negotiate abc") == {}
    started = time.perf_counter()
    for hostile in ('Bearer a="' + "\\" * 100_000, "Bearer " + "a=b," * 50_000, "Bearer " + '"' * 100_000):
        bearer_params(hostile)
    assert time.perf_counter() - started < 2


# -- the loopback redirect --------------------------------------------------------------------------


def test_the_loopback_takes_only_its_own_state_and_reports_a_refusal() -> None:
    async def run() -> None:
        async with Loopback() as loop:
            async with httpx.AsyncClient() as http:
                wrong = await http.get(loop.redirect_uri, params={"code": "stolen", "state": "guess"})
                assert wrong.status_code == 400
                right = await http.get(loop.redirect_uri, params={"code": "c0de", "state": loop.state})
                assert right.status_code == 200
                again = await http.get(loop.redirect_uri, params={"code": "other", "state": loop.state})
                assert again.status_code == 400
            assert await loop.code(1) == "c0de"
        async with Loopback() as loop:
            async with httpx.AsyncClient() as http:
                await http.get(loop.redirect_uri, params={"error": "access_denied", "state": loop.state,
                                                          "error_description": "the user said no"})
            with pytest.raises(OAuthError, match="refused the sign-in: access_denied \\(the user said no\\)"):
                await loop.code(1)
        async with Loopback() as loop:
            with pytest.raises(OAuthError, match="no sign-in came back"):
                await loop.code(0.1)
    asyncio.run(run())


# -- mix-up attacks (RFC 9207): the sign-in's answer must come from the issuer it was sent to ---------


def test_the_loopback_compares_the_answers_issuer_exactly() -> None:
    """No normalization (RFC 9207 2.4): an issuer that differs only in case, port or trailing slash is another."""
    issuer = "https://as.example/tenant"

    async def answer(iss: str | None, required: bool) -> str | OAuthError:
        async with Loopback(issuer=issuer, iss_required=required) as loop:
            params = {"code": "c0de", "state": loop.state, **({"iss": iss} if iss is not None else {})}
            async with httpx.AsyncClient() as http:
                page = await http.get(loop.redirect_uri, params=params)
            try:
                code = await loop.code(1)
            except OAuthError as exc:
                assert page.status_code == 400 and "Sign-in failed" in page.text  # the browser is told too
                return exc
            assert page.status_code == 200
            return code

    async def run() -> None:
        assert await answer(issuer, True) == "c0de"
        assert await answer(issuer, False) == "c0de"
        assert await answer(None, False) == "c0de"  # not advertised, not sent: nothing to compare
        for other in ("https://AS.example/tenant", "https://as.example:443/tenant", "https://as.example/tenant/",
                      "https://evil.example/tenant"):
            for required in (True, False):
                refused = await answer(other, required)
                assert isinstance(refused, OAuthError) and "mix-up" in str(refused) and other in str(refused)
        missing = await answer(None, True)
        assert isinstance(missing, OAuthError) and "names no issuer (iss)" in str(missing)
    asyncio.run(run())


@pytest.mark.parametrize(("options", "said"), [
    (("--iss", "wrong"), "comes from issuer 'https://other-issuer.example/', not from http://127.0.0.1:"),
    (("--iss", "wrong", "--iss-advertised"), "comes from issuer 'https://other-issuer.example/'"),
    (("--iss-advertised",), "names no issuer \\(iss\\), yet http://127.0.0.1:"),
])
def test_a_sign_in_answer_naming_another_issuer_or_none_when_promised_is_refused_before_any_token(
        options: tuple[str, ...], said: str, tmp_path: Path) -> None:
    from tests.support.oauth_browser import follow
    from tests.support.oauth_fixtures import authorization_server, resource_server, stats

    pages: list[int] = []
    shown = threading.Event()

    def browser(url: str) -> None:
        try:
            pages.append(follow(url).status_code)
        finally:
            shown.set()

    store = tmp_path / "tokens.json"
    with authorization_server(*options) as issuer, resource_server(issuer) as url:
        async def sign_in() -> None:
            async with connect(url, auth=OAuth(open_url=browser, store=store), timeout=10) as client:
                await client.list_prompts()

        with pytest.raises(OAuthError, match=said):
            asyncio.run(sign_in())
        assert shown.wait(20) and pages == [400]  # the browser was told the sign-in failed
        seen = stats(issuer)
        assert seen["authorize"] == 1 and "authorization_code" not in seen  # the code was never exchanged
    assert json.loads(store.read_text())["tokens"] == {}  # the registration is kept; no token is


# -- where the token goes ---------------------------------------------------------------------------


class Fixed:
    """An ``auth`` that always has the same token."""

    async def token(self, url: str) -> str | None:
        return "secret-token"

    async def unauthorized(self, url: str, status: int, challenge: str, sent: str | None) -> bool:
        return False


def test_the_token_never_follows_a_redirect_to_another_origin() -> None:
    async def run() -> None:
        async with fake() as first, fake() as second:
            first.routes["/mcp"] = (307, {"location": second.url + "/mcp"}, b"")
            second.routes["/mcp"] = (200, {}, b"ok")
            async with HttpClient(auth=Fixed(), auth_url=first.url + "/mcp") as http:
                response, body = await http.request("POST", first.url + "/mcp", content=b"{}")
                assert body == b"ok"
                # And a request straight to another origin gets no token either.
                await http.request("GET", second.url + "/mcp")
            assert first.auth == ["Bearer secret-token"]
            assert second.auth == [None, None]
    asyncio.run(run())


# -- the token file ---------------------------------------------------------------------------------


def test_token_files_that_must_not_be_used(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    real.chmod(0o600)
    link = tmp_path / "tokens.json"
    link.symlink_to(real)
    with pytest.raises(OAuthError, match="is a symbolic link"):
        TokenStore(link).read()
    for content, said in ((b"not json", "is not JSON"), (b"[]", "not a version-1 promptdeck token file"),
                          (b" " * (4 * 1024 * 1024 + 1), "over")):
        path = tmp_path / f"t{len(content)}.json"
        path.write_bytes(content)
        path.chmod(0o600)
        with pytest.raises(OAuthError, match=said):
            TokenStore(path).read()
    loose = tmp_path / "loose.json"
    loose.write_text('{"version": 1}')
    for mode in (0o644, 0o640, 0o602):
        loose.chmod(mode)
        with pytest.raises(OAuthError, match=f"chmod 600 {loose}"):
            TokenStore(loose).read()


def test_writes_are_atomic_0600_and_survive_concurrent_writers(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "tokens.json"
    store = TokenStore(path)
    old = os.umask(0)  # even a careless umask leaves the file private
    try:
        store.save_client("https://a.example", {"client_id": "one"})
    finally:
        os.umask(old)
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert oct(path.parent.stat().st_mode & 0o777) == oct(0o700)

    import threading

    def write(n: int) -> None:
        TokenStore(path).save_tokens(f"https://s{n}.example/mcp", f"https://s{n}.example/mcp", "https://a.example",
                                     {"access_token": f"t{n}"})
    threads = [threading.Thread(target=write, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.read()["servers"]) == 20  # the lock kept every writer's entry
    assert sorted(p.name for p in path.parent.iterdir()) == ["tokens.json", "tokens.json.lock"]
