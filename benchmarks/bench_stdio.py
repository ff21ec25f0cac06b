"""promptdeck against the official MCP Python SDK over stdio, side by side in one run.

    .venv/bin/python benchmarks/bench_stdio.py [--rounds 5] [--quick] [--only promptdeck|sdk] [--json FILE]

Both servers run as child processes and are driven by a small newline-delimited JSON-RPC client
written on asyncio subprocess pipes (not the SDK client, so the client is not what gets measured). Every
session speaks protocol revision 2025-11-25: initialize, notifications/initialized, then requests.
Each round runs promptdeck and the SDK one after the other, swapping who goes first every round, and
the table reports medians over the rounds. See benchmarks/README.md for what each figure means.

Every response is checked: a JSON-RPC error, a missing result, a wrong id, a rendered prompt that does not
contain the argument values sent, or a prompt listing that does not add up fails the measurement instead
of counting as throughput. Every phase runs under a time limit (--timeout), so a stuck server fails the
measurement rather than hanging the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from libgen import DEFAULT_TONE, TONES, ensure_library, prompt_names

try:  # a typed msgspec decoder reads a 100-prompt page ~9x faster than json.loads (0.1 vs 0.9 ms)
    import msgspec
except ImportError:  # pragma: no cover - the project venv has it (a promptdeck dependency)
    msgspec = None  # type: ignore[assignment]

PROTOCOL_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
#: --era modern: no handshake; every request carries this _meta (its parsing is part of what is measured).
MODERN_META: JsonObj = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "promptdeck-bench", "version": "1"},
}
ERA = {"modern": False}
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SDK_SERVER = HERE / "sdk_server.py"
PD = "promptdeck"
SDK = "sdk"
SERVERS = (PD, SDK)
LABELS = {PD: "promptdeck", SDK: "SDK"}
#: Lines of a server's stderr quoted when a measurement fails.
STDERR_TAIL = 15
#: Large enough for a single 100,000-prompt listing on one line.
STREAM_LIMIT = 1 << 30

JsonObj = dict[str, Any]


class BenchError(Exception):
    """A measurement failed: error response, bad content, early exit or timeout."""


# --------------------------------------------------------------------------------------------- servers


def file_tail(path: Path, lines: int = STDERR_TAIL, sep: str = "\n") -> str:
    """The last ``lines`` lines of a log file ("" if it cannot be read)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return sep.join(text.rstrip().splitlines()[-lines:])


