"""Webhooks on SQLite and on a real PostgreSQL cluster: the outbox written with each change, deliveries signed
as Standard Webhooks (checked by the ``standardwebhooks`` library in a real receiver on 127.0.0.1), retries,
claims that never send an event twice, scopes that hide prompts from webhooks, and the ``webhook`` commands.

Events are made through the store's own methods (what ``publish``, ``label`` and ``rollback`` call) and sent
by a ``Deliverer``, the thread every ``serve --store`` runs, here called directly; the commands run as real
processes. Three replicas and a replica killed mid-delivery: test_webhook_replicas.py.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.delivery import GIVE_UP_SECONDS, Deliverer, Deliveries, pause
from promptdeck.sources.store.event_kinds import RolloutChanged
from promptdeck.sources.store.events import emit
from promptdeck.sources.store.model import Listed, StoreConflict, StoreError
from promptdeck.sources.store.promotion import promote
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.event_kinds import Deployed, registered
from tests.support.publishing import publish
from tests.support.receiver import Receiver, receiver
from tests.support.store_schema import as_schema_4

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
GREET = "---\ndescription: Say hello\n---\nHello!\n"
SALARIES = "---\ndescription: Pay\nscopes: [hr]\n---\nSalaries.\n"


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiver(SECRET) as box:
        yield box


def pd(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def library(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "lib"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.md").write_text(text)
    return folder


def add_hook(url: str, target: str, *, kinds: list[str] | None = None, scopes: list[str] | None = None,
             timeout: float = 30) -> int:
    # The receivers here answer at once: a short timeout would only make a loaded machine's run fail (a CI run
    # beside another lost one delivery of 30 to "no answer within 2 s"). Tests of the lease give their own.
    with Store(url, create=True) as store:
        return webhooks.add(store.db, target, SECRET, kinds or [], scopes=scopes or [], allow=["private"],
                            timeout=timeout, author="ops")


def deliver(url: str, clock: Any = None) -> int:
    deliverer = Deliverer(url, clock) if clock else Deliverer(url)
    try:
        return asyncio.run(deliverer.deliver_due())
    finally:
        deliverer.stop()


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with Store(url) as store:
        return store.db.rows(query)


def test_publish_label_and_rollback_each_send_one_signed_request(store_url: str, tmp_path: Path,
                                                                   hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder, message="first")
    add_hook(store_url, hook.url)
    (folder / "greet.md").write_text(GREET + "Again.\n")
    publish(store_url, folder, label=None, message="second cut", author="bea")
    with Store(store_url) as store:
        store.label("greet", 2, "production", author="carl")
        store.rollback("production", author="dana")
    assert deliver(store_url) == 3
    first, moved, back = sorted(hook.wait_for(3), key=lambda body: ["publish", "label", "rollback"].index(body["type"]))
    # Every request verified by standardwebhooks with the secret; one id per event, the same on a retry.
    assert len(set(hook.ids())) == 3 and all(i.startswith("evt_") for i in hook.ids())
    assert first["data"] == {"publish": 2, "author": "bea", "message": "second cut", "label": None, "files": 1,
                             "truncated": False,
                             "prompts": [{"name": "greet", "path": "greet.md", "version": 2, "previous": 1,
                                          "deleted": False}]}
    assert first["timestamp"].endswith("Z")
    # The signature as the specification defines it, worked out here too (the sender signs with the same
    # library the receiver verifies with): v1, base64 of HMAC-SHA256 over "id.timestamp.body".
    for got in hook.received:
        signed = f"{got.headers['webhook-id']}.{got.headers['webhook-timestamp']}.".encode() + got.body
        mac = hmac.new(base64.b64decode(SECRET[len("whsec_"):]), signed, hashlib.sha256).digest()
        assert got.headers["webhook-signature"] == "v1," + base64.b64encode(mac).decode()
        assert abs(int(got.headers["webhook-timestamp"]) - time.time()) < 60
        assert got.headers["content-type"] == "application/json"
    assert moved["data"]["label"] == "production" and moved["data"]["author"] == "carl"
    assert moved["data"]["prompts"] == [{"name": "greet", "path": "greet.md", "version": 2, "previous": 1,
                                         "deleted": False}]
    assert moved["data"]["message"] == "label greet@2"
    assert back["data"]["prompts"][0]["version"] == 1 and back["data"]["author"] == "dana"
    assert back["data"]["previous_position"] == moved["data"]["position"]
    statuses = rows(store_url, "SELECT status, attempts FROM deliveries")
    assert statuses == [("delivered", 1)] * 3
    assert deliver(store_url) == 0  # nothing is sent twice


def test_a_promotion_is_an_event_of_its_own_naming_both_labels_and_what_moved(store_url: str, tmp_path: Path,
                                                                               hook: Receiver) -> None:
    """A webhook asking for ``promote`` alone gets the promotion (and no other move); a prompt hidden from it
    is neither named nor counted."""
    folder = library(tmp_path, greet=GREET, salaries=SALARIES)
    publish(store_url, folder, message="first")
    (folder / "greet.md").write_text(GREET + "Again.\n")
    (folder / "salaries.md").write_text(SALARIES + "More.\n")
    publish(store_url, folder, label="staging", message="second")
    add_hook(store_url, hook.url, kinds=["promote"])
    with Store(store_url) as store:
        staging = store.reads.require_position("staging")
        store.label("greet", 2, "production", author="carl")  # a label move: not asked for
        store.label("greet", 1, "production", author="carl")
        promote(store.governance, "staging", "production", author="ana", message="release 2")
    assert deliver(store_url) == 1
    [body] = hook.wait_for(1)
    assert body["type"] == "promote"
    data = body["data"]
    assert list(data) == ["label", "author", "message", "reason", "position", "previous_position", "files",
                          "prompts", "truncated", "source", "source_position", "partial"]
    assert (data["label"], data["source"], data["source_position"], data["partial"], data["author"]) == (
        "production", "staging", staging, False, "ana")
    assert data["message"] == "release 2" and data["reason"] == f"promote staging (position {staging})"
    assert data["files"] == 1 and data["prompts"] == [{"name": "greet", "path": "greet.md", "version": 2,
                                                       "previous": 1, "deleted": False}]


def test_a_rollouts_start_change_and_end_are_signed_events(store_url: str, tmp_path: Path, hook: Receiver) -> None:
    """Rollouts (docs/store.md#rollouts) are events of their own kind; a label move's -m is its message."""
    folder = library(tmp_path, greet=GREET, salaries=SALARIES)
    publish(store_url, folder)
    (folder / "greet.md").write_text(GREET + "Again.\n")
    (folder / "salaries.md").write_text(SALARIES + "Raised.\n")
    publish(store_url, folder, label=None)
    add_hook(store_url, hook.url, kinds=["rollout", "label"], scopes=["hr"])
    with receiver(SECRET) as others:
        add_hook(store_url, others.url, kinds=["rollout"])  # holds no scope: never hears of salaries
        with Store(store_url) as store:
            store.governance.start_rollout("production", "greet", 2, 1000, author="ana", message="canary")
            store.governance.start_rollout("production", "greet", 2, 5000, author="ana")
            store.governance.end_rollout("production", "greet", promote=True, author="bea", message="looks good")
            store.governance.start_rollout("production", "salaries", 2, 2500, author="carl")
            store.governance.end_rollout("production", "salaries", promote=False, author="carl", message="too generous")
        # hr's: five rollout events and the promotion's label move; the other's: greet's three
        assert deliver(store_url) + deliver(store_url) == 6 + 3  # a deliverer sends 8 at a time
        bodies = hook.wait_for(6)
        told = others.wait_for(3)
        assert len(others.received) == 3
    rollouts = [b["data"] for b in bodies if b["type"] == "rollout"]
    # sent 8 at a time, together: they arrive in any order
    assert sorted((d["change"], d["percent"], d["author"], d["message"]) for d in rollouts) == sorted([
        ("start", 10, "ana", "canary"), ("percent", 50, "ana", ""), ("promote", 50, "bea", "looks good"),
        ("start", 25, "carl", ""), ("abort", 25, "carl", "too generous")])
    assert {d["label"] for d in rollouts} == {"production"}
    canary = next(d for d in rollouts if d["message"] == "canary")
    assert canary["prompts"] == [{"name": "greet", "path": "greet.md", "version": 2, "previous": 1, "deleted": False}]
    (moved,) = [b["data"] for b in bodies if b["type"] == "label"]
    assert moved["message"] == "looks good" and moved["reason"].startswith("promote rollout")
    assert sorted(b["data"]["change"] for b in told) == ["percent", "promote", "start"]
    assert all(b"salaries" not in got.body for got in others.received)


def test_only_the_kinds_asked_for_and_nothing_before_the_webhook(store_url: str, tmp_path: Path,
                                                                  hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder)  # before any webhook: no event kept
    add_hook(store_url, hook.url, kinds=["rollback"])
    (folder / "greet.md").write_text(GREET + "x\n")
    publish(store_url, folder)  # a publish and a label move: not asked for
    assert rows(store_url, "SELECT count(*) FROM events") == [(0,)]
    with Store(store_url) as store:
        store.rollback("production", author="ana")
    assert deliver(store_url) == 1
    assert [body["type"] for body in hook.wait_for(1)] == ["rollback"]


def test_a_change_that_fails_midway_leaves_no_event(store_url: str, tmp_path: Path, hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET, other="---\nname: other\n---\nOther.\n")
    publish(store_url, folder)
    add_hook(store_url, hook.url)

    def refuse(before: dict[str, int], after: dict[str, int]) -> None:
        raise StoreConflict("refused by the rule")

    with Store(store_url) as store:
        # The editor's save with a label: the new version and its publish event are written, then the label's
        # move is refused, and the whole transaction goes.
        with pytest.raises(StoreConflict):
            store.publish_file("greet.md", b"Changed.\n", None, author="ana", message="m", label="production",
                               allow=refuse)
        # A label move that would serve two prompts of one name: refused after its position was written.
        renamed = Listed("greet", '{"v":1,"d":{"name":"greet"}}', "")
        store.publish_file("other.md", b"---\nname: greet\n---\nClash.\n", renamed, author="ana", message="m")
        assert rows(store_url, "SELECT count(*) FROM events") == [(1,)]  # that publish, which committed
        with pytest.raises(StoreConflict):
            store.label("other.md", 2, "production", author="ana")
    assert rows(store_url, "SELECT kind FROM events") == [("publish",)]
    assert rows(store_url, "SELECT count(*) FROM deliveries") == [(1,)]
    assert rows(store_url, "SELECT max(version) FROM files WHERE path = 'greet.md'") == [(1,)]


def test_a_hidden_prompt_is_not_named_and_its_own_events_are_not_sent(store_url: str, tmp_path: Path) -> None:
    folder = library(tmp_path, greet=GREET, salaries=SALARIES)
    publish(store_url, folder)
    with receiver(SECRET) as everyone, receiver(SECRET) as hr:
        add_hook(store_url, everyone.url)
        add_hook(store_url, hr.url, scopes=["hr"])
        (folder / "salaries.md").write_text(SALARIES + "Raised.\n")
        publish(store_url, folder, label=None)  # only the hidden prompt changed
        (folder / "greet.md").write_text(GREET + "Hi.\n")
        (folder / "salaries.md").write_text(SALARIES + "Raised again.\n")
        publish(store_url, folder, label=None)  # both changed
        assert deliver(store_url) == 3
        hr_bodies = hr.wait_for(2)
        # the two are sent together (a deliverer's batch): they may arrive in either order
        assert sorted([p["name"] for p in b["data"]["prompts"]] for b in hr_bodies) == [["greet", "salaries"],
                                                                                        ["salaries"]]
        seen = everyone.wait_for(1)
        assert [[p["name"] for p in b["data"]["prompts"]] for b in seen] == [["greet"]]
        assert b"salaries" not in everyone.received[0].body and b"hr" not in everyone.received[0].body
        assert len(everyone.received) == 1
    # The event itself, as the store keeps it for its administrator, names both.
    assert "salaries" in rows(store_url, "SELECT payload FROM events ORDER BY id DESC LIMIT 1")[0][0]


def test_a_failure_is_tried_again_later_and_given_up_after_a_day(store_url: str, tmp_path: Path,
                                                                  hook: Receiver) -> None:
    hook.answer = lambda _: ("status", 503)
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder, label=None)
    add_hook(store_url, hook.url)
    (folder / "greet.md").write_text("Changed.\n")
    publish(store_url, folder, label=None)
    created = float(rows(store_url, "SELECT created FROM events")[0][0])
    now = [created]
    assert deliver(store_url, lambda: now[0]) == 1
    status, attempts, next_try = rows(store_url, "SELECT status, attempts, next_try FROM deliveries")[0]
    assert (status, attempts) == ("pending", 1) and created + 2.5 <= next_try <= created + 5
    assert deliver(store_url, lambda: now[0]) == 0  # not due yet
    pauses = []
    while status == "pending":
        now[0] = float(next_try)
        assert deliver(store_url, lambda: now[0]) == 1
        last = next_try
        status, attempts, next_try = rows(store_url, "SELECT status, attempts, next_try FROM deliveries")[0]
        pauses.append(float(next_try) - float(last))
    assert status == "failed" and 20 < attempts < 60
    assert now[0] <= created + GIVE_UP_SECONDS and len(hook.received) == attempts
    assert pauses[1] > pauses[0] and max(pauses) <= 3600  # doubling, capped at an hour
    assert [pause(1) <= 5 for _ in range(20)] == [True] * 20 and len({pause(3) for _ in range(20)}) > 1  # jitter
    shown = pd("webhook", "log", "--store", store_url).stdout
    assert f"failed  {attempts} attempts" in shown and "HTTP 503" in shown


