"""Finding a server's authorization server (client/oauth_discovery.py): the Bearer challenge read, URLs checked,
the well-known URLs tried in the spec's order, and metadata for another resource or issuer refused by name.
The servers are httpx's MockTransport: every request is seen, none leaves the process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest

from promptdeck.client.oauth_discovery import (
    MAX_METADATA,
    authorization_server,
    bearer_params,
    check_url,
    is_loopback,
    legacy_resource,
    metadata_urls,
    protected_resource,
    resource_allowed,
)
from promptdeck.protocol.errors import OAuthError

T = TypeVar("T")
SERVER = "https://mcp.example/api/mcp"
ISSUER = "https://auth.example"
GOOD_AS = {"issuer": ISSUER, "code_challenge_methods_supported": ["S256"],
           "authorization_endpoint": f"{ISSUER}/authorize", "token_endpoint": f"{ISSUER}/token"}


def body(data: bytes) -> httpx.Response:
    """A 200 whose body is streamed, as a server's is (a Response made with ``content`` is read already)."""
    return httpx.Response(200, stream=httpx.ByteStream(data))


def against(documents: dict[str, Any], work: Callable[[httpx.AsyncClient], Awaitable[T]],
            asked: list[str] | None = None) -> T:
    """Run ``work`` with a client whose server answers ``documents`` by URL (a response as is, else JSON)."""
    def answer(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if asked is not None:
            asked.append(url)
        found = documents.get(url)
        if found is None:
            return httpx.Response(404)
        if isinstance(found, httpx.Response):
            return found
        return body(json.dumps(found).encode())

    async def main() -> T:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
            return await work(http)

    return asyncio.run(main())


def test_bearer_params_from_a_challenge() -> None:
    value = 'Basic realm="x", Bearer error="invalid_token", resource_metadata="https://m.example/x?a=\\"b\\"", ' \
            'Scope=read'
    assert bearer_params(value) == {"error": "invalid_token", "resource_metadata": 'https://m.example/x?a="b"',
                                    "scope": "read"}
    assert bearer_params("Basic realm=x") == {}
    assert bearer_params("Bearer") == {}


@pytest.mark.parametrize(("host", "loopback"), [("localhost", True), ("127.0.0.1", True), ("[::1]", True),
                                                ("127.8.8.8", True), ("example.com", False), (None, False),
                                                ("10.0.0.1", False)])
def test_loopback_hosts(host: str | None, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_check_url_wants_https_except_on_loopback() -> None:
    assert check_url("https://a.example/x", "the token_endpoint") == "https://a.example/x"
    assert check_url("http://127.0.0.1:8000/t", "the token_endpoint") == "http://127.0.0.1:8000/t"
    with pytest.raises(OAuthError, match="the token_endpoint http://a.example/t is plain http on another machine"):
        check_url("http://a.example/t", "the token_endpoint")
    with pytest.raises(OAuthError, match="the token_endpoint 'javascript:x' is not an https URL"):
        check_url("javascript:x", "the token_endpoint")
    with pytest.raises(OAuthError, match="the issuer is missing or not a string"):
        check_url(42, "the issuer")


def test_a_resource_names_the_server_or_a_path_above_it() -> None:
    assert resource_allowed(SERVER, "https://mcp.example/api/mcp/")
    assert resource_allowed(SERVER, "https://MCP.example/api")
    assert not resource_allowed(SERVER, "https://mcp.example/api/m")  # a prefix of the text is not a path above
    assert not resource_allowed(SERVER, "https://evil.example/api/mcp")
    assert not resource_allowed(SERVER, "http://mcp.example/api/mcp")


def test_metadata_urls_in_the_specs_order() -> None:
    assert metadata_urls("https://a.example/tenant") == [
        "https://a.example/.well-known/oauth-authorization-server/tenant",
        "https://a.example/.well-known/openid-configuration/tenant",
        "https://a.example/tenant/.well-known/openid-configuration"]
    assert metadata_urls("https://a.example/") == ["https://a.example/.well-known/oauth-authorization-server",
                                                   "https://a.example/.well-known/openid-configuration"]


def test_protected_resource_tries_the_inserted_then_the_root_well_known_url() -> None:
    asked: list[str] = []
    doc = {"resource": SERVER, "authorization_servers": [ISSUER]}
    found = against({"https://mcp.example/.well-known/oauth-protected-resource": doc},
                    lambda http: protected_resource(http, SERVER, None), asked)
    assert found == doc
    assert asked == ["https://mcp.example/.well-known/oauth-protected-resource/api/mcp",
                     "https://mcp.example/.well-known/oauth-protected-resource"]
    assert against({}, lambda http: protected_resource(http, SERVER, None)) is None  # not an OAuth server


def test_protected_resource_for_another_server_is_refused() -> None:
    doc = {"resource": "https://evil.example/mcp", "authorization_servers": [ISSUER]}
    with pytest.raises(OAuthError, match="is for resource 'https://evil.example/mcp', not for " + SERVER):
        against({"https://mcp.example/.well-known/oauth-protected-resource/api/mcp": doc},
                lambda http: protected_resource(http, SERVER, None))


def test_a_named_metadata_url_must_be_there_and_name_servers() -> None:
    named = "https://mcp.example/meta"
    with pytest.raises(OAuthError, match=f"the server named {named} for its .*, which is not there"):
        against({}, lambda http: protected_resource(http, SERVER, named))
    with pytest.raises(OAuthError, match="names no authorization_servers"):
        against({named: {"resource": SERVER, "authorization_servers": []}},
                lambda http: protected_resource(http, SERVER, named))


@pytest.mark.parametrize(("response", "says"), [
    (httpx.Response(302, headers={"location": "https://elsewhere/"}), "redirects to 'https://elsewhere/'"),
    (httpx.Response(500), "HTTP 500"),
    (body(b"<html>"), "is not JSON"),
    (body(b"[1]"), "is not a JSON object"),
    (body(b" " * (MAX_METADATA + 1)), f"is over {MAX_METADATA} bytes"),
])
def test_a_bad_metadata_answer_is_refused_naming_the_url(response: httpx.Response, says: str) -> None:
    url = "https://mcp.example/.well-known/oauth-protected-resource/api/mcp"
    with pytest.raises(OAuthError, match=says) as caught:
        against({url: response}, lambda http: protected_resource(http, SERVER, None))
    assert url in str(caught.value)


def test_authorization_server_metadata_is_checked() -> None:
    well_known = f"{ISSUER}/.well-known/oauth-authorization-server"
    assert against({well_known: GOOD_AS}, lambda http: authorization_server(http, ISSUER)) == GOOD_AS
    with pytest.raises(OAuthError, match=r"names issuer 'https://evil.example', not https://auth.example"):
        against({well_known: {**GOOD_AS, "issuer": "https://evil.example"}},
                lambda http: authorization_server(http, ISSUER))
    with pytest.raises(OAuthError, match="does not advertise PKCE with S256"):
        against({well_known: {**GOOD_AS, "code_challenge_methods_supported": ["plain"]}},
                lambda http: authorization_server(http, ISSUER))
    with pytest.raises(OAuthError, match="the token_endpoint of https://auth.example .* plain http"):
        against({well_known: {**GOOD_AS, "token_endpoint": "http://auth.example/token"}},
                lambda http: authorization_server(http, ISSUER))
    with pytest.raises(OAuthError, match="no authorization server metadata for https://auth.example"):
        against({}, lambda http: authorization_server(http, ISSUER))


def test_a_2025_03_26_server_may_be_its_own_authorization_server() -> None:
    origin_doc = {**GOOD_AS, "issuer": "https://mcp.example/oauth"}  # anywhere on its own origin
    found = against({"https://mcp.example/.well-known/oauth-authorization-server": origin_doc},
                    lambda http: legacy_resource(http, SERVER))
    assert found == ({"resource": SERVER, "authorization_servers": ["https://mcp.example/oauth"]}, origin_doc)
    assert against({}, lambda http: legacy_resource(http, SERVER)) is None
    assert against({}, lambda http: legacy_resource(http, "http://plain.example/mcp")) is None
