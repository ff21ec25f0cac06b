"""What one principal may hold, and how large one request's answer may grow.

Everything a principal keeps open is capped for that principal as well as in
total, so that one principal filling its own share leaves the rest to everyone
else (one principal once opened 1,000 sessions and locked every other out):

- sessions of both HTTP transports (``session_refusal``), 100 per principal
  and 1,000 in all by default;
- open streams (``stream_refusal``): GET streams, 2024-11-05 ``/sse`` streams,
  2026-07-28 ``subscriptions/listen`` streams, and subscriptions made inside a
  legacy session, which push on their session's stream.

Past its own share a principal gets 429, past the total 503. ``Retry-After``
tells the truth: the moment the first idle session that counts expires, or no
header at all when nothing frees a slot at a known time (a stream ends when its
client closes it). A principal is the name the authenticator gives (a token's
name or subject), or the client address without authentication.

A batch's joined answers are bounded too (``outcome.join``, on top of
``jsonrpc.MAX_BATCH``): 64,000 ``prompts/list`` in one body once made 455 MB.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...protocol import jsonrpc
from ...protocol.errors import InvalidRequest
from ...protocol.jsonrpc import Request
from ..asgi import Send, respond_error
from ..modern import modern_meta

if TYPE_CHECKING:
    from .app import StreamableHttpApp


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a principal may not open one more session or stream: the HTTP status, what to say, and when to retry.

    ``retry_after`` is the seconds until a slot really frees (an idle session's expiry), or None when
    nothing says when (a slot held by an open stream frees when its client closes it): then no
    ``Retry-After`` is sent at all rather than a guess.
    """

    status: int
    message: str
    retry_after: float | None = None

    def headers(self) -> list[tuple[bytes, bytes]]:
        if self.retry_after is None:
            return []
        return [(b"retry-after", b"%d" % max(1, math.ceil(self.retry_after)))]


class Quota:
    """Things held while a response lasts (open streams), counted per principal and in total.

    Both caps apply: one principal filling its own share leaves the rest to everyone else.
    """

    def __init__(self, what: str, total: int, per_principal: int) -> None:
        self.what = what
        self.total = total
        self.per_principal = per_principal
        self.count = 0
        self._held: dict[str, int] = {}

    def held(self, principal: str) -> int:
        return self._held.get(principal, 0)

    def refusal(self, principal: str, adding: int = 1, *, also_held: int = 0, also_total: int = 0) -> Refusal | None:
        """None when ``principal`` may hold ``adding`` more; ``also_*`` count what is held outside this quota."""
        if self.held(principal) + also_held + adding > self.per_principal:
            return Refusal(429, f"too many open {self.what} for this principal (at most {self.per_principal}); "
                                "close one first")
        if self.count + also_total + adding > self.total:
            return Refusal(503, f"too many open {self.what} (at most {self.total}); try again later")
        return None

    @contextmanager
    def hold(self, principal: str) -> Iterator[None]:
        """Count one for ``principal`` while the block runs."""
        self.count += 1
        self._held[principal] = self.held(principal) + 1
        try:
            yield
        finally:
            self.count -= 1
            left = self._held[principal] - 1
            if left:
                self._held[principal] = left
            else:
                del self._held[principal]


def session_refusal(app: StreamableHttpApp, principal: str) -> Refusal | None:
    """None when ``principal`` may open one more session (of either transport); else why not."""
    mine = _sessions_of(app, principal)
    if mine >= app.max_sessions_per_principal or app.session_count() >= app.max_sessions:
        app.expire()  # sessions past their idle time make room first
        mine = _sessions_of(app, principal)
    if mine >= app.max_sessions_per_principal:
        return Refusal(429, f"too many sessions for this principal (at most {app.max_sessions_per_principal}); "
                            "end one with DELETE or let one expire", _next_expiry(app, principal))
    if app.session_count() >= app.max_sessions:
        return Refusal(503, "too many sessions; try again later", _next_expiry(app, None))
    return None


def stream_refusal(app: StreamableHttpApp, principal: str, adding: int = 1) -> Refusal | None:
    """None when ``principal`` may open ``adding`` more streams or subscriptions; else why not."""
    mine = total = 0
    for session in _sessions(app):
        held = len(session.legacy.subscriptions)
        total += held
        if session.principal == principal:
            mine += held
    return app.streams.refusal(principal, adding, also_held=mine, also_total=total)


async def refuse(send: Send, refusal: Refusal) -> None:
    await respond_error(send, refusal.status, InvalidRequest(refusal.message), refusal.headers())


def _sessions(app: StreamableHttpApp) -> list[Any]:
    """The sessions of both transports (each has ``principal`` and ``legacy``)."""
    return [*app.sessions.values(), *(app.legacy_sse.sessions.values() if app.legacy_sse is not None else ())]


def _sessions_of(app: StreamableHttpApp, principal: str) -> int:
    return sum(1 for session in _sessions(app) if session.principal == principal)


def _next_expiry(app: StreamableHttpApp, principal: str | None) -> float | None:
    """Seconds until the first idle session (``principal``'s, or anyone's) expires; None if none is idle."""
    idle = [session.last_seen for session in app.sessions.values()
            if session.stream is None and (principal is None or session.principal == principal)]
    return min(idle) + app.session_idle_seconds - time.monotonic() if idle else None


def count_listens(messages: Iterable[jsonrpc.Message]) -> int:
    """How many 2026-07-28 subscriptions/listen requests are among ``messages`` (each opens a subscription)."""
    return sum(1 for m in messages if isinstance(m, Request) and m.method == "subscriptions/listen"
               and modern_meta(m.params) is not None)
