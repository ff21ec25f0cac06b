"""Replicas on one PostgreSQL store: a publish that moves the label reaches every client of every replica.

Three ``serve --store postgresql://… --http --stateless`` processes and one stateful one, all real
processes on one throwaway cluster. Subscribers: a 2026-07-28 ``subscriptions/listen`` on each
stateless replica, a legacy session's GET stream on the stateful one, and ``promptdeck watch`` (the
client CLI) on a stateless one. The time from the label's new position (written just before commit)
to each notification is printed; no timing is asserted.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx

from promptdeck.sources.files.paths import is_prompt_path
from promptdeck.sources.store.schema import SCHEMA_VERSION
from tests.support.http_rpc import POST_HEADERS, init, messages_of, rpc
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES
from tests.support.modern import ELICITS, get_prompt, http_listen, is_list_changed, post, request, subscription_of
from tests.support.postgres import new_database
from tests.support.store_schema import as_schema_4


def publish(folder: Path, url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url, "--label",
                           "production"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def position_created(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT created FROM positions WHERE label = 'production' ORDER BY id DESC LIMIT 1")
        return float(row.fetchone()[0])  # type: ignore[index]


def test_a_publish_reaches_every_replica_and_every_kind_of_subscriber(postgres: str, tmp_path: Path) -> None:
    url = new_database(postgres)
    folder = tmp_path / "lib"
    shutil.copytree(EXAMPLES, folder)
    publish(folder, url)
    with ExitStack() as stack:
        stateless = [stack.enter_context(http_server("", "--store", url, "--stateless")) for _ in range(3)]
        stateful = stack.enter_context(http_server("", "--store", url))
        watcher = stack.enter_context(subprocess.Popen([sys.executable, "-m", "promptdeck", "watch", stateless[0]],
                                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        stack.callback(watcher.kill)  # runs before Popen's own exit, which closes the pipes and waits
        assert watcher.stderr is not None and "watching for changes" in watcher.stderr.readline()
        arrivals = asyncio.run(_subscribe_and_publish(stateless, stateful, folder, url, watcher))
    created = position_created(url)
    delays = {who: round((at - created) * 1000, 1) for who, at in arrivals.items()}
    print(f"\ncommit to notification, ms: {delays}")
    assert set(delays) == {"listen 1", "listen 2", "listen 3", "legacy GET stream", "promptdeck watch"}


async def _subscribe_and_publish(stateless: list[str], stateful: str, folder: Path, url: str,
                                 watcher: subprocess.Popen[str]) -> dict[str, float]:
    arrivals: dict[str, float] = {}
    async with httpx.AsyncClient(timeout=30) as client:
        opened = await client.post(stateful, json=init(), headers=POST_HEADERS)
        session = {**POST_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}
        await client.post(stateful, json=rpc("notifications/initialized", id=None), headers=session)
        async with http_listen(client, stateless[0], 1, promptsListChanged=True) as one, \
                http_listen(client, stateless[1], 2, promptsListChanged=True) as two, \
                http_listen(client, stateless[2], 3, promptsListChanged=True) as three, \
                client.stream("GET", stateful, headers={**session, "accept": "text/event-stream"}) as stream:
            for listener in (one, two, three):
                acknowledged = await listener.next()
                assert acknowledged is not None and acknowledged["method"] == "notifications/subscriptions/acknowledged"

            async def legacy() -> None:
                async for line in stream.aiter_lines():
                    if line.startswith("data:") and "notifications/prompts/list_changed" in line:
                        arrivals["legacy GET stream"] = time.time()
                        return

            async def listened(name: str, listener: object, request_id: int) -> None:
                while True:
                    message = await listener.next()  # type: ignore[attr-defined]
                    assert message is not None, f"{name}: the stream ended"
                    if is_list_changed(request_id)(message):
                        arrivals[name] = time.time()
                        return
                    assert subscription_of(message) == request_id

            def watched() -> None:
                assert watcher.stdout is not None
                line = watcher.stdout.readline()
                arrivals["promptdeck watch"] = time.time()
                assert "+fresh" in line, line

            (folder / "fresh.md").write_text("---\ndescription: Published while four replicas serve\n---\nHi!\n")
            waits = [asyncio.ensure_future(work) for work in (
                legacy(), listened("listen 1", one, 1), listened("listen 2", two, 2),
                listened("listen 3", three, 3), asyncio.to_thread(watched))]
            await asyncio.sleep(0.5)  # the GET stream and the watcher are open before the publish
            await asyncio.to_thread(publish, folder, url)
            await asyncio.wait_for(asyncio.gather(*waits), 30)
        listed = await client.post(stateless[1], json=rpc("prompts/list"),
                                   headers={**POST_HEADERS, "mcp-protocol-version": "2025-06-18"})
        fresh = next(p for p in messages_of(listed)[0]["result"]["prompts"] if p["name"] == "fresh")
        assert fresh["_meta"]["promptdeck.dev/label"] == "production"
        assert fresh["_meta"]["promptdeck.dev/version"] == 1
    return arrivals


def test_a_request_state_is_accepted_once_among_all_replicas(postgres: str, tmp_path: Path) -> None:
    """A 2026-07-28 input_required state issued by one replica is redeemed at another (they sign with the
    store's key) and refused as used at a third and back at the first (the used nonces are in the store)."""
    url = new_database(postgres)
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "brief.md").write_text("---\narguments:\n  - name: topic\n    required: true\n---\n"
                                     "Write about {{ topic }}.\n")
    publish(folder, url)
    with ExitStack() as stack:
        one, two, three = (stack.enter_context(http_server("", "--store", url, "--stateless")) for _ in range(3))
        with httpx.Client(timeout=30) as client:
            _, asked = post(client, one, get_prompt(1, "brief", capabilities=ELICITS))
            assert asked["result"]["resultType"] == "input_required"
            retry = get_prompt(2, "brief", capabilities=ELICITS, requestState=asked["result"]["requestState"],
                               inputResponses={"arguments": {"action": "accept", "content": {"topic": "owls"}}})
            _, rendered = post(client, two, retry)
            assert rendered["result"]["messages"][0]["content"]["text"] == "Write about owls."
            for replica in (three, one, two):
                _, replayed = post(client, replica, retry)
                assert replayed["error"]["code"] == -32602
                assert "requestState was already used" in replayed["error"]["message"]


