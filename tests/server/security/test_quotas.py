"""What one principal may hold at once (server/security/quotas.py): both caps apply, 429 past a principal's
share and 503 past the total, and Retry-After said only when it is known."""

from __future__ import annotations

import pytest

from promptdeck.protocol.errors import HttpError
from promptdeck.server.security.quotas import Quota, Refusal


def test_a_principals_share_and_the_total_both_apply() -> None:
    streams = Quota("streams", total=3, per_principal=2)
    assert streams.refusal("ann") is None
    with streams.hold("ann"), streams.hold("ann"):
        assert (streams.held("ann"), streams.count) == (2, 2)
        mine = streams.refusal("ann")
        assert mine is not None and mine.status == 429
        assert mine.message == "too many open streams for this principal (at most 2); close one first"
        assert streams.refusal("bob") is None
        with streams.hold("bob"):
            full = streams.refusal("carol")
            assert full is not None and (full.status, full.message) == (
                503, "too many open streams (at most 3); try again later")
    assert (streams.held("ann"), streams.count) == (0, 0)


def test_what_is_held_elsewhere_counts_too() -> None:
    sessions = Quota("sessions", total=10, per_principal=2)
    assert sessions.refusal("ann", also_held=1) is None
    assert sessions.refusal("ann", also_held=2) is not None
    refused = sessions.refusal("ann", adding=1, also_total=10)
    assert refused is not None and refused.status == 503


def test_a_hold_is_given_back_when_its_block_fails() -> None:
    quota = Quota("streams", total=1, per_principal=1)
    with pytest.raises(RuntimeError), quota.hold("ann"):
        raise RuntimeError("the stream broke")
    assert quota.refusal("ann") is None


def test_retry_after_is_whole_seconds_or_absent() -> None:
    assert Refusal(503, "later", 0.2).headers == [(b"retry-after", b"1")]
    assert Refusal(503, "later", 2.1).headers == [(b"retry-after", b"3")]
    unknown = Refusal(429, "close one")
    assert unknown.headers == [] and unknown.retry_after is None
    assert isinstance(unknown, HttpError)