async def stop_process(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM a server still running, then SIGKILL if it has not exited within ``grace`` seconds."""
    if proc.returncode is not None:
        return
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        proc.kill()
        await proc.wait()


def server_command(server: str, library: Path) -> list[str]:
    if server == PD:
        return [sys.executable, "-m", "promptdeck", "serve", str(library)]
    return [sys.executable, str(SDK_SERVER), str(library)]


def server_env(server: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if server == PD and (REPO / "src" / "promptdeck").is_dir():
        # Benchmark the working tree, installed or not.
        src = str(REPO / "src")
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def vm_rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class RpcProcess:
    """A server child process and a minimal newline-delimited JSON-RPC client for it."""

    def __init__(self, server: str, library: Path, stderr_dir: Path) -> None:
        self.server = server
        self.library = library
        self.cmd = server_command(server, library)
        self.env = server_env(server)
        self._stderr_path = stderr_dir / f"{server}-{time.monotonic_ns()}.log"
        self._stderr_fh: Any = None
        self.proc: asyncio.subprocess.Process | None = None
        self.t_spawn = 0.0
        self._next_id = 0
        self.notifications = 0
        self._leftover = b""
        self.server_info: JsonObj = {}
        self.protocol_version = ""

    # -- process

    async def spawn(self) -> None:
        self._stderr_fh = open(self._stderr_path, "wb")  # closed in close()
        self.t_spawn = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr_fh,
            env=self.env,
            cwd=str(REPO),
            limit=STREAM_LIMIT,
        )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def rss(self) -> int:
        value = vm_rss_bytes(self.pid)
        if value is None:
            raise BenchError("cannot read VmRSS from /proc (Linux only)")
        return value

    def stderr_tail(self, lines: int = STDERR_TAIL) -> str:
        return file_tail(self._stderr_path, lines)

    async def close(self) -> None:
        proc = self.proc
        if proc is not None and proc.returncode is None:
            try:
                if proc.stdin is not None and not proc.stdin.is_closing():
                    proc.stdin.close()
                await asyncio.wait_for(proc.wait(), 3)
            except (TimeoutError, OSError):
                pass
            await stop_process(proc, 3)
        if self._stderr_fh is not None:
            self._stderr_fh.close()
            self._stderr_fh = None

    def discard_stderr(self) -> None:
        self._stderr_path.unlink(missing_ok=True)

    # -- wire

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def encode(self, method: str, params: JsonObj | None = None, req_id: int | None = None) -> bytes:
        msg: JsonObj = {"jsonrpc": "2.0", "method": method}
        if req_id is not None:
            msg["id"] = req_id
            if ERA["modern"]:
                params = {**(params or {}), "_meta": MODERN_META}
        if params is not None:
            msg["params"] = params
        return json.dumps(msg, separators=(",", ":")).encode() + b"\n"

    def write(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def drain(self) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        await self.proc.stdin.drain()

    async def read_response(self) -> bytes:
        """The next response line, as raw bytes (notifications and server requests are handled here).

        Only lines that may carry a ``method`` are parsed here, so the hot path does no JSON work;
        callers verify the raw lines after the timed section.
        """
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        while True:
            if self._leftover:
                line = await self._line_from_leftover()
            else:
                line = await stdout.readline()
            if not line:
                await self._eof()
            if b'"method"' not in line or self._is_response(line):
                return line

    async def read_responses(self, count: int) -> list[bytes]:
        """The next COUNT response lines, read in large chunks (cheaper than a readline per line)."""
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        out: list[bytes] = []
        pending = self._leftover
        self._leftover = b""
        while True:
            if pending:
                lines = pending.split(b"\n")
                pending = lines.pop()
                for i, line in enumerate(lines):
                    if b'"method"' not in line or self._is_response(line):
                        out.append(line)
                        if len(out) == count:
                            rest = lines[i + 1 :]
                            self._leftover = b"".join(x + b"\n" for x in rest) + pending
                            return out
            chunk = await stdout.read(1 << 20)
            if not chunk:
                await self._eof()
            pending += chunk

    async def _line_from_leftover(self) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        head, sep, tail = self._leftover.partition(b"\n")
        if sep:
            self._leftover = tail
            return head + sep
        self._leftover = b""
        return head + await self.proc.stdout.readline()

    def _is_response(self, line: bytes) -> bool:
        """Handle a line that mentions "method": answer server requests, count notifications."""
        msg = json.loads(line)
        if not isinstance(msg, dict) or "method" not in msg:
            return True
        if "id" in msg:  # a request from the server: answer it so it never waits on us
            reply: JsonObj = {"jsonrpc": "2.0", "id": msg["id"]}
            if msg["method"] == "ping":
                reply["result"] = {}
            else:
                reply["error"] = {"code": -32601, "message": "not supported by the benchmark client"}
            self.write(json.dumps(reply).encode() + b"\n")
        else:
            self.notifications += 1
        return False

    async def _eof(self) -> None:
        assert self.proc is not None
        try:
            code = await asyncio.wait_for(self.proc.wait(), 2)
        except TimeoutError:
            code = None
        raise BenchError(f"server closed stdout (exit code {code})")

    async def request(self, method: str, params: JsonObj | None = None) -> JsonObj:
        req_id = self.new_id()
        self.write(self.encode(method, params, req_id))
        return check_result(await self.read_response(), req_id, method)

    async def initialize(self) -> JsonObj:
        if ERA["modern"]:
            # 2026-07-28 has no handshake: the first exchange is server/discover.
            found = await self.request("server/discover", {})
            self.protocol_version = MODERN_VERSION if MODERN_VERSION in found.get("supportedVersions", []) else ""
            self.server_info = found.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
            if "prompts" not in (found.get("capabilities") or {}):
                raise BenchError("server/discover does not declare the prompts capability")
            return found
        result = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "promptdeck-bench", "version": "1"},
            },
        )
        self.protocol_version = str(result.get("protocolVersion", ""))
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        if "prompts" not in (result.get("capabilities") or {}):
            raise BenchError("initialize result does not advertise the prompts capability")
        return result

    def initialized(self) -> None:
        if not ERA["modern"]:
            self.write(self.encode("notifications/initialized"))


def parse_line(raw: bytes) -> JsonObj:
    try:
        msg = json.loads(raw)
    except ValueError as exc:
        raise BenchError(f"not JSON: {raw[:200]!r}") from exc
    if not isinstance(msg, dict):
        raise BenchError(f"not a JSON-RPC object: {raw[:200]!r}")
    return msg


def check_message(msg: JsonObj, req_id: int | None, method: str) -> JsonObj:
    if req_id is not None and msg.get("id") != req_id:
        raise BenchError(f"{method}: expected response id {req_id}, got {msg.get('id')!r}")
    if "error" in msg:
        err = msg["error"]
        raise BenchError(f"{method} (id {msg.get('id')}): JSON-RPC error {json.dumps(err)[:300]}")
    result = msg.get("result")
    if not isinstance(result, dict):
        raise BenchError(f"{method} (id {msg.get('id')}): response has no result object")
    return result


def check_result(raw: bytes, req_id: int | None, method: str) -> JsonObj:
    return check_message(parse_line(raw), req_id, method)


# ------------------------------------------------------------------------------------- prompt traffic


@dataclass
class GetCall:
    req_id: int
    name: str
    topic: str
    tone: str | None
    wire: bytes


def make_get_calls(conn: RpcProcess, names: Sequence[str], count: int, tag: str) -> list[GetCall]:
    """prompts/get requests cycling over the prompts; half send a tone, half rely on its default."""
    calls: list[GetCall] = []
    for i in range(count):
        req_id = conn.new_id()
        topic = f"topic-{tag}-{i}"
        tone = TONES[i % len(TONES)] if i % 2 else None
        args = {"topic": topic} if tone is None else {"topic": topic, "tone": tone}
        name = names[i % len(names)]
        wire = conn.encode("prompts/get", {"name": name, "arguments": args}, req_id)
        calls.append(GetCall(req_id, name, topic, tone, wire))
    return calls


def verify_get(call: GetCall, result: JsonObj) -> None:
    messages = result.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BenchError(f"prompts/get {call.name} (id {call.req_id}): no messages")
    texts = [str(m.get("content", {}).get("text", "")) for m in messages if isinstance(m, dict)]
    text = "\n".join(texts)
    tone = call.tone or DEFAULT_TONE
    if call.topic not in text or f"{tone} tone" not in text:
        raise BenchError(
            f"prompts/get {call.name} (id {call.req_id}): rendered text lacks topic {call.topic!r} "
            f"or tone {tone!r}: {text[:200]!r}"
        )


def verify_gets_in_order(calls: Sequence[GetCall], raws: Sequence[bytes]) -> None:
    if len(raws) != len(calls):
        raise BenchError(f"expected {len(calls)} responses, got {len(raws)}")
    for call, raw in zip(calls, raws, strict=True):
        verify_get(call, check_result(raw, call.req_id, "prompts/get"))


def verify_gets_any_order(calls: Sequence[GetCall], raws: Sequence[bytes]) -> None:
    by_id = {c.req_id: c for c in calls}
    seen: set[int] = set()
    for raw in raws:
        msg = parse_line(raw)
        rid = msg.get("id")
        if not isinstance(rid, int) or rid not in by_id:
            raise BenchError(f"prompts/get: response with unexpected id {rid!r}")
        if rid in seen:
            raise BenchError(f"prompts/get: two responses with id {rid}")
        seen.add(rid)
        verify_get(by_id[rid], check_message(msg, rid, "prompts/get"))
    if len(seen) != len(calls):
        raise BenchError(f"pipelined: {len(calls) - len(seen)} responses missing")


def list_page(result: JsonObj) -> tuple[list[str], str | None]:
    prompts = result.get("prompts")
    if not isinstance(prompts, list):
        raise BenchError("prompts/list result has no prompts array")
    names = [str(p.get("name")) for p in prompts if isinstance(p, dict)]
    if len(names) != len(prompts):
        raise BenchError("prompts/list: an entry is not an object")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise BenchError(f"prompts/list: nextCursor is not a string: {cursor!r}")
    return names, cursor or None


async def timed_list(conn: RpcProcess, cursor: str | None = None) -> tuple[float, JsonObj]:
    """One prompts/list round trip: seconds from write to the full response line, and the result."""
    req_id = conn.new_id()
    wire = conn.encode("prompts/list", {"cursor": cursor} if cursor else None, req_id)
    t0 = time.perf_counter()
    conn.write(wire)
    raw = await conn.read_response()
    elapsed = time.perf_counter() - t0
    return elapsed, check_result(raw, req_id, "prompts/list")


def _make_page_decoder() -> Callable[[bytes, int], tuple[list[str], str | None]]:
    """Decode a prompts/list response to (names, nextCursor), checking id, error and shape.

    The walk's client-side cost is part of what it measures, so it must stay small next to the
    servers': with json.loads, parsing promptdeck's 100 pages of a 10,000-prompt walk took ~55-90 ms,
    as long as the server's side. msgspec decodes only the fields needed and skips the rest.
    """
    if msgspec is None:  # pragma: no cover

        def decode_json(raw: bytes, req_id: int) -> tuple[list[str], str | None]:
            return list_page(check_result(raw, req_id, "prompts/list"))

        return decode_json

    decoder = msgspec.json.Decoder(_Reply)

    def decode(raw: bytes, req_id: int) -> tuple[list[str], str | None]:
        try:
            msg = decoder.decode(raw)
        except msgspec.DecodeError as exc:  # includes ValidationError
            raise BenchError(f"prompts/list (id {req_id}): bad response: {exc}: {raw[:200]!r}") from exc
        if msg.id != req_id:
            raise BenchError(f"prompts/list: expected response id {req_id}, got {msg.id!r}")
        if msg.error is not None:
            raise BenchError(f"prompts/list (id {req_id}): JSON-RPC error {json.dumps(msg.error)[:300]}")
        if msg.result is None:
            raise BenchError(f"prompts/list (id {req_id}): response has no result object")
        return [p.name for p in msg.result.prompts], msg.result.nextCursor or None

    return decode


if msgspec is not None:
    # Module level: the annotations are strings (future import) and must resolve in module globals.

    class _Prompt(msgspec.Struct):
        name: str

    class _Page(msgspec.Struct):
        prompts: list[_Prompt]
        nextCursor: str | None = None

    class _Reply(msgspec.Struct):
        id: int | str | None = None
        result: _Page | None = None
        error: dict[str, Any] | None = None


decode_list_page = _make_page_decoder()


async def walk_all(conn: RpcProcess, expected: int) -> tuple[float, int, list[str]]:
    """Follow nextCursor to the end. Returns (seconds, pages, names); client-side decoding is included."""
    names: list[str] = []
    pages = 0
    cursor: str | None = None
    max_pages = expected + 10
    t0 = time.perf_counter()
    while True:
        req_id = conn.new_id()
        conn.write(conn.encode("prompts/list", {"cursor": cursor} if cursor else None, req_id))
        page_names, cursor = decode_list_page(await conn.read_response(), req_id)
        names.extend(page_names)
        pages += 1
        if cursor is None:
            break
        if pages > max_pages:
            raise BenchError(f"prompts/list: still paging after {pages} pages (cursor loop?)")
    return time.perf_counter() - t0, pages, names


def check_walk(names: list[str], expected: set[str]) -> None:
    if len(names) != len(expected):
        raise BenchError(f"full walk saw {len(names)} prompts, expected {len(expected)}")
    if len(set(names)) != len(names):
        raise BenchError("full walk saw the same prompt twice")
    if set(names) != expected:
        missing = sorted(expected - set(names))[:3]
        raise BenchError(f"full walk: names differ from the library (missing e.g. {missing})")


# ------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str  # "ms", "s", "MiB", "req/s", "count"
    higher_is_better: bool
    target: str = ""
    #: target on the ratio (promptdeck better by at least this factor)
    target_ratio: float | None = None
    #: target on promptdeck's own value, in the metric's unit; checked as value < target_max
    target_max: float | None = None
    sdk_applies: bool = True


METRICS: tuple[Metric, ...] = (
    Metric("cold_start", "cold start: spawn -> initialize ({small} prompts)", "ms", False, ">= 7x faster", 7.0),
    Metric("rss_small", "RSS after initialize + list ({small} prompts)", "MiB", False, "<= 1/3 of SDK", 3.0),
    Metric("rss_settled", "RSS after the gets and 0.5 s idle ({small} prompts)", "MiB", False),
    Metric("seq_rps", "sequential prompts/get", "req/s", True, ">= 6x req/s", 6.0),
    Metric("seq_p50", "sequential prompts/get p50 latency", "ms", False),
    Metric("seq_p99", "sequential prompts/get p99 latency", "ms", False),
    Metric("pipe_rps", "pipelined prompts/get", "req/s", True),
    Metric("load_big", "load: spawn -> first list page ({big} prompts)", "s", False),
    Metric("rss_big", "RSS after initialize + list ({big} prompts)", "MiB", False, "<= 1/3 of SDK", 3.0),
    Metric("first_page", "prompts/list first page ({big} prompts)", "ms", False, "< 2 ms", target_max=2.0),
    Metric("walk_big_first", "prompts/list full walk, first after load ({big})", "ms", False),
    Metric("walk_big", "prompts/list full walk, warm ({big} prompts)", "ms", False, ">= 20x faster", 20.0),
    Metric("walk_big_pages", "  pages in the full walk ({big})", "count", False),
    Metric(
        "load_huge",
        "load: spawn -> first list page ({huge} prompts)",
        "s",
        False,
        "< 10 s",
        target_max=10.0,
        sdk_applies=False,
    ),
    Metric("rss_huge", "RSS after initialize + list ({huge} prompts)", "MiB", False, sdk_applies=False),
    Metric("walk_huge", "prompts/list full walk, warm ({huge} prompts)", "ms", False, sdk_applies=False),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}


def to_unit(metric: Metric, seconds_or_raw: float) -> float:
    """Samples are stored in base units (seconds, bytes, req/s, count); convert for display/targets."""
    if metric.unit == "ms":
        return seconds_or_raw * 1000.0
    if metric.unit == "MiB":
        return seconds_or_raw / (1024 * 1024)
    return seconds_or_raw


@dataclass
class Results:
    samples: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {s: {m.key: [] for m in METRICS} for s in SERVERS}
    )
    errors: list[JsonObj] = field(default_factory=list)
    failed: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SERVERS})
    notes: list[str] = field(default_factory=list)
    server_info: dict[str, JsonObj] = field(default_factory=dict)

    def add(self, server: str, key: str, value: float) -> None:
        self.samples[server][key].append(value)

    def fail(
        self, server: str, phase: str, keys: Sequence[str], exc: BaseException, conn: RpcProcess | None, round_no: int
    ) -> None:
        msg = f"{type(exc).__name__}: {exc}" if not isinstance(exc, BenchError) else str(exc)
        if isinstance(exc, TimeoutError):
            msg = f"timed out ({phase})"
        tail = conn.stderr_tail() if conn is not None else ""
        self.errors.append({"server": server, "phase": phase, "round": round_no, "error": msg, "stderr_tail": tail})
        self.failed[server].update(keys)
        print(f"  !! {LABELS[server]} {phase} (round {round_no}) failed: {msg}", file=sys.stderr)
        if tail:
            print("     stderr tail:\n" + "\n".join("       " + ln for ln in tail.splitlines()), file=sys.stderr)

    def median(self, server: str, key: str) -> float | None:
        values = self.samples[server][key]
        if not values or key in self.failed[server]:
            return None
        return statistics.median(values)


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of an already sorted sequence."""
    if not sorted_values:
        raise ValueError("no values")
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


# ---------------------------------------------------------------------------------------- the phases


@dataclass
class Config:
    rounds: int
    requests: int
    pipeline: int
    warmup: int
    cold_repeats: int
    small: int
    big: int
    huge: int
    timeout: float
    first_page_budget: float
    first_page_max: int
    walk_repeats: int
    only: str | None
    quick: bool

    def servers(self) -> tuple[str, ...]:
        return (self.only,) if self.only else SERVERS


class Bench:
    def __init__(self, cfg: Config, libs: dict[str, Path], stderr_dir: Path) -> None:
        self.cfg = cfg
        self.libs = libs
        self.stderr_dir = stderr_dir
        self.res = Results()
        self.small_names = prompt_names(cfg.small)

    def _conn(self, server: str, lib: str) -> RpcProcess:
        return RpcProcess(server, self.libs[lib], self.stderr_dir)

    async def _guard(
        self,
        server: str,
        phase: str,
        keys: Sequence[str],
        round_no: int,
        lib: str,
        body: Callable[[RpcProcess], Awaitable[None]],
    ) -> None:
        """Run one session: spawn, body(conn) under the time limit, always close; record failures."""
        if keys and all(k in self.res.failed[server] for k in keys):
            return  # failed in an earlier round: do not spend the time again
        conn = self._conn(server, lib)
        ok = False
        try:
            async with asyncio.timeout(self.cfg.timeout):
                await conn.spawn()
                await body(conn)
            ok = True
        except (BenchError, TimeoutError, OSError, ValueError) as exc:
            self.res.fail(server, phase, keys, exc, conn, round_no)
        finally:
            await conn.close()
            if ok:
                if conn.server_info and server not in self.res.server_info:
                    self.res.server_info[server] = {
                        "serverInfo": conn.server_info,
                        "protocolVersion": conn.protocol_version,
                    }
                expected = MODERN_VERSION if ERA["modern"] else PROTOCOL_VERSION
                if conn.protocol_version and conn.protocol_version != expected:
                    note = f"{LABELS[server]} negotiated {conn.protocol_version}, not {expected}"
                    if note not in self.res.notes:
                        self.res.notes.append(note)
                conn.discard_stderr()

    # -- cold start only (extra samples)

    async def cold_start_once(self, conn: RpcProcess) -> float:
        await conn.initialize()
        return time.perf_counter() - conn.t_spawn

    # -- session on the small library: cold start, RSS, sequential and pipelined gets

    async def small_session(self, server: str, cold: list[float], conn: RpcProcess) -> None:
        cfg = self.cfg
        cold.append(await self.cold_start_once(conn))
        conn.initialized()
        _, result = await timed_list(conn)
        names, cursor = list_page(result)
        missing = set(self.small_names) - set(names)
        if missing and cursor is None:
            raise BenchError(f"prompts/list lacks expected prompts, e.g. {sorted(missing)[:3]}")
        self.res.add(server, "rss_small", conn.rss())

        # warm-up, verified, untimed
        warm = make_get_calls(conn, self.small_names, cfg.warmup, "warm")
        raws = []
        for call in warm:
            conn.write(call.wire)
            raws.append(await conn.read_response())
        verify_gets_in_order(warm, raws)

        # sequential
        calls = make_get_calls(conn, self.small_names, cfg.requests, "seq")
        lat: list[float] = []
        raws = []
        perf = time.perf_counter
        t_start = perf()
        for call in calls:
            t0 = perf()
            conn.write(call.wire)
            raws.append(await conn.read_response())
            lat.append(perf() - t0)
        total = perf() - t_start
        verify_gets_in_order(calls, raws)
        lat.sort()
        self.res.add(server, "seq_rps", len(calls) / total)
        self.res.add(server, "seq_p50", percentile(lat, 50))
        self.res.add(server, "seq_p99", percentile(lat, 99))

        # pipelined: everything written at once while a reader collects the answers
        calls = make_get_calls(conn, self.small_names, cfg.pipeline, "pipe")
        blob = b"".join(c.wire for c in calls)
        t_start = perf()

        async def writer() -> None:
            conn.write(blob)
            await conn.drain()

        write_task = asyncio.create_task(writer())
        try:
            raws = await conn.read_responses(len(calls))
        finally:
            if not write_task.done():
                write_task.cancel()
        total = perf() - t_start
        await write_task
        verify_gets_any_order(calls, raws)
        self.res.add(server, "pipe_rps", len(calls) / total)
        # What a server holds once settled: what it loads in the background (promptdeck's file watcher,
        # started when the client pauses) is in by now, unlike in the RSS read right after the list.
        await asyncio.sleep(0.5)
        self.res.add(server, "rss_settled", conn.rss())

    # -- session on a large library: load time, RSS, first page, full walk

    async def big_session(self, server: str, size: int, keys: dict[str, str], conn: RpcProcess) -> None:
        cfg = self.cfg
        await conn.initialize()
        conn.initialized()
        _, result = await timed_list(conn)
        self.res.add(server, keys["load"], time.perf_counter() - conn.t_spawn)
        list_page(result)
        self.res.add(server, keys["rss"], conn.rss())
        expected = set(prompt_names(size))

        pages = 0
        if "walk_first" in keys:
            # The first full walk right after loading: what a client that lists everything on connect
            # sees, including any work a server defers to the first request of each page.
            elapsed, pages, names = await walk_all(conn, size)
            check_walk(names, expected)
            self.res.add(server, keys["walk_first"], elapsed)

        if "first_page" in keys:
            samples: list[float] = []
            deadline = time.perf_counter() + cfg.first_page_budget
            while len(samples) < cfg.first_page_max and (len(samples) < 3 or time.perf_counter() < deadline):
                elapsed, result = await timed_list(conn)
                page, _ = list_page(result)
                if not page:
                    raise BenchError("prompts/list first page is empty")
                samples.append(elapsed)
            self.res.add(server, keys["first_page"], statistics.median(samples))

        walks: list[float] = []
        for _ in range(cfg.walk_repeats):
            elapsed, pages, names = await walk_all(conn, size)
            check_walk(names, expected)
            walks.append(elapsed)
        self.res.add(server, keys["walk"], statistics.median(walks))
        if "pages" in keys:
            self.res.add(server, keys["pages"], pages)

    # -- driver

    async def warm_session(self, conn: RpcProcess) -> None:
        await conn.initialize()
        conn.initialized()
        await timed_list(conn)

    async def cold_session(self, samples: list[float], conn: RpcProcess) -> None:
        samples.append(await self.cold_start_once(conn))

    async def warm_up(self) -> None:
        """One untimed start of each server, so neither pays for bytecode compilation in round 1."""
        for server in self.cfg.servers():
            before = len(self.res.errors)
            await self._guard(server, "warm-up", [], 0, "small", self.warm_session)
            if len(self.res.errors) > before:
                # It cannot even start: fail everything now instead of waiting on every phase.
                self.res.failed[server].update(m.key for m in METRICS)

    async def run(self) -> Results:
        cfg = self.cfg
        print(f"warm-up ({', '.join(LABELS[s] for s in cfg.servers())}) ...", file=sys.stderr)
        await self.warm_up()
        small_keys = ["cold_start", "rss_small", "rss_settled", "seq_rps", "seq_p50", "seq_p99", "pipe_rps"]
        big_keys = {
            "load": "load_big",
            "rss": "rss_big",
            "first_page": "first_page",
            "walk_first": "walk_big_first",
            "walk": "walk_big",
            "pages": "walk_big_pages",
        }
        huge_keys = {"load": "load_huge", "rss": "rss_huge", "walk": "walk_huge"}
        for rnd in range(1, cfg.rounds + 1):
            order = cfg.servers() if rnd % 2 else tuple(reversed(cfg.servers()))
            print(f"round {rnd}/{cfg.rounds}: order {' -> '.join(LABELS[s] for s in order)}", file=sys.stderr)

            # cold start: interleaved single starts, then the small-library session (one more sample)
            cold: dict[str, list[float]] = {s: [] for s in order}
            for _ in range(cfg.cold_repeats - 1):
                for server in order:
                    body = functools.partial(self.cold_session, cold[server])
                    await self._guard(server, "cold start", ["cold_start"], rnd, "small", body)
            for server in order:
                body = functools.partial(self.small_session, server, cold[server])
                await self._guard(server, f"{cfg.small}-prompt session", small_keys, rnd, "small", body)
            for server in order:
                if cold[server]:
                    self.res.add(server, "cold_start", statistics.median(cold[server]))

            for server in order:
                body = functools.partial(self.big_session, server, cfg.big, big_keys)
                await self._guard(server, f"{cfg.big:,}-prompt session", list(big_keys.values()), rnd, "big", body)

            if cfg.huge and PD in order:
                body = functools.partial(self.big_session, PD, cfg.huge, huge_keys)
                await self._guard(PD, f"{cfg.huge:,}-prompt session", list(huge_keys.values()), rnd, "huge", body)
        return self.res


# ------------------------------------------------------------------------------------------- report


def fmt_value(metric: Metric, value: float | None) -> str:
    if value is None:
        return "-"
    v = to_unit(metric, value)
    if metric.unit == "req/s":
        return f"{v:,.0f} req/s"
    if metric.unit == "count":
        return f"{v:,.0f}"
    if metric.unit == "MiB":
        return f"{v:,.1f} MiB"
    if metric.unit == "s":
        return f"{v:,.2f} s"
    if v < 10:
        return f"{v:,.3f} ms"
    return f"{v:,.1f} ms"


def ratio(metric: Metric, pd: float | None, sdk: float | None) -> float | None:
    """> 1 means promptdeck is better."""
    if pd is None or sdk is None or pd <= 0 or sdk <= 0 or metric.unit == "count":
        return None
    return pd / sdk if metric.higher_is_better else sdk / pd


def target_status(metric: Metric, pd: float | None, rat: float | None) -> str:
    if not metric.target:
        return ""
    if metric.target_ratio is not None:
        if rat is None:
            return "?"
        return "PASS" if rat >= metric.target_ratio else "MISS"
    if metric.target_max is not None:
        if pd is None:
            return "?"
        return "PASS" if to_unit(metric, pd) < metric.target_max else "MISS"
    return ""


def short(n: int) -> str:
    """10000 -> "10k"."""
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def build_rows(res: Results, cfg: Config) -> list[JsonObj]:
    def cell(m: Metric, server: str, value: float | None, failed: bool) -> str:
        if cfg.only not in (None, server):
            return "skipped"
        return "FAILED" if failed else fmt_value(m, value)

    rows: list[JsonObj] = []
    for m in METRICS:
        if m.key.endswith("_huge") and not cfg.huge:
            continue
        pd_failed = m.key in res.failed[PD]
        sdk_failed = m.key in res.failed[SDK]
        pd = res.median(PD, m.key)
        sdk = res.median(SDK, m.key) if m.sdk_applies else None
        rat = ratio(m, pd, sdk)
        rows.append(
            {
                "key": m.key,
                "metric": m.label.format(small=short(cfg.small), big=short(cfg.big), huge=short(cfg.huge)),
                "unit": m.unit,
                PD: pd,
                SDK: sdk,
                "ratio": rat,
                "target": m.target,
                "status": "" if cfg.only == SDK or (cfg.only and m.target_ratio) else target_status(m, pd, rat),
                "pd_cell": cell(m, PD, pd, pd_failed),
                "sdk_cell": "n/a" if not m.sdk_applies else cell(m, SDK, sdk, sdk_failed),
            }
        )
    return rows


def print_table(rows: list[JsonObj], out: Any = sys.stdout) -> None:
    header = ["metric", "promptdeck", "SDK", "ratio", "target", ""]
    body = [
        [
            r["metric"],
            r["pd_cell"],
            r["sdk_cell"],
            f"{r['ratio']:.1f}x" if r["ratio"] is not None else "-",
            r["target"],
            r["status"],
        ]
        for r in rows
    ]
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]
    align_right = {1, 2, 3}

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).rjust(widths[i]) if i in align_right else str(c).ljust(widths[i]) for i, c in enumerate(cells)]
        return "| " + " | ".join(parts) + " |"

    print(line(header), file=out)
    print(
        "|"
        + "|".join(("-" * (w + 1) + ":") if i in align_right else "-" * (w + 2) for i, w in enumerate(widths))
        + "|",
        file=out,
    )
    for row in body:
        print(line(row), file=out)


