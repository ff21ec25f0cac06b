"""The legacy session lifecycle (protocol/lifecycle.py): its transition table, and which requests each
state allows."""

from __future__ import annotations

import itertools

import pytest

from promptdeck.protocol.errors import INVALID_REQUEST, InvalidRequest, McpError
from promptdeck.protocol.lifecycle import REQUESTS, TRANSITIONS, Lifecycle, State
from promptdeck.protocol.revisions import LATEST, REVISIONS

EVENTS = ("initialize", "initialized", "close")
METHODS = ("initialize", "ping", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
           "no/such/method")


def in_state(state: State) -> Lifecycle:
    """A lifecycle brought to ``state`` through its own events."""
    life = Lifecycle()
    path: list[str] = {State.NEW: [], State.INITIALIZING: ["initialize"], State.READY: ["initialize", "initialized"],
            State.CLOSED: ["close"]}[state]
    for event in path:
        assert life.fire(event)
    assert life.state is state
    return life


def test_a_session_starts_new_and_live() -> None:
    life = Lifecycle()
    assert life.state is State.NEW and life.revision is None and life.live


def test_the_handshake_in_order() -> None:
    life = Lifecycle()
    life.initialize(REVISIONS["2025-06-18"])
    assert life.state is State.INITIALIZING and life.revision is REVISIONS["2025-06-18"]
    assert life.fire("initialized")
    assert (life.state, life.live) == (State.READY, True)
    assert life.fire("close")
    assert (life.state, life.live) == (State.CLOSED, False)


@pytest.mark.parametrize(("state", "event"), list(itertools.product(State, EVENTS)))
def test_every_state_and_event(state: State, event: str) -> None:
    expected = {
        (State.NEW, "initialize"): State.INITIALIZING,
        (State.INITIALIZING, "initialized"): State.READY,
        (State.NEW, "close"): State.CLOSED,
        (State.INITIALIZING, "close"): State.CLOSED,
        (State.READY, "close"): State.CLOSED,
    }.get((state, event))
    life = in_state(state)
    assert life.fire(event) is (expected is not None)
    # an event out of order is ignored: the state stays as it was
    assert life.state is (expected or state)
    assert TRANSITIONS.get((state, event)) is expected


def test_initialized_before_initialize_is_ignored() -> None:
    life = Lifecycle()
    assert not life.fire("initialized")
    assert life.state is State.NEW
    with pytest.raises(InvalidRequest, match="send initialize before prompts/list"):
        life.check_request("prompts/list")


def test_a_second_initialize_is_refused_and_keeps_the_revision() -> None:
    for state in (State.INITIALIZING, State.READY):
        life = in_state(state)
        life.revision = REVISIONS["2024-11-05"]
        with pytest.raises(McpError, match="already initialized") as caught:
            life.initialize(LATEST)
        assert caught.value.code == INVALID_REQUEST
        assert life.revision is REVISIONS["2024-11-05"] and life.state is state


def test_a_closed_session_cannot_be_initialized() -> None:
    life = in_state(State.CLOSED)
    with pytest.raises(McpError):
        life.initialize(LATEST)
    assert life.state is State.CLOSED and life.revision is None


@pytest.mark.parametrize("method", METHODS)
def test_a_new_session_allows_initialize_and_ping_alone(method: str) -> None:
    life = Lifecycle()
    if method in ("initialize", "ping"):
        life.check_request(method)
    else:
        with pytest.raises(InvalidRequest, match=f"send initialize before {method}"):
            life.check_request(method)


@pytest.mark.parametrize("state", [State.INITIALIZING, State.READY])
@pytest.mark.parametrize("method", METHODS)
def test_an_initialized_session_allows_everything_but_initialize(state: State, method: str) -> None:
    # requests before notifications/initialized are served: the spec's rule there is a SHOULD on the client
    life = in_state(state)
    if method == "initialize":
        with pytest.raises(InvalidRequest, match="already initialized"):
            life.check_request(method)
    else:
        life.check_request(method)


@pytest.mark.parametrize("method", METHODS)
def test_a_closed_session_allows_nothing(method: str) -> None:
    life = in_state(State.CLOSED)
    with pytest.raises(InvalidRequest) as caught:
        life.check_request(method)
    assert caught.value.code == INVALID_REQUEST
    if method != "initialize":
        assert "closed" in caught.value.message


def test_ping_is_allowed_in_every_live_state() -> None:
    assert {s for s in State if "ping" in REQUESTS[s] or "*" in REQUESTS[s]} == {
        State.NEW, State.INITIALIZING, State.READY}
