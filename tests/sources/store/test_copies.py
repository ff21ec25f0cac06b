"""A copy of a store never delivers its webhooks as if it were the original (``sources.store.copies``): on SQLite
(``store backup`` and ``store restore``) and on a real PostgreSQL cluster (``pg_dump`` and ``pg_restore`` run with
the flags docs/store.md gives, outside promptdeck), by every path that delivers, until ``webhook resume``."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from promptdeck.sources.store import copies, delivery, webhooks
from promptdeck.sources.store.backup import backup_sqlite, postgres_commands, restore_sqlite
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.delivery import Deliverer
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.paths import REPO
from tests.support.postgres import new_database
from tests.support.publishing import publish
from tests.support.receiver import Receiver, receiver

SECRET = "whsec_a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="
GREET = "---\ndescription: Say hello\n---\nHello!\n"


def test_the_rule_a_webhook_delivers_only_where_it_was_enabled() -> None:
    assert copies.paused_reason("sqlite 12", "sqlite 12") is None
    assert "copy" in (copies.paused_reason("sqlite 12", "sqlite 13") or "")
    assert "webhook pause" in (copies.paused_reason(None, "sqlite 12") or "")


def test_every_claim_of_a_delivery_goes_through_the_rule() -> None:
    """The paths that deliver (``webhook deliver``, the thread of every ``serve --store`` and of each replica:
    ``Deliverer.deliver_due``) all ask ``Deliveries.due`` and ``Deliveries.claim``; those are the only code
    that takes a delivery's lease, and each applies ``copies.deliverable``."""
    source = "".join(p.read_text() for p in (REPO / "src").rglob("*.py"))
    assert source.count("UPDATE deliveries SET lease = ?") == 1
    for method in (delivery.Deliveries.due, delivery.Deliveries.claim):
        assert "deliverable(self.db)" in inspect.getsource(method)
    assert "deliveries.claim(now)" in inspect.getsource(Deliverer.deliver_due)
    assert "deliver_due()" in inspect.getsource(Deliverer._loop)


def copied_sqlite(original: str, tmp_path: Path) -> str:
    backup_sqlite(original, str(tmp_path / "backup.db"))
    restore_sqlite(str(tmp_path / "backup.db"), str(tmp_path / "copy.db"))
    return str(tmp_path / "copy.db")


