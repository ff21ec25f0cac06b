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
        webhooks.add(store.db, target, SECRET, ["publish"], scopes=[], allow=["private"], timeout=timeout,
                     author="ops")
    return url


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with Store(url) as store:
        return store.db.rows(query)


def sent_and_held(url: str, held: list[Received], message: str) -> int:
    """Publish a change and wait until a replica sends its event and the receiver holds the request; that
    replica's process id (its lease names it)."""
    with Store(url) as store:
        store.publish_file("greet.md", b"Changed.\n", None, author="ana", message=message)
    deadline = time.monotonic() + 20
    while not held and time.monotonic() < deadline:
        time.sleep(0.02)
    assert held, "no replica sent the event"
    (lease,) = rows(url, "SELECT lease FROM deliveries WHERE status = 'pending'")[0]
    return int(str(lease).split()[0].rsplit(":", 1)[1])


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
        holder = sent_and_held(url, stalled, "kill")
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


@pytest.mark.slow
def test_a_graceful_stop_mid_delivery_records_it_and_no_replica_sends_it_again(store_url: str,
                                                                              tmp_path: Path) -> None:
    """SIGTERM while a request is in flight: the stopping replica waits for the answer and records it, so the
    other replica, which would take the claim over once its lease ended, never sends the event again."""
    import threading

    with receiver(SECRET) as hook, ExitStack() as stack:
        answer_now = threading.Event()
        held: list[Received] = []

        def answer(got: Received) -> tuple[str, Any]:
            if not held:
                held.append(got)
                answer_now.wait(30)  # answered (200) only once its sender is stopping
            return "status", 200

        hook.answer = answer
        url = fill(store_url, hook.url, 5)  # a claim's lease: 2 x 5 s + 2 s
        logs = [tmp_path / f"r{number}.log" for number in range(2)]
        for log in logs:
            stack.enter_context(http_server("", "--store", url, "--stateless", "-v", log=log))
        holder = sent_and_held(url, held, "stop")
        os.kill(holder, signal.SIGTERM)
        deadline = time.monotonic() + 20
        # It is stopping and waits for the answer (or, as before issue 38, it is gone and left the claim).
        while not any("requests in flight" in log.read_text() for log in logs) and not ended(holder):
            assert time.monotonic() < deadline, [log.read_text()[-1000:] for log in logs]
            time.sleep(0.05)
        answer_now.set()
        deadline = time.monotonic() + 20
        while rows(url, "SELECT status FROM deliveries") != [("delivered",)]:
            assert time.monotonic() < deadline, rows(url, "SELECT status, lease, lease_until FROM deliveries")
            time.sleep(0.05)
        (sender,) = rows(url, "SELECT sender FROM delivery_attempts")[0]
        assert str(sender).endswith(f":{holder}")  # recorded by the replica that sent it, as it stopped
        time.sleep(13)  # past the lease it held: the other replica's rounds find nothing to send
        assert hook.ids(answered_only=False) == [held[0].headers["webhook-id"]]
    assert rows(url, "SELECT status, attempts, lease FROM deliveries") == [("delivered", 1, None)]


def ended(pid: int) -> bool:
    """Whether the child process ``pid`` has exited (a zombie until its parent waits for it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