def test_concurrent_deliverers_claim_each_delivery_once(store_url: str, tmp_path: Path, hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder)
    add_hook(store_url, hook.url)
    with Store(store_url) as store:
        for number in range(30):  # 30 events, one delivery each
            store.publish_file("greet.md", f"Hello {number}\n".encode(), None, author="ana", message=str(number))
    expected = int(rows(store_url, "SELECT count(*) FROM deliveries")[0][0])
    assert expected == 30
    sent: list[int] = []

    def run() -> None:
        total = 0
        deliverer = Deliverer(store_url)
        for _ in range(10):
            total += asyncio.run(deliverer.deliver_due())
        deliverer.stop()
        sent.append(total)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    hook.wait_for(expected)
    assert sum(sent) == expected and sorted(hook.ids()) == sorted(set(hook.ids()))
    assert len(hook.received) == expected


def test_a_claim_held_by_another_is_left_until_its_lease_ends(store_url: str, tmp_path: Path,
                                                               hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder, label=None)
    add_hook(store_url, hook.url, timeout=1)
    with Store(store_url) as store:
        store.label("greet", 1, "production", author="ana")
        now = float(rows(store_url, "SELECT created FROM events")[0][0])
        first = Deliveries(store.db, "one:1").claim(now)
        assert len(first) == 1
        assert Deliveries(store.db, "two:2").claim(now + 3.9) == []  # the lease: 2 x 1 s + 2 s
        again = Deliveries(store.db, "two:2").claim(now + 4.1)
        assert [c.id for c in again] == [first[0].id]
        assert Deliveries(store.db, "one:1").record(first[0], 200, None, now + 5) is None  # its lease is gone
        assert Deliveries(store.db, "two:2").record(again[0], 200, None, now + 5) == "delivered"
    assert rows(store_url, "SELECT sender FROM delivery_attempts") == [("two:2",)]