def copied_postgres(original: str, tmp_path: Path) -> str:
    """The original dumped and restored into a new database of the cluster by the documented commands."""
    copy = new_database(original)
    dump = str(tmp_path / "prompts.dump")
    for command in postgres_commands("backup", original, dump) + postgres_commands("restore", copy, dump):
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)
    # pg_restore into a database that holds a store fails, changing nothing.
    (again,) = postgres_commands("restore", copy, dump)
    refused = subprocess.run(["bash", "-c", again], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "already exists" in refused.stderr
    return copy


def pd(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def by_deliver_command(url: str, until: Callable[[], object]) -> None:
    pd("webhook", "deliver", "--store", url)
    until()


def by_deliverer(url: str, until: Callable[[], object]) -> None:
    """What the thread of every ``serve --store`` (and each replica) runs, a round of it."""
    deliverer = Deliverer(url)
    try:
        asyncio.run(deliverer.deliver_due())
    finally:
        deliverer.stop()
    until()


def by_stdio_server(url: str, until: Callable[[], object]) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", "--store", url, "--no-watch"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(hello) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        try:
            until()
        finally:
            proc.communicate(timeout=60)  # the end of stdin ends the server


@pytest.fixture
def two() -> Iterator[tuple[Receiver, Receiver]]:
    with receiver(SECRET) as original, receiver(SECRET) as added:
        yield original, added


@pytest.mark.parametrize("path", [by_deliver_command, by_deliverer, by_stdio_server])
def test_a_copys_webhooks_wait_for_resume_on_every_delivery_path(
        store_url: str, tmp_path: Path, two: tuple[Receiver, Receiver],
        path: Callable[[str, Callable[[], object]], None]) -> None:
    original_hook, added_hook = two
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text(GREET)
    publish(store_url, folder)
    with Store(store_url) as store:
        first = webhooks.add(store.db, original_hook.url, SECRET, [], scopes=[], allow=["private"], timeout=5,
                             author="ops")
    copy = copied_postgres(store_url, tmp_path) if store_url.startswith("postgresql") else \
        copied_sqlite(store_url, tmp_path)
    with Store(copy) as store:
        # A webhook added in the copy delivers from it: the proof each path ran while the copied one was due.
        webhooks.add(store.db, added_hook.url, SECRET, [], scopes=[], allow=["private"], timeout=5, author="ops")
        (paused, enabled) = webhooks.listed(store.db)
        assert paused.paused is not None and "copy" in paused.paused and enabled.paused is None
    (folder / "greet.md").write_text(GREET + "Again.\n")
    publish(copy, folder, label=None)
    path(copy, lambda: added_hook.wait_for(1))
    assert original_hook.bodies() == []
    listed = pd("webhook", "list", "--store", copy)
    assert f"{first}  {original_hook.url}" in listed and "paused: this store is a copy" in listed
    assert "webhook resume" in listed.splitlines()[0] and "paused" not in listed.splitlines()[1]
    pd("webhook", "resume", str(first), "--store", copy)
    path(copy, lambda: original_hook.wait_for(1))
    assert original_hook.bodies()[0]["type"] == "publish"
    # The original was never paused, and pausing it by hand holds until resumed.
    with Store(store_url) as store:
        assert [hook.paused for hook in webhooks.listed(store.db)] == [None]
        copies.pause(store.db, first)
        assert "webhook pause" in (webhooks.listed(store.db)[0].paused or "")
        assert not delivery.Deliveries(store.db, "t").claim(1e12)
        copies.resume(store.db, first)
        assert webhooks.listed(store.db)[0].paused is None


def test_the_identity_is_the_databases_own(store_url: str, tmp_path: Path) -> None:
    with Store(store_url, create=True) as store:
        here = copies.identity(store.db)
    with Store(store_url) as again:
        assert copies.identity(again.db) == here  # a new connection, a server restarted: the same database
    other = new_database(store_url) if store_url.startswith("postgresql") else f"sqlite:///{tmp_path}/other.db"
    with Store(other, create=True) as store:
        assert copies.identity(store.db) != here
    assert here.split()[0] == ("postgresql" if store_url.startswith("postgresql") else "sqlite")


def test_the_upgrade_to_schema_10_keeps_a_stores_webhooks_delivering_where_it_is(store_url: str) -> None:
    from tests.support.store_schema import at_schema, promptdeck_in_process

    old = at_schema(store_url, 9)
    mark = "%s" if store_url.startswith("postgresql") else "?"
    old.execute("INSERT INTO webhooks (url, secret, kinds, scopes, allow, timeout, author, created) "
                f"VALUES ('https://example.com/', {mark}, '*', '', '', 1, 'ops', 0)", (SECRET,))
    old.close()
    code, out, err = promptdeck_in_process("store", "upgrade", store_url)
    assert code == 0 and f"from schema 9 to {SCHEMA_VERSION}" in out, err
    with Store(store_url) as store:
        assert [hook.paused for hook in webhooks.listed(store.db)] == [None]
        assert store.db.rows("SELECT enabled_in FROM webhooks") == [(copies.identity(store.db),)]


def test_pausing_or_resuming_a_webhook_that_is_not_there_names_it(tmp_path: Path) -> None:
    from tests.support.store_schema import promptdeck_in_process

    url = str(tmp_path / "prompts.db")
    Store(url, create=True).close()
    for command in ("pause", "resume"):
        code, _, err = promptdeck_in_process("webhook", command, "99", "--store", url)
        assert code == 1 and "no webhook 99 (promptdeck webhook list shows them)" in err