@contextlib.asynccontextmanager
async def initialized(server: str, library: Path, stderr_dir: Path, cmd: list[str]) -> AsyncIterator[RpcProcess]:
    """``server`` started with ``cmd`` and past the handshake, for the smaller side-by-side benchmarks; a
    ``BenchError`` on the way names the server and ends with its stderr, and the process is always stopped."""
    conn = RpcProcess(server, library, stderr_dir)
    conn.cmd = cmd
    await conn.spawn()
    try:
        await conn.initialize()
        conn.initialized()
        yield conn
    except BenchError as exc:
        raise BenchError(f"{server}: {exc}\n{conn.stderr_tail()}") from None
    finally:
        await conn.close()


async def alternating_rounds(rounds: int, measure: Callable[[str], Awaitable[dict[str, float]]]
                             ) -> dict[str, list[dict[str, float]]]:
    """``measure`` of each server ``rounds`` times, the order alternating round by round so that neither side
    always runs on a machine the other has just warmed (or loaded)."""
    results: dict[str, list[dict[str, float]]] = {PD: [], SDK: []}
    for round_number in range(rounds):
        for server in (PD, SDK) if round_number % 2 == 0 else (SDK, PD):
            results[server].append(await measure(server))
    return results


def print_side_by_side(results: dict[str, list[dict[str, float]]], rows: Sequence[tuple[str, str, bool]]) -> None:
    """The table of the smaller side-by-side benchmarks (tools, resources): per row (label, key, whether higher
    is better), the median of each server's rounds and how many times faster promptdeck is."""
    width = max(len(label) for label, _, _ in rows)
    print(f"{'measure':{width}} {'promptdeck':>12} {'SDK':>12} {'x faster':>9}")
    for label, key, higher in rows:
        ours = statistics.median(r[key] for r in results[PD])
        theirs = statistics.median(r[key] for r in results[SDK])
        times = ours / theirs if higher else theirs / ours
        print(f"{label:{width}} {ours:12.2f} {theirs:12.2f} {times:9.1f}")


