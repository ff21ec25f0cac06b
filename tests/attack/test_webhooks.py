"""Hostile webhook targets and the webhook secret: a target cannot make the sender reach a metadata, link-local or
private address (by address, by name, or by a name whose addresses change), follow a redirect, wait past its
timeout, or read an endless answer; and the secret reaches no log line, listing or message.

Requests go through the real sender (aiohttp) to real receivers on 127.0.0.1; the log test runs a real
``promptdeck serve --store … --http -vv`` process and reads everything it wrote.
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp.resolver import ThreadedResolver

from promptdeck.sources.store.sending import Outcome, refused, send
from tests.support.http_server import http_server
from tests.support.receiver import Receiver, receiver

KEY = b"attack-secret-key-bytes-0123456789"
SECRET = "whsec_" + base64.b64encode(KEY).decode()


def post(url: str, *, allow: tuple[str, ...] = ("private",), timeout: float = 2) -> tuple[Outcome, float]:
    started = time.monotonic()
    outcome = asyncio.run(send(url, "evt_1", SECRET, '{"type":"publish"}', allow=allow, timeout=timeout,
                               now=time.time()))
    return outcome, time.monotonic() - started


@pytest.fixture
def hook() -> Any:
    with receiver(SECRET) as box:
        yield box


@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.0.1", "fe80::1", "fe80::1%1", "100.100.100.200",
                                     "fd00:ec2::254", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe",
                                     "2002:a9fe:a9fe::1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::a9fe:a9fe"])
def test_link_local_and_metadata_addresses_are_refused_unless_allowed(address: str) -> None:
    assert "link-local" in (refused(address, ()) or "")
    assert "link-local" in (refused(address, ("private",)) or "")
    assert refused(address, ("link-local",)) is None
    if "%" in address:
        return  # a zone: no URL carries it
    shown = f"[{address}]" if ":" in address else address
    outcome, took = post(f"http://{shown}/latest/meta-data/", allow=("private",))
    assert outcome.code is None and outcome.error is not None and outcome.error.startswith("refused:") and took < 1


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1",
                                     "fd12::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "2002:7f00:1::",
                                     "64:ff9b::7f00:1"])
def test_loopback_and_private_addresses_need_their_allowance(address: str) -> None:
    assert "private" in (refused(address, ()) or "")
    assert refused(address, ("private",)) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "224.0.0.1", "ff02::1", "255.255.255.255", "240.0.0.1",
                                     "192.0.2.1"])
def test_addresses_no_webhook_goes_to_are_refused_whatever_is_allowed(address: str) -> None:
    assert refused(address, ("private", "link-local")) is not None


def test_public_addresses_are_allowed() -> None:
    assert refused("93.184.216.34", ()) is None and refused("2606:2800:220:1::1", ()) is None


def test_a_loopback_receiver_is_reached_only_when_allowed(hook: Receiver) -> None:
    outcome, _ = post(hook.url, allow=())
    assert outcome.error is not None and "127.0.0.1 is a loopback or private address" in outcome.error
    by_name, _ = post(hook.url.replace("127.0.0.1", "localhost"), allow=())
    assert by_name.error is not None and by_name.error.startswith("refused: localhost resolves to")
    assert hook.received == []
    assert post(hook.url)[0] == Outcome(200, None) and len(hook.received) == 1
    assert hook.received[0].verified == {"type": "publish"}


def test_a_name_is_resolved_once_and_refused_if_any_address_is(hook: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: the resolver's answer is checked and is the very address connected to. A name that
    answers a public address and a metadata one is refused whole; a name answering the receiver's address
    is connected there (the check saw what aiohttp then used)."""
    answers = {"rebind.test": ["93.184.216.34", "169.254.169.254"], "inside.test": ["127.0.0.1"]}
    asked: list[str] = []

    async def resolve(self: Any, host: str, port: int = 0, family: Any = socket.AF_INET) -> list[dict[str, Any]]:
        asked.append(host)
        return [{"hostname": host, "host": address, "port": port, "family": socket.AF_INET, "proto": 0, "flags": 0}
                for address in answers[host]]

    monkeypatch.setattr(ThreadedResolver, "resolve", resolve)
    port = hook.url.split(":")[2].split("/")[0]
    outcome, _ = post(f"http://rebind.test:{port}/hook")
    assert outcome.error is not None and "rebind.test resolves to 169.254.169.254 is link-local" in outcome.error
    assert post(f"http://inside.test:{port}/hook")[0] == Outcome(200, None)
    assert asked == ["rebind.test", "inside.test"] and len(hook.received) == 1
    assert hook.received[0].headers["host"] == f"inside.test:{port}"


