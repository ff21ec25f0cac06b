"""What stands in front of the HTTP endpoint: principals, bearer tokens, rate limits, metrics and the audit log.

Tokens are compared in constant time and never logged; the audit log names the
principal (the token's name, or the client address without auth), never the
token or argument values.

Scopes are hierarchical on ``:``: holding ``prompts`` grants ``prompts:hr`` and
``prompts:hr:payroll``, never the reverse.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ...logs import field as log_field
from ...prompts.access import grants
from ...protocol.errors import AuthError, InvalidRequest, LibraryError, McpError
from ...protocol.jsonrpc import Request

audit = logging.getLogger("promptdeck.audit")

TOKENS_ENV = "PROMPTDECK_TOKENS"
#: The scope that lets a principal write to the store through ``/api/store`` (``serve --write-scope``).
DEFAULT_WRITE_SCOPE = "store:write"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sent a request. ``scopes`` None means trusted with every prompt (a local stdio client)."""

    name: str
    scopes: frozenset[str] | None = frozenset()


LOCAL = Principal("local", None)


def missing_scopes(held: frozenset[str] | None, needed: Iterable[str]) -> tuple[str, ...]:
    return tuple(scope for scope in needed if not grants(held, scope))


class BearerTokens:
    """Static bearer tokens: ``name:token [scope ...]`` lines from a file (``#`` comments) or the environment."""

    def __init__(self, entries: Iterable[tuple[str, str] | tuple[str, str, Iterable[str]]]) -> None:
        self._tokens: list[tuple[Principal, bytes]] = []
        for entry in entries:
            scopes: frozenset[str] = frozenset(entry[2]) if len(entry) > 2 else frozenset()
            self._tokens.append((Principal(entry[0], scopes), entry[1].encode()))
        if not self._tokens:
            raise LibraryError("no bearer tokens given")
        for principal, secret in self._tokens:
            if len(secret) < 16:
                raise LibraryError(f"bearer token {principal.name!r} is shorter than 16 characters")

    @classmethod
    def parse(cls, text: str, where: str) -> BearerTokens:
        entries: list[tuple[str, str, list[str]]] = []
        for number, raw in enumerate(text.replace(",", "\n").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, rest = line.partition(":")
            words = rest.split()
            if not sep or not name.strip() or not words:
                raise LibraryError(f"{where}:{number}: expected name:token [scope ...]")
            entries.append((name.strip(), words[0], words[1:]))
        return cls(entries)

    @classmethod
    def load(cls, path: str | None) -> BearerTokens | None:
        """Tokens from ``path``, else from $PROMPTDECK_TOKENS, else None (no authentication)."""
        if path is not None:
            try:
                with open(path, encoding="utf-8") as fh:
                    return cls.parse(fh.read(), path)
            except OSError as exc:
                raise LibraryError(f"cannot read token file {path!r}: {exc.strerror}") from None
        value = os.environ.get(TOKENS_ENV)
        return cls.parse(value, f"${TOKENS_ENV}") if value else None

    def principal(self, authorization: str | None) -> Principal | None:
        """The principal whose token is in an ``Authorization: Bearer`` header, or None."""
        presented = bearer(authorization)
        if presented is None:
            return None
        candidate = presented.encode()
        found = None
        for principal, token in self._tokens:  # check them all: the time taken says nothing about which matched
            if hmac.compare_digest(candidate, token):
                found = principal
        return found

    async def authenticate(self, authorization: str | None) -> Principal:
        principal = self.principal(authorization)
        if principal is None:
            if bearer(authorization) is None:
                raise AuthError("a bearer token is required", error=None)
            raise AuthError("the bearer token is not valid")
        return principal

    def challenge(self, error: AuthError) -> bytes:
        return bearer_challenge(error, b"")


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if authorization is None:
        return None
    scheme, _, presented = authorization.partition(" ")
    presented = presented.strip()
    return presented if scheme.lower() == "bearer" and presented else None


def bearer_challenge(error: AuthError, extra: bytes) -> bytes:
    """A ``WWW-Authenticate`` value (RFC 6750 section 3) for ``error``."""
    parts = [b'Bearer realm="promptdeck"']
    if error.error is not None:
        parts.append(b'error="%s"' % error.error.encode())
        parts.append(b'error_description="%s"' % error.message.replace('"', "'").encode("ascii", "replace"))
    if error.scopes:
        parts.append(b'scope="%s"' % " ".join(error.scopes).encode("ascii", "replace"))
    if extra:
        parts.append(extra)
    return b", ".join(parts)


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


BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


@dataclass
class Metrics:
    """Counters in the Prometheus text format, for ``/metrics``."""

    requests: dict[tuple[str, str], int] = field(default_factory=dict)
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    duration_sum: float = 0.0
    duration_count: int = 0

    def observe(self, method: str, outcome: str, seconds: float) -> None:
        key = (method, outcome)
        self.requests[key] = self.requests.get(key, 0) + 1
        self.buckets[bisect_left(BUCKETS, seconds)] += 1
        self.duration_sum += seconds
        self.duration_count += 1

    def render(self, sessions: int, prompts: int) -> bytes:
        lines = ["# HELP promptdeck_requests_total JSON-RPC requests by method and outcome.",
                 "# TYPE promptdeck_requests_total counter"]
        for (method, outcome), count in sorted(self.requests.items()):
            lines.append(f'promptdeck_requests_total{{method="{method}",outcome="{outcome}"}} {count}')
        lines += ["# HELP promptdeck_request_seconds Time to answer a JSON-RPC request.",
                  "# TYPE promptdeck_request_seconds histogram"]
        total = 0
        for bound, count in zip(BUCKETS, self.buckets, strict=False):
            total += count
            lines.append(f'promptdeck_request_seconds_bucket{{le="{bound}"}} {total}')
        lines.append(f'promptdeck_request_seconds_bucket{{le="+Inf"}} {self.duration_count}')
        lines.append(f"promptdeck_request_seconds_sum {self.duration_sum:.6f}")
        lines.append(f"promptdeck_request_seconds_count {self.duration_count}")
        lines += ["# HELP promptdeck_sessions Live HTTP sessions.", "# TYPE promptdeck_sessions gauge",
                  f"promptdeck_sessions {sessions}",
                  "# HELP promptdeck_prompts Prompts the asker may see.", "# TYPE promptdeck_prompts gauge",
                  f"promptdeck_prompts {prompts}"]
        return ("\n".join(lines) + "\n").encode()


def log_get(principal: str, prompt: object, outcome: str, seconds: float) -> None:
    """One audit line per prompts/get: who, which prompt, outcome, duration. Never argument values."""
    name = prompt if isinstance(prompt, str) else None
    audit.info("prompts/get principal=%s prompt=%r outcome=%s duration_ms=%.2f", log_field(principal), name, outcome,
               seconds * 1000, extra={"principal": principal, "prompt": name, "outcome": outcome,
                                      "duration_ms": round(seconds * 1000, 2)})


def log_call(principal: str, tool: object, prompt: object, outcome: str, seconds: float) -> None:
    """One audit line per tools/call, as for prompts/get: who, which tool (and prompt), outcome, duration."""
    tool = tool if isinstance(tool, str) else None
    prompt = prompt if isinstance(prompt, str) else None
    audit.info("tools/call principal=%s tool=%r prompt=%r outcome=%s duration_ms=%.2f", log_field(principal), tool,
               prompt, outcome, seconds * 1000,
               extra={"principal": principal, "tool": tool, "prompt": prompt, "outcome": outcome,
                      "duration_ms": round(seconds * 1000, 2)})
