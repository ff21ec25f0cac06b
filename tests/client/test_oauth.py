"""The client's OAuth against a real authorization server (the MCP SDK's routes, authlib for client
credentials: tests/support/oauth_server.py) and promptdeck's own resource server in front of the example
prompts (``serve --http --oauth-issuer``), each a process on its own port."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import msgspec
import pytest

from promptdeck.client import connect
from promptdeck.client.oauth import OAuth
from promptdeck.client.oauth_store import TokenStore
from promptdeck.protocol.errors import ConnectionFailed, OAuthError
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES
from tests.support.oauth_browser import sign_in
from tests.support.oauth_fixtures import authorization_server, resource_server, stats
from tests.support.oauth_server import CONFIDENTIAL_ID, PUBLIC_ID, SERVICE_ID, SERVICE_SECRET


class Browser:
    """The person at the browser: follows each sign-in address, and keeps them for the test to read."""

    def __init__(self) -> None:
        self.visited: list[str] = []

    def __call__(self, url: str) -> None:
        self.visited.append(url)
        sign_in(url)


def no_browser(url: str) -> None:
    raise AssertionError(f"no sign-in was expected, yet the browser was sent to {url}")


async def names(url: str, auth: OAuth) -> list[str]:
    async with connect(url, auth=auth, timeout=10) as client:
        return [prompt.name for prompt in await client.list_prompts()]


def test_a_person_signs_in_with_registration_pkce_and_the_resource(issuer: str, protected: str,
                                                                  tmp_path: Path) -> None:
    before = stats(issuer)
    browser = Browser()
    store = tmp_path / "tokens.json"
    listed = asyncio.run(names(protected, OAuth(open_url=browser, store=store)))
    assert "code-review" in listed
    after = stats(issuer)
    assert after.get("register", 0) == before.get("register", 0) + 1  # dynamic client registration
    assert after["application_types"][-1] == "native"  # a program with a loopback redirect (2026-07-28 asks)
    assert after["authorization_code"] == before.get("authorization_code", 0) + 1
    assert after["resources"][-1] == protected  # RFC 8707 resource on the token request
    [address] = browser.visited
    query = parse_qs(urlsplit(address).query)
    assert query["code_challenge_method"] == ["S256"] and len(query["code_challenge"][0]) == 43
    assert query["resource"] == [protected]
    assert query["scope"] == ["prompts"]  # what the server's 401 asked for
    redirect = urlsplit(query["redirect_uri"][0])
    assert (redirect.scheme, redirect.hostname, redirect.path) == ("http", "127.0.0.1", "/callback")
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) != 0 and not list(tmp_path.glob(".tokens-*"))  # no leftovers
    saved = json.loads(store.read_text())
    assert saved["servers"][protected]["issuer"] == issuer

    # A second run (a new process, as far as the client knows) uses the kept token: no browser, no grant.
    assert asyncio.run(names(protected, OAuth(open_url=no_browser, store=store))) == listed
    assert stats(issuer)["authorization_code"] == after["authorization_code"]


def _signed_in(issuer: str, protected: str, store: Path) -> dict[str, Any]:
    asyncio.run(names(protected, OAuth(open_url=Browser(), store=store)))
    return stats(issuer)


def test_a_token_the_server_refuses_is_refreshed_on_the_401(issuer: str, protected: str, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    before = _signed_in(issuer, protected, store)

    def spoil(doc: dict[str, object]) -> None:
        for tokens in doc["tokens"].values():  # type: ignore[attr-defined]
            tokens["access_token"] = "revoked-or-garbage"
            tokens["expires_at"] = time.time() + 3600  # still valid as far as the client knows
    TokenStore(store).update(spoil)
    assert asyncio.run(names(protected, OAuth(open_url=no_browser, store=store)))
    assert stats(issuer)["refresh_token"] == before.get("refresh_token", 0) + 1
    assert "revoked-or-garbage" not in store.read_text()


def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(issuer: str, protected: str,
                                                               tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    before = _signed_in(issuer, protected, store)
    old = json.loads(store.read_text())["tokens"]

    def expire(doc: dict[str, object]) -> None:
        for tokens in doc["tokens"].values():  # type: ignore[attr-defined]
            tokens["expires_at"] = time.time() + 5  # inside the refresh margin
    TokenStore(store).update(expire)
    auth = OAuth(open_url=no_browser, store=store)
    assert asyncio.run(names(protected, auth))
    assert stats(issuer)["refresh_token"] == before.get("refresh_token", 0) + 1
    new = json.loads(store.read_text())["tokens"]
    assert [t["access_token"] for t in new.values()] != [t["access_token"] for t in old.values()]
    assert all(t["expires_at"] > time.time() + 600 for t in new.values())

    # What is sent after a refresh is the new token, not the one it replaced.
    TokenStore(store).update(expire)
    auth = OAuth(open_url=no_browser, store=store)
    sent = asyncio.run(auth.token(protected))
    assert sent == next(iter(json.loads(store.read_text())["tokens"].values()))["access_token"]
    assert sent not in [t["access_token"] for t in new.values()]


def test_an_expired_token_whose_refresh_fails_signs_in_again(issuer: str, protected: str, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    _signed_in(issuer, protected, store)

    def ruin(doc: dict[str, Any]) -> None:
        for tokens in doc["tokens"].values():
            tokens.update(expires_at=time.time() - 10, refresh_token="revoked")
    TokenStore(store).update(ruin)
    browser = Browser()

    def slow(url: str) -> None:  # a person takes longer than the era probe may (its timeout, 0.3 s, here)
        time.sleep(0.6)
        browser(url)

    async def listed() -> int:
        async with connect(protected, auth=OAuth(open_url=slow, store=store), timeout=10,
                           probe_timeout=0.3) as client:
            return len(await client.list_prompts())
    assert asyncio.run(listed()) > 0
    assert len(browser.visited) == 1


def test_a_service_uses_the_client_credentials_grant(issuer: str, protected: str) -> None:
    before = stats(issuer)
    auth = OAuth(client_id=SERVICE_ID, client_secret=SERVICE_SECRET, client_credentials=True, store=False,
                 open_url=no_browser)
    assert "code-review" in asyncio.run(names(protected, auth))
    after = stats(issuer)
    assert after["client_credentials"] == before.get("client_credentials", 0) + 1
    assert after["resources"][-1] == protected
    assert after.get("register", 0) == before.get("register", 0)


def test_an_application_renders_through_oauth_what_the_client_gets(issuer: str, protected: str) -> None:
    """``Prompts`` on an OAuth-protected server: signed in as a service, it lists and renders what a signed-in
    client gets over MCP."""
    from promptdeck import Prompts

    def service() -> OAuth:
        return OAuth(client_id=SERVICE_ID, client_secret=SERVICE_SECRET, client_credentials=True, store=False,
                     open_url=no_browser)

    async def over_mcp() -> tuple[list[str], list[dict[str, Any]]]:
        async with connect(protected, auth=service(), timeout=10) as client:
            listed = [prompt.name for prompt in await client.list_prompts()]
            got = await client.get_prompt("code-review", code="x = 1")
            return listed, [msgspec.to_builtins(message) for message in got.messages]

    before = stats(issuer).get("client_credentials", 0)
    with Prompts(protected, auth=service()) as prompts:
        rendered = prompts.render("code-review", code="x = 1")
        listed, messages = asyncio.run(over_mcp())
        assert prompts.names() == listed
        assert rendered.messages == messages and not rendered.stale
    assert stats(issuer)["client_credentials"] == before + 2  # one sign-in each, none skipped


def test_a_wrong_client_secret_is_one_clear_error(issuer: str, protected: str) -> None:
    auth = OAuth(client_id=SERVICE_ID, client_secret="not-the-secret", client_credentials=True, store=False)
    with pytest.raises(OAuthError, match="client credentials grant refused: invalid_client"):
        asyncio.run(names(protected, auth))


def test_a_configured_client_id_is_not_registered_again(issuer: str, protected: str, tmp_path: Path) -> None:
    before = stats(issuer)
    browser = Browser()
    assert asyncio.run(names(protected, OAuth(client_id=PUBLIC_ID, open_url=browser, store=tmp_path / "t.json")))
    assert stats(issuer).get("register", 0) == before.get("register", 0)
    assert parse_qs(urlsplit(browser.visited[0]).query)["client_id"] == [PUBLIC_ID]


def test_too_few_scopes_step_up_on_the_403(issuer: str, protected: str, tmp_path: Path) -> None:
    browser = Browser()
    assert asyncio.run(names(protected, OAuth(scopes=["admin"], open_url=browser, store=tmp_path / "t.json")))
    first, second = browser.visited  # signed in with "admin"; the 403 named "prompts": again with both
    assert parse_qs(urlsplit(first).query)["scope"] == ["admin"]
    assert parse_qs(urlsplit(second).query)["scope"] == ["admin prompts"]


def test_a_token_file_others_may_read_is_refused_with_the_fix(protected: str, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    store.write_text(json.dumps({"version": 1, "clients": {}, "tokens": {}, "servers": {}}))
    store.chmod(0o644)
    with pytest.raises(OAuthError, match=f"chmod 600 {store}"):
        asyncio.run(names(protected, OAuth(open_url=no_browser, store=store)))


def test_without_auth_the_401_is_reported_as_before(protected: str) -> None:
    async def bare() -> None:
        async with connect(protected, timeout=10):
            pass
    with pytest.raises(ConnectionFailed, match="HTTP 401, the server wants a \\(valid\\) bearer token"):
        asyncio.run(bare())


def test_an_oidc_only_issuer_without_registration_needs_a_client_id(tmp_path: Path) -> None:
    """The OIDC discovery fallback end to end, and the one line that says what to do without registration."""
    with authorization_server("--oidc", "--no-registration") as oidc, \
            http_server(str(EXAMPLES), "--no-watch", "--oauth-issuer", oidc, "--oauth-jwks", oidc + "jwks.json") as url:
        assert httpx.get(oidc + ".well-known/oauth-authorization-server").status_code == 404
        with pytest.raises(OAuthError, match="offers no dynamic client registration: register promptdeck there "
                                             "and pass its client id \\(--client-id\\)"):
            asyncio.run(names(url, OAuth(open_url=no_browser, store=tmp_path / "a.json")))
        browser = Browser()
        assert "code-review" in asyncio.run(names(url, OAuth(client_id=PUBLIC_ID, open_url=browser,
                                                             store=tmp_path / "b.json")))
        assert browser.visited[0].startswith(oidc + "authorize?")
        assert stats(oidc)["authorization_code"] == 1


def test_a_confidential_client_authenticates_its_token_requests(issuer: str, protected: str,
                                                                tmp_path: Path) -> None:
    store = tmp_path / "t.json"
    auth = OAuth(client_id=CONFIDENTIAL_ID, client_secret=SERVICE_SECRET, open_url=Browser(), store=store)
    assert "code-review" in asyncio.run(names(protected, auth))
    wrong = OAuth(client_id=CONFIDENTIAL_ID, client_secret="wrong", open_url=Browser(), store=False)
    with pytest.raises(OAuthError, match="the authorization code exchange refused: (unauthorized|invalid)_client"):
        asyncio.run(names(protected, wrong))


def test_tokens_are_never_logged(issuer: str, protected: str, tmp_path: Path,
                                 caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.DEBUG)
    store = tmp_path / "tokens.json"
    asyncio.run(names(protected, OAuth(open_url=Browser(), store=store)))
    def expire(doc: dict[str, Any]) -> None:
        for tokens in doc["tokens"].values():
            tokens["expires_at"] = time.time()
    TokenStore(store).update(expire)
    asyncio.run(names(protected, OAuth(open_url=no_browser, store=store)))  # a refresh, logged too
    saved = next(iter(json.loads(store.read_text())["tokens"].values()))
    secrets = [saved["access_token"], saved["refresh_token"]]
    assert caplog.records and "signed in to" in caplog.text
    assert not any(secret in caplog.text for secret in secrets)


def test_concurrent_requests_that_meet_the_401_make_one_sign_in(issuer: str, protected: str,
                                                               tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    _signed_in(issuer, protected, store)
    before = stats(issuer)

    async def many() -> None:
        auth = OAuth(open_url=no_browser, store=store)
        async with connect(protected, auth=auth, timeout=10) as client:
            def spoil(doc: dict[str, Any]) -> None:
                for tokens in doc["tokens"].values():
                    tokens["access_token"] = "garbage"
            auth._grants.clear()  # the next requests read the spoiled file again
            TokenStore(store).update(spoil)
            results = await asyncio.gather(*(client.get_prompt("code-review", code=str(n)) for n in range(8)))
            assert len(results) == 8
    asyncio.run(many())
    assert stats(issuer)["refresh_token"] == before.get("refresh_token", 0) + 1


def test_a_browser_that_does_not_return_does_not_hold_up_the_sign_in(protected: str, tmp_path: Path) -> None:
    import threading

    release = threading.Event()

    def lingering(url: str) -> None:  # as `webbrowser` waiting for a $BROWSER command that has not exited
        sign_in(url)
        release.wait(30)
    started = time.monotonic()
    try:
        assert asyncio.run(names(protected, OAuth(open_url=lingering, store=tmp_path / "t.json")))
        assert time.monotonic() - started < 10
    finally:
        release.set()


def test_a_browser_that_fails_ends_the_sign_in_at_once(protected: str, tmp_path: Path) -> None:
    def broken(url: str) -> None:
        raise RuntimeError("no browser here")
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="no browser here"):
        asyncio.run(names(protected, OAuth(open_url=broken, store=tmp_path / "t.json")))
    assert time.monotonic() - started < 10


def test_when_a_token_counts_as_about_to_expire() -> None:
    from promptdeck.client.oauth import REFRESH_MARGIN, _Grant

    now = time.time()

    def expiring(**tokens: float) -> bool:
        return _Grant("r", "i", {"access_token": "t", **tokens}).expiring()
    assert not expiring()  # no expiry given: used until the server refuses it
    assert expiring(expires_at=now + REFRESH_MARGIN - 5) and not expiring(expires_at=now + REFRESH_MARGIN + 5)
    # A token that lives 4 s is not refreshed on every request, only in its second half.
    assert not expiring(expires_at=now + 3, expires_in=4) and expiring(expires_at=now + 1.5, expires_in=4)


def test_tokens_kept_in_memory_only_are_refreshed_too(issuer: str, protected: str) -> None:
    browser = Browser()
    auth = OAuth(open_url=browser, store=False)

    async def run() -> None:
        async with connect(protected, auth=auth, timeout=10) as client:
            await client.list_prompts()
            grant = auth._grants[protected]
            grant.tokens["expires_at"] = time.time()  # about to expire
            before = stats(issuer).get("refresh_token", 0)
            await client.list_prompts(refresh=True)
            assert stats(issuer)["refresh_token"] == before + 1
            assert auth._grants[protected].access_token != grant.access_token
    asyncio.run(run())
    assert len(browser.visited) == 1


def test_a_sign_in_longer_than_the_probe_and_the_request_timeout_is_waited_for(protected: str,
                                                                               tmp_path: Path) -> None:
    """The request that met the 401 stops its timer while the person signs in, then has what was left."""
    def slow(url: str) -> None:
        time.sleep(1.2)
        sign_in(url)

    async def listed() -> int:
        async with connect(protected, auth=OAuth(open_url=slow, store=tmp_path / "t.json"), timeout=1,
                           probe_timeout=0.5) as client:
            return len(await client.list_prompts())
    assert asyncio.run(listed()) > 0


def expire_all(store: Path) -> None:
    def expire(doc: dict[str, Any]) -> None:
        for tokens in doc["tokens"].values():
            tokens["expires_at"] = int(time.time())
    TokenStore(store).update(expire)


def test_the_credentials_of_two_issuers_are_kept_apart(tmp_path: Path) -> None:
    """One token file, two servers each with its own authorization server: a registration per issuer, tokens
    per resource and issuer, and each refresh sent to its issuer with the client registered there."""
    store = tmp_path / "tokens.json"
    with authorization_server() as one, authorization_server() as two, resource_server(one) as a, \
            resource_server(two) as b:
        auth = OAuth(open_url=Browser(), store=store)
        for url in (a, b):
            assert asyncio.run(names(url, auth))
        saved = json.loads(store.read_text())
        assert sorted(saved["clients"]) == sorted([one, two])
        clients = {issuer: saved["clients"][issuer]["client_id"] for issuer in (one, two)}
        assert clients[one] != clients[two]
        assert saved["servers"] == {a: {"resource": a, "issuer": one}, b: {"resource": b, "issuer": two}}
        assert sorted(saved["tokens"]) == sorted([f"{a} {one}", f"{b} {two}"])
        for url, issuer in ((a, one), (b, two)):
            assert saved["tokens"][f"{url} {issuer}"]["client_id"] == clients[issuer]
            assert stats(issuer)["signed_in_as"] == [clients[issuer]]
        # Both tokens about to expire: each is refreshed by its own issuer, with its own client (another
        # issuer's client would be refused there, and the browser, which must not open, asked instead).
        expire_all(store)
        for url in (a, b):
            assert asyncio.run(names(url, OAuth(open_url=no_browser, store=store)))
        assert stats(one)["refresh_token"] == 1 and stats(two)["refresh_token"] == 1


CIMD = "https://app.example/promptdeck/client.json"


def test_a_client_id_metadata_document_is_used_where_the_server_reads_them(tmp_path: Path) -> None:
    """``OAuth(client_id=URL)``: that URL is the client id with a server advertising
    client_id_metadata_document_supported (no registration); another server gets a registration instead."""
    with authorization_server("--cimd") as reads, authorization_server() as does_not, resource_server(reads) as a, \
            resource_server(does_not) as b:
        store = tmp_path / "tokens.json"
        for url in (a, b):
            assert asyncio.run(names(url, OAuth(client_id=CIMD, open_url=Browser(), store=store)))
        assert stats(reads)["signed_in_as"] == [CIMD] and "register" not in stats(reads)
        registered = json.loads(store.read_text())["clients"][does_not]["client_id"]
        assert stats(does_not)["register"] == 1 and stats(does_not)["signed_in_as"] == [registered] != [CIMD]
        # Each is refreshed with the client it signed in with.
        expire_all(store)
        for url in (a, b):
            assert asyncio.run(names(url, OAuth(client_id=CIMD, open_url=no_browser, store=store)))
        assert stats(reads)["refresh_token"] == 1 and stats(does_not)["refresh_token"] == 1


def test_a_configured_client_is_not_sent_to_another_issuer(tmp_path: Path) -> None:
    """SEP-2352: a client id registered with one authorization server is bound to it; a server naming another
    is refused before the browser opens or anything reaches that server."""
    with authorization_server() as one, authorization_server() as two, resource_server(one) as a, \
            resource_server(two) as b:
        auth = OAuth(client_id=PUBLIC_ID, open_url=Browser(), store=tmp_path / "tokens.json")
        assert asyncio.run(names(a, auth))
        with pytest.raises(OAuthError, match=f"{b} signs in with the authorization server {two}, but the client id "
                                             f"'{PUBLIC_ID}' is {one}'s; refused, nothing was sent there"):
            asyncio.run(names(b, auth))
        assert "authorize" not in stats(two)