def test_the_environments_proxy_is_not_used(hook: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy would connect wherever it likes, past the address check: the sender never uses one."""
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert post(hook.url)[0] == Outcome(200, None) and len(hook.received) == 1


def test_a_huge_message_is_cut_in_the_event(tmp_path: Path, hook: Receiver) -> None:
    from promptdeck.sources.store import webhooks
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.delivery import Deliverer

    url = f"sqlite:///{tmp_path}/s.db"
    with Store(url, create=True) as store:
        webhooks.add(store.db, hook.url, SECRET, [], scopes=[], allow=["private"], timeout=2, author="o")
        store.publish_file("a.md", b"A.\n", None, author="ana", message="m" * 5_000_000)
    deliverer = Deliverer(url)
    assert asyncio.run(deliverer.deliver_due()) == 1
    deliverer.stop()
    (body,) = hook.wait_for(1)
    assert len(body["data"]["message"]) == 4096 and body["data"]["message"].endswith("…")
    assert len(hook.received[0].body) < 8192


def test_a_redirect_is_not_followed() -> None:
    with receiver(SECRET) as first, receiver(SECRET) as second:
        first.answer = lambda _: ("redirect", second.url)
        outcome, _ = post(first.url)
        assert outcome == Outcome(302, "a redirect (not followed)") and not outcome.ok
        assert second.received == []


def test_a_target_that_never_answers_is_given_up_at_the_timeout(hook: Receiver) -> None:
    hook.answer = lambda _: ("stall", None)
    outcome, took = post(hook.url, timeout=1)
    # without the timeout it would wait forever
    assert outcome == Outcome(None, "no answer within 1 s") and 0.9 < took < 8


def test_an_endless_answer_is_not_read_past_a_few_kilobytes(hook: Receiver) -> None:
    hook.answer = lambda _: ("endless", None)
    outcome, took = post(hook.url, timeout=10)
    assert outcome == Outcome(200, None) and took < 8  # reading it all would last the whole 10 s
    time.sleep(0.3)
    assert hook.endless_sent < 16 * 1024 * 1024  # what socket buffers took before the sender hung up


@pytest.mark.slow
def test_the_webhook_secret_reaches_no_log_listing_or_message(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text("Hello.\n")
    run = [sys.executable, "-m", "promptdeck"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def pd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*run, *args], capture_output=True, text=True, timeout=60, env=env)

    assert pd("publish", str(folder), "--store", url, "--label", "production").returncode == 0
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    os.chmod(secret_file, 0o600)
    said: list[str] = []
    log = tmp_path / "serve.log"
    with receiver(SECRET) as good, receiver(SECRET) as failing:
        failing.answer = lambda _: ("status", 500)
        for target, extra in ((good.url, ["--allow", "private"]), (failing.url, ["--allow", "private"]),
                              ("http://169.254.169.254/latest/", []), (good.url, [])):
            added = pd("webhook", "add", target, "--store", url, "--secret-file", str(secret_file), *extra)
            assert added.returncode == 0, added.stderr
            said += [added.stdout, added.stderr]
        with http_server("", "--store", url, "-vv", log=log):
            (folder / "greet.md").write_text("Hello again.\n")
            published = pd("publish", str(folder), "--store", url)
            said += [published.stdout, published.stderr]
            good.wait_for(1)
            deadline = time.monotonic() + 20
            while len(failing.received) < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
        for args in (("webhook", "list"), ("webhook", "log"), ("webhook", "deliver")):
            done = pd(*args, "--store", url)
            said += [done.stdout, done.stderr]
    loose = tmp_path / "loose"
    loose.write_text(SECRET)
    os.chmod(loose, 0o644)
    wrong = tmp_path / "wrong"
    wrong.write_text(SECRET + "!!")
    os.chmod(wrong, 0o600)
    for bad in (loose, wrong):
        refused_add = pd("webhook", "add", "https://example.com/", "--store", url, "--secret-file", str(bad))
        assert refused_add.returncode == 1
        said.append(refused_add.stderr)
    logged = log.read_text()
    # The checks below are not vacuous: the log tells of each webhook, and the outputs were made.
    assert "webhook 1: event 1 delivered to http://127.0.0.1" in logged
    assert "webhook 2: event 1 not delivered" in logged and "HTTP 500" in logged
    assert "webhook 3: event 1 not delivered to http://169.254.169.254 (attempt 1: refused: 169.254.169.254" in logged
    assert "webhook 4: event 1 not delivered" in logged and "loopback or private address" in logged
    everything = logged + "".join(said)
    for form in (SECRET, SECRET[6:], SECRET[6:30], KEY.decode(), KEY.hex(), base64.urlsafe_b64encode(KEY).decode()):
        assert form not in everything, form


def test_an_event_counts_and_names_only_the_changes_a_webhook_may_see(store_url: str, tmp_path: Path) -> None:
    """Finding 9 of issue 38: an unscoped webhook was told ``files: 3`` of a move whose other two changes were an
    hr prompt and a file of an hr skill. Each event kind (publish, label, rollback) counts and names only what the
    webhook may see, by the rule a principal is held to; hr's webhook is told of all three."""
    from promptdeck.sources.store import webhooks
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.delivery import Deliverer
    from tests.support.publishing import publish

    folder = tmp_path / "lib"
    (folder / "skills" / "payroll").mkdir(parents=True)

    def write(word: str) -> None:
        (folder / "openp.md").write_text(f"---\ndescription: Open\n---\nOpen {word}.\n")
        (folder / "hr.md").write_text(f"---\ndescription: Pay\nscopes: [hr]\n---\nPay {word}.\n")
        (folder / "skills" / "payroll" / "SKILL.md").write_text(
            "---\nname: payroll\ndescription: Payroll steps\nmetadata:\n  promptdeck-scopes: hr\n---\nSteps.\n")
        (folder / "skills" / "payroll" / "rates.md").write_text(f"Rates {word}.\n")

    write("one")
    publish(store_url, folder)
    with receiver(SECRET) as everyone, receiver(SECRET) as hr:
        with Store(store_url) as store:
            for target, scopes in ((everyone.url, []), (hr.url, ["hr"])):
                webhooks.add(store.db, target, SECRET, [], scopes=scopes, allow=["private"], timeout=5, author="o")
        write("two")
        publish(store_url, folder)  # a publish with the label: a publish event and a label event
        with Store(store_url) as store:
            store.rollback("production", author="ana")
        deliverer = Deliverer(store_url)
        try:
            while asyncio.run(deliverer.deliver_due()):
                pass
        finally:
            deliverer.stop()
        told = {body["type"]: body["data"] for body in everyone.wait_for(3)}
        told_hr = {body["type"]: body["data"] for body in hr.wait_for(3)}
    assert sorted(told) == sorted(told_hr) == ["label", "publish", "rollback"]
    for kind in told:
        assert told[kind]["files"] == 1 and [p["name"] for p in told[kind]["prompts"]] == ["openp"], told[kind]
        assert told_hr[kind]["files"] == 3 and [p["name"] for p in told_hr[kind]["prompts"]] == ["hr", "openp"]
    for got in everyone.received:
        assert b'"hr"' not in got.body and b"hr.md" not in got.body and b"payroll" not in got.body
