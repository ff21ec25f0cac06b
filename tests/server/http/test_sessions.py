"""The per-principal caps of ``server/limits.py``, as units (the attacks are in tests/attack/test_limits.py), and the
event ids of a session taken up from its id (tests/server/http/test_session_replicas.py has the replicas)."""

from __future__ import annotations

import json

import httpx
import pytest

from promptdeck.server.request_state import STATE_KEY_ENV
from promptdeck.server.security.quotas import Quota, Refusal
from tests.support.http_rpc import CLIENT, _Listener, make_server, serve, start_session


def test_a_quota_caps_each_principal_and_the_total_and_frees_on_exit() -> None:
    quota = Quota("streams", total=3, per_principal=2)
    with quota.hold("alice"), quota.hold("alice"):
        refusal = quota.refusal("alice")
        assert refusal is not None and refusal.status == 429 and refusal.retry_after is None
        assert quota.refusal("bob") is None
        with quota.hold("bob"):
            full = quota.refusal("carol")
            assert full is not None and full.status == 503
        assert quota.refusal("alice", also_held=0) is not None and quota.refusal("bob", adding=1) is None
        assert quota.refusal("bob", adding=2) is not None  # adding two would pass the total
    assert quota.count == 0 and quota.held("alice") == 0
    with pytest.raises(RuntimeError), quota.hold("alice"):
        raise RuntimeError  # a stream that fails still gives its slot back
    assert quota.count == 0


def test_retry_after_is_whole_seconds_rounded_up_and_absent_when_unknown() -> None:
    assert Refusal(429, "x", 1799.2).headers == [(b"retry-after", b"1800")]
    assert Refusal(503, "x", -3.0).headers == [(b"retry-after", b"1")]
    assert Refusal(503, "x").headers == []


def test_a_session_taken_up_numbers_its_events_apart_and_replays_none_of_another_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two endpoints sharing a key (as replicas of one store do): the second takes up the first's session when its
    GET stream comes there. Event ids stay unique in the session, and a Last-Event-ID the other process sent
    replays nothing of this one's."""
    monkeypatch.setenv(STATE_KEY_ENV, "k" * 40)
    server = make_server()
    with serve(server) as (a, app_a), serve(server) as (b, app_b), httpx.Client(timeout=30) as client:
        headers = start_session(client, a)
        begun = app_a.table.streamable[headers["mcp-session-id"]]
        assert begun.client == CLIENT["name"] and begun.epoch == ""
        get = {**headers, "accept": "text/event-stream"}
        on_a = _Listener(client, a, get)
        server.prompt(name="fresh", description="added")(lambda: "hi")
        [told] = on_a.wait_for(1)
        assert told["id"] == "g1"
        on_b = _Listener(client, b, {**get, "last-event-id": told["id"]})
        # It begins with what the client may have missed: the list changed.
        [again] = on_b.wait_for(1)
        assert json.loads(again["data"])["method"] == "notifications/prompts/list_changed"
        session = app_b.table.streamable[headers["mcp-session-id"]]
        epoch = session.epoch
        assert session.client == CLIENT["name"] and session.issued == begun.issued
        assert epoch and on_b.events[0]["id"] == f"g0{epoch}-1" and again["id"] == f"g1{epoch}" != told["id"]
        server.prompt(name="later", description="added")(lambda: "hi")
        assert [e["id"] for e in on_b.wait_for(2)] == [f"g1{epoch}", f"g2{epoch}"]
        # Resuming from this process's own id replays what followed it; from the other's, nothing.
        mine = _Listener(client, b, {**get, "last-event-id": f"g1{epoch}"})
        assert [e["id"] for e in mine.wait_for(1)] == [f"g2{epoch}"]
        theirs = _Listener(client, b, {**get, "last-event-id": "g1"})
        server.prompt(name="last", description="added")(lambda: "hi")
        assert [e["id"] for e in theirs.wait_for(1)] == [f"g3{epoch}"] and not session.taken_up
        client.delete(a, headers=headers)
        client.delete(b, headers=headers)