def test_webhook_commands(store_url: str, tmp_path: Path, hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder)
    secret = tmp_path / "secret"
    added = pd("webhook", "add", hook.url, "--store", store_url, "--secret-file", str(secret), "--new-secret",
               "--allow", "private", "--event", "label", "--scope", "hr")
    assert added.stdout == f"webhook 1: {hook.url} (new secret in {secret})\n"
    assert oct(secret.stat().st_mode & 0o777) == "0o600"
    text = secret.read_text().strip()
    webhooks.parse_secret(text, "it")
    listed = pd("webhook", "list", "--store", store_url).stdout
    assert f"1  {hook.url}  events label  timeout 10s  scopes hr  allow private  added " in listed
    assert text not in listed and text[6:] not in listed
    with Store(store_url) as store:
        store.label("greet", 1, "staging", author="ana")
    hook.secret = text
    delivered = pd("webhook", "deliver", "--store", store_url)
    # the command named as the test ran it, as every hint names it (tests/cli/test_first_hour.py)
    assert delivered.stdout == f"1 delivery attempted ({shlex.quote(sys.executable)} -m promptdeck webhook log " \
                               "shows them)\n"
    assert len(hook.received) == 1 and hook.received[0].verified is None  # the receiver holds another secret
    logged = pd("webhook", "log", "1", "--store", store_url).stdout
    assert "event 1 label  webhook 1  delivered  1 attempt" in logged and "HTTP 200  from " in logged
    assert f", {hook.received[0].headers['webhook-id']})" in logged  # the id the receiver was sent
    with Store(store_url) as store:
        store.publish_file("greet.md", b"Hi.\n", None, author="ana", message="m")  # not a kind it asked for
        store.label("greet", 1, "other", author="ana")
    removed = pd("webhook", "remove", "1", "--store", store_url).stdout
    assert removed == "webhook 1 removed; 1 pending delivery cancelled\n"
    assert pd("webhook", "list", "--store", store_url).stdout == "no webhooks\n"
    assert "cancelled" in pd("webhook", "log", "--store", store_url).stdout
    missing = pd("webhook", "remove", "1", "--store", store_url, check=False)
    assert missing.returncode == 1 and "no webhook 1" in missing.stderr
    assert pd("webhook", "log", "7", "--store", store_url, check=False).stderr.strip().endswith(
        "no webhook 7 (promptdeck webhook list shows them)")


