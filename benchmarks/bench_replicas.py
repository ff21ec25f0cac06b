"""Replicas of one PostgreSQL store under many clients (issue 41): what 1, 2 and 4 replicas give on loopback.

    python benchmarks/bench_replicas.py [--sizes 1,2,4] [--sessions 400] [--clients 16] [--seconds 8] [--moves 5]

A throwaway cluster as in the tests, one database holding a small library published to ``production``.
For each size, that many ``serve --store postgresql://… --label production --http`` replicas, and:

1. **Held sessions:** ``--sessions`` 2025-06-18 sessions, each with its GET stream open and idle, spread
   round-robin over the replicas. Memory per held session is the replicas' RSS after opening them less
   before, divided by their number.
2. **Renders:** ``--clients`` concurrent clients, each with its own session on the next replica, send
   ``prompts/get`` back to back for ``--seconds`` while the streams are held: renders a second (all
   replicas together) and the latency's p50 and p99. The CPU time the replicas and the PostgreSQL
   processes used meanwhile, and this client process, in cores, say where the limit is.
3. **Commit → list_changed:** ``--moves`` publishes that move the label; for each, the time from the new
   position's commit (``positions.created``) to ``notifications/prompts/list_changed`` on every held
   stream (p50 and max over all streams and moves).

The machine has two cores: run nothing else. Every request goes through one client process, which is
itself a limit on two cores: the renders a second are what a fleet of clients could get no more than.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from procfs import cpu_seconds, processes, tree

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # tests.support: the PostgreSQL cluster and the HTTP server helpers
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
REVISION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"
#: Caps high enough that the benchmark, one client address holding every session, is not refused.
CAPS = ("--max-sessions", "100000", "100000", "--max-streams", "100000", "100000", "--max-connections", "100000")

PROMPT = """---
description: A prompt for the replicas benchmark
arguments:
  - name: who
    required: true
