"""The bytes of resource reads in flight, bounded per principal and in total (issue 38, finding 10).

A ``resources/read`` holds its file's bytes, then their base64 or text in the result, until it is encoded:
24 reads at once of a 10 MB file took a server from 41 to 504 MiB. A read takes its file's size from the
budget before a byte is read (``spend``, called by each provider once it knows the size) and gives it back
once its answer is on the wire: a transport that writes answers after building them (HTTP) holds the request
in ``answering``, and what its reads took is given back when that ends; elsewhere (stdio, which writes each
answer as it is made) when the read's result is built (``spending``, entered by the server around one read).
Given back at the build, 24 reads over HTTP still took the server to ~290 MiB: the answers waiting to be
written held the bytes the budget had already released. Past the principal's
share the read is refused with 429 (over HTTP, for a 2026-07-28 request), past the total with 503; on the
wire it is -32600 with ``retryAfter`` in ``data``, as the rate limit answers, since the same request a
moment later may well be read. docs/resources.md, Bounds.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar

from ..protocol.errors import InvalidRequest

#: The bytes of files being read as resources at once, by everyone and by one principal: a 10 MiB file (the
#: largest served, ``paths.MAX_EMBED_BYTES``) fits six times, and one principal may have three in flight.
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_PRINCIPAL_BYTES = 32 * 1024 * 1024


class ReadBudget:
    """Bytes taken by reads in flight, per principal and in total; thread-safe (reads run off the loop)."""

    def __init__(self, total: int = MAX_TOTAL_BYTES, per_principal: int = MAX_PRINCIPAL_BYTES) -> None:
        self.total = total
        self.per_principal = per_principal
        self.taken = 0
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def held(self, principal: str) -> int:
        return self._held.get(principal, 0)

    def take(self, principal: str, size: int, uri: str) -> None:
        """Take ``size`` bytes for ``principal``'s read of ``uri``, or refuse it (module doc)."""
        with self._lock:
            mine = self._held.get(principal, 0)
            if mine and mine + size > self.per_principal:  # a lone read always fits: one file is within limits
                raise InvalidRequest(f"too many bytes of resources in flight for this principal (at most "
                                     f"{self.per_principal}); read {uri!r} again once a read has finished",
                                     {"uri": uri, "retryAfter": 1}, http_status=429)
            if self.taken and self.taken + size > self.total:
                raise InvalidRequest(f"too many bytes of resources in flight (at most {self.total}); read "
                                     f"{uri!r} again later", {"uri": uri, "retryAfter": 1}, http_status=503)
            self._held[principal] = mine + size
            self.taken += size

    def give(self, principal: str, size: int) -> None:
        with self._lock:
            self.taken -= size
            left = self._held[principal] - size
            if left:
                self._held[principal] = left
            else:
                del self._held[principal]


#: The server's one budget.
READS = ReadBudget()
#: The read running here: (its budget, its principal, the sizes it took).
_reading: ContextVar[tuple[ReadBudget, str, list[int]] | None] = ContextVar("promptdeck_read", default=None)
#: What the reads of the request being answered here took, given back once its answer is written (``answering``).
_answering: ContextVar[list[tuple[ReadBudget, str, int]] | None] = ContextVar("promptdeck_answering", default=None)

Held = list[tuple[ReadBudget, str, int]]


def answer_held() -> Held | None:
    """Where the request being answered here keeps what its reads took, or None (give back at the build). Read
    it on the request's own task: reads run in the render threads, which do not share its context."""
    return _answering.get()


class answering:  # lower case: used as a function, ``with answering():`` around one request and its writing
    """One request, from its handling to the last byte of its answer: its reads' bytes are given back at the
    end, so the answers waiting to be written count against the budget too."""

    __slots__ = ("held", "token")

    def __enter__(self) -> None:
        self.held: Held = []
        self.token = _answering.set(self.held)

    def __exit__(self, *exc: object) -> None:
        _answering.reset(self.token)
        for budget, principal, size in self.held:
            budget.give(principal, size)
        self.held.clear()


class spending:  # lower case: used as a function, ``with spending(budget, principal):``
    """A read of resources for ``principal``: what it takes from ``budget`` inside is given back on leaving,
    or, where ``held`` is the request's (``answer_held``), once that request's answer is written."""

    __slots__ = ("budget", "principal", "token", "taken", "held")

    def __init__(self, budget: ReadBudget, principal: str, held: Held | None = None) -> None:
        self.budget = budget
        self.principal = principal
        self.taken: list[int] = []
        self.held = held

    def __enter__(self) -> None:
        self.token = _reading.set((self.budget, self.principal, self.taken))

    def __exit__(self, exc_type: object, *exc: object) -> None:
        _reading.reset(self.token)
        if self.held is not None and exc_type is None:  # a read that failed has no answer to wait for
            self.held.extend((self.budget, self.principal, size) for size in self.taken)
            return
        for size in self.taken:
            self.budget.give(self.principal, size)


def spend(size: int, uri: str) -> None:
    """Take ``size`` bytes for the read of ``uri`` running here (nothing outside ``spending``: a test, a CLI)."""
    reading = _reading.get()
    if reading is not None:
        budget, principal, taken = reading
        budget.take(principal, size, uri)
        taken.append(size)