def test_a_store_from_an_older_promptdeck_is_upgraded_on_request(postgres: str, tmp_path: Path) -> None:
    """Schema 1 (before requestState and listings moved into the store): serving it is refused with the
    command to run; ``store upgrade`` brings it to the current schema and keeps every version, and
    publishing the unchanged folder again records the listings without a new version."""
    url = new_database(postgres)
    folder = tmp_path / "lib"
    shutil.copytree(EXAMPLES, folder)
    publish(folder, url)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:  # what schema 1 had
        as_schema_4(conn)
        conn.execute("DROP TABLE used_states; DROP TABLE state_key; UPDATE promptdeck_schema SET version = 1; "
                     "ALTER TABLE files DROP COLUMN listing, DROP COLUMN scopes; DROP INDEX position_files_by_name; "
                     "ALTER TABLE position_files DROP COLUMN name, DROP COLUMN scopes; "
                     "ALTER TABLE positions DROP COLUMN listing_format, DROP COLUMN scope_sets; "
                     "DROP INDEX position_files_skills; ALTER TABLE position_files DROP COLUMN skill")
    refused = subprocess.run([sys.executable, "-m", "promptdeck", "serve", "--store", url], capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert refused.returncode == 1 and "has schema 1: run `promptdeck store upgrade" in refused.stderr
    upgraded = subprocess.run([sys.executable, "-m", "promptdeck", "store", "upgrade", url], capture_output=True,
                              text=True, timeout=60)
    assert upgraded.returncode == 0 and f"upgraded the store from schema 1 to {SCHEMA_VERSION}" in upgraded.stdout
    again = subprocess.run([sys.executable, "-m", "promptdeck", "store", "upgrade", url], capture_output=True,
                           text=True, timeout=60)
    assert f"at schema {SCHEMA_VERSION} already" in again.stdout
    history = subprocess.run([sys.executable, "-m", "promptdeck", "history", "--store", url, "summarize"],
                             capture_output=True, text=True, timeout=60)
    assert history.returncode == 0 and "summarize" in history.stdout
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM files WHERE listing IS NOT NULL").fetchone() == (0,)
    republished = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url],
                                 capture_output=True, text=True, timeout=120)
    assert republished.returncode == 0 and "nothing changed" in republished.stdout, republished.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        listed = conn.execute("SELECT path FROM files WHERE listing IS NOT NULL ORDER BY path").fetchall()
        assert [row[0] for row in listed] == sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.md")
                                                    if is_prompt_path(p.relative_to(folder).as_posix()))
        assert conn.execute("SELECT max(version) FROM files").fetchone() == (1,)
        # The label's position is now listed: a server pages it from the database.
        assert conn.execute("SELECT listing_format FROM positions ORDER BY id DESC LIMIT 1").fetchone() == (1,)


