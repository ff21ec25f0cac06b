"""Delivery's database side and its lifetime (sources/store/delivery.py), on SQLite and a real PostgreSQL cluster:
claims under a lease, an attempt recorded only by the lease's holder, pauses, pruning, and one deliverer per store
for as long as anything in the process serves it. (Sending, signing and retries end to end: test_webhooks.py.)"""

from __future__ import annotations

import base64
import threading

from promptdeck.sources.store import delivery, webhooks
from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.delivery import Deliveries, delivering, pause
from tests.support.stores import publish_texts

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()


def one_event(url: str) -> float:
    """A webhook asking for publishes, and one publish: one pending delivery. When it was created."""
    with Store(url, create=True) as store:
        webhooks.add(store.db, "https://hooks.example/in", SECRET, ["publish"], scopes=[], allow=[], timeout=5,
                     author="ops")
        publish_texts(store, None, {"greet.md": "Hello\n"})
        return float(store.db.rows("SELECT created FROM events")[0][0])


def test_a_pause_doubles_up_to_an_hour_half_of_it_random() -> None:
    for attempt, full in ((1, 5.0), (2, 10.0), (3, 20.0), (20, delivery.MAX_PAUSE), (10_000, delivery.MAX_PAUSE)):
        for _ in range(20):
            assert full / 2 <= pause(attempt) <= full


def test_a_delivery_is_claimed_once_and_recorded_by_its_claims_holder(store_url: str) -> None:
    now = one_event(store_url) + 1
    with Connection(store_url) as db, Connection(store_url) as other:
        mine, theirs = Deliveries(db, "here:1"), Deliveries(other, "there:2")
        assert mine.due(now)
        [claimed] = mine.claim(now)
        assert claimed.attempt == 1 and claimed.url == "https://hooks.example/in" and claimed.uid.startswith("evt_")
        assert claimed.lease.startswith("here:1 ") and claimed.timeout == 5
        assert theirs.claim(now) == [] and not theirs.due(now)  # leased
        # The lease ends (twice the timeout, plus 2 s): another process claims it, and the first may no longer
        # record its outcome.
        [again] = theirs.claim(now + 13)
        assert again.id == claimed.id and again.lease != claimed.lease
        assert mine.record(claimed, 200, None, now + 14) is None
        assert theirs.record(again, None, "HTTP 500", now + 14) == "pending"
        [(status, attempts, next_try)] = db.rows("SELECT status, attempts, next_try FROM deliveries")
        assert status == "pending" and attempts == 1 and now + 14 + 2.5 <= float(next_try) <= now + 14 + 5
        assert not mine.due(now + 14) and mine.due(now + 20)
        [third] = mine.claim(now + 20)
        assert third.attempt == 2 and mine.record(third, 204, None, now + 21) == "delivered"
        assert db.rows("SELECT sender, code, error FROM delivery_attempts ORDER BY attempt") == \
            [("there:2", None, "HTTP 500"), ("here:1", 204, None)]


def test_a_delivery_failing_for_a_day_is_given_up(store_url: str) -> None:
    created = one_event(store_url)
    with Connection(store_url) as db:
        deliveries = Deliveries(db, "here:1")
        late = created + delivery.GIVE_UP_SECONDS
        [claimed] = deliveries.claim(late)
        assert deliveries.record(claimed, None, "no answer", late) == "failed"
        assert not deliveries.due(late + delivery.MAX_PAUSE)


def test_finished_deliveries_are_pruned_after_thirty_days(store_url: str) -> None:
    now = one_event(store_url) + 1
    with Connection(store_url) as db:
        deliveries = Deliveries(db, "here:1")
        [claimed] = deliveries.claim(now)
        deliveries.record(claimed, 200, None, now)
        deliveries.prune(now + delivery.KEEP_SECONDS - 1)
        assert db.rows("SELECT count(*) FROM deliveries") == [(1,)]
        deliveries.prune(now + delivery.KEEP_SECONDS + 1)
        assert db.rows("SELECT count(*) FROM deliveries") == [(0,)]
        assert db.rows("SELECT count(*) FROM events") == [(0,)]
        assert db.rows("SELECT count(*) FROM delivery_attempts") == [(0,)]


def deliverers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "promptdeck-webhooks"]


def test_one_deliverer_per_store_while_anything_serves_it(store_url: str) -> None:
    with Store(store_url, create=True):
        pass
    assert deliverers() == []
    with delivering(store_url):
        [thread] = deliverers()
        with delivering(store_url):
            assert deliverers() == [thread]
        assert thread.is_alive()
    thread.join(delivery.STOP_SECONDS)
    assert not thread.is_alive() and deliverers() == []
