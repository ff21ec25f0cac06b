"""Delivering the store's events to its webhooks: every serving process takes part, each event goes out once.

Every ``promptdeck serve --store`` process (any number of replicas, stdio or HTTP) runs one ``Deliverer``
thread for the store (``delivering``, which the ``serve`` command enters; nothing else starts one: an
application that opens ``Prompts`` on a store, or a ``PromptServer`` used as a library, sends no webhook).
It claims due deliveries in one statement that sets a *lease* (a token and an expiry) on them: in
PostgreSQL the rows are picked ``FOR UPDATE SKIP LOCKED``, so replicas claiming at once take different rows
and none waits; in SQLite the statement runs under the database's one write
lock, so two processes on one file never claim the same row. A delivery is sent only by the holder of
its lease, and its outcome is recorded only while that lease is still the row's.

What holds: without a crash, each event is sent once to each webhook that asked for it (again only after
a failed attempt). A graceful stop (SIGTERM, Ctrl-C, the end of a stdio server's input) lets the requests
in flight finish, within their webhook's timeout, and records their outcome before the process ends, so no
other process sends them again. A process killed after it sent and before it recorded the answer leaves a
lease that expires (twice the webhook's timeout, plus 2 s); then another process sends it again, with the same
``webhook-id``, so the honest guarantee is *at least once*, and a receiver that keeps the ids it has seen
makes it exactly once. A failed attempt (no answer, not a 2xx) is tried again after an exponential pause
with jitter (5 s, 10 s, 20 s … at most an hour apart), until a day after the event; then it is recorded as
failed. Finished deliveries are kept for 30 days (``webhook log``), then removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .connection import Connection
from .copies import deliverable
from .model import StoreError, first_line
from .operations import LATENCY_BUCKETS, Histogram
from .urls import shown_url, without_secrets
from .webhooks import MAX_TIMEOUT, shown_target

if TYPE_CHECKING:
    from .sending import Outcome

log = logging.getLogger("promptdeck.store.webhooks")

#: How often a deliverer looks for due deliveries when it found none (jittered, so replicas spread out).
POLL_SECONDS = 1.0
#: Deliveries claimed (and sent concurrently) at once by one process.
BATCH = 8
#: The pause after the first failed attempt; each next one doubles, up to ``MAX_PAUSE``.
FIRST_PAUSE, MAX_PAUSE = 5.0, 3600.0
#: How long after its event a delivery is still tried.
GIVE_UP_SECONDS = 24 * 3600.0
#: How long finished deliveries (and their events) are kept for ``webhook log``.
KEEP_SECONDS = 30 * 24 * 3600.0
#: How long a graceful stop waits for the requests in flight (a webhook's longest timeout) and their records.
STOP_SECONDS = MAX_TIMEOUT + 5.0


def pause(attempt: int) -> float:
    """The pause after failed attempt number ``attempt`` (1, 2, …): doubling, capped, half of it random
    (replicas and receivers that failed together do not all come back at the same moment)."""
    full = min(FIRST_PAUSE * 2 ** min(attempt - 1, 30), MAX_PAUSE)
    return float(full / 2 + random.uniform(0, full / 2))


@dataclass(frozen=True, slots=True)
class Claimed:
    id: int
    event: int
    webhook: int
    body: str
    attempt: int
    url: str
    secret: str
    allow: tuple[str, ...]
    timeout: float
    created: float
    #: the claim's lease token: the outcome is recorded only while the row still holds it
    lease: str
    #: the event's ``webhook-id``
    uid: str


class Deliveries:
    """The database side of delivery: claiming under a lease, and recording an attempt."""

    def __init__(self, db: Connection, sender: str) -> None:
        self.db = db
        self.sender = sender

    def due(self, now: float) -> bool:
        enabled, here = deliverable(self.db)
        return bool(self.db.rows("SELECT 1 FROM deliveries d JOIN webhooks w ON w.id = d.webhook WHERE "
                                 "d.status = 'pending' AND d.next_try <= ? AND (d.lease_until IS NULL OR "
                                 f"d.lease_until < ?) AND {enabled} LIMIT 1", now, now, here))

    def claim(self, now: float, limit: int = BATCH) -> list[Claimed]:
        """Take the lease of up to ``limit`` due deliveries (one statement: atomic in both databases)."""
        token = f"{self.sender} {secrets.token_hex(12)}"  # who holds it, for an operator (and a test) to see
        skip = " FOR UPDATE OF d SKIP LOCKED" if self.db.postgres else ""
        # Only a webhook enabled in this very database delivers: a restored copy's wait (``copies``).
        enabled, here = deliverable(self.db)
        # The rows are picked once, in a materialized CTE: a subquery under IN may be run again by the planner,
        # and with LIMIT and SKIP LOCKED a second run could pick other rows.
        self.db.run("WITH picked AS MATERIALIZED (SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook "
                    "WHERE d.status = 'pending' AND d.next_try <= ? AND (d.lease_until IS NULL OR d.lease_until < ?) "
                    f"AND {enabled} ORDER BY d.next_try, d.id LIMIT ?{skip}) UPDATE deliveries SET lease = ?, "
                    "lease_until = ? + 2 * (SELECT w.timeout FROM webhooks w WHERE w.id = deliveries.webhook) + 2 "
                    "WHERE id IN (SELECT id FROM picked)", now, now, here, limit, token, now)
        rows = self.db.rows("SELECT d.id, d.event, d.webhook, d.body, d.attempts, w.url, w.secret, w.allow, "
                            "w.timeout, e.created, e.uid FROM deliveries d JOIN webhooks w ON w.id = d.webhook "
                            "JOIN events e ON e.id = d.event WHERE d.lease = ? ORDER BY d.id", token)
        return [Claimed(int(i), int(e), int(w), str(b), int(a) + 1, str(u), str(s), tuple(str(al).split()),
                        float(t), float(c), token, str(uid)) for i, e, w, b, a, u, s, al, t, c, uid in rows]

    def record(self, claimed: Claimed, code: int | None, error: str | None, now: float) -> str | None:
        """Record an attempt's outcome; the delivery's status now, or None when its lease was lost (it
        expired and another process claimed it: that one records)."""
        if error is None:
            status, next_try = "delivered", now
        else:
            next_try = now + pause(claimed.attempt)
            status = "failed" if next_try > claimed.created + GIVE_UP_SECONDS else "pending"
        with self.db.transaction("SELECT 1"):  # not the publishers' lock: this touches none of their rows
            updated = self.db.run(
                "UPDATE deliveries SET status = ?, attempts = ?, next_try = ?, lease = NULL, lease_until = NULL, "
                "finished = ? WHERE id = ? AND lease = ? AND status = 'pending'", status, claimed.attempt, next_try,
                None if status == "pending" else now, claimed.id, claimed.lease).rowcount
            if updated != 1:
                return None
            self.db.run("INSERT INTO delivery_attempts (delivery, attempt, at, sender, code, error) "
                        "VALUES (?, ?, ?, ?, ?, ?)", claimed.id, claimed.attempt, now, self.sender, code, error)
        return status

    def prune(self, now: float) -> None:
        """Remove deliveries finished more than ``KEEP_SECONDS`` ago, and events left without any."""
        old = now - KEEP_SECONDS
        if not self.db.rows("SELECT 1 FROM deliveries WHERE status <> 'pending' AND finished < ? LIMIT 1", old):
            return  # nothing to remove: no write (a server whose role may only read the store never writes here)
        with self.db.transaction("SELECT 1"):
            self.db.run("DELETE FROM delivery_attempts WHERE delivery IN (SELECT id FROM deliveries WHERE "
                        "status <> 'pending' AND finished < ?)", old)
            self.db.run("DELETE FROM deliveries WHERE status <> 'pending' AND finished < ?", old)
            self.db.run("DELETE FROM events WHERE created < ? AND NOT EXISTS (SELECT 1 FROM deliveries d "
                        "WHERE d.event = events.id)", old)


class Deliverer:
    """One process's delivery of one store's events: a thread with its own event loop and connection."""

    def __init__(self, url: str, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.clock = clock
        self.sender = f"{socket.gethostname()}:{os.getpid()}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._db: Connection | None = None
        self._failing = False
        self._missing: str | None = None
        self._pruned = 0.0
        #: requests sent and not yet recorded (what a stop waits for)
        self._in_flight = 0
        #: how long this process's attempts took, answered or not (``/metrics``)
        self.latency = Histogram(LATENCY_BUCKETS)
        #: the thread's loop and the event that wakes it early (to stop)
        self._wakeup: tuple[asyncio.AbstractEventLoop | None, asyncio.Event | None] = (None, None)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="promptdeck-webhooks", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop delivering: no more claims, and the requests in flight finish (each within its webhook's
        timeout) and have their outcome recorded first. A claim's lease outlives its request, so a stop that
        left a request it had sent unrecorded would have another process send it again when the lease ends."""
        self._stop.set()
        if self._in_flight:
            log.info("webhooks: stopping once the %d requests in flight are answered and recorded", self._in_flight)
        loop, wake = self._wakeup
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(wake.set)
        if self._thread is not None:
            self._thread.join(STOP_SECONDS)
            if self._thread.is_alive():  # the store does not answer: the leases end, another process sends
                log.warning("webhooks: stopped before the deliveries in flight were recorded; another process "
                            "may send them again")
        elif self._db is not None:  # used without a thread (``webhook deliver``)
            self._db.close()
            self._db = None

    def _run(self) -> None:
        try:
            asyncio.run(self._loop())
        finally:
            if self._db is not None:
                self._db.close()
                self._db = None

    async def _loop(self) -> None:
        wake = asyncio.Event()
        self._wakeup = (asyncio.get_running_loop(), wake)
        wait = POLL_SECONDS
        while not self._stop.is_set():
            try:
                sent = await self.deliver_due()
                if self._failing:
                    log.warning("webhooks: the store is back; delivering again")
                    self._failing = False
                wait = POLL_SECONDS
            except Exception as exc:  # a store can fail in any way; the next round tries again
                if self._db is not None:
                    self._db.close()
                    self._db = None
                if not self._failing:
                    # A StoreError names the store already (its URL without secrets); anything else is named here.
                    why = without_secrets(first_line(exc), self.url)
                    log.error("webhooks wait: %s", why if isinstance(exc, StoreError) else
                              f"the store {shown_url(self.url)} failed: {why}")
                self._failing = True
                sent, wait = 0, min(wait * 2, 30.0)
            if sent < BATCH and not self._stop.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait * random.uniform(0.75, 1.25)):
                        await wake.wait()

    async def deliver_due(self) -> int:
        """Claim and send what is due now; how many were claimed."""
        if self._db is None:
            self._db = Connection(self.url)
        deliveries = Deliveries(self._db, self.sender)
        now = self.clock()
        if now - self._pruned > 3600:
            deliveries.prune(now)
            self._pruned = now
        if not deliveries.due(now):
            return 0
        try:  # imported on first need: a server with no webhooks never loads an HTTP client for them
            from .sending import send
        except ImportError as exc:
            if self._missing is None:
                self._missing = str(exc)
                from ...extras import install_command  # the command that works from a clone: not on PyPI

                log.error("webhooks are due but cannot be sent: %s (%s)", install_command("webhooks"), exc)
            return 0
        claimed = deliveries.claim(now)
        self._in_flight = len(claimed)
        try:
            outcomes = await asyncio.gather(*(self._timed(send(c.url, c.uid, c.secret, c.body, allow=c.allow,
                                                               timeout=c.timeout, now=time.time())) for c in claimed))
            for one, outcome in zip(claimed, outcomes, strict=True):
                self._record(deliveries, one, outcome)
        finally:
            self._in_flight = 0
        return len(claimed)

    async def _timed(self, attempt: Awaitable[Outcome]) -> Outcome:
        started = time.monotonic()
        try:
            return await attempt
        finally:
            self.latency.observe(time.monotonic() - started)

    def _record(self, deliveries: Deliveries, claimed: Claimed, outcome: Outcome) -> None:
        status = deliveries.record(claimed, outcome.code, outcome.error, self.clock())
        target = shown_target(claimed.url)
        if status is None:
            log.warning("webhook %d: event %d was sent to %s, but its claim had expired meanwhile (another process "
                        "may send it again)", claimed.webhook, claimed.event, target)
        elif status == "delivered":
            log.info("webhook %d: event %d delivered to %s (HTTP %s)", claimed.webhook, claimed.event, target,
                     outcome.code)
        elif status == "failed":
            log.error("webhook %d: event %d not delivered to %s after %d attempts over a day (%s); given up",
                      claimed.webhook, claimed.event, target, claimed.attempt, outcome.error)
        else:
            log.warning("webhook %d: event %d not delivered to %s (attempt %d: %s); tried again later",
                        claimed.webhook, claimed.event, target, claimed.attempt, outcome.error)


