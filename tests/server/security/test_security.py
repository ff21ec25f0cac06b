"""Bearer tokens, rate limits, metrics and the audit log of the HTTP front."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from promptdeck.logs import JsonFormatter, TextFormatter, escape, field
from promptdeck.prompts.access import grants
from promptdeck.protocol.errors import AuthError, LibraryError
from promptdeck.server.security.audit import Metrics, log_get
from promptdeck.server.security.principals import Principal, missing_scopes
from promptdeck.server.security.ratelimit import RateLimiter
from promptdeck.server.security.tokens import BearerTokens


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
    import asyncio

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


@pytest.mark.parametrize(("held", "needed", "granted"), [
    (None, "anything", True),
    (frozenset(), "hr", False),
    (frozenset({"hr"}), "hr", True),
    (frozenset({"prompts"}), "prompts:hr", True),
    (frozenset({"prompts"}), "prompts:hr:payroll", True),
    (frozenset({"prompts:hr"}), "prompts", False),
    (frozenset({"prompts:hr"}), "prompts:hr:payroll", True),
    (frozenset({"prompts:h"}), "prompts:hr", False),
    (frozenset({"prompt"}), "prompts:hr", False),
])
def test_scopes_nest_on_colons(held: frozenset[str] | None, needed: str, granted: bool) -> None:
    assert grants(held, needed) is granted
    assert missing_scopes(held, [needed, "x"] if held is not None else [needed]) == (
        ((needed,) if not granted else ()) + (("x",) if held is not None else ()))


def test_rate_limiter_refills_over_time() -> None:
    limiter = RateLimiter(per_minute=60)
    assert all(limiter.check("a", now=100.0) == 0 for _ in range(60))
    wait = limiter.check("a", now=100.0)
    assert 0.9 < wait <= 1.0
    assert limiter.check("b", now=100.0) == 0  # principals do not share a bucket
    assert limiter.check("a", now=101.1) == 0


def test_metrics_render_prometheus_text() -> None:
    metrics = Metrics()
    metrics.observe("prompts/get", "ok", 0.002)
    metrics.observe("prompts/get", "error", 0.3)
    text = metrics.render(sessions=2, prompts=10).decode()
    assert 'promptdeck_requests_total{method="prompts/get",outcome="ok"} 1' in text
    assert 'promptdeck_request_seconds_bucket{le="0.0025"} 1' in text
    assert 'promptdeck_request_seconds_bucket{le="+Inf"} 2' in text
    assert "promptdeck_sessions 2" in text and "promptdeck_prompts 10" in text


def test_audit_line_names_who_and_what_but_no_values(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="promptdeck.audit")
    log_get("alice", "code-review", "ok", 0.0031)
    [record] = caplog.records
    assert record.getMessage() == "prompts/get principal=alice prompt='code-review' outcome=ok duration_ms=3.10"


def test_text_log_lines_escape_controls_and_indent_tracebacks() -> None:
    assert escape("a\nb\r\x1b[2J\x85\u2028\u202e") == "a\\x0ab\\x0d\\x1b[2J\\x85\\u2028\\u202e"
    assert field("alice") == "alice" and field("eve outcome=ok") == '"eve outcome=ok"'
    # A call site that passes a client's value raw: the formatter still keeps the record on one line.
    raw = logging.LogRecord("promptdeck.server", logging.ERROR, __file__, 1, "method %s failed", ("x\ny",), None)
    assert TextFormatter().format(raw) == "promptdeck ERROR method x\\x0ay failed"
    try:
        raise ValueError("bad\npromptdeck INFO forged")
    except ValueError:
        raw.exc_info = sys.exc_info()
        raw.exc_text = None
    lines = TextFormatter().format(raw).splitlines()
    assert lines[0] == "promptdeck ERROR method x\\x0ay failed" and len(lines) > 2
    assert all(line.startswith("    | ") for line in lines[1:]), lines
    parsed = json.loads(JsonFormatter().format(raw))
    assert parsed["message"] == "method x\ny failed" and "forged" in parsed["exception"]
