"""Replicas on one PostgreSQL store: a publish that moves the label reaches every client of every replica.

Three ``serve --store postgresql://… --http --stateless`` processes and one stateful one, all real
processes on one throwaway cluster. Subscribers: a 2026-07-28 ``subscriptions/listen`` on each
stateless replica, a legacy session's GET stream on the stateful one, and ``promptdeck watch`` (the
client CLI) on a stateless one. The time from the label's new position (written just before commit)
to each notification is printed; no timing is asserted.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES
from tests.support.modern import http_listen, is_list_changed, subscription_of
from tests.support.postgres import cluster, new_database
from tests.test_http_protocol import POST_HEADERS, init, messages_of, rpc


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    with cluster() as url:
        yield url


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
