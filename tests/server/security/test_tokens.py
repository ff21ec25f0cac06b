"""Static bearer tokens (server/security/tokens.py): read from a file or the environment, matched in constant
time, missing told from invalid, the challenge a 401 or 403 carries, and a bad token file named at its line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from promptdeck.protocol.errors import AuthError, LibraryError
from promptdeck.server.security.principals import Principal
from promptdeck.server.security.tokens import BearerTokens, bearer, bearer_challenge


def test_tokens_from_a_file_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tokens"
    path.write_text("# team tokens\nalice: a-very-long-secret-token-1 hr prompts:legal\n"
                    "bob:another-long-secret-token\n")
    tokens = BearerTokens.load(str(path))
    assert tokens is not None
    alice = Principal("alice", frozenset({"hr", "prompts:legal"}))
    assert tokens.principal("Bearer a-very-long-secret-token-1") == alice
    assert tokens.principal("bearer another-long-secret-token") == Principal("bob", frozenset())
    for bad in (None, "", "Bearer", "Basic a-very-long-secret-token-1", "Bearer a-very-long-secret-token-2"):
        assert tokens.principal(bad) is None
    monkeypatch.setenv("PROMPTDECK_TOKENS", "ci:0123456789abcdef0123,ops:fedcba9876543210fedc")
    from_env = BearerTokens.load(None)
    assert from_env is not None and from_env.principal("Bearer fedcba9876543210fedc") == Principal("ops")
    monkeypatch.delenv("PROMPTDECK_TOKENS")
    assert BearerTokens.load(None) is None


def test_bad_token_files_say_where(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("alice-without-a-colon\n")
    with pytest.raises(LibraryError, match=r"tokens:1: expected name:token"):
        BearerTokens.load(str(path))
    path.write_text("ok:0123456789abcdef0123\nalice:\n")
    with pytest.raises(LibraryError, match=r"tokens:2: expected name:token"):
        BearerTokens.load(str(path))
    path.write_text("alice:short\n")
    with pytest.raises(LibraryError, match="shorter than 16"):
        BearerTokens.load(str(path))
    with pytest.raises(LibraryError, match="cannot read token file"):
        BearerTokens.load(str(tmp_path / "missing"))


async def _authenticate(tokens: BearerTokens, header: str | None) -> Principal:
    return await tokens.authenticate(header)


def test_authenticate_tells_missing_from_invalid_tokens() -> None:
    tokens = BearerTokens([("alice", "a-very-long-secret-token-1", ["hr"])])
    assert asyncio.run(_authenticate(tokens, "Bearer a-very-long-secret-token-1")).scopes == frozenset({"hr"})
    with pytest.raises(AuthError) as missing:
        asyncio.run(_authenticate(tokens, None))
    assert missing.value.error is None and missing.value.status == 401
    assert tokens.challenge(missing.value) == b'Bearer realm="promptdeck"'
    with pytest.raises(AuthError) as invalid:
        asyncio.run(_authenticate(tokens, "Bearer wrong-token-of-some-length"))
    assert invalid.value.error == "invalid_token"
    assert b'error="invalid_token"' in tokens.challenge(invalid.value)


def test_bearer_reads_the_token_of_the_bearer_scheme_only() -> None:
    assert bearer("Bearer  abc ") == "abc"
    assert bearer("bEaReR abc") == "abc"
    assert bearer("Basic abc") is None and bearer("Bearer ") is None and bearer(None) is None


def test_a_challenge_says_the_error_and_the_scopes_needed() -> None:
    refused = AuthError('needs "hr"', status=403, error="insufficient_scope", scopes=("hr", "prompts:legal"))
    assert bearer_challenge(refused, b'resource_metadata="https://x/.well-known"') == (
        b'Bearer realm="promptdeck", error="insufficient_scope", error_description="needs \'hr\'", '
        b'scope="hr prompts:legal", resource_metadata="https://x/.well-known"')


def test_no_tokens_at_all_is_refused() -> None:
    with pytest.raises(LibraryError, match="no bearer tokens given"):
        BearerTokens([])


def test_a_token_given_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("alice:0123456789abcdef0123\n# rotation\nbob:0123456789abcdef0123\n")
    with pytest.raises(LibraryError, match=r"tokens:3: the same token as line 1") as caught:
        BearerTokens.load(str(path))
    assert "0123456789abcdef0123" not in str(caught.value)
    path.write_text("alice:0123456789abcdef0123\nalice:fedcba9876543210fedc\n")  # two tokens for one name: fine
    assert len(BearerTokens.load(str(path)) or ()) == 2
