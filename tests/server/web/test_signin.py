"""``promptdeck ui``'s one-time sign-in codes (server/signin.py); the attacks on them, with real processes and
chromium, are in tests/attack/test_ui_signin.py."""

from __future__ import annotations

import asyncio
import time

import pytest

from promptdeck.protocol.errors import AuthError, LibraryError
from promptdeck.server.web.signin import PRINCIPAL, SignIn

SECRET = "the-runs-own-token-0123"


def signed_in(signin: SignIn, token: str) -> bool:
    try:
        return asyncio.run(signin.authenticate(f"Bearer {token}")) == PRINCIPAL
    except AuthError:
        return False


def test_a_code_gives_a_token_of_its_own_once() -> None:
    signin = SignIn(SECRET)
    code = signin.code()
    assert not signed_in(signin, code)  # a code is no token
    token = signin.exchange(code)
    assert token not in (code, SECRET) and signed_in(signin, token) and signed_in(signin, SECRET)
    with pytest.raises(AuthError, match="already used"):
        signin.exchange(code)
    # One of the two holders of the code was someone else: the token it gave goes; the run's own stays.
    assert not signed_in(signin, token) and signed_in(signin, SECRET)


def test_a_code_lasts_seconds_and_an_unknown_one_is_refused() -> None:
    signin = SignIn(SECRET, code_seconds=0.05)
    late, fresh = signin.code(), signin.code()
    time.sleep(0.1)
    with pytest.raises(AuthError, match="not valid"):
        signin.exchange(late)
    with pytest.raises(AuthError, match="not valid"):
        signin.exchange("made-up-" + fresh[8:])
    other = SignIn(SECRET)
    with pytest.raises(AuthError, match="not valid"):
        other.exchange(other.code()[::-1])


def test_no_token_or_a_short_run_token_is_refused() -> None:
    with pytest.raises(LibraryError, match="shorter than 16"):
        SignIn("short")
    signin = SignIn(SECRET)
    for header in (None, "", "Basic x", f"Bearer {SECRET}x"):
        with pytest.raises(AuthError):
            asyncio.run(signin.authenticate(header))