#: The deliverer of each store this process serves, and how many sources serve it.
_running: dict[str, tuple[Deliverer, int]] = {}
_guard = threading.Lock()


@contextmanager
def delivering(url: str) -> Iterator[None]:
    """This process delivers the webhooks of the store at ``url`` while the block runs (``serve`` runs in
    it); at its end, the requests in flight finish and are recorded (``Deliverer.stop``)."""
    started(url)
    try:
        yield
    finally:
        stopped(url)


def deliverer(url: str) -> Deliverer | None:
    """This process's deliverer of the store at ``url``, if it delivers that store's webhooks."""
    running = _running.get(url)
    return running[0] if running is not None else None


def started(url: str) -> None:
    """A source began serving the store at ``url``: make sure this process delivers its events."""
    with _guard:
        deliverer, users = _running.get(url, (None, 0))
        if deliverer is None:
            deliverer = Deliverer(url)
            deliverer.start()
        _running[url] = (deliverer, users + 1)


def stopped(url: str) -> None:
    """A source stopped serving ``url``; the last one stops its deliverer."""
    with _guard:
        deliverer, users = _running.get(url, (None, 0))
        if deliverer is None:
            return
        if users > 1:
            _running[url] = (deliverer, users - 1)
            return
        del _running[url]
    deliverer.stop()
