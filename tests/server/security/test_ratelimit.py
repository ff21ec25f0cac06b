"""Rate limits (server/security/ratelimit.py): a token bucket per principal, refilled continuously, a batch
counted request by request, and the refusal saying how long to wait."""

from __future__ import annotations

from promptdeck.protocol.errors import INVALID_REQUEST
from promptdeck.protocol.jsonrpc import Request
from promptdeck.server.security.ratelimit import RateLimiter, retry_after, too_many


def test_rate_limiter_refills_over_time() -> None:
    limiter = RateLimiter(per_minute=60)
    assert all(limiter.check("a", now=100.0) == 0 for _ in range(60))
    wait = limiter.check("a", now=100.0)
    assert 0.9 < wait <= 1.0
    assert limiter.check("b", now=100.0) == 0  # principals do not share a bucket
    assert limiter.check("a", now=101.1) == 0


def test_a_batch_pays_one_token_a_request_after_the_first() -> None:
    limiter = RateLimiter(per_minute=3)
    assert limiter.check("a") == 0  # the HTTP request, at the door
    check = limiter.admit("a")
    answers = [check(Request(n, "ping", None)) for n in range(4)]
    assert answers[:3] == [None, None, None]  # the first was paid at the door; two tokens were left
    refused = answers[3]
    assert refused is not None and refused.code == INVALID_REQUEST and refused.data["retryAfter"] >= 1


def test_the_refusal_and_its_whole_seconds() -> None:
    assert [retry_after(wait) for wait in (0.0, 0.2, 1.0, 2.4)] == [1, 1, 2, 3]
    error = too_many(5.0)
    assert (error.message, error.data) == ("too many requests; slow down", {"retryAfter": 6})


def test_memory_is_bounded_by_forgiving() -> None:
    limiter = RateLimiter(per_minute=1, max_principals=2)
    assert limiter.check("a", now=0.0) == 0 and limiter.check("b", now=0.0) == 0
    assert limiter.check("a", now=0.0) > 0
    assert limiter.check("c", now=0.0) == 0  # a third principal: the buckets start again
    assert limiter.check("a", now=0.0) == 0
