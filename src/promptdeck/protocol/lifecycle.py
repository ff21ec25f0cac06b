"""The legacy (initialize-based) session lifecycle as one transition table.

A session starts NEW. ``initialize`` answered moves it to INITIALIZING; the
client's ``notifications/initialized`` moves it to READY; the transport
closing moves it to CLOSED. ``ping`` is allowed in every live state. Requests
other than ``initialize``/``ping`` before initialization get an error (never
silence), because a client that skips the handshake is better told than left
hanging. A client that sends a request before ``initialized`` (some pipeline
it) is served: the spec's rule there is a SHOULD on the client, and refusing
would only break such clients.
"""

from __future__ import annotations

from enum import Enum

from .errors import InvalidRequest, McpError
from .revisions import Revision


class State(Enum):
    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


ANY = "*"

#: state -> requests allowed in it ("*": every method the server knows)
REQUESTS: dict[State, frozenset[str]] = {
    State.NEW: frozenset({"initialize", "ping"}),
    State.INITIALIZING: frozenset({ANY}),
    State.READY: frozenset({ANY}),
    State.CLOSED: frozenset(),
}

#: (state, event) -> next state; events are ``initialize`` (answered), ``initialized``, ``close``
TRANSITIONS: dict[tuple[State, str], State] = {
    (State.NEW, "initialize"): State.INITIALIZING,
    (State.INITIALIZING, "initialized"): State.READY,
    (State.NEW, "close"): State.CLOSED,
    (State.INITIALIZING, "close"): State.CLOSED,
    (State.READY, "close"): State.CLOSED,
}


class Lifecycle:
    __slots__ = ("state", "revision")

    def __init__(self) -> None:
        self.state = State.NEW
        self.revision: Revision | None = None

    def check_request(self, method: str) -> None:
        """Raise if ``method`` may not be requested now."""
        allowed = REQUESTS[self.state]
        if method in allowed:
            return
        if method == "initialize":
            raise InvalidRequest("the session is already initialized")
        if ANY not in allowed:
            if self.state is State.CLOSED:
                raise InvalidRequest("the session is closed")
            raise InvalidRequest(f"send initialize before {method}")

    def fire(self, event: str) -> bool:
        """Apply an event; False when the table has no transition for it (the event is ignored)."""
        nxt = TRANSITIONS.get((self.state, event))
        if nxt is None:
            return False
        self.state = nxt
        return True

    def initialize(self, revision: Revision) -> None:
        if not self.fire("initialize"):
            raise McpError("the session is already initialized", code=InvalidRequest.code)
        self.revision = revision

    @property
    def live(self) -> bool:
        return self.state is not State.CLOSED
