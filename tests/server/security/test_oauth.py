"""OAuth 2.1 resource-server mode, end to end: a real key pair, an authorization server's metadata and
JWKS served on 127.0.0.1, and ``promptdeck serve --http --oauth-issuer`` as a real process.

Also per-prompt access control: a prompt with ``scopes`` is listed, got and completed only by
principals holding one of them, and answers like an unknown prompt to everyone else.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from promptdeck.protocol.errors import AuthError, LibraryError
from promptdeck.server.security import oauth
from promptdeck.server.security.oauth import OAuthResource
from tests.support.http_rpc import post_as as rpc
from tests.support.http_server import http_server
from tests.support.issuer import Issuer


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    server = Issuer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("oauth-library")
    (root / "hello.md").write_text("---\ndescription: For everyone\n---\nHello!\n")
    (root / "payroll.md").write_text(
        "---\ndescription: HR only\nscopes: [hr:payroll]\narguments:\n  - {name: month, enum: [jan, feb]}\n---\n"
        "Payroll for {{ month }}.\n")
    (root / "legal.md").write_text("---\ndescription: Legal or HR\nscopes: [legal, hr]\n---\nLegal.\n")
    return root


@pytest.fixture(scope="module")
def url(issuer: Issuer, library: Path) -> Iterator[str]:
    with http_server(str(library), "--no-watch", "--stateless", "--json-response", "--oauth-issuer", issuer.url,
                     "--require-scope", "prompts") as endpoint:
        yield endpoint


def test_protected_resource_metadata_and_the_401_challenge(issuer: Issuer, url: str) -> None:
    base = url.removesuffix("/mcp")
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        doc = httpx.get(base + path).json()
        assert doc["resource"] == url
        assert doc["authorization_servers"] == [issuer.url]
        assert doc["scopes_supported"] == ["prompts"]
        assert doc["bearer_methods_supported"] == ["header"]
    answer = rpc(url, None, "prompts/list")
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert 'scope="prompts"' in challenge and "error=" not in challenge  # no token, so no error code


def test_a_valid_token_is_served_and_sees_only_what_its_scopes_allow(issuer: Issuer, url: str) -> None:
    plain = issuer.token(aud=url, scope="prompts")
    listed = rpc(url, plain, "prompts/list")
    assert listed.status_code == 200, listed.text
    assert [p["name"] for p in listed.json()["result"]["prompts"]] == ["hello"]
    hidden = rpc(url, plain, "prompts/get", {"name": "payroll", "arguments": {"month": "jan"}}).json()["error"]
    assert hidden["code"] == -32602 and hidden["message"] == "unknown prompt 'payroll'"
    completion = rpc(url, plain, "completion/complete", {"ref": {"type": "ref/prompt", "name": "payroll"},
                                                         "argument": {"name": "month", "value": ""}})
    assert completion.json()["error"]["code"] == -32602

    hr = issuer.token(aud=url, scope="prompts hr")
    assert [p["name"] for p in rpc(url, hr, "prompts/list").json()["result"]["prompts"]] == \
        ["hello", "legal", "payroll"]
    got = rpc(url, hr, "prompts/get", {"name": "payroll", "arguments": {"month": "feb"}}).json()["result"]
    assert got["messages"][0]["content"]["text"] == "Payroll for feb."
    # Scopes nest: "hr" granted "hr:payroll" above; "hr:payroll" does not grant "hr".
    payroll = issuer.token(aud=url, scope="prompts hr:payroll")
    assert [p["name"] for p in rpc(url, payroll, "prompts/list").json()["result"]["prompts"]] == \
        ["hello", "payroll"]
    legal = issuer.token(aud=url, scp=["prompts", "legal"])
    assert [p["name"] for p in rpc(url, legal, "prompts/list").json()["result"]["prompts"]] == ["hello", "legal"]


def test_a_token_without_the_required_scope_gets_403(issuer: Issuer, url: str) -> None:
    answer = rpc(url, issuer.token(aud=url, scope="profile"), "prompts/list")
    assert answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="prompts"' in challenge
    assert "resource_metadata=" in challenge


def _forgeries(issuer: Issuer, url: str) -> dict[str, str]:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = issuer.keys["key-1"].public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    now = int(time.time())
    return {
        "expired": issuer.token(aud=url, scope="prompts", iat=now - 600, exp=now - 300),
        "other audience": issuer.token(aud="https://elsewhere.example/mcp", scope="prompts"),
        "no audience": issuer.token(scope="prompts"),
        "other issuer": issuer.token(aud=url, scope="prompts", iss="https://evil.example"),
        "signed by a stranger": issuer.token(aud=url, scope="prompts", key=stranger),
        "unknown kid": issuer.token(aud=url, scope="prompts", kid="key-9", key=stranger),
        "alg none": jwt.encode({"iss": issuer.url, "sub": "eve", "aud": url, "exp": now + 300, "scope": "prompts"},
                               "", algorithm="none"),
        "HS256 with the public key": _hs256(public_pem, {"iss": issuer.url, "sub": "eve", "aud": url,
                                                          "exp": now + 300, "scope": "prompts"}),
        "not a JWT": "just-some-opaque-token-value",
    }


def _hs256(secret: bytes, claims: dict[str, Any]) -> str:
    """The classic algorithm-confusion forgery: HMAC keyed with the issuer's public key."""
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    signing = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "key-1"}).encode()) + b"." + \
        b64(json.dumps(claims).encode())
    return (signing + b"." + b64(hmac.new(secret, signing, hashlib.sha256).digest())).decode()


