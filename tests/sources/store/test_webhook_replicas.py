"""Three replicas deliver one PostgreSQL store's webhooks: each event reaches the receiver exactly once, and an
event whose replica is killed (-9) mid-delivery is delivered by another once its claim's lease ends. Two
servers on one SQLite file share its deliveries the same way.

Real ``promptdeck serve --store postgresql://… --http --stateless`` processes on one throwaway cluster, and
a real receiver on 127.0.0.1 that verifies each request with the ``standardwebhooks`` library.
"""

from __future__ import annotations

import base64
import os
import signal
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from tests.support.http_server import http_server
from tests.support.postgres import new_database
from tests.support.receiver import Received, receiver

SECRET = "whsec_" + base64.b64encode(b"replicas-secret-" * 2).decode()
EVENTS = 20


def make_store(postgres: str, target: str, timeout: float) -> str:
    return fill(new_database(postgres), target, timeout)


def fill(url: str, target: str, timeout: float) -> str:
    with Store(url, create=True) as store:
        store.publish_file("greet.md", b"Hello.\n", None, author="ana", message="first", label="production")
        webhooks.add(store, target, SECRET, ["publish"], scopes=[], allow=["private"], timeout=timeout,
                     author="ops")
    return url


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with Store(url) as store:
        return store._rows(query)


@pytest.mark.slow
def test_three_replicas_send_each_event_exactly_once(postgres: str, tmp_path: Path) -> None:
    with receiver(SECRET) as hook, ExitStack() as stack:
        url = make_store(postgres, hook.url, 5)
        for number in range(3):
            stack.enter_context(http_server("", "--store", url, "--stateless", log=tmp_path / f"r{number}.log"))
        with Store(url) as store:
            for number in range(EVENTS):
                store.publish_file("greet.md", f"Hello {number}.\n".encode(), None, author="ana", message=str(number))
        bodies = hook.wait_for(EVENTS, 30)
        time.sleep(1.5)  # another round of every replica's polling: nothing arrives twice
        ids = hook.ids(answered_only=False)
        assert len(ids) == EVENTS and len(set(ids)) == EVENTS, Counter(ids).most_common(3)
        assert all(body is not None for body in bodies)  # each verified by standardwebhooks
        assert sorted(int(b["data"]["message"]) for b in bodies) == list(range(EVENTS))
    assert rows(url, "SELECT status, attempts, count(*) FROM deliveries GROUP BY status, attempts") == [
        ("delivered", 1, EVENTS)]
    senders = Counter(sender for (sender,) in rows(url, "SELECT sender FROM delivery_attempts"))
    print(f"\ndeliveries by replica: {dict(senders)}")
    assert sum(senders.values()) == EVENTS


@pytest.mark.slow
def test_a_replica_killed_mid_delivery_leaves_the_event_to_another(postgres: str, tmp_path: Path) -> None:
    with receiver(SECRET) as hook, ExitStack() as stack:
        stalled: list[Received] = []

        def answer(got: Received) -> tuple[str, Any]:
            if not stalled:
                stalled.append(got)
                return "stall", None  # held open: its sender is killed while waiting
            return "status", 200

        hook.answer = answer
        url = make_store(postgres, hook.url, 2)  # a claim's lease: 2 x 2 s + 2 s
        for number in range(3):
            stack.enter_context(http_server("", "--store", url, "--stateless", log=tmp_path / f"r{number}.log"))
        with Store(url) as store:
            store.publish_file("greet.md", b"Changed.\n", None, author="ana", message="kill")
        deadline = time.monotonic() + 20
        while not stalled and time.monotonic() < deadline:
            time.sleep(0.02)
        assert stalled, "no replica sent the event"
        (lease,) = rows(url, "SELECT lease FROM deliveries")[0]
        holder = int(str(lease).split()[0].rsplit(":", 1)[1])
        os.kill(holder, signal.SIGKILL)
        killed_at = time.monotonic()
        bodies = hook.wait_for(1, 20)
        taken_over = time.monotonic() - killed_at
        assert bodies[0]["data"]["message"] == "kill"
        assert hook.ids(answered_only=False) == [stalled[0].headers["webhook-id"]] * 2  # the same event, resent
    status, attempts = rows(url, "SELECT status, attempts FROM deliveries")[0]
    (sender,) = rows(url, "SELECT sender FROM delivery_attempts")[0]
    assert (status, attempts) == ("delivered", 1) and not str(sender).endswith(f":{holder}")
    print(f"\ndelivered by {sender} {taken_over:.1f} s after {holder} was killed")
    assert taken_over >= 2  # not before the killed replica's lease ended


@pytest.mark.slow
def test_two_servers_on_one_sqlite_file_send_each_event_once(tmp_path: Path) -> None:
    """SQLite's one write lock does what SKIP LOCKED does in PostgreSQL: two processes never claim one row."""
    with receiver(SECRET) as hook, ExitStack() as stack:
        url = fill(f"sqlite:///{tmp_path}/s.db", hook.url, 5)
        for number in range(2):
            stack.enter_context(http_server("", "--store", url, log=tmp_path / f"r{number}.log"))
        with Store(url) as store:
            for number in range(EVENTS):
                store.publish_file("greet.md", f"Hello {number}.\n".encode(), None, author="ana", message=str(number))
        hook.wait_for(EVENTS, 30)
        time.sleep(1.5)
        ids = hook.ids(answered_only=False)
        assert len(ids) == EVENTS and len(set(ids)) == EVENTS, Counter(ids).most_common(3)
    assert rows(url, "SELECT status, attempts, count(*) FROM deliveries GROUP BY status, attempts") == [
        ("delivered", 1, EVENTS)]
