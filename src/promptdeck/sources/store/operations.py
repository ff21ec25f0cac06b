"""What an operator watches of a served store (``/metrics``): whether it answers, how far behind it this
replica serves, its webhook backlog, and how long this process's webhook attempts take.

The store is read at most once per ``CACHE_SECONDS`` whatever the scrape rate (``Probe``), through a
connection of its own opened for the read: a scrape never waits behind a request's read, and a store that
went away is seen as such (a connection kept open to a SQLite file that was removed would still answer).
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from dataclasses import dataclass, field

from .database import Store

#: How long one reading of the store answers scrapes: a scrape rate cannot load the database.
CACHE_SECONDS = 5.0
#: How long a scrape's read may wait for the store to answer.
PROBE_TIMEOUT_SECONDS = 3
#: Upper bounds of the webhook attempt latency histogram, in seconds (a webhook's timeout is at most 30 s).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass
class Histogram:
    """A Prometheus histogram's counts (non-cumulative per bucket; the last one is +Inf)."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    sum: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def cumulative(self) -> list[tuple[str, int]]:
        """(le, count of observations at most le), +Inf last: the ``_bucket`` series."""
        total, out = 0, []
        for bound, count in zip(self.bounds, self.counts, strict=False):
            total += count
            out.append((f"{bound}", total))
        out.append(("+Inf", self.count))
        return out


@dataclass(frozen=True)
class Reading:
    """One reading of the store; counts are None when it could not be read."""

    reachable: bool
    #: seconds since the oldest position of the label newer than the one served (0: serving the newest)
    lag_seconds: float | None = None
    #: deliveries not yet made (waiting for their next try), and those given up on (kept 30 days)
    pending: int | None = None
    failed: int | None = None


class Probe:
    """The store's state for ``/metrics``, read at most once per ``CACHE_SECONDS`` (call it from a worker
    thread: it may wait up to ``PROBE_TIMEOUT_SECONDS`` for a store that does not answer)."""

    def __init__(self, url: str, label: str, cache_seconds: float = CACHE_SECONDS) -> None:
        self.url, self.label, self.cache_seconds = url, label, cache_seconds
        self._lock = threading.Lock()
        self._last: tuple[float, Reading] | None = None

    def read(self, served: int | None) -> Reading:
        # One read at a time: scrapes that arrive during it wait for it (at most the probe's timeout) and
        # share its answer, rather than each opening a connection.
        with self._lock:
            last = self._last
            if last is not None and time.monotonic() - last[0] < self.cache_seconds:
                return last[1]
            reading = self._read(served)
            self._last = (time.monotonic(), reading)
            return reading

    def _read(self, served: int | None) -> Reading:
        try:
            with Store(self.url, timeout=PROBE_TIMEOUT_SECONDS) as store:
                db = store.db
                rows = db.rows("SELECT MIN(created) FROM positions WHERE label = ? AND id > ?", self.label,
                               served if served is not None else -1)
                oldest_unserved = rows[0][0] if rows else None
                lag = 0.0 if oldest_unserved is None else max(0.0, time.time() - float(oldest_unserved))
                counts = {"pending": 0, "failed": 0}
                try:
                    for status, count in db.rows("SELECT status, COUNT(*) FROM deliveries WHERE status IN "
                                                 "('pending', 'failed') GROUP BY status"):
                        counts[str(status)] = int(count)
                except Exception:  # a store older than webhooks (schema < 5): no backlog to show
                    return Reading(True, lag)
                return Reading(True, lag, counts["pending"], counts["failed"])
        except Exception:  # a store can fail in any way: it is not reachable now
            return Reading(False)