---
Hello {{ who }}, round {round}.
"""


def publish(folder: Path, url: str, round_number: int) -> None:
    (folder / "hello.md").write_text(PROMPT.replace("{round}", str(round_number)))
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(folder), "--store", url, "--label",
                           "production"], env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"publish failed:\n{done.stderr}")


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def postmaster(port: int) -> int:
    for pid, (_, name) in processes().items():
        if name == "postgres":
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"-p" in command and command[command.index(b"-p") + 1] == str(port).encode():
                return pid
    raise SystemExit(f"no postgres listening on {port}")


class Session:
    """One 2025-06-18 session over aiohttp."""

    def __init__(self, client: Any, endpoint: str) -> None:
        self.client, self.endpoint, self.id = client, endpoint, ""
        self.changes: list[float] = []  # when each list_changed arrived on the GET stream (unix time)
        self._ids = 0

    def headers(self) -> dict[str, str]:
        return {"Accept": ACCEPT, "Content-Type": "application/json", "Mcp-Session-Id": self.id,
                "Mcp-Protocol-Version": REVISION}

    async def open(self) -> None:
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": REVISION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
        async with self.client.post(self.endpoint, json=body, headers={"Accept": ACCEPT}) as answer:
            await answer.read()
            if answer.status != 200:
                raise SystemExit(f"initialize: {answer.status}")
            self.id = answer.headers["Mcp-Session-Id"]
        async with self.client.post(self.endpoint, headers=self.headers(),
                                    json={"jsonrpc": "2.0", "method": "notifications/initialized"}) as answer:
            await answer.read()

    async def get(self) -> float:
        """One prompts/get; its latency in seconds."""
        self._ids += 1
        body = {"jsonrpc": "2.0", "id": self._ids, "method": "prompts/get",
                "params": {"name": "hello", "arguments": {"who": "bench"}}}
        began = time.perf_counter()
        async with self.client.post(self.endpoint, json=body, headers=self.headers()) as answer:
            text = await answer.read()
        if answer.status != 200 or b'"messages"' not in text:
            raise SystemExit(f"prompts/get: {answer.status} {text[:200]!r}")
        return time.perf_counter() - began

    async def hold(self, opened: asyncio.Event) -> None:
        """The session's GET stream, held open; each list_changed's arrival is noted."""
        headers = {**self.headers(), "Accept": "text/event-stream"}
        async with self.client.get(self.endpoint, headers=headers, timeout=None) as stream:
            if stream.status != 200:
                raise SystemExit(f"GET stream: {stream.status}")
            opened.set()
            async for line in stream.content:
                if b"notifications/prompts/list_changed" in line:
                    self.changes.append(time.time())


async def measure(endpoints: list[str], replicas: list[int], database: int, folder: Path, url: str,
                  args: argparse.Namespace, first_round: int) -> dict[str, float]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as client:
        warm = Session(client, endpoints[0])
        await warm.open()
        await warm.get()
        pids = [pid for replica in replicas for pid in tree(replica)]
        before = rss_bytes(pids)
        held = [Session(client, endpoints[n % len(endpoints)]) for n in range(args.sessions)]
        holding: list[asyncio.Task[None]] = []
        for start in range(0, len(held), 50):
            batch = held[start:start + 50]
            await asyncio.gather(*(session.open() for session in batch))
            opened = [asyncio.Event() for _ in batch]
            holding += [asyncio.create_task(session.hold(event)) for session, event in zip(batch, opened, strict=True)]
            await asyncio.gather(*(event.wait() for event in opened))
        await asyncio.sleep(1)  # the replicas settle what the streams allocated
        after = rss_bytes(pids)

        renderers = [Session(client, endpoints[n % len(endpoints)]) for n in range(args.clients)]
        await asyncio.gather(*(session.open() for session in renderers))
        latencies: list[float] = []
        stop_at = time.perf_counter() + args.seconds

        async def render(session: Session) -> None:
            while time.perf_counter() < stop_at:
                latencies.append(await session.get())

        postgres = tree(database)
        me = [os.getpid()]
        cpu_replicas, cpu_postgres, cpu_client = cpu_seconds(pids), cpu_seconds(postgres), cpu_seconds(me)
        began = time.perf_counter()
        await asyncio.gather(*(render(session) for session in renderers))
        elapsed = time.perf_counter() - began
        cpu_replicas = (cpu_seconds(pids) - cpu_replicas) / elapsed
        cpu_postgres = (cpu_seconds(tree(database)) - cpu_postgres) / elapsed
        cpu_client = (cpu_seconds(me) - cpu_client) / elapsed

        delays: list[float] = []
        for move in range(args.moves):
            seen = [len(session.changes) for session in held]
            await asyncio.to_thread(publish, folder, url, first_round + move)
            deadline = time.monotonic() + 60
            while any(len(session.changes) == count for session, count in zip(held, seen, strict=True)):
                if time.monotonic() > deadline:
                    raise SystemExit("a held stream got no list_changed within 60 s")
                await asyncio.sleep(0.005)
            created = await asyncio.to_thread(last_position, url)
            delays += [(session.changes[count] - created) * 1000 for session, count in zip(held, seen, strict=True)]
        for task in holding:
            task.cancel()
        await asyncio.gather(*holding, return_exceptions=True)
    latencies.sort()
    delays.sort()
    return {"renders": len(latencies) / elapsed, "p50": statistics.median(latencies) * 1000,
            "p99": latencies[int(0.99 * (len(latencies) - 1))] * 1000,
            "per_session": (after - before) / args.sessions, "delay_p50": statistics.median(delays),
            "delay_max": delays[-1], "cpu_replicas": cpu_replicas, "cpu_postgres": cpu_postgres,
            "cpu_client": cpu_client}


def last_position(url: str) -> float:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT created FROM positions WHERE label = 'production' ORDER BY id DESC LIMIT 1")
        return float(row.fetchone()[0])  # type: ignore[index]


def main() -> int:
    from tests.support.http_server import promptdeck_http
    from tests.support.postgres import cluster, new_database

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,2,4", help="replica counts, comma-separated")
    parser.add_argument("--sessions", type=int, default=400, help="idle sessions held, GET stream open")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients rendering")
    parser.add_argument("--seconds", type=float, default=8, help="how long the clients render")
    parser.add_argument("--moves", type=int, default=5, help="label moves timed to list_changed")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results: list[tuple[int, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="promptdeck-bench-replicas-") as work, cluster() as postgres:
        folder = Path(work) / "library"
        folder.mkdir()
        url = new_database(postgres)
        publish(folder, url, 0)
        database = postmaster(int(url.rsplit(":", 1)[1].split("/")[0]))
        for number, size in enumerate(sizes):
            started: list[subprocess.Popen[bytes]] = []
            with ExitStack() as stack:
                endpoints = [stack.enter_context(promptdeck_http(
                    "serve", "--store", url, "--label", "production", "--http", "{host}:{port}", *CAPS,
                    log=Path(work) / f"replica-{size}-{n}.log", started=started)) for n in range(size)]
                result = asyncio.run(measure(endpoints, [p.pid for p in started], database, folder, url, args,
                                             1 + number * args.moves))
            results.append((size, result))
            print(f"{size} replica(s): {json.dumps({k: round(v, 2) for k, v in result.items()})}", file=sys.stderr)
    print(f"\n{args.sessions} held sessions (GET streams open), {args.clients} clients rendering for "
          f"{args.seconds:g} s, {args.moves} label moves; sessions at {REVISION}, one PostgreSQL store on loopback:\n")
    print("| replicas | renders/s | p50 ms | p99 ms | KiB per held session | commit → list_changed p50 / max ms "
          "| CPU replicas / PostgreSQL / client (cores) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for size, r in results:
        print(f"| {size} | {r['renders']:,.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['per_session'] / 1024:.1f} "
              f"| {r['delay_p50']:.0f} / {r['delay_max']:.0f} "
              f"| {r['cpu_replicas']:.2f} / {r['cpu_postgres']:.2f} / {r['cpu_client']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
