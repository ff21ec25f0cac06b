"""The versioned store measured against its targets (issue 15), each beside the folder it replaces.

    python benchmarks/bench_store.py [--prompts 100000] [--changed 10000] [--publishes 50] [--skip-postgres]

1. **Start**: ``serve --store sqlite:///…`` of a generated library (``libgen.py``) and ``serve FOLDER``
   of the same library, spawn to the first ``prompts/list`` page over stdio; the server's RSS (the larger
   of right then and after the gets); ``prompts/get`` of 2,200 prompts, 5 s after start, twice: the
   median of the first get of each (after 200; a stored prompt's file is parsed then) and of the warm
   one that follows. Then the same store with a label of 1,000,000 prompts (copies of
   the published ones, made with SQL): spawn to the first page.
2. **Publish**: ``publish`` of ``--changed`` prompts that all changed, and an unchanged publish of the
   whole ``--prompts`` library.
3. **Replicas** (PostgreSQL, a throwaway cluster as in the tests): three ``serve --store postgresql://…
   --http --stateless`` replicas, a 2026-07-28 ``subscriptions/listen`` on each; ``--publishes``
   publishes that move the label, and the time from the label's new position to the notification at
   each subscriber (p50, p99, max).

Targets are printed beside each figure with PASS or MISS. The machine has two cores: run nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench_stdio import vm_rss_bytes
from libgen import ensure_library, prompt_names

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # tests.support: the PostgreSQL cluster and the HTTP server helpers
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
PROMPTDECK = [sys.executable, "-m", "promptdeck"]


def pd(*args: str) -> float:
    """Run a promptdeck command; its wall time in seconds (it must succeed)."""
    began = time.perf_counter()
    done = subprocess.run([*PROMPTDECK, *args], env=ENV, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"promptdeck {' '.join(args)} failed:\n{done.stderr}")
    return time.perf_counter() - began


class Stdio:
    """``serve`` in a child process, spoken to line by line."""

    def __init__(self, *args: str) -> None:
        self.began = time.perf_counter()
        self.proc = subprocess.Popen([*PROMPTDECK, "serve", *args, "--no-watch"], env=ENV, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.ids = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method,
                                          "params": params or {}}).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.ids:
                if "error" in answer:
                    raise SystemExit(f"{method}: {answer['error']}")
                return dict(answer["result"])

    def first_page(self) -> float:
        """Seconds from spawn to the first prompts/list page."""
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "bench_store", "version": "1"}})
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        page = self.call("prompts/list")
        assert page["prompts"], "an empty first page"
        return time.perf_counter() - self.began

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def start(label: str, prompts: int, *args: str) -> dict[str, float]:
    server = Stdio(*args)
    try:
        seconds = server.first_page()
        rss = (vm_rss_bytes(server.proc.pid) or 0) / 2**20
        # A stored label's prompt files are written to its folder in the background for a few seconds
        # after start; the gets measure the steady state that follows, for the folder alike.
        time.sleep(5)
        names = prompt_names(prompts)
        step = max(1, len(names) // 2200)
        picked = names[::step][:2200]
        first: list[float] = []
        timings: list[float] = []
        for timed in (first, timings):  # each prompt's first get, then its warm one
            for number, name in enumerate(picked):
                began = time.perf_counter()
                server.call("prompts/get", {"name": name, "arguments": {"topic": f"t{number}"}})
                if number >= 200:
                    timed.append(time.perf_counter() - began)
        rss = max(rss, (vm_rss_bytes(server.proc.pid) or 0) / 2**20)
    finally:
        server.close()
    get_us, first_us = statistics.median(timings) * 1e6, statistics.median(first) * 1e6
    print(f"  {label:<8} first page {seconds * 1000:8.0f} ms   RSS {rss:6.0f} MiB   get p50: first {first_us:6.0f} µs,"
          f" warm {get_us:6.0f} µs", flush=True)
    return {"start_ms": seconds * 1000, "rss_mib": rss, "get_us": get_us, "first_get_us": first_us}


def multiply(source: Path, db: Path, at_least: int) -> int:
    """A copy ``db`` of the SQLite store ``source`` (whose next publish would take the copies below for
    deletions) with a label ``million``: copies of the published prompts (``x1/…`` named ``x1.…``,
    sharing the original's bytes) beside them, at least ``at_least`` in all, made with SQL (a publish
    of a million files would take most of an hour). The number of prompts it lists."""
    import sqlite3

    with sqlite3.connect(source) as original, sqlite3.connect(db) as copy:
        original.backup(copy)
    original.close()
    copy.close()
    conn = sqlite3.connect(db)
    try:
        with conn:
            # The copies get their listing from the original's, renamed: a copy parses to its own name.
            conn.execute("CREATE TEMP TABLE originals AS SELECT * FROM files WHERE prompt IS NOT NULL")
            published = conn.execute("SELECT count(*) FROM originals").fetchone()[0]
            copies = -(-at_least // published) - 1
            for number in range(1, copies + 1):
                conn.execute("INSERT INTO files (path, version, publish, prompt, digest, listing, scopes) SELECT "
                             "?1 || '/' || path, version, publish, ?1 || '.' || prompt, digest, replace(listing, "
                             "'\"name\":\"' || prompt || '\"', '\"name\":\"' || ?1 || '.' || prompt || '\"'), scopes "
                             "FROM originals", (f"x{number}",))
            position = conn.execute("INSERT INTO positions (label, author, reason, created, listing_format, "
                                    "scope_sets) VALUES ('million', 'bench', 'bench', 0, 1, '[]')").lastrowid
            conn.execute("INSERT INTO position_files (position, path, version, name, scopes) SELECT ?, path, version, "
                         "prompt, scopes FROM files", (position,))
            return int(conn.execute("SELECT count(*) FROM position_files WHERE position = ? AND name IS NOT NULL",
                                    (position,)).fetchone()[0])
    finally:
        conn.close()


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def bench_start_and_publish(prompts: int, changed: int, work: Path) -> list[str]:
    lines = []
    folder = ensure_library(prompts)
    url = f"sqlite:///{work}/bench.db"
    print(f"publishing {prompts:,} prompts to {url} …", flush=True)
    first = pd("publish", str(folder), "--store", url, "--label", "production")
    print(f"  first publish of {prompts:,}: {first:.1f} s", flush=True)
    print(f"start to first page, {prompts:,} prompts:", flush=True)
    stored = start("store", prompts, "--store", url)
    files = start("folder", prompts, str(folder))
    lines.append(f"start, {prompts:,} prompts (store): {stored['start_ms']:.0f} ms (folder {files['start_ms']:.0f} ms)"
                 f"; target < 500 ms: {verdict(stored['start_ms'] < 500)}")
    lines.append(f"RSS, {prompts:,} prompts (store): {stored['rss_mib']:.0f} MiB (folder {files['rss_mib']:.0f} MiB)"
                 f"; target < 100 MiB: {verdict(stored['rss_mib'] < 100)}")
    total = multiply(work / "bench.db", work / "million.db", 1_000_000)
    server = Stdio("--store", f"sqlite:///{work}/million.db", "--label", "million")
    try:
        million_ms = server.first_page() * 1000
        million_rss = (vm_rss_bytes(server.proc.pid) or 0) / 2**20
    finally:
        server.close()
        (work / "million.db").unlink()
    print(f"  {total:,} first page {million_ms:8.0f} ms   RSS {million_rss:6.0f} MiB", flush=True)
    lines.append(f"start, {total:,} prompts (store): {million_ms:.0f} ms, RSS {million_rss:.0f} MiB; target < 2 s: "
                 f"{verdict(million_ms < 2000)}")
    slower = stored["get_us"] / files["get_us"]
    lines.append(f"warm prompts/get: store {stored['get_us']:.0f} µs, folder {files['get_us']:.0f} µs ({slower:.2f}x)"
                 f"; target within 1.5x: {verdict(slower <= 1.5)}")
    lines.append(f"a prompt's first prompts/get (its file parsed then): store {stored['first_get_us']:.0f} µs, "
                 f"folder {files['first_get_us']:.0f} µs (parsed at start)")

    unchanged = pd("publish", str(folder), "--store", url)
    lines.append(f"unchanged publish of {prompts:,}: {unchanged:.1f} s; target < 5 s: {verdict(unchanged < 5)}")
    edited = work / "edited"
    shutil.copytree(folder, edited)
    for path in sorted(edited.rglob("*.md"))[:changed]:
        with path.open("a", encoding="utf-8") as out:
            out.write("One more line, so this prompt has a new version.\n")
    publish_changed = pd("publish", str(edited), "--store", url)
    lines.append(f"publish of {changed:,} changed prompts (in {prompts:,}): {publish_changed:.1f} s; target < 10 s: "
                 f"{verdict(publish_changed < 10)}")
    return lines


def bench_replicas(publishes: int, work: Path) -> list[str]:
    from tests.support.http_server import http_server
    from tests.support.postgres import cluster, new_database

    folder = work / "small"
    folder.mkdir()
    (folder / "hello.md").write_text("Hello.\n")
    with cluster() as postgres, ExitStack() as stack:
        url = new_database(postgres)
        pd("publish", str(folder), "--store", url, "--label", "production")
        replicas = [stack.enter_context(http_server("", "--store", url, "--stateless")) for _ in range(3)]
        delays = asyncio.run(_listen_and_publish(replicas, folder, url, publishes))
    delays.sort()
    p50, p99 = statistics.median(delays), delays[min(len(delays) - 1, round(0.99 * (len(delays) - 1)))]
    return [f"PostgreSQL, 3 replicas, {publishes} publishes ({len(delays)} notifications): commit to notification "
            f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {delays[-1]:.0f} ms; target p99 < 250 ms: {verdict(p99 < 250)}"]


async def _listen_and_publish(replicas: list[str], folder: Path, url: str, publishes: int) -> list[float]:
    import httpx
    import psycopg
    from tests.support.modern import is_list_changed

    delays: list[float] = []
    async with httpx.AsyncClient(timeout=60) as client:
        listeners = [await stack_listen(client, replica, number) for number, replica in enumerate(replicas, 1)]
        try:
            for listener, _ in listeners:
                await listener.next()  # the acknowledgement
            for round_number in range(publishes):
                (folder / "hello.md").write_text(f"Hello, round {round_number}.\n")
                await asyncio.to_thread(pd, "publish", str(folder), "--store", url, "--label", "production")
                arrived = []
                for number, (listener, _) in enumerate(listeners, 1):
                    while True:
                        message = await listener.next()
                        if message is None:
                            raise SystemExit("a subscription ended")
                        if is_list_changed(number)(message):
                            arrived.append(time.time())
                            break
                with psycopg.connect(url) as conn:
                    created = conn.execute("SELECT created FROM positions WHERE label = 'production' "
                                           "ORDER BY id DESC LIMIT 1").fetchone()[0]  # type: ignore[index]
                delays += [(at - float(created)) * 1000 for at in arrived]
        finally:
            for _, context in listeners:
                await context.__aexit__(None, None, None)
    return delays


async def stack_listen(client: Any, url: str, number: int) -> tuple[Any, Any]:
    from tests.support.modern import http_listen

    context = http_listen(client, url, number, promptsListChanged=True)
    return await context.__aenter__(), context


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=100_000, help="library size for start and publish")
    parser.add_argument("--changed", type=int, default=10_000, help="prompts changed in the changed publish")
    parser.add_argument("--publishes", type=int, default=50, help="publishes in the replica measure")
    parser.add_argument("--skip-postgres", action="store_true", help="leave out the replica measure")
    args = parser.parse_args()
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="promptdeck-bench-store-") as work:
        lines += bench_start_and_publish(args.prompts, min(args.changed, args.prompts), Path(work))
        if not args.skip_postgres:
            lines += bench_replicas(args.publishes, Path(work))
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
