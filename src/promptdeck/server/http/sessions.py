"""What one HTTP endpoint holds between requests, and the caps on it: the session table.

The routes of every transport share one ``SessionTable``: Streamable HTTP's sessions, the 2024-11-05
``/sse`` sessions, the 2026-07-28 ``subscriptions/listen`` streams, and the open-stream quota. So the
routes need the table, not the whole app.

Everything a principal keeps open is capped for that principal as well as in total, so that one
principal filling its own share leaves the rest to everyone else (one principal once opened 1,000
sessions and locked every other out):

- sessions of both HTTP transports (``session_refusal``), 100 per principal and 1,000 in all by default;
- open streams (``stream_refusal``): GET streams, 2024-11-05 ``/sse`` streams, 2026-07-28
  ``subscriptions/listen`` streams, and subscriptions made inside a legacy session, which push on their
  session's stream.

Past its own share a principal gets 429, past the total 503. ``Retry-After`` tells the truth: the moment
the first idle session that counts expires, or no header at all when nothing frees a slot at a known
time (a stream ends when its client closes it).

A Streamable HTTP session's id says what the session needs and is signed (``session_ids``). When the key
is shared by replicas (a store's), a replica asked about a session it does not hold takes it up from its
id (``session_for``): after a restart, or behind a load balancer without stickiness, the client keeps its
session. A session taken up counts against the caps like any other, and is refused past them. Idle
expiry then only frees this replica's memory (the session lives on, and is taken up again when asked
for, until its lifetime from ``initialize`` ends); a DELETE ends it here, and this replica refuses its id
from then on (``ended``). What the id cannot say is lost when a session is taken up: its log level, its
resource subscriptions, and the events a GET stream would replay (docs/http.md#sessions-and-replicas).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from ...protocol.jsonrpc import Message, Request
from ...protocol.revisions import REVISIONS, modern_meta
from ..asgi import from_any_thread
from ..legacy import LegacySession
from ..security.quotas import Quota, Refusal
from .session_ids import Claims, SessionIds

if TYPE_CHECKING:
    from ..legacy import LegacyServed
    from ..modern import Subscription
    from ..security.principals import Principal
    from .options import HttpOptions

log = logging.getLogger("promptdeck.http")

#: Events a session keeps for ``Last-Event-ID`` replay, and for a GET stream not yet open.
REPLAY_EVENTS = 1000
#: Ended session ids a replica remembers (refusing to take them up again), at most; the oldest are forgotten.
MAX_ENDED = 10_000


class Held(Protocol):
    """A session of either transport, as the caps count it."""

    principal: str
    legacy: LegacySession

    def close(self) -> None: ...


class HttpSession:
    """A Streamable HTTP session held between requests, with its GET stream and replay buffer."""

    def __init__(self, server: LegacyServed, session_id: str, principal: Principal) -> None:
        self.id = session_id
        self.principal = principal.name
        #: the event loop this session lives on (its queues belong to it)
        self.loop = asyncio.get_running_loop()
        self.notify = from_any_thread(self._push)
        self.legacy = LegacySession(server, self.notify)
        self.legacy.principal, self.legacy.scopes = principal.name, principal.scopes
        self.legacy.sticky = principal.rollout_key or f"session:{session_id}"
        self.last_seen = time.monotonic()
        #: when its initialize was (wall clock, as its id says)
        self.issued = time.time()
        self.buffer: deque[tuple[int, bytes]] = deque(maxlen=REPLAY_EVENTS)
        self.next_event = 0
        self.stream: asyncio.Queue[tuple[int, bytes] | None] | None = None
        # Bounded like the replay buffer: a client that never opens a GET stream must not make the
        # server keep every notification it missed.
        self.undelivered: deque[tuple[int, bytes]] = deque(maxlen=REPLAY_EVENTS)
        self.streams = 0
        #: the name the client gave in ``clientInfo``, as its id carries it
        self.client = ""
        #: taken up from its id rather than begun here: its first GET stream cannot replay what was sent
        #: before, so it is told what may have changed (``resumed``)
        self.taken_up = False
        #: what its event ids end with: "" for a session begun here, ``.HEX`` (random) once taken up, so that
        #: ids stay unique within the session (the spec's rule) though each process counts from 1, and a
        #: ``Last-Event-ID`` another process sent is told from one of this process's (no replay of the wrong events)
        self.epoch = ""

    def take_up(self, claims: Claims) -> None:
        """Become the session ``claims`` describe, initialized, without a handshake."""
        self.legacy.resume(REVISIONS[claims.revision], claims.elicits)
        self.client = claims.client
        self.issued = claims.issued
        self.taken_up = True
        self.epoch = "." + os.urandom(4).hex()

    def resumed(self) -> None:
        """A GET stream opens on a session taken up here. What was sent to its client before came from another
        process (or this one before a restart) and is not here to replay, and a 2025-03-26 client resumes
        without an event id at all. What it may have missed, that the list changed, is said once; a client
        re-reads the list, at worst for nothing."""
        if self.taken_up:
            self.taken_up = False
            self.legacy.list_changed(tools=True)

    def _push(self, message: bytes) -> None:
        self.next_event += 1
        item = (self.next_event, message)
        self.buffer.append(item)
        if self.stream is not None:
            self.stream.put_nowait(item)
        else:
            self.undelivered.append(item)  # sent by the next GET stream that opens

    def stream_id(self) -> int:
        """A number for a new stream's ids, unique in this session."""
        self.streams += 1
        return self.streams

    def close(self) -> None:
        self.legacy.close()
        if self.stream is not None:
            self.stream.put_nowait(None)