def test_store_upgrade_from_schema_4_adds_the_webhook_tables(store_url: str, tmp_path: Path) -> None:
    url = store_url
    publish(url, library(tmp_path, greet=GREET))
    with Store(url) as store:  # what schema 4 had
        as_schema_4(SimpleNamespace(execute=store.db.run))
    refused = pd("webhook", "list", "--store", url, check=False)
    assert refused.returncode == 1 and "has schema 4: run `promptdeck store upgrade" in refused.stderr
    assert f"upgraded the store from schema 4 to {SCHEMA_VERSION}" in pd("store", "upgrade", url).stdout
    secret = tmp_path / "s"
    pd("webhook", "add", "https://example.com/hook", "--store", url, "--secret-file", str(secret), "--new-secret")
    assert "https://example.com/hook" in pd("webhook", "list", "--store", url).stdout


def test_bad_secret_files_and_targets_are_refused_naming_them(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    publish(url, library(tmp_path, greet=GREET))
    loose = tmp_path / "loose"
    loose.write_text(SECRET)
    os.chmod(loose, 0o644)
    not_one = tmp_path / "not-one"
    not_one.write_text("hunter2-password")
    os.chmod(not_one, 0o600)
    short = tmp_path / "short"
    short.write_text("whsec_" + base64.b64encode(b"x" * 8).decode())
    os.chmod(short, 0o600)
    cases = {loose: "can be read or written by others (mode 644): chmod 600",
             not_one: "does not hold a webhook secret", short: "24 to 64 random bytes; this one is 8",
             tmp_path / "absent": "cannot read the secret file"}
    for path, why in cases.items():
        done = pd("webhook", "add", "https://example.com/", "--store", url, "--secret-file", str(path), check=False)
        assert done.returncode == 1 and why in done.stderr and str(path) in done.stderr, done.stderr
        assert "hunter2" not in done.stderr and SECRET not in done.stderr
    good = tmp_path / "good"
    good.write_text(SECRET)
    os.chmod(good, 0o600)
    done = pd("webhook", "add", "ftp://example.com/", "--store", url, "--secret-file", str(good), check=False)
    assert done.returncode == 1 and "over http or https, not to 'ftp://example.com/'" in done.stderr
    for target, why in {"file:///etc/passwd": "over http or https", "gopher://x/": "over http or https",
                        "https://user:pw@example.com/": "no user name or password", "http:///x": "names no host",
                        "https://example.com:99999/": "is not a URL", "https://exa mple.com/": "no spaces",
                        "https://example.com/" + "a" * 2048: "at most 2048 characters"}.items():
        with pytest.raises(StoreError, match=why):
            webhooks.check_target(target)
    unknown = pd("webhook", "add", "https://example.com/", "--store", url, "--secret-file", str(good), "--event",
                 "deploy", check=False)
    assert unknown.returncode == 1
    kinds = "label, promote, proposal, publish, rollback, rollout"
    assert f"no event kind 'deploy'; the kinds are {kinds}" in unknown.stderr
    assert pd("webhook", "list", "--store", url).stdout == "no webhooks\n"


def test_an_unknown_kind_of_event_is_refused_inside_the_transaction(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    publish(url, library(tmp_path, greet=GREET))
    with Store(url) as store, pytest.raises(StoreError, match="no event kind 'deploy'"):
        with store.db.transaction():  # refused though no webhook asks for it: a bug to see at once
            emit(store.db, "deploy", Deployed(label="production"))
    with Store(url) as store, registered():  # a later promptdeck declares it: no migration, and emit takes it
        webhooks.add(store.db, "https://example.com/", SECRET, ["deploy"], scopes=[], allow=[], timeout=1, author="o")
        with store.db.transaction():
            assert emit(store.db, "deploy", Deployed(label="production")) == 1
        with store.db.transaction(), pytest.raises(StoreError, match="a 'deploy' event carries a Deployed, not a "):
            emit(store.db, "deploy", RolloutChanged(label="l", rollout=1, change="start", percent=1.0, author="a",
                                                 message="", position=None, prompts=()))


def test_a_webhook_for_every_kind_is_sent_a_kind_declared_after_it_was_made(store_url: str, tmp_path: Path,
                                                                             hook: Receiver) -> None:
    """Made without --event, a webhook keeps ``*``; one that chose the kinds there are keeps its choice."""
    folder = library(tmp_path, greet=GREET, salaries=SALARIES)
    publish(store_url, folder)
    add_hook(store_url, hook.url)  # every kind
    with receiver(SECRET) as chooser:
        add_hook(store_url, chooser.url, kinds=["label", "publish", "rollback", "rollout"])  # every kind of today
        assert rows(store_url, "SELECT kinds FROM webhooks ORDER BY id") == [("*",),
                                                                              ("label publish rollback rollout",)]
        with registered(), Store(store_url) as store:
            with store.db.transaction():
                assert emit(store.db, "deploy", Deployed(label="production")) == 1
            assert webhooks.listed(store.db)[0].kinds == ("*",)
            store.label("greet", 1, "staging", author="ana")  # a kind of today: both are sent it
        assert deliver(store_url) == 3
        assert [(b["type"], b["data"]) for b in hook.wait_for(2) if b["type"] == "deploy"] == [
            ("deploy", {"label": "production", "prompts": []})]
        assert [b["type"] for b in chooser.wait_for(1)] == ["label"] and len(chooser.received) == 1


def test_bodies_are_byte_for_byte_what_receivers_were_sent_before_kinds_were_typed(store_url: str,
                                                                                   tmp_path: Path) -> None:
    """The JSON of each kind, field order and escapes included, as the code before ``event_kinds`` wrote it (its
    output, pinned): the typed payloads change nothing a receiver parses or a signature covers."""
    folder = library(tmp_path, greet=GREET, salaries=SALARIES)
    publish(store_url, folder)
    add_hook(store_url, "https://everyone.example/")
    add_hook(store_url, "https://hr.example/", scopes=["hr"])
    (folder / "greet.md").write_text(GREET + "Again.\n")
    (folder / "salaries.md").write_text(SALARIES + "Raised.\n")
    publish(store_url, folder, label=None, message="second \u2713 \u00e9", author="b\u00e9")
    with Store(store_url) as store:
        store.label("greet", 2, "production", author="carl")
        store.rollback("production", author="dana")
        store.governance.start_rollout("production", "salaries", 2, 1234, author="ana", message="canary")
    sent = [(hook, re.sub(r'"timestamp":"[^"]*"', '"timestamp":"T"', body))
            for hook, body in rows(store_url, "SELECT webhook, body FROM deliveries ORDER BY id")]
    greet = '{"name":"greet","path":"greet.md","version":2,"previous":1,"deleted":false}'
    salaries = '{"name":"salaries","path":"salaries.md","version":2,"previous":1,"deleted":false}'
    label = ('{"type":"label","timestamp":"T","data":{"label":"production","author":"carl","message":"label greet@2",'
             f'"reason":"label greet@2","position":2,"previous_position":1,"files":1,"prompts":[{greet}],'
             '"truncated":false}}')
    back = ('{"type":"rollback","timestamp":"T","data":{"label":"production","author":"dana","message":"rollback to '
            'position 1","reason":"rollback to position 1","position":3,"previous_position":2,"files":1,"prompts":'
            '[{"name":"greet","path":"greet.md","version":1,"previous":2,"deleted":false}],"truncated":false}}')
    assert sent == [
        (1, '{"type":"publish","timestamp":"T","data":{"publish":2,"author":"b\\u00e9","message":"second '
            f'\\u2713 \\u00e9","label":null,"files":1,"prompts":[{greet}],"truncated":false}}}}'),
        (2, '{"type":"publish","timestamp":"T","data":{"publish":2,"author":"b\\u00e9","message":"second '
            f'\\u2713 \\u00e9","label":null,"files":2,"prompts":[{greet},{salaries}],"truncated":false}}}}'),
        (1, label), (2, label), (1, back), (2, back),
        (2, '{"type":"rollout","timestamp":"T","data":{"label":"production","rollout":1,"change":"start",'
            f'"percent":12.34,"author":"ana","message":"canary","position":null,"prompts":[{salaries}]}}}}')]


def test_a_stdio_store_server_imports_no_http_client_until_a_webhook_is_due(tmp_path: Path, hook: Receiver) -> None:
    """Every `serve --store` delivers, stdio too; but aiohttp and standardwebhooks are imported only when a
    delivery is due, so a stdio server's start-up is what it was."""
    import json

    url = f"sqlite:///{tmp_path}/s.db"
    folder = library(tmp_path, greet=GREET)
    publish(url, folder)
    add_hook(url, hook.url)
    requests = "".join(json.dumps(r) + "\n" for r in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}])

    def imports_while_serving(meanwhile: Callable[[], object]) -> set[str]:
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "promptdeck", "serve", "--store", url,
                                 "--no-watch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(requests)
        proc.stdin.flush()
        assert [json.loads(proc.stdout.readline())["id"] for _ in range(2)] == [1, 2]
        meanwhile()
        _, err = proc.communicate(timeout=30)  # the end of stdin ends the server
        assert proc.returncode == 0, err[-2000:]
        return {line.rsplit("|", 1)[1].strip() for line in err.splitlines() if line.startswith("import time:")}

    idle = imports_while_serving(lambda: time.sleep(1.5))  # the deliverer's first rounds
    assert "promptdeck.sources.store.delivery" in idle  # the deliverer ran
    assert not {m for m in idle if m.split(".")[0] in ("aiohttp", "standardwebhooks")}
    (folder / "greet.md").write_text(GREET + "Again.\n")
    publish(url, folder, label=None)
    due = imports_while_serving(lambda: hook.wait_for(1))  # sent by the stdio server
    assert {"aiohttp", "standardwebhooks"} <= due