def environment() -> JsonObj:
    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "mcp": version("mcp"),
        "promptdeck_installed": version("promptdeck"),
        "promptdeck_source": str(REPO / "src") if (REPO / "src" / "promptdeck").is_dir() else None,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def warm_page_cache(folder: Path) -> int:
    """Read every file once so both servers start from the same (warm) file cache."""
    count = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                fh.read()
            count += 1
    return count


def parse_args(argv: Sequence[str] | None) -> tuple[Config, argparse.Namespace]:
    p = argparse.ArgumentParser(
        description="Benchmark promptdeck against the official MCP Python SDK over stdio.",
    )
    p.add_argument("--rounds", type=int, help="alternating A/B rounds; medians are over rounds (default 5)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, few requests, short repeats")
    p.add_argument("--only", choices=SERVERS, help="measure one server only")
    p.add_argument("--json", type=Path, metavar="FILE", help="write samples, medians and ratios to FILE")
    p.add_argument("--requests", type=int, help="sequential prompts/get per round (default 2000)")
    p.add_argument("--pipeline", type=int, help="pipelined prompts/get per round (default 2000)")
    p.add_argument("--small", type=int, default=10, help="prompts in the small library (default 10)")
    p.add_argument("--big", type=int, default=10_000, help="prompts in the large library (default 10000)")
    p.add_argument(
        "--huge",
        type=int,
        default=100_000,
        help="prompts in the promptdeck-only load test (default 100000; 0 skips it)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds one server session may take before it counts as failed (default 180)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed, not only on errors")
    p.add_argument("--era", choices=("legacy", "modern"), default="legacy",
                   help="legacy: initialize, then 2025-11-25; modern: 2026-07-28 with _meta on every request")
    a = p.parse_args(argv)
    ERA["modern"] = a.era == "modern"
    quick = bool(a.quick)
    cfg = Config(
        rounds=a.rounds if a.rounds is not None else (1 if quick else 5),
        requests=a.requests if a.requests is not None else (300 if quick else 2000),
        pipeline=a.pipeline if a.pipeline is not None else (300 if quick else 2000),
        warmup=50 if quick else 200,
        cold_repeats=1 if quick else 3,
        small=a.small,
        big=a.big,
        huge=a.huge,
        timeout=a.timeout,
        first_page_budget=0.5 if quick else 2.0,
        first_page_max=10 if quick else 50,
        walk_repeats=1 if quick else 3,
        only=a.only,
        quick=quick,
    )
    for name in ("rounds", "requests", "pipeline", "small", "big"):
        if getattr(cfg, name) < 1:
            p.error(f"--{name} must be at least 1")
    if cfg.huge < 0:
        p.error("--huge must be 0 (skip) or more")
    return cfg, a


