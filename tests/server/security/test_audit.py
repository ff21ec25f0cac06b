"""What the HTTP endpoint records (server/security/audit.py): Prometheus text for ``/metrics``, and one audit
line per render or tool call naming who and what, never argument values, and nothing made below -v."""

from __future__ import annotations

import logging

import pytest

from promptdeck.server.security.audit import Metrics, log_call, log_get, served


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
    assert record.getMessage() == \
        "prompts/get principal=alice prompt='code-review' version=- label=- outcome=ok duration_ms=3.10"


def test_audit_line_names_the_version_and_label_rendered(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="promptdeck.audit")
    answer = (b'{"jsonrpc":"2.0","id":1,"result":{"messages":[],'
              b'"_meta":{"promptdeck.dev/version":7,"promptdeck.dev/label":"prod\\nprompts/get x"}}}')
    log_get("alice", "code-review", "ok", 0.001, answer)
    [record] = caplog.records
    assert record.getMessage() == ('prompts/get principal=alice prompt=\'code-review\' version=7 '
                                   'label="prod\\nprompts/get x" outcome=ok duration_ms=1.00')
    assert (record.version, record.label) == (7, "prod\nprompts/get x")  # type: ignore[attr-defined]


def test_an_answer_that_is_no_result_names_no_version() -> None:
    assert served(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}') == (None, None)
    assert served(b"not json") == (None, None)
    assert served(b'{"result":{"_meta":{"promptdeck.dev/version":"7"}}}') == (None, None)


def test_a_tool_call_is_audited_with_its_prompt(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="promptdeck.audit")
    log_call("eve outcome=ok", "get_prompt", 42, "error", 0.5)
    [record] = caplog.records
    assert record.getMessage() == ("tools/call principal=\"eve outcome=ok\" tool='get_prompt' prompt=None "
                                   "outcome=error duration_ms=500.00")
    assert (record.principal, record.prompt) == ("eve outcome=ok", None)  # type: ignore[attr-defined]


def test_nothing_is_logged_below_info(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="promptdeck.audit")
    log_get("alice", "code-review", "ok", 0.1)
    log_call("alice", "t", "p", "ok", 0.1)
    assert caplog.records == []