class SessionTable:
    """The sessions, subscriptions and streams of one endpoint, and their caps (see the module docstring)."""

    def __init__(self, options: HttpOptions, streams: Quota | None = None, ids: SessionIds | None = None,
                 server: LegacyServed | None = None) -> None:
        self.options = options
        #: mints and checks Streamable HTTP session ids; a random key of this process's unless given
        self.ids = ids or SessionIds(os.urandom(32), shared=False, lifetime=options.session_lifetime_seconds)
        #: what sessions taken up from their ids are sessions of (None: none is taken up)
        self.server = server
        #: ids of sessions ended here (DELETE, lifetime): never taken up again by this replica
        self.ended: OrderedDict[str, None] = OrderedDict()
        #: Streamable HTTP sessions by ``Mcp-Session-Id``
        self.streamable: dict[str, HttpSession] = {}
        #: 2024-11-05 sessions by their ``session_id`` (each lives as long as its ``/sse`` stream)
        self.sse: dict[str, Held] = {}
        #: open 2026-07-28 subscriptions and the queues their streams read
        self.subscriptions: dict[Subscription, asyncio.Queue[bytes | None]] = {}
        #: open streams; shared by the endpoints of one port (``endpoints``)
        self.streams = streams or Quota("streams", options.max_streams, options.max_streams_per_principal)

    def count(self) -> int:
        """Live sessions of both transports."""
        return len(self.streamable) + len(self.sse)

    def begin(self, principal: Principal, params: object) -> HttpSession:
        """The session ``principal`` begins with an ``initialize`` of ``params`` (not registered yet)."""
        assert self.server is not None
        session_id, claims = self.ids.for_initialize(principal.name, params)
        session = HttpSession(self.server, session_id, principal)
        session.client, session.issued = claims.client, claims.issued
        return session

    def session_for(self, session_id: str | None, principal: Principal) -> HttpSession | Refusal:
        """The Streamable HTTP session ``session_id`` names, if it is ``principal``'s (taken up from its id if
        this replica does not hold it and may); else the refusal."""
        if session_id is None:
            return Refusal(400, "Mcp-Session-Id header is required")
        session = self.streamable.get(session_id)
        if session is None:
            found = self._take_up(session_id, principal)
            if not isinstance(found, HttpSession):
                return found
            session = found
        elif session.principal != principal.name:
            log.warning("session refused: principal %r asked for another principal's session", principal.name)
            return Refusal(404, "session not found; initialize again")  # ids are not credentials
        elif self.ids.shared and time.time() - session.issued > self.ids.lifetime:
            # Another replica would no longer take it up: it ends here too, so it ends alike everywhere.
            log.info("session ended: principal %r's session reached its lifetime", principal.name)
            self.end_session(session)
            return Refusal(404, "session not found; initialize again")
        session.legacy.scopes = principal.scopes  # what this request's token grants, not the first one's
        return session

    def _take_up(self, session_id: str, principal: Principal) -> HttpSession | Refusal:
        """A session this replica does not hold, made again from its id; or why not (404 for any id that does not
        check out, alike: ids are not credentials; 429 or 503 past the caps, as for a new session)."""
        gone = Refusal(404, "session not found; initialize again")
        if session_id in self.ended:
            log.info("session refused: principal %r asked for a session that ended here", principal.name)
            return gone
        claims = self.ids.check(session_id, principal.name)
        if isinstance(claims, str):
            log.warning("session refused: principal %r sent a session id that %s", principal.name, claims)
            return gone
        if not self.ids.shared or self.server is None:
            # Only this process holds the key, so it issued the id: the session ended (idle, or deleted).
            log.info("session refused: principal %r asked for a session that ended", principal.name)
            return gone
        refusal = self.session_refusal(principal.name)
        if refusal is not None:
            log.warning("session not taken up: principal %r is at a session cap (%s)", principal.name,
                        refusal.message)
            return refusal
        session = HttpSession(self.server, session_id, principal)
        session.take_up(claims)
        self.streamable[session_id] = session
        log.info("session taken up from its id: principal %r, revision %s, client %r", principal.name,
                 claims.revision, claims.client)
        return session

    def end_session(self, session: HttpSession) -> None:
        """``session`` ends (DELETE): closed, and its id refused here from now on."""
        session.close()
        self.streamable.pop(session.id, None)
        self.ended[session.id] = None
        while len(self.ended) > MAX_ENDED:
            self.ended.popitem(last=False)

    def session_refusal(self, principal: str) -> Refusal | None:
        """None when ``principal`` may open one more session (of either transport); else why not."""
        per_principal, total = self.options.max_sessions_per_principal, self.options.max_sessions
        mine = self._sessions_of(principal)
        if mine >= per_principal or self.count() >= total:
            self.expire()  # sessions past their idle time make room first
            mine = self._sessions_of(principal)
        if mine >= per_principal:
            return Refusal(429, f"too many sessions for this principal (at most {per_principal}); "
                                "end one with DELETE or let one expire", self._next_expiry(principal))
        if self.count() >= total:
            return Refusal(503, "too many sessions; try again later", self._next_expiry(None))
        return None

    def stream_refusal(self, principal: str, adding: int = 1) -> Refusal | None:
        """None when ``principal`` may open ``adding`` more streams or subscriptions; else why not."""
        mine = total = 0
        for session in self._sessions():
            held = len(session.legacy.subscriptions)
            total += held
            if session.principal == principal:
                mine += held
        return self.streams.refusal(principal, adding, also_held=mine, also_total=total)

    def expire(self) -> None:
        """End sessions idle for longer than the limit (their ids then answer 404, unless replicas share the
        key: then the session is only dropped from this replica's memory, and taken up again if asked for)."""
        limit = time.monotonic() - self.options.session_idle_seconds
        for session_id, session in list(self.streamable.items()):
            if session.last_seen < limit and session.stream is None:
                session.close()
                del self.streamable[session_id]

    def end_subscriptions(self) -> None:
        """Every open 2026-07-28 subscription ends gracefully, with its listen result."""
        for subscription, queue in list(self.subscriptions.items()):
            queue.put_nowait(subscription.ending())
            queue.put_nowait(None)

    def end(self) -> None:
        """Server shutdown: every subscription gets its listen result, every session closes."""
        self.end_subscriptions()
        for session in [*self.streamable.values(), *self.sse.values()]:
            session.close()
        self.streamable.clear()
        self.sse.clear()

    def _sessions(self) -> list[Held]:
        return [*self.streamable.values(), *self.sse.values()]

    def _sessions_of(self, principal: str) -> int:
        return sum(1 for session in self._sessions() if session.principal == principal)

    def _next_expiry(self, principal: str | None) -> float | None:
        """Seconds until the first idle session (``principal``'s, or anyone's) expires; None if none is idle."""
        idle = [session.last_seen for session in self.streamable.values()
                if session.stream is None and (principal is None or session.principal == principal)]
        return min(idle) + self.options.session_idle_seconds - time.monotonic() if idle else None


def count_listens(messages: Iterable[Message]) -> int:
    """How many 2026-07-28 subscriptions/listen requests are among ``messages`` (each opens a subscription)."""
    return sum(1 for m in messages if isinstance(m, Request) and m.method == "subscriptions/listen"
               and modern_meta(m.params) is not None)
