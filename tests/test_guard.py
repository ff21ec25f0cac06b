"""Bearer tokens, rate limits, metrics and the audit log of the HTTP front."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.protocol.errors import LibraryError
from promptdeck.server.guard import BearerTokens, Metrics, RateLimiter, log_get


def test_tokens_from_a_file_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tokens"
    path.write_text("# team tokens\nalice: a-very-long-secret-token-1\nbob:another-long-secret-token\n")
    tokens = BearerTokens.load(str(path))
    assert tokens is not None
    assert tokens.principal("Bearer a-very-long-secret-token-1") == "alice"
    assert tokens.principal("bearer another-long-secret-token") == "bob"
    for bad in (None, "", "Bearer", "Basic a-very-long-secret-token-1", "Bearer a-very-long-secret-token-2"):
        assert tokens.principal(bad) is None
    monkeypatch.setenv("PROMPTDECK_TOKENS", "ci:0123456789abcdef0123,ops:fedcba9876543210fedc")
    from_env = BearerTokens.load(None)
    assert from_env is not None and from_env.principal("Bearer fedcba9876543210fedc") == "ops"
    monkeypatch.delenv("PROMPTDECK_TOKENS")
    assert BearerTokens.load(None) is None


def test_bad_token_files_say_where(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("alice-without-a-colon\n")
    with pytest.raises(LibraryError, match=r"tokens:1: expected name:token"):
        BearerTokens.load(str(path))
    path.write_text("alice:short\n")
    with pytest.raises(LibraryError, match="shorter than 16"):
        BearerTokens.load(str(path))
    with pytest.raises(LibraryError, match="cannot read token file"):
        BearerTokens.load(str(tmp_path / "missing"))


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