def test_the_state_ledger_is_bounded_per_principal_and_fails_closed(postgres: str) -> None:
    from promptdeck.sources.store.database import Store
    from promptdeck.sources.store.ledger import StateLedger
    from tests.support.http_server import free_port

    url = new_database(postgres)
    Store(url, create=True).close()
    ledger = StateLedger(url, per_principal=3)
    now = time.time()
    try:
        assert [ledger.use(f"n{i}", "mallory", now + 600, now) for i in range(3)] == [None, None, None]
        assert "too many were redeemed" in (ledger.use("n3", "mallory", now + 600, now) or "")
        assert ledger.use("n0", "alice", now + 600, now) == "was already used"  # a nonce is one state, whoever
        assert ledger.use("a0", "alice", now + 600, now) is None  # mallory's flood costs only mallory
        assert ledger.use("n4", "mallory", now + 600, now + 601) is None  # once the old ones have expired
    finally:
        ledger.close()
    gone = StateLedger(f"postgresql://nobody@127.0.0.1:{free_port()}/none", per_principal=3)
    assert "cannot be checked now" in (gone.use("x", "alice", now + 600, now) or "")


def test_a_store_that_goes_away_keeps_the_catalog_served_and_catches_up(tmp_path: Path) -> None:
    """The database stops while a replica serves: the replica logs it once, keeps answering from the last
    good catalog (pages and prompts it had not read before included), and when the database is back it
    picks up the publish made since."""
    from tests.support.postgres import running_cluster

    with running_cluster() as database:
        url = new_database(database.url)
        folder = tmp_path / "lib"
        shutil.copytree(EXAMPLES, folder)
        publish(folder, url)
        log = tmp_path / "server.log"
        with http_server("", "--store", url, "--stateless", "--page-size", "2", "-v", log=log) as endpoint, \
                httpx.Client(timeout=30) as client:
            def names() -> set[str]:
                found, cursor = set(), None
                while True:
                    _, listed = post(client, endpoint, request(1, "prompts/list", {"cursor": cursor} if cursor else {}))
                    found |= {p["name"] for p in listed["result"]["prompts"]}
                    cursor = listed["result"].get("nextCursor")
                    if cursor is None:
                        return found

            _wait_for(lambda: "is copied locally" in log.read_text(), "the listing to be copied")
            database.stop()
            _wait_for(lambda: "is not reachable" in log.read_text(), "the outage to be logged")
            served = names()  # every page read for the first time now, with the database away
            assert {"summarize", "git.commit"} <= served
            _, got = post(client, endpoint, get_prompt(2, "summarize", {"text": "the outage"}))
            assert "the outage" in json.dumps(got["result"]["messages"])
            database.start()
            (folder / "fresh.md").write_text("Published after the outage.\n")
            publish(folder, url)
            _wait_for(lambda: "fresh" in names(), "the replica to catch up")
            assert names() == served | {"fresh"}
        text = log.read_text()
        assert text.count("is not reachable") == 1 and "reachable again" in text


def _wait_for(condition: Callable[[], bool], what: str, seconds: float = 40) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.2)