def test_finished_deliveries_are_kept_thirty_days(store_url: str, tmp_path: Path, hook: Receiver) -> None:
    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder, label=None)
    add_hook(store_url, hook.url)
    with Store(store_url) as store:
        for number in range(3):
            store.publish_file("greet.md", f"v{number}\n".encode(), None, author="ana", message="m")
    assert deliver(store_url) == 3
    with Store(store_url) as store:
        store.db.run("UPDATE deliveries SET status = 'pending', finished = NULL WHERE id = 3")  # still trying
        now = float(store.db.rows("SELECT max(finished) FROM deliveries")[0][0])
        Deliveries(store.db, "x:1").prune(now + 29 * 24 * 3600)
        assert store.db.rows("SELECT count(*) FROM deliveries") == [(3,)]
        Deliveries(store.db, "x:1").prune(now + 31 * 24 * 3600)
        assert store.db.rows("SELECT id FROM deliveries") == [(3,)]
        assert store.db.rows("SELECT delivery FROM delivery_attempts") == [(3,)]
        assert store.db.rows("SELECT count(*) FROM events") == [(1,)]


def test_an_application_opening_prompts_on_the_store_delivers_no_webhook(store_url: str, tmp_path: Path,
                                                                        hook: Receiver) -> None:
    """Only ``promptdeck serve`` delivers (docs/application.md): an application's ``Prompts`` renders the label and
    sends nothing, so it needs neither the webhook packages nor a route out to the receivers."""
    from promptdeck import Prompts

    folder = library(tmp_path, greet=GREET)
    publish(store_url, folder)
    add_hook(store_url, hook.url)
    (folder / "greet.md").write_text(GREET + "Again.\n")
    publish(store_url, folder)  # an event due now
    with Prompts(store_url) as prompts:
        assert "Again." in str(prompts.render("greet").messages)
        assert not [t for t in threading.enumerate() if t.name == "promptdeck-webhooks"]
        time.sleep(1.5)  # a deliverer's first rounds, had one started
    assert hook.received == []
    assert rows(store_url, "SELECT status, attempts FROM deliveries") == [("pending", 0), ("pending", 0)]
