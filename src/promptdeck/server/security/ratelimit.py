"""Rate limits: a token bucket per principal, counted by JSON-RPC request."""

from __future__ import annotations

import time
from collections.abc import Callable

from ...protocol.errors import InvalidRequest, McpError
from ...protocol.jsonrpc import Request


class RateLimiter:
    """A token bucket per principal: ``per_minute`` requests, refilled continuously.

    A request is a JSON-RPC request, not an HTTP one: the transport takes one token at the door and one
    more for each further request of a 2025-03-26 batch (``admit``), so 100 in one body cost 100.
    """

    def __init__(self, per_minute: int, max_principals: int = 100_000) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.max_principals = max_principals
        self._buckets: dict[str, tuple[float, float]] = {}

    def check(self, principal: str, now: float | None = None) -> float:
        """0 when the request may go ahead, else the seconds to wait."""
        now = time.monotonic() if now is None else now
        tokens, then = self._buckets.get(principal, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.rate)
        if tokens >= 1:
            if len(self._buckets) >= self.max_principals and principal not in self._buckets:
                self._buckets.clear()  # bounded memory; a reset only ever forgives
            self._buckets[principal] = (tokens - 1, now)
            return 0.0
        self._buckets[principal] = (tokens, now)
        return (1 - tokens) / self.rate

    def admit(self, principal: str) -> Callable[[Request], McpError | None]:
        """For a batch whose first request was counted at the door: a check of each request in order,
        None while the principal has tokens left, else the error that request is answered with."""
        counted = [False]

        def check(request: Request) -> McpError | None:
            if not counted[0]:
                counted[0] = True  # the HTTP request's token pays for it
                return None
            wait = self.check(principal)
            return too_many(wait) if wait > 0 else None

        return check


def retry_after(wait: float) -> int:
    """The whole seconds of ``Retry-After`` (and a batch error's ``retryAfter``) for a wait of ``wait``."""
    return max(1, round(wait + 0.5))


def too_many(wait: float) -> InvalidRequest:
    """The rate-limit error. Over HTTP alone it is a 429 with ``Retry-After``; inside a batch, which other
    requests' answers share, it answers just its request, with the seconds to wait in ``data``."""
    return InvalidRequest("too many requests; slow down", {"retryAfter": retry_after(wait)})