def main(argv: Sequence[str] | None = None) -> int:
    cfg, args = parse_args(argv)
    if cfg.only == SDK:
        cfg.huge = 0
    libs: dict[str, Path] = {}
    sizes = {"small": cfg.small, "big": cfg.big} | ({"huge": cfg.huge} if cfg.huge else {})
    for key, n in sizes.items():
        t0 = time.perf_counter()
        libs[key] = ensure_library(n)
        files = warm_page_cache(libs[key])
        print(
            f"library {key}: {n:,} prompts in {libs[key]} ({files:,} files, ready in {time.perf_counter() - t0:.1f} s)",
            file=sys.stderr,
        )

    stderr_dir = Path(tempfile.mkdtemp(prefix="promptdeck-bench-"))
    load_before = load_average()
    t_run = time.perf_counter()
    try:
        res = asyncio.run(Bench(cfg, libs, stderr_dir).run())
    finally:
        shutil.rmtree(stderr_dir, ignore_errors=True)
    wall = time.perf_counter() - t_run

    rows = build_rows(res, cfg)
    print()
    print(
        f"promptdeck vs official MCP SDK over stdio -- medians of {cfg.rounds} alternating round(s)"
        f"{' (quick)' if cfg.quick else ''}; ratio > 1 means promptdeck is better"
    )
    print(
        f"sequential/pipelined: {cfg.requests:,}/{cfg.pipeline:,} prompts/get on {cfg.small} prompts; "
        f"large library {cfg.big:,} prompts" + (f"; huge {cfg.huge:,} (promptdeck only)" if cfg.huge else "")
    )
    print()
    print_table(rows)
    for note in res.notes:
        print(f"note: {note}")
    if res.errors:
        print()
        print(f"{len(res.errors)} measurement(s) FAILED:")
        for err in res.errors:
            print(f"- {LABELS[err['server']]}, {err['phase']}, round {err['round']}: {err['error']}")
    load_after = load_average()
    print(
        f"\n(benchmark wall time {wall:.0f} s; load average before {load_before}, after {load_after}; "
        f"{os.cpu_count()} CPUs)"
    )

    missed = [r for r in rows if r["status"] in ("MISS", "?")]
    if args.json:
        payload = {
            "environment": environment() | {"loadavg_before": load_before, "loadavg_after": load_after},
            "config": {k: v for k, v in vars(cfg).items()},
            "protocolVersion": MODERN_VERSION if ERA["modern"] else PROTOCOL_VERSION,
            "servers": {s: {"command": server_command(s, Path("DIR"))} | res.server_info.get(s, {}) for s in SERVERS},
            "units": "samples in seconds, bytes, req/s or count; one sample per round",
            "samples": res.samples,
            "rows": rows,
            "errors": res.errors,
            "notes": res.notes,
            "wall_seconds": wall,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    if res.errors:
        return 1
    if args.strict and missed and cfg.only is None:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