def test_forged_and_misdirected_tokens_get_401(issuer: Issuer, url: str) -> None:
    for what, token in _forgeries(issuer, url).items():
        answer = rpc(url, token, "prompts/list")
        assert answer.status_code == 401, what
        challenge = answer.headers["www-authenticate"]
        assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge, what
        assert token not in challenge and token not in answer.text, what  # a token is never echoed
    assert rpc(url, issuer.token(aud=url, scope="prompts"), "ping").status_code == 200  # still serving


def _resource(issuer: Issuer, **options: Any) -> OAuthResource:
    return OAuthResource(issuer=issuer.url, resource="http://127.0.0.1:1/mcp", **options)


async def _authenticate(resource: OAuthResource, token: str) -> str:
    return (await resource.authenticate(f"Bearer {token}")).name


def test_rotated_keys_are_fetched_and_an_outage_keeps_the_old_ones(issuer: Issuer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oauth, "REFETCH_SECONDS", 0.0)
    resource = _resource(issuer, jwks_url=issuer.url + "/jwks.json")
    audience = "http://127.0.0.1:1/mcp"

    async def run() -> None:
        assert await _authenticate(resource, issuer.token(aud=audience, sub="bob")) == "bob"
        fetched = issuer.jwks_fetches
        assert await _authenticate(resource, issuer.token(aud=audience, sub="bob")) == "bob"  # cached
        assert issuer.jwks_fetches == fetched
        issuer.add_key("key-ec", ec.generate_private_key(ec.SECP256R1()))
        rotated = issuer.token(aud=audience, kid="key-ec", alg="ES256", sub="carol")
        assert await _authenticate(resource, rotated) == "carol"
        assert issuer.jwks_fetches == fetched + 1
        issuer.jwks_status = 500
        try:
            with pytest.raises(AuthError, match="key the issuer does not publish"):
                await _authenticate(resource, issuer.token(aud=audience, kid="key-new", key=rsa.generate_private_key(
                    public_exponent=65537, key_size=2048)))
            assert await _authenticate(resource, issuer.token(aud=audience, sub="dave")) == "dave"
        finally:
            issuer.jwks_status = 200
            del issuer.keys["key-ec"]

    asyncio.run(run())


def test_configuration_mistakes_are_refused_up_front(issuer: Issuer) -> None:
    with pytest.raises(LibraryError, match="asymmetric"):
        _resource(issuer, algorithms=["HS256"])
    with pytest.raises(LibraryError, match="must be an http"):
        OAuthResource(issuer="issuer.example", resource="http://127.0.0.1:1/mcp")


def test_static_tokens_carry_scopes_for_access_control(library: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("hr:hr-token-0123456789abcdef hr\nguest:guest-token-0123456789abc\n")
    with http_server(str(library), "--no-watch", "--stateless", "--json-response",
                     "--token-file", str(tokens)) as url:
        hr = rpc(url, "hr-token-0123456789abcdef", "prompts/list").json()["result"]["prompts"]
        guest = rpc(url, "guest-token-0123456789abc", "prompts/list").json()["result"]["prompts"]
        assert [p["name"] for p in hr] == ["hello", "legal", "payroll"]
        assert [p["name"] for p in guest] == ["hello"]
        assert rpc(url, "wrong-token-0123456789abc", "ping").status_code == 401


def test_the_algorithm_must_fit_the_key_type_and_its_declared_alg() -> None:
    fits = oauth._key_fits
    assert fits("RSA", "RS256", None, "RS256") and fits("RSA", "RS256", None, "PS384")
    assert not fits("RSA", "RS256", None, "ES256") and not fits("RSA", "RS256", None, "EdDSA")
    assert not fits("RSA", "RS256", "RS256", "PS256")  # the JWKS pins this key to RS256
    assert fits("EC", "ES256", None, "ES256") and not fits("EC", "ES256", None, "ES384")
    assert not fits("EC", "ES256", None, "RS256") and not fits("OKP", "EdDSA", None, "ES256")
    assert fits("OKP", "EdDSA", None, "EdDSA") and not fits("oct", "HS256", None, "RS256")
