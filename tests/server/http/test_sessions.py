"""The per-principal caps of ``server/limits.py``, as units (the attacks are in tests/attack/test_limits.py)."""

from __future__ import annotations

import pytest

from promptdeck.server.security.quotas import Quota, Refusal


def test_a_quota_caps_each_principal_and_the_total_and_frees_on_exit() -> None:
    quota = Quota("streams", total=3, per_principal=2)
    with quota.hold("alice"), quota.hold("alice"):
        refusal = quota.refusal("alice")
        assert refusal is not None and refusal.status == 429 and refusal.retry_after is None
        assert quota.refusal("bob") is None
        with quota.hold("bob"):
            full = quota.refusal("carol")
            assert full is not None and full.status == 503
        assert quota.refusal("alice", also_held=0) is not None and quota.refusal("bob", adding=1) is None
        assert quota.refusal("bob", adding=2) is not None  # adding two would pass the total
    assert quota.count == 0 and quota.held("alice") == 0
    with pytest.raises(RuntimeError), quota.hold("alice"):
        raise RuntimeError  # a stream that fails still gives its slot back
    assert quota.count == 0


def test_retry_after_is_whole_seconds_rounded_up_and_absent_when_unknown() -> None:
    assert Refusal(429, "x", 1799.2).headers == [(b"retry-after", b"1800")]
    assert Refusal(503, "x", -3.0).headers == [(b"retry-after", b"1")]
    assert Refusal(503, "x").headers == []
