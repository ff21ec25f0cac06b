"""promptdeck's client against the official MCP SDK's client, on the same promptdeck server, in one run.

    .venv/bin/python benchmarks/bench_client.py [--rounds 5] [--quick] [--transport stdio http]
                                                [--era legacy modern] [--profile] [--json FILE]

Both clients talk to promptdeck serving a generated 10,000-prompt library (``libgen.py``):

- promptdeck's client: ``promptdeck.connect(target, era=...)``, then ``list_prompts(refresh=True)`` (it walks
  every page itself; ``refresh`` skips its ttlMs cache) and ``get_prompt(name, topic=..., tone=...)``.
- the SDK's client: ``mcp.ClientSession`` over ``mcp.client.stdio.stdio_client`` or
  ``mcp.client.streamable_http.streamable_http_client``; ``initialize()`` for the legacy era,
  ``discover()`` (server/discover, then every request carries 2026-07-28 ``_meta``) for the modern
  one; ``list_prompts(params=PaginatedRequestParams(cursor=...))`` in a loop until ``nextCursor`` is
  absent, and ``get_prompt(name, {...})``.

Over stdio each client starts its own server process with the same command; over HTTP both talk to
one server process. Each era is pinned on both sides and the negotiated revision is checked to be the
same. Rounds alternate which client goes first; the table shows medians over rounds. Every result is
verified after its timed section (a walk must see each library prompt exactly once; a rendered prompt
must contain the topic and tone sent), and a failure is reported, never counted. See
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import functools
import gc
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import anyio
import mcp_types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench_http import free_port
from bench_stdio import file_tail, stop_process, warm_page_cache
from libgen import DEFAULT_TONE, TONES, ensure_library, prompt_names

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if (REPO / "src" / "promptdeck").is_dir():
    sys.path.insert(0, str(REPO / "src"))  # benchmark the working tree's client, installed or not
import promptdeck  # noqa: E402 - after the path is set
from promptdeck.client import RenderedPrompt, TextContent  # noqa: E402

PD = "promptdeck"
SDK = "sdk"
CLIENTS = (PD, SDK)
LABELS = {PD: "promptdeck", SDK: "SDK"}
REVISION = {"legacy": "2025-11-25", "modern": "2026-07-28"}
#: Timed gets cycle over this many prompts spread over the library; the warm-up renders each of them
#: first, so a server's first-use work for a prompt is never timed for either client.
GET_PROMPTS = 100
LOG_TAIL = 15

JsonObj = dict[str, Any]


class BenchError(Exception):
    """A measurement failed: an error, a wrong result, a timeout."""


# ------------------------------------------------------------------------------------------- clients


@dataclass
class Walk:
    names: list[str]
    pages: int


class Driver(Protocol):
    """One connected client; ``walk`` and ``get`` are what gets timed."""

    client: str
    protocol_version: str
    server_pid: int | None

    async def walk(self) -> Walk: ...

    async def get(self, name: str, arguments: dict[str, str]) -> Any: ...

    def text(self, result: Any) -> str: ...


class PdDriver:
    client = PD

    def __init__(self, session: promptdeck.Client, server_pid: int | None) -> None:
        self.session = session
        self.protocol_version = session.protocol_version
        self.server_pid = server_pid

    async def walk(self) -> Walk:
        pages = [0]

        def progress(_prompts: int, done: int) -> None:
            pages[0] = done

        prompts = await self.session.list_prompts(refresh=True, progress=progress)
        return Walk([p.name for p in prompts], pages[0])

    async def get(self, name: str, arguments: dict[str, str]) -> Any:
        return await self.session.get_prompt(name, **arguments)

    def text(self, result: Any) -> str:
        assert isinstance(result, RenderedPrompt)
        return "\n".join(m.content.text for m in result.messages if isinstance(m.content, TextContent))


class SdkDriver:
    client = SDK

    def __init__(self, session: ClientSession, server_pid: int | None) -> None:
        self.session = session
        self.protocol_version = session.protocol_version or ""
        self.server_pid = server_pid

    async def walk(self) -> Walk:
        prompts: list[mcp_types.Prompt] = []
        pages = 0
        cursor: str | None = None
        while True:
            page = await self.session.list_prompts(
                params=None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
            )
            prompts.extend(page.prompts)
            pages += 1
            cursor = page.next_cursor
            if not cursor:
                break
            if pages > 100_000:
                raise BenchError("prompts/list: still paging after 100,000 pages (a cursor loop?)")
        return Walk([p.name for p in prompts], pages)

    async def get(self, name: str, arguments: dict[str, str]) -> Any:
        return await self.session.get_prompt(name, arguments)

    def text(self, result: Any) -> str:
        assert isinstance(result, mcp_types.GetPromptResult)
        return "\n".join(m.content.text for m in result.messages if isinstance(m.content, mcp_types.TextContent))


def server_env() -> dict[str, str]:
    """The servers' environment (the same for both clients): ours, with the working tree's src first."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if (REPO / "src" / "promptdeck").is_dir():
        src = str(REPO / "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def serve_command(library: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "promptdeck", "serve", str(library), *extra]


def child_pids() -> set[int]:
    """Our direct children (Linux /proc): how the SDK's stdio server process is found."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.add(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(pid: int | None) -> float | None:
    """User + system CPU seconds of a process (Linux), or None."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


@contextlib.asynccontextmanager
async def open_pd(transport: str, era: str, target: str | list[str], timeout: float, http_pid: int | None,
                  log: Path) -> AsyncIterator[Driver]:
    async with promptdeck.connect(target, era="legacy" if era == "legacy" else "modern", timeout=timeout,
                                  env=server_env() if transport == "stdio" else None, cwd=str(REPO)
                                  if transport == "stdio" else None) as session:
        pid = http_pid
        if transport == "stdio":
            channel: Any = session._channel  # the server's pid, for its CPU time
            pid = channel.process.pid
        try:
            yield PdDriver(session, pid)
        finally:
            tail = getattr(session._channel, "stderr_tail", None)
            if tail:
                log.write_text("\n".join(tail) + "\n", encoding="utf-8")


@contextlib.asynccontextmanager
async def open_sdk(transport: str, era: str, target: str | list[str], http_pid: int | None,
                   log: Path) -> AsyncIterator[Driver]:
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            assert isinstance(target, list)
            errlog = stack.enter_context(open(log, "w", encoding="utf-8"))
            params = StdioServerParameters(command=target[0], args=target[1:], env=server_env(), cwd=str(REPO))
            before = child_pids()
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            new = child_pids() - before
            pid = new.pop() if len(new) == 1 else None
        else:
            assert isinstance(target, str)
            read, write = await stack.enter_async_context(streamable_http_client(target))
            pid = http_pid
        session = await stack.enter_async_context(ClientSession(read, write))
        if era == "legacy":
            await session.initialize()
        else:
            await session.discover()  # server/discover, then adopt: 2026-07-28 _meta on every request
        yield SdkDriver(session, pid)


@contextlib.asynccontextmanager
async def http_server(library: Path, log: Path, timeout: float = 60.0) -> AsyncIterator[tuple[str, int]]:
    """promptdeck serving LIBRARY over Streamable HTTP on a free loopback port: (url, pid)."""
    port = free_port()
    with open(log, "wb") as errlog:
        proc = await asyncio.create_subprocess_exec(
            *serve_command(library, "--http", f"127.0.0.1:{port}"), stdin=subprocess.DEVNULL,
            stdout=errlog, stderr=errlog, env=server_env(), cwd=str(REPO))
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.returncode is not None:
                    raise BenchError(f"the HTTP server exited with code {proc.returncode}: {tail(log)}")
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                except OSError:
                    if time.monotonic() > deadline:
                        raise BenchError(f"the HTTP server did not listen within {timeout:g} s: {tail(log)}") from None
                    await asyncio.sleep(0.05)
                    continue
                writer.close()
                await writer.wait_closed()
                break
            yield f"http://127.0.0.1:{port}/mcp", proc.pid
        finally:
            await stop_process(proc, 10)


def describe(exc: BaseException) -> str:
    """What went wrong, with the exceptions inside exception groups (anyio task groups) spelled out."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def tail(path: Path, lines: int = LOG_TAIL) -> str:
    return file_tail(path, lines, " | ")


# ------------------------------------------------------------------------------------------- measuring


@dataclass
class Sample:
    seconds: float
    ops: int
    client_cpu: float
    server_cpu: float | None


@dataclass
class Config:
    rounds: int
    prompts: int
    gets: int
    warmup_gets: int
    transports: list[str]
    eras: list[str]
    timeout: float
    profile: bool
    quick: bool


@dataclass
class Scenario:
    transport: str
    era: str
    samples: dict[str, dict[str, list[Sample]]] = field(
        default_factory=lambda: {c: {"walk": [], "get": []} for c in CLIENTS})
    pages: dict[str, int] = field(default_factory=dict)
    revision: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    profiles: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.transport}/{self.era}"


def get_calls(names: Sequence[str], count: int, tag: str) -> list[tuple[str, dict[str, str]]]:
    """COUNT prompts/get calls cycling over the chosen prompts; half send a tone, half rely on its default."""
    calls = []
    for i in range(count):
        arguments = {"topic": f"topic-{tag}-{i}"}
        if i % 2:
            arguments["tone"] = TONES[i % len(TONES)]
        calls.append((names[i % len(names)], arguments))
    return calls


def verify_gets(driver: Driver, calls: Sequence[tuple[str, dict[str, str]]], results: Sequence[Any]) -> None:
    if len(results) != len(calls):
        raise BenchError(f"{LABELS[driver.client]}: {len(results)} answers for {len(calls)} prompts/get calls")
    for (name, arguments), result in zip(calls, results, strict=True):
        text = driver.text(result)
        tone = arguments.get("tone", DEFAULT_TONE)
        if arguments["topic"] not in text or f"{tone} tone" not in text:
            raise BenchError(f"{LABELS[driver.client]}: prompts/get {name} with {arguments}: the rendered text "
                             f"lacks the topic or tone: {text[:200]!r}")


def verify_walk(driver: Driver, walk: Walk, expected: set[str]) -> None:
    who = LABELS[driver.client]
    if len(walk.names) != len(expected):
        raise BenchError(f"{who}: the walk listed {len(walk.names)} prompts, the library has {len(expected)}")
    seen = set(walk.names)
    if len(seen) != len(walk.names):
        raise BenchError(f"{who}: the walk listed a prompt twice")
    if seen != expected:
        missing = sorted(expected - seen)[:3]
        raise BenchError(f"{who}: the walk's names differ from the library (missing e.g. {missing})")


async def measure(driver: Driver, work: Callable[[], Awaitable[Any]], ops: int) -> tuple[Sample, Any]:
    # Each timed section starts from a collected heap, so one client's garbage is never collected on the
    # other's time; the collections its own allocations trigger are part of its figure.
    gc.collect()
    server0 = process_cpu(driver.server_pid)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    out = await work()
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    server1 = process_cpu(driver.server_pid)
    server = None if server0 is None or server1 is None else server1 - server0
    return Sample(seconds, ops, cpu, server), out


async def run_gets(driver: Driver, calls: Sequence[tuple[str, dict[str, str]]]) -> list[Any]:
    get = driver.get
    return [await get(name, arguments) for name, arguments in calls]


class Bench:
    def __init__(self, cfg: Config, library: Path, logs: Path) -> None:
        self.cfg = cfg
        self.library = library
        self.logs = logs
        self.names = prompt_names(cfg.prompts)
        self.expected = set(self.names)
        step = max(1, len(self.names) // GET_PROMPTS)
        self.get_names = self.names[::step][:GET_PROMPTS]
        self.scenarios: list[Scenario] = []

    async def run(self) -> list[Scenario]:
        for transport in self.cfg.transports:
            if transport == "stdio":
                for era in self.cfg.eras:
                    await self.scenario(Scenario("stdio", era), serve_command(self.library), None)
            else:
                log = self.logs / "http-server.log"
                try:
                    async with http_server(self.library, log) as (url, pid):
                        for era in self.cfg.eras:
                            await self.scenario(Scenario("http", era), url, pid)
                except BenchError as exc:
                    for era in self.cfg.eras:
                        failed = Scenario("http", era, error=str(exc))
                        self.scenarios.append(failed)
        return self.scenarios

    async def scenario(self, sc: Scenario, target: str | list[str], http_pid: int | None) -> None:
        self.scenarios.append(sc)
        print(f"{sc.key}: connecting both clients ...", file=sys.stderr)
        try:
            with anyio.fail_after(self.cfg.timeout):
                async with contextlib.AsyncExitStack() as stack:
                    log = self.logs / f"{sc.transport}-{sc.era}"
                    pd = open_pd(sc.transport, sc.era, target, self.cfg.timeout, http_pid, log.with_suffix(".pd.log"))
                    sdk = open_sdk(sc.transport, sc.era, target, http_pid, log.with_suffix(".sdk.log"))
                    drivers = {PD: await stack.enter_async_context(pd), SDK: await stack.enter_async_context(sdk)}
                    await self.rounds(sc, drivers)
        except Exception as exc:  # noqa: BLE001 - any failure fails the scenario, and the run goes on
            logs = "; ".join(f"{p.name}: {tail(p, 5)}" for p in sorted(self.logs.glob(f"{sc.transport}*.log"))
                             if tail(p, 5))
            sc.error = describe(exc) + (f" [server logs: {logs}]" if logs else "")
            if os.environ.get("BENCH_TRACEBACK"):
                traceback.print_exception(exc)
            print(f"{sc.key}: FAILED: {sc.error}", file=sys.stderr)

    async def rounds(self, sc: Scenario, drivers: dict[str, Driver]) -> None:
        for client, driver in drivers.items():
            sc.revision[client] = driver.protocol_version
        if len(set(sc.revision.values())) != 1 or sc.revision[PD] != REVISION[sc.era]:
            raise BenchError(f"the clients negotiated different revisions: {sc.revision} (wanted {REVISION[sc.era]})")
        # Warm-up, untimed: a full walk each (the server loads the library on first use) and every prompt
        # the timed gets will render, so neither side pays for the server's or its own first use.
        for client, driver in drivers.items():
            walk = await driver.walk()
            verify_walk(driver, walk, self.expected)
            sc.pages[client] = walk.pages
            calls = get_calls(self.get_names, max(self.cfg.warmup_gets, len(self.get_names)), f"warm-{client}")
            verify_gets(driver, calls, await run_gets(driver, calls))
        if len(set(sc.pages.values())) != 1:
            raise BenchError(f"the clients walked different numbers of pages: {sc.pages}")
        for rnd in range(self.cfg.rounds):
            order = CLIENTS if rnd % 2 == 0 else CLIENTS[::-1]
            for client in order:
                driver = drivers[client]
                sample, walk = await measure(driver, driver.walk, 1)
                verify_walk(driver, walk, self.expected)
                sc.samples[client]["walk"].append(sample)
                calls = get_calls(self.get_names, self.cfg.gets, f"{sc.era}-{rnd}-{client}")
                sample, results = await measure(driver, functools.partial(run_gets, driver, calls), len(calls))
                verify_gets(driver, calls, results)
                sc.samples[client]["get"].append(sample)
                del walk, results
            summary = "  ".join(
                f"{LABELS[c]}: walk {sc.samples[c]['walk'][-1].seconds * 1000:.0f} ms, "
                f"get {sc.samples[c]['get'][-1].ops / sc.samples[c]['get'][-1].seconds:,.0f}/s" for c in CLIENTS)
            print(f"{sc.key}: round {rnd + 1}/{self.cfg.rounds}: {summary}", file=sys.stderr)
        if self.cfg.profile:
            for client in CLIENTS:
                sc.profiles[client] = await self.profile(drivers[client], sc)

    async def profile(self, driver: Driver, sc: Scenario) -> str:
        """cProfile of one walk and the timed gets (after the rounds, so it never slows a measured one)."""
        out = io.StringIO()
        calls = get_calls(self.get_names, self.cfg.gets, f"profile-{driver.client}")
        work: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("walk", driver.walk), ("get", functools.partial(run_gets, driver, calls))]
        for what, run in work:
            gc.collect()
            prof = cProfile.Profile()
            prof.enable()
            result = await run()
            prof.disable()
            if what == "walk":
                verify_walk(driver, result, self.expected)
            else:
                verify_gets(driver, calls, result)
            print(f"--- {LABELS[driver.client]}, {sc.key}, {what} "
                  f"({'one walk' if what == 'walk' else f'{len(calls):,} gets'}), top 15 by own time", file=out)
            stats = pstats.Stats(prof, stream=out)
            stats.sort_stats("tottime").print_stats(15)
        return out.getvalue()


# ------------------------------------------------------------------------------------------- reporting


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def row_values(sc: Scenario, op: str) -> dict[str, dict[str, float | None]]:
    """Per client: median seconds per section, ops/s, client CPU µs/op and server CPU µs/op."""
    out: dict[str, dict[str, float | None]] = {}
    for client in CLIENTS:
        samples = sc.samples[client][op]
        servers = [s.server_cpu / s.ops * 1e6 for s in samples if s.server_cpu is not None]
        out[client] = {
            "seconds": median([s.seconds for s in samples]),
            "per_second": median([s.ops / s.seconds for s in samples]),
            "client_us": median([s.client_cpu / s.ops * 1e6 for s in samples]),
            "server_us": median(servers) if len(servers) == len(samples) else None,
        }
    return out


def build_rows(scenarios: Sequence[Scenario], cfg: Config) -> list[JsonObj]:
    rows: list[JsonObj] = []
    for sc in scenarios:
        revision = sc.revision.get(PD) or REVISION[sc.era]
        era = f"{sc.era} ({revision})"
        for op in ("walk", "get"):
            values = row_values(sc, op)
            pd, sdk = values[PD], values[SDK]
            if op == "walk":
                pages = sc.pages.get(PD)
                metric = f"list_prompts(): all {cfg.prompts:,}" + (f" ({pages} pages)" if pages else "")
                ratio = sdk["seconds"] / pd["seconds"] if pd["seconds"] and sdk["seconds"] else None
                cells = [fmt_ms(pd["seconds"]), fmt_ms(sdk["seconds"])]
            else:
                metric = f"{cfg.gets:,} sequential get_prompt"
                ratio = pd["per_second"] / sdk["per_second"] if pd["per_second"] and sdk["per_second"] else None
                cells = [fmt_rate(pd["per_second"]), fmt_rate(sdk["per_second"])]
            if sc.error:
                cells = ["FAILED", "FAILED"]
                ratio = None
            rows.append({
                "transport": sc.transport, "era": era, "metric": metric, "op": op,
                PD: pd, SDK: sdk, "ratio": ratio, "cells": cells,
                "status": "?" if ratio is None else ("PASS" if ratio >= 3 else "MISS"),
            })
    return rows


def fmt_ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:,.0f} ms"


def fmt_rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:,.0f} /s"


def fmt_cpu(value: float | None, op: str) -> str:
    """CPU µs per operation: shown in µs for a get, in ms for a walk."""
    if value is None:
        return "-"
    return f"{value:,.0f} µs" if op == "get" else f"{value / 1000:,.1f} ms"


def print_table(header: Sequence[str], body: Sequence[Sequence[str]], right: set[int]) -> None:
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                                 for i, c in enumerate(cells)) + " |"

    print(line(header))
    print("|" + "|".join("-" * (w + 1) + ":" if i in right else "-" * (w + 2) for i, w in enumerate(widths)) + "|")
    for row in body:
        print(line(row))


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def environment() -> JsonObj:
    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "mcp": version("mcp"), "msgspec": version("msgspec"), "aiohttp": version("aiohttp"),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def parse_args(argv: Sequence[str] | None) -> tuple[Config, argparse.Namespace]:
    p = argparse.ArgumentParser(description="promptdeck's client vs the official MCP SDK's client, same server.")
    p.add_argument("--rounds", type=int, help="alternating rounds; the table shows medians (default 5, --quick 1)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round of 200 gets")
    p.add_argument("--prompts", type=int, default=10_000, help="library size (default 10000)")
    p.add_argument("--gets", type=int, help="sequential get_prompt calls per client per round (default 1000)")
    p.add_argument("--transport", nargs="+", choices=("stdio", "http"), default=["stdio", "http"])
    p.add_argument("--era", nargs="+", choices=("legacy", "modern"), default=["legacy", "modern"])
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per transport and era (default 600)")
    p.add_argument("--profile", action="store_true",
                   help="after the rounds, cProfile one walk and the gets of each client (printed to stderr)")
    p.add_argument("--json", type=Path, metavar="FILE", help="write samples, medians and ratios to FILE")
    p.add_argument("--strict", action="store_true", help="exit 1 when a ratio misses the 3x target")
    a = p.parse_args(argv)
    cfg = Config(
        rounds=a.rounds if a.rounds is not None else (1 if a.quick else 5),
        prompts=a.prompts,
        gets=a.gets if a.gets is not None else (200 if a.quick else 1000),
        warmup_gets=GET_PROMPTS * 2,
        transports=list(dict.fromkeys(a.transport)),
        eras=list(dict.fromkeys(a.era)),
        timeout=a.timeout,
        profile=a.profile,
        quick=a.quick,
    )
    if cfg.rounds < 1 or cfg.prompts < 1 or cfg.gets < 1:
        p.error("--rounds, --prompts and --gets must be at least 1")
    return cfg, a


def main(argv: Sequence[str] | None = None) -> int:
    cfg, args = parse_args(argv)
    t0 = time.perf_counter()
    library = ensure_library(cfg.prompts)
    files = warm_page_cache(library)  # every server start reads from a warm file cache
    print(f"library: {cfg.prompts:,} prompts in {library} ({files:,} files, {time.perf_counter() - t0:.1f} s)",
          file=sys.stderr)
    load_before = uptime()
    print(f"before: {load_before}", file=sys.stderr)
    logs = Path(tempfile.mkdtemp(prefix="promptdeck-bench-client-"))
    t_run = time.perf_counter()
    try:
        scenarios = asyncio.run(Bench(cfg, library, logs).run())
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    wall = time.perf_counter() - t_run
    load_after = uptime()

    rows = build_rows(scenarios, cfg)
    print()
    print(f"promptdeck's client vs the official MCP SDK's client (mcp {environment()['mcp']}), both against "
          f"promptdeck serving {cfg.prompts:,} prompts -- medians of {cfg.rounds} alternating round(s)"
          f"{' (quick)' if cfg.quick else ''}; ratio > 1 means promptdeck's client is faster")
    print()
    print_table(
        ["transport", "era (revision)", "operation", "promptdeck", "SDK", "ratio", "target", ""],
        [[r["transport"], r["era"], r["metric"], *r["cells"],
          "-" if r["ratio"] is None else f"{r['ratio']:.1f}x", ">= 3x", r["status"]] for r in rows],
        {3, 4, 5},
    )
    print()
    print("CPU per operation (a list walk or one get), medians: the client's process and the server's")
    print()
    print_table(
        ["transport", "era", "operation", "promptdeck client", "SDK client", "server, for pd", "server, for SDK"],
        [[r["transport"], r["era"].split()[0], r["op"],
          *(fmt_cpu(r[c][k], r["op"]) for k in ("client_us", "server_us") for c in CLIENTS)] for r in rows],
        {3, 4, 5, 6},
    )
    failed = [sc for sc in scenarios if sc.error]
    if failed:
        print()
        for sc in failed:
            print(f"FAILED {sc.key}: {sc.error}")
    print(f"\n(wall time {wall:.0f} s; {os.cpu_count()} CPUs; before: {load_before}; after: {load_after})")
    for sc in scenarios:
        for client, text in sc.profiles.items():
            print(f"\n===== profile: {LABELS[client]} client, {sc.key}\n{text}", file=sys.stderr)
    if args.json:
        payload = {
            "environment": environment() | {"uptime_before": load_before, "uptime_after": load_after},
            "config": vars(cfg),
            "scenarios": [{"transport": sc.transport, "era": sc.era, "revision": sc.revision, "pages": sc.pages,
                           "error": sc.error,
                           "samples": {c: {op: [vars(s) for s in sc.samples[c][op]] for op in ("walk", "get")}
                                       for c in CLIENTS}} for sc in scenarios],
            "rows": [{k: v for k, v in r.items() if k != "cells"} for r in rows],
            "wall_seconds": wall,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    if failed:
        return 1
    if args.strict and any(r["status"] != "PASS" for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
