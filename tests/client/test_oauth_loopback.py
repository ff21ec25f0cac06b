"""The sign-in's loopback redirect (client/oauth_loopback.py): a real listener on 127.0.0.1 that takes the
first answer carrying our state, refuses another issuer's answer (RFC 9207) and times out naming its URL."""

from __future__ import annotations

import httpx
import pytest

from promptdeck.client.oauth_loopback import CALLBACK, Loopback, check_response_issuer
from promptdeck.protocol.errors import OAuthError
from tests.support.client_servers import run

ISSUER = "https://auth.example"



def test_the_issuer_check() -> None:
    check_response_issuer(None, None, True)  # no metadata issuer: nothing to compare
    check_response_issuer(ISSUER, ISSUER, True)
    check_response_issuer(None, ISSUER, False)  # the server does not say it sends one
    with pytest.raises(OAuthError, match=r"names no issuer \(iss\), yet https://auth.example says it always does"):
        check_response_issuer(None, ISSUER, True)
    with pytest.raises(OAuthError, match=r"comes from issuer 'https://auth.example/', not from https://auth.example"):
        check_response_issuer(ISSUER + "/", ISSUER, False)  # compared exactly, no normalization


def test_the_first_answer_with_our_state_gives_the_code() -> None:
    async def main() -> tuple[str, list[int], str]:
        async with Loopback(issuer=ISSUER) as loop, httpx.AsyncClient(trust_env=False) as http:
            assert loop.port and loop.redirect_uri == f"http://127.0.0.1:{loop.port}{CALLBACK}"
            statuses = [(await http.get(loop.redirect_uri, params={"state": "guessed", "code": "x"})).status_code,
                        (await http.get(loop.redirect_uri, params={"state": loop.state})).status_code]
            done = await http.get(loop.redirect_uri, params={"state": loop.state, "code": "c0de", "iss": ISSUER})
            statuses.append(done.status_code)
            statuses.append((await http.get(loop.redirect_uri, params={"state": loop.state, "code": "again",
                                                                      "iss": ISSUER})).status_code)
            return await loop.code(30), statuses, done.text

    code, statuses, page = run(main())
    assert code == "c0de"
    assert statuses == [400, 400, 200, 400]  # a guessed state and a missing code are ignored; once is enough
    assert "Signed in" in page


def test_an_answer_from_another_issuer_ends_the_sign_in() -> None:
    async def main() -> tuple[int, str]:
        async with Loopback(issuer=ISSUER) as loop, httpx.AsyncClient(trust_env=False) as http:
            answer = await http.get(loop.redirect_uri, params={"state": loop.state, "code": "c",
                                                               "iss": "https://evil.example"})
            with pytest.raises(OAuthError, match="comes from issuer 'https://evil.example'"):
                await loop.code(30)
            return answer.status_code, answer.text

    status, page = run(main())
    assert status == 400 and "Sign-in failed" in page


def test_a_refusal_from_the_server_is_reported_with_its_description() -> None:
    async def main() -> None:
        async with Loopback() as loop, httpx.AsyncClient(trust_env=False) as http:
            await http.get(loop.redirect_uri, params={"state": loop.state, "error": "access_denied",
                                                      "error_description": "the user said no"})
            with pytest.raises(OAuthError, match=r"refused the sign-in: access_denied \(the user said no\)"):
                await loop.code(30)

    run(main())


def test_no_answer_in_time_names_the_redirect() -> None:
    async def main() -> None:
        async with Loopback() as loop:
            with pytest.raises(OAuthError, match=rf"no sign-in came back to {loop.redirect_uri} within 0.01 s"):
                await loop.code(0.01)

    run(main())


def test_a_port_in_use_is_refused_naming_it() -> None:
    async def main() -> None:
        async with Loopback() as first:
            with pytest.raises(OAuthError, match=f"cannot listen on 127.0.0.1:{first.port}"):
                async with Loopback(first.port):
                    pass

    run(main())
