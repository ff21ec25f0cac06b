"""promptdeck against the official MCP Python SDK over Streamable HTTP, side by side in one run.

    .venv/bin/python benchmarks/bench_http.py [--rounds 3] [--quick] [--era legacy|modern] [--json FILE]

Both servers serve the same 10-prompt library (benchmarks/.work/lib-10, written by libgen.py) on
127.0.0.1, each in its own process (both on uvicorn; promptdeck through server/serving.py), in
four modes, two per protocol era:

- stateful SSE (legacy, 2025-11-25): every client connection opens its own session (initialize, then
  notifications/initialized) and sends its Mcp-Session-Id on every request; POSTs are answered with
  text/event-stream;
- stateless JSON (legacy): promptdeck ``--stateless --json-response``, the SDK ``stateless_http=True,
  json_response=True``; no session id, POSTs answered with application/json;
- 2026-07-28 on each of those two server configurations: no initialize and no session; every request
  carries its version and client capabilities in ``params._meta`` and the MCP-Protocol-Version,
  Mcp-Method and Mcp-Name headers; each connection first calls server/discover (untimed).

In each mode prompts/get is measured at concurrency 1 and 32 by a closed-loop load client written here
on asyncio protocols (raw HTTP/1.1 over keep-alive sockets, one request in flight per connection), not
an SDK client, so the client is not what gets measured; it reports its own CPU use next to the
server's. Each round runs both servers one after the other, swapping who goes first every round; the
table shows medians over the rounds. See benchmarks/README.md for what each figure means.

Every response is checked after the timed window: HTTP 200, the content type of the mode, a JSON-RPC
result (an error is a failure, never throughput) carrying the id of the request it answers, a rendered
prompt that contains the arguments sent, and in 2026-07-28 a result that says ``resultType:
"complete"`` (which no older revision has). Failed responses are counted and reported; they never
count as throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench_stdio import (
    MODERN_META,
    MODERN_VERSION,
    PROTOCOL_VERSION,
    environment,
    file_tail,
    load_average,
    percentile,
    server_env,
    warm_page_cache,
)
from libgen import DEFAULT_TONE, TONES, ensure_library, prompt_names

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SDK_SERVER = HERE / "sdk_server.py"
HOST = "127.0.0.1"
PATH = "/mcp"
PD = "promptdeck"
SDK = "sdk"
SERVERS = (PD, SDK)
LABELS = {PD: "promptdeck", SDK: "SDK"}
LEGACY = "legacy"
MODERN = "modern"
ERAS = (LEGACY, MODERN)
#: Request ids: connection k numbers its requests from (k + 1) * ID_BASE, so an id names its request.
ID_BASE = 1_000_000_000
STDERR_TAIL = 15
#: Error messages kept per measurement (the count is always exact).
ERROR_SAMPLES = 5
#: Above this share of one core, the load client warns that it may be what limits a measurement.
CLIENT_CPU_WARN = 0.8
#: Above this share of one core used by everything else, a measurement counts as taken on a busy machine.
OTHER_CPU_WARN = 0.3
CLK_TCK = os.sysconf("SC_CLK_TCK")

JsonObj = dict[str, Any]


@dataclass(frozen=True)
class Mode:
    """How the client talks to the servers, and how the servers are configured for it."""

    key: str
    label: str
    era: str  # LEGACY: initialize, then 2025-11-25; MODERN: 2026-07-28, _meta and headers on every request
    flags: tuple[str, ...]  # the same server options for promptdeck and sdk_server.py
    ctype: bytes  # the content type every answer to a POSTed prompts/get must have
    sessions: bool = False  # each connection opens a session and sends its Mcp-Session-Id

    @property
    def modern(self) -> bool:
        return self.era == MODERN

    @property
    def version(self) -> str:
        return MODERN_VERSION if self.modern else PROTOCOL_VERSION


_JSON_SERVER = ("--stateless", "--json-response")
# Modern answers are JSON on either server configuration: both servers switch to SSE only when
# notifications come before the result, and a prompts/get here sends none.
MODES = {
    m.key: m
    for m in (
        Mode("stateful", "stateful SSE", LEGACY, (), b"text/event-stream", sessions=True),
        Mode("stateless", "stateless JSON", LEGACY, _JSON_SERVER, b"application/json"),
        Mode("modern", "2026-07-28, SSE server", MODERN, (), b"application/json"),
        Mode("modern-json", "2026-07-28, JSON server", MODERN, _JSON_SERVER, b"application/json"),
    )
}


class BenchError(Exception):
    """A measurement failed: the server did not start, a connection broke, or time ran out."""


# --------------------------------------------------------------------------------------------- servers


def server_command(server: str, library: Path, port: int | str, mode: Mode) -> list[str]:
    if server == PD:
        return [sys.executable, "-m", "promptdeck", "serve", str(library), "--http", f"{HOST}:{port}", *mode.flags]
    return [sys.executable, str(SDK_SERVER), str(library), "--http", str(port), *mode.flags]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, from /proc/PID/stat (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_seconds() -> float | None:
    """CPU seconds all cores spent busy (steal included), from /proc/stat (Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(x) for x in fh.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class ServerProc:
    """One HTTP server child process on a free loopback port."""

    def __init__(self, server: str, mode: Mode, library: Path, log_dir: Path) -> None:
        self.server = server
        self.mode = mode
        self.port = free_port()
        self.cmd = server_command(server, library, self.port, mode)
        self.env = server_env(server)
        self.log_path = log_dir / f"{server}-{mode.key}-{time.monotonic_ns()}.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self, timeout: float) -> float:
        """Spawn and wait until the port accepts connections; returns the seconds that took."""
        t0 = time.perf_counter()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=str(REPO),
            )
        deadline = t0 + timeout
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"server exited with code {self.proc.returncode} before listening")
            try:
                _, writer = await asyncio.open_connection(HOST, self.port)
            except OSError:
                if time.perf_counter() > deadline:
                    raise BenchError(f"server did not listen on {HOST}:{self.port} within {timeout:.0f} s") from None
                await asyncio.sleep(0.02)
                continue
            writer.close()
            await writer.wait_closed()
            return time.perf_counter() - t0

    def stop(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def log_tail(self, lines: int = STDERR_TAIL) -> str:
        return file_tail(self.log_path, lines)


# ----------------------------------------------------------------------------------------- the client


@dataclass
class Reply:
    status: int
    headers: dict[bytes, bytes]
    body: bytes


@dataclass
class Sample:
    """One answered request of a timed loop; checked after the loop."""

    req_id: int
    end_ns: int
    latency_ns: int
    status: int
    ctype: bytes
    body: bytes


class Writer(Protocol):
    """What a connection writes to: an asyncio transport, or a blocking socket (SocketWriter)."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class SocketWriter:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def close(self) -> None:
        self.sock.close()


class HttpConn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection with a small response parser (Content-Length or chunked).

    At most one request is in flight. ``request`` awaits a reply (set-up); in a timed loop the reply
    goes straight to ``on_reply``, which sends the next request from the same callback, so a round trip
    costs the client no task switch. The same parser also runs on a blocking socket (``pump``), with no
    event loop in between: the cheapest round trip for a single connection.
    """

    def __init__(self) -> None:
        self.transport: Writer | None = None
        self.buf = bytearray()
        self._head: tuple[int, dict[bytes, bytes]] | None = None
        self._length = 0  # Content-Length of the reply being read; -1 while reading chunks
        self._chunks: list[bytes] = []
        self._waiter: asyncio.Future[Reply] | None = None
        self.on_reply: Callable[[int, dict[bytes, bytes], bytes], None] | None = None
        self.lost: str | None = None
        self.on_lost: Callable[[str], None] | None = None

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = f"connection closed by the server ({exc})" if exc else "connection closed by the server"
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(BenchError(self.lost))
        if self.on_lost is not None:
            self.on_lost(self.lost)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos = 0
        while True:
            if self._head is None:
                end = buf.find(b"\r\n\r\n", pos)
                if end < 0:
                    break
                lines = bytes(buf[pos:end]).split(b"\r\n")
                pos = end + 4
                headers: dict[bytes, bytes] = {}
                for line in lines[1:]:
                    key, _, value = line.partition(b":")
                    headers[key.strip().lower()] = value.strip()
                self._head = (int(lines[0].split(b" ", 2)[1]), headers)
                if b"chunked" in headers.get(b"transfer-encoding", b"").lower():
                    self._length = -1
                    self._chunks = []
                else:
                    self._length = int(headers.get(b"content-length", b"0"))
            if self._length >= 0:
                if len(buf) - pos < self._length:
                    break
                body = bytes(buf[pos : pos + self._length])
                pos += self._length
            else:
                complete = False
                while True:
                    eol = buf.find(b"\r\n", pos)
                    if eol < 0:
                        break
                    size = int(bytes(buf[pos:eol]).split(b";", 1)[0], 16)
                    if size == 0:  # last chunk, optional trailers, blank line
                        end = buf.find(b"\r\n\r\n", eol)
                        if end < 0:
                            break
                        pos = end + 4
                        complete = True
                        break
                    if len(buf) - eol - 2 < size + 2:
                        break
                    self._chunks.append(bytes(buf[eol + 2 : eol + 2 + size]))
                    pos = eol + 4 + size
                if not complete:
                    break
                body = b"".join(self._chunks)
                self._chunks = []
            status, headers = self._head
            self._head = None
            if self._waiter is not None:
                waiter, self._waiter = self._waiter, None
                if not waiter.done():
                    waiter.set_result(Reply(status, headers, body))
            elif self.on_reply is not None:
                self.on_reply(status, headers, body)
        if pos:
            del buf[:pos]

    # -- use

    def write(self, data: bytes) -> None:
        if self.lost is not None:
            raise BenchError(self.lost)
        assert self.transport is not None
        self.transport.write(data)

    async def request(self, data: bytes) -> Reply:
        self._waiter = asyncio.get_running_loop().create_future()
        self.write(data)
        return await self._waiter

    def pump(self, sock: socket.socket) -> None:
        """Blocking mode: read what the socket has (waiting for it) and parse it."""
        data = sock.recv(1 << 18)
        if not data:
            self.connection_lost(None)
            raise BenchError(self.lost or "connection closed by the server")
        self.data_received(data)

    def request_blocking(self, sock: socket.socket, data: bytes) -> Reply:
        replies: list[Reply] = []
        saved, self.on_reply = self.on_reply, lambda st, hd, body: replies.append(Reply(st, hd, body))
        try:
            self.write(data)
            while not replies:
                self.pump(sock)
        finally:
            self.on_reply = saved
        return replies[0]

    def close(self) -> None:
        self.on_lost = None
        if self.transport is not None:
            self.transport.close()


def http_head(
    port: int, version: str | None, session_id: bytes | None = None, method: str | None = None, name: str | None = None
) -> bytes:
    """A POST's request line and headers up to Content-Length; METHOD and NAME go in Mcp-Method/Mcp-Name."""
    head = (
        b"POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\n" % (PATH.encode(), HOST.encode(), port)
    )
    if version is not None:
        head += b"MCP-Protocol-Version: %s\r\n" % version.encode()
    if session_id is not None:
        head += b"Mcp-Session-Id: %s\r\n" % session_id
    if method is not None:  # the values here are plain ASCII: no =?base64?...?= wrapping needed
        head += b"Mcp-Method: %s\r\n" % method.encode()
    if name is not None:
        head += b"Mcp-Name: %s\r\n" % name.encode()
    return head


def http_post(head: bytes, body: bytes) -> bytes:
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def sse_messages(body: bytes) -> list[JsonObj]:
    """The JSON-RPC messages in an SSE body (events without data, such as a priming event, skipped)."""
    out: list[JsonObj] = []
    for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
        payload = b"\n".join(data).strip()
        if payload:
            msg = json.loads(payload)
            if not isinstance(msg, dict):
                raise ValueError(f"SSE data is not a JSON-RPC object: {payload[:200]!r}")
            out.append(msg)
    return out


def response_message(status: int, ctype: bytes, body: bytes, req_id: int) -> JsonObj:
    """The JSON-RPC response to REQ_ID in an HTTP reply; raises ValueError on anything else."""
    if status != 200:
        raise ValueError(f"HTTP {status}: {body[:200]!r}")
    media = ctype.split(b";", 1)[0].strip().lower()
    if media == b"application/json":
        msg = json.loads(body)
        candidates = msg if isinstance(msg, list) else [msg]
    elif media == b"text/event-stream":
        candidates = sse_messages(body)
    else:
        raise ValueError(f"unexpected Content-Type {ctype!r}")
    responses = [m for m in candidates if isinstance(m, dict) and ("result" in m or "error" in m)]
    if len(responses) != 1:
        raise ValueError(f"expected one JSON-RPC response, got {len(responses)}: {body[:200]!r}")
    msg = responses[0]
    if msg.get("id") != req_id:
        raise ValueError(f"expected response id {req_id}, got {msg.get('id')!r}")
    if "error" in msg:
        raise ValueError(f"JSON-RPC error {json.dumps(msg['error'])[:200]}")
    if not isinstance(msg.get("result"), dict):
        raise ValueError("response has no result object")
    return msg


def check_era(result: JsonObj, mode: Mode) -> None:
    """In 2026-07-28 every result says ``resultType`` (no older revision has it): a legacy answer fails."""
    if mode.modern and result.get("resultType") != "complete":
        raise ValueError(f"not a {MODERN_VERSION} result: resultType {result.get('resultType')!r}")


_GET = b'{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"%s","arguments":{"topic":"topic-%d"%s}%s}}'
_MODERN_META = b',"_meta":' + json.dumps(MODERN_META, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Call:
    """What request REQ_ID asks for: derived from the id alone, so samples need not store it."""

    name: str
    topic: str
    tone: str | None

    @staticmethod
    def of(req_id: int, names: Sequence[str]) -> Call:
        seq = req_id % ID_BASE
        # Half the requests rely on the default tone; the others cycle through every tone.
        tone = TONES[(seq // 2) % len(TONES)] if seq % 2 else None
        return Call(names[seq % len(names)], f"topic-{req_id}", tone)

    def body(self, req_id: int, modern: bool) -> bytes:
        """The request as JSON (byte formatting: ~1 us, a fifth of json.dumps; names and tones are plain ASCII).

        MODERN: with the 2026-07-28 ``_meta`` (version, client capabilities, client info).
        """
        tone = b',"tone":"%s"' % self.tone.encode() if self.tone is not None else b""
        return _GET % (req_id, self.name.encode(), req_id, tone, _MODERN_META if modern else b"")


def verify_sample(sample: Sample, mode: Mode, names: Sequence[str]) -> None:
    """Raise ValueError unless SAMPLE is a correct prompts/get answer in MODE."""
    if sample.status == 200 and sample.ctype.split(b";", 1)[0].strip().lower() != mode.ctype:
        raise ValueError(f"{mode.label}: answered with Content-Type {sample.ctype!r}")
    result = response_message(sample.status, sample.ctype, sample.body, sample.req_id)["result"]
    check_era(result, mode)
    call = Call.of(sample.req_id, names)
    messages = result.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"prompts/get {call.name} (id {sample.req_id}): no messages")
    text = "\n".join(str((m.get("content") or {}).get("text", "")) for m in messages if isinstance(m, dict))
    tone = call.tone or DEFAULT_TONE
    if call.topic not in text or f"{tone} tone" not in text:
        raise ValueError(f"prompts/get {call.name} (id {sample.req_id}): text lacks {call.topic!r}/{tone!r}")


class LoadConn:
    """A client connection with its own session (stateful modes) and its own request ids.

    ``blocking``: a plain blocking socket, no event loop (used when it is the only connection);
    ``io_timeout`` bounds every wait on it.
    """

    def __init__(
        self, index: int, port: int, mode: Mode, names: Sequence[str], blocking: bool = False, io_timeout: float = 30.0
    ) -> None:
        self.index = index
        self.port = port
        self.mode = mode
        self.names = names
        self.blocking = blocking
        self.io_timeout = io_timeout
        self.sock: socket.socket | None = None
        self.conn = HttpConn()
        self.session_id: bytes | None = None
        self.next_id = (index + 1) * ID_BASE
        self.samples: list[Sample] = []
        self.failure: str | None = None
        self._deadline_ns = 0
        self._sent_ns = 0
        self._sent_id = 0
        self._done: asyncio.Future[None] | None = None
        self._running = False
        self._heads: dict[str, bytes] = {}  # the headers of a prompts/get, per prompt name

    async def request(self, data: bytes) -> Reply:
        if self.sock is not None:
            return self.conn.request_blocking(self.sock, data)
        return await self.conn.request(data)

    async def open(self) -> None:
        if self.blocking:
            self.sock = socket.create_connection((HOST, self.port), timeout=self.io_timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conn.transport = SocketWriter(self.sock)
        else:
            loop = asyncio.get_running_loop()
            transport, _ = await loop.create_connection(lambda: self.conn, HOST, self.port)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.mode.modern:
            # No handshake in 2026-07-28; discover is how a client learns that the server speaks it.
            reply, result = await self.call("server/discover", {})
            versions = result.get("supportedVersions")
            if not isinstance(versions, list) or MODERN_VERSION not in versions:
                raise BenchError(f"server/discover does not list {MODERN_VERSION}: supportedVersions {versions!r}")
        else:
            client_info = {"name": "promptdeck-bench-http", "version": "1"}
            init = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client_info}
            reply, result = await self.call("initialize", init)
        if "prompts" not in (result.get("capabilities") or {}):
            raise BenchError("the server does not advertise the prompts capability")
        if self.mode.sessions:
            self.session_id = reply.headers.get(b"mcp-session-id")
            if not self.session_id:
                raise BenchError("stateful initialize answered without an Mcp-Session-Id")
            note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
            reply = await self.request(http_post(http_head(self.port, PROTOCOL_VERSION, self.session_id), note))
            if reply.status != 202:
                raise BenchError(f"notifications/initialized: HTTP {reply.status} (expected 202)")
        if self.mode.modern:
            self._heads = {n: http_head(self.port, MODERN_VERSION, None, "prompts/get", n) for n in self.names}
        else:
            head = http_head(self.port, PROTOCOL_VERSION, self.session_id)
            self._heads = dict.fromkeys(self.names, head)
        self.conn.on_reply = self._on_reply
        self.conn.on_lost = self._on_lost

    async def call(self, method: str, params: JsonObj) -> tuple[Reply, JsonObj]:
        """An untimed set-up request (initialize, or server/discover with its _meta); the reply and its result.

        The legacy initialize goes without MCP-Protocol-Version: the version is what it negotiates.
        """
        req_id = self.new_id()
        if self.mode.modern:
            params = {**params, "_meta": MODERN_META}
            head = http_head(self.port, MODERN_VERSION, method=method)
        else:
            head = http_head(self.port, None)
        body = json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}).encode()
        reply = await self.request(http_post(head, body))
        try:
            msg = response_message(reply.status, reply.headers.get(b"content-type", b""), reply.body, req_id)
            check_era(msg["result"], self.mode)
        except ValueError as exc:
            raise BenchError(f"{method}: {exc}") from exc
        return reply, msg["result"]

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def start(self, deadline_ns: int) -> asyncio.Future[None]:
        """Run the closed loop on the event loop until DEADLINE_NS; the future resolves when it ends."""
        self._deadline_ns = deadline_ns
        self.samples = []
        self._running = True
        self._done = asyncio.get_running_loop().create_future()
        self._send()
        return self._done

    def run_blocking(self, deadline_ns: int) -> None:
        """Run the closed loop on the blocking socket until DEADLINE_NS."""
        assert self.sock is not None
        self._deadline_ns = deadline_ns
        self.samples = []
        self._running = True
        self._done = None
        self._send()
        while self._running:
            self.conn.pump(self.sock)

    def _send(self) -> None:
        req_id = self.new_id()
        call = Call.of(req_id, self.names)
        wire = http_post(self._heads[call.name], call.body(req_id, self.mode.modern))
        self._sent_id = req_id
        self._sent_ns = time.perf_counter_ns()
        self.conn.write(wire)

    def _on_reply(self, status: int, headers: dict[bytes, bytes], body: bytes) -> None:
        now = time.perf_counter_ns()
        self.samples.append(
            Sample(self._sent_id, now, now - self._sent_ns, status, headers.get(b"content-type", b""), body)
        )
        if now < self._deadline_ns:
            try:
                self._send()
            except BenchError as exc:
                self._finish(str(exc))
        else:
            self._finish(None)

    def _on_lost(self, why: str) -> None:
        self._finish(why)

    def _finish(self, failure: str | None) -> None:
        if failure is not None and self.failure is None:
            self.failure = failure
        self._running = False
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    async def end_session(self) -> None:
        """DELETE the session, as a well-behaved client does (best effort: the server may be gone)."""
        if self.session_id is None or self.conn.lost is not None:
            return
        self.conn.on_reply = None
        wire = http_post(http_head(self.port, PROTOCOL_VERSION, self.session_id), b"").replace(b"POST ", b"DELETE ", 1)
        if self.sock is not None:
            self.sock.settimeout(2)
        try:
            await asyncio.wait_for(self.request(wire), 2)
        except (BenchError, OSError):  # TimeoutError included
            pass

    def close(self) -> None:
        self.conn.close()


@dataclass
class LoadResult:
    rps: float
    p50: float
    p99: float
    ok: int
    errors: int
    window: float
    server_cpu: float | None
    client_cpu: float
    other_cpu: float | None
    #: server CPU seconds per answered request of the timed phase: steadier than req/s on a busy machine
    cpu_per_request: float | None
    error_samples: list[str]


@dataclass
class Phase:
    samples: list[Sample]
    start_ns: int
    deadline_ns: int
    end_ns: int
    server_cpu: float | None
    client_cpu: float
    other_cpu: float | None


async def run_phase(conns: Sequence[LoadConn], seconds: float, server_pid: int) -> Phase:
    """Every connection in a closed loop until SECONDS have passed (the requests then in flight finish)."""
    # The client's own garbage collections would stop every connection at once, and their pauses grow
    # with the samples it keeps: they would be counted as the server's latency, more so the more
    # requests a server answers. Collected between phases instead.
    gc.collect()
    gc.disable()
    machine0 = machine_busy_seconds()
    server0 = cpu_seconds(server_pid)
    client0 = own_cpu_seconds()
    start = time.perf_counter_ns()
    deadline = start + int(seconds * 1e9)
    try:
        if len(conns) == 1 and conns[0].blocking:
            conns[0].run_blocking(deadline)
        else:
            await asyncio.gather(*(c.start(deadline) for c in conns))
    finally:
        end = time.perf_counter_ns()
        client1 = own_cpu_seconds()
        server1 = cpu_seconds(server_pid)
        machine1 = machine_busy_seconds()
        gc.enable()
    failures = [c.failure for c in conns if c.failure]
    if failures:
        raise BenchError(f"{len(failures)} connection(s) failed: {failures[0]}")
    wall = (end - start) / 1e9
    server_cpu = (server1 - server0) / wall if server0 is not None and server1 is not None else None
    client_cpu = (client1 - client0) / wall
    other_cpu = None
    if machine0 is not None and machine1 is not None and server_cpu is not None:
        # Everything else the machine did meanwhile: other processes, the kernel, a hypervisor's steal.
        other_cpu = max(0.0, (machine1 - machine0) / wall - server_cpu - client_cpu)
    return Phase(
        samples=[s for c in conns for s in c.samples],
        start_ns=start,
        deadline_ns=deadline,
        end_ns=end,
        server_cpu=server_cpu,
        client_cpu=client_cpu,
        other_cpu=other_cpu,
    )


async def run_load(
    port: int,
    mode: Mode,
    names: Sequence[str],
    concurrency: int,
    warmup: float,
    duration: float,
    server_pid: int,
    io_timeout: float = 30.0,
    check: bool = True,
) -> LoadResult:
    """CONCURRENCY connections (each initialized or discovered) in a closed loop: WARMUP s untimed, then DURATION.

    CHECK: verify every answer (off only for floor_http.py's server that answers every get the same).

    A single connection runs on a blocking socket (no event loop between a reply and the next request:
    ~0.03-0.06 ms less per round trip here); several share one asyncio loop.
    """
    blocking = concurrency == 1
    conns = [LoadConn(i, port, mode, names, blocking, io_timeout) for i in range(concurrency)]
    try:
        for c in conns:  # one after the other: a burst of set-up requests is not what is measured
            await c.open()
        warm = await run_phase(conns, warmup, server_pid) if warmup > 0 else None
        timed = await run_phase(conns, duration, server_pid)
        for c in conns:
            await c.end_session()
    finally:
        for c in conns:
            c.close()

    errors = 0
    error_samples: list[str] = []
    for s in warm.samples if warm is not None and check else []:
        try:
            verify_sample(s, mode, names)
        except ValueError as exc:
            errors += 1
            if len(error_samples) < ERROR_SAMPLES:
                error_samples.append(f"warm-up id {s.req_id}: {exc}")
    latencies: list[int] = []
    in_window = 0
    for s in timed.samples:
        try:
            if check:
                verify_sample(s, mode, names)
        except ValueError as exc:
            errors += 1
            if len(error_samples) < ERROR_SAMPLES:
                error_samples.append(f"id {s.req_id}: {exc}")
            continue
        latencies.append(s.latency_ns)
        if s.end_ns <= timed.deadline_ns:
            in_window += 1
    if not latencies:
        raise BenchError(f"no successful responses ({errors} errors): {'; '.join(error_samples)}")
    latencies.sort()
    window = (timed.deadline_ns - timed.start_ns) / 1e9
    cpu_per_request = None
    if timed.server_cpu is not None:
        cpu_per_request = timed.server_cpu * (timed.end_ns - timed.start_ns) / 1e9 / len(timed.samples)
    return LoadResult(
        rps=in_window / window,
        p50=percentile(latencies, 50) / 1e9,
        p99=percentile(latencies, 99) / 1e9,
        ok=len(latencies),
        errors=errors,
        window=window,
        server_cpu=timed.server_cpu,
        client_cpu=timed.client_cpu,
        other_cpu=timed.other_cpu,
        cpu_per_request=cpu_per_request,
        error_samples=error_samples,
    )


# ------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Metric:
    key: str  # "<mode key>.c<N>.<rps|p50|p99>"
    mode: Mode
    concurrency: int
    kind: str  # one of KINDS
    target_ratio: float | None = None

    @property
    def label(self) -> str:
        return f"{self.mode.label}, c={self.concurrency}: {KINDS[self.kind]}"

    @property
    def target(self) -> str:
        if self.target_ratio is None:
            return ""
        return f">= {self.target_ratio:g}x req/s" if self.kind == "rps" else f"<= 1/{self.target_ratio:g} of SDK"


@dataclass
class Config:
    rounds: int
    duration: float
    warmup: float
    concurrency: tuple[int, ...]
    small: int
    timeout: float
    start_timeout: float
    only: str | None
    modes: tuple[Mode, ...]
    quick: bool
    #: the concurrency the req/s target applies to
    target_concurrency: int = 32

    def servers(self) -> tuple[str, ...]:
        return (self.only,) if self.only else SERVERS


#: What a table row can show, as a sample field name and its label.
KINDS = {
    "rps": "prompts/get req/s",
    "p50": "p50 latency",
    "p99": "p99 latency",
    "cpu_per_request": "server CPU per request",
}


def metrics_for(cfg: Config) -> list[Metric]:
    out: list[Metric] = []
    for mode in cfg.modes:
        for conc in cfg.concurrency:
            # The targets are for the load test (c=32). At c=1 both servers pay the same fixed floor per
            # round trip (loopback TCP, the HTTP server, the client), which caps the latency ratio: see the README.
            rps_target = 5.0 if conc == cfg.target_concurrency else None
            key = f"{mode.key}.c{conc}"
            out.append(Metric(f"{key}.rps", mode, conc, "rps", rps_target))
            out.append(Metric(f"{key}.p50", mode, conc, "p50"))
            out.append(Metric(f"{key}.p99", mode, conc, "p99", rps_target))
            if conc == cfg.target_concurrency:
                out.append(Metric(f"{key}.cpu_per_request", mode, conc, "cpu_per_request"))
    return out


@dataclass
class Results:
    samples: dict[str, dict[str, list[JsonObj]]] = field(default_factory=lambda: {s: {} for s in SERVERS})
    failures: list[JsonObj] = field(default_factory=list)
    failed: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SERVERS})
    start_seconds: dict[str, list[float]] = field(default_factory=lambda: {s: [] for s in SERVERS})
    notes: list[str] = field(default_factory=list)

    def add(self, server: str, key: str, round_no: int, res: LoadResult) -> None:
        self.samples[server].setdefault(key, []).append(
            {
                "round": round_no,
                "rps": res.rps,
                "p50": res.p50,
                "p99": res.p99,
                "ok": res.ok,
                "errors": res.errors,
                "window": res.window,
                "server_cpu": res.server_cpu,
                "client_cpu": res.client_cpu,
                "other_cpu": res.other_cpu,
                "cpu_per_request": res.cpu_per_request,
                "error_samples": res.error_samples,
            }
        )

    def median(self, server: str, key: str, field_name: str) -> float | None:
        if key in self.failed[server]:
            return None
        values = [s[field_name] for s in self.samples[server].get(key, []) if s[field_name] is not None]
        return statistics.median(values) if values else None

    def errors(self, server: str) -> int:
        return sum(s["errors"] for samples in self.samples[server].values() for s in samples)

    def requests(self, server: str) -> int:
        return sum(s["ok"] + s["errors"] for samples in self.samples[server].values() for s in samples)


class Bench:
    def __init__(self, cfg: Config, library: Path, log_dir: Path) -> None:
        self.cfg = cfg
        self.library = library
        self.log_dir = log_dir
        self.names = prompt_names(cfg.small)
        self.res = Results()

    async def session(self, server: str, mode: Mode, round_no: int) -> None:
        """Start SERVER in MODE, measure every concurrency on it, stop it."""
        cfg = self.cfg
        proc = ServerProc(server, mode, self.library, self.log_dir)
        keys = [f"{mode.key}.c{conc}" for conc in cfg.concurrency]
        phase = f"{mode.label} start"
        failing = keys  # what a failure now fails: everything until the server is up
        try:
            self.res.start_seconds[server].append(await proc.start(cfg.start_timeout))
            for conc, key in zip(cfg.concurrency, keys, strict=True):
                phase = f"{mode.label}, c={conc}"
                failing = [key]
                if f"{key}.rps" in self.res.failed[server]:
                    continue  # failed in an earlier round: do not spend the time again
                async with asyncio.timeout(cfg.timeout + cfg.warmup + cfg.duration):
                    res = await run_load(
                        proc.port, mode, self.names, conc, cfg.warmup, cfg.duration, proc.pid, cfg.timeout
                    )
                self.res.add(server, key, round_no, res)
                srv = "?"
                if res.server_cpu is not None and res.cpu_per_request is not None:
                    srv = f"{res.server_cpu:.0%} ({res.cpu_per_request * 1e6:,.0f} us/req)"
                other = f"{res.other_cpu:.0%}" if res.other_cpu is not None else "?"
                print(
                    f"  {LABELS[server]:>10} {phase:<29} {res.rps:8,.0f} req/s  p50 {res.p50 * 1e3:7.2f} ms  "
                    f"p99 {res.p99 * 1e3:7.2f} ms  errors {res.errors}  "
                    f"CPU server {srv} client {res.client_cpu:.0%} other {other}",
                    file=sys.stderr,
                )
                for text in res.error_samples:
                    print(f"    !! {text}", file=sys.stderr)
                if res.client_cpu > CLIENT_CPU_WARN:
                    note = (
                        f"{LABELS[server]} {phase}: the load client used {res.client_cpu:.0%} of a core; "
                        "it may be the bottleneck (the figure may be low)"
                    )
                    self.res.notes.append(note)
                    print(f"    !! {note}", file=sys.stderr)
        except (BenchError, TimeoutError, OSError) as exc:
            msg = "timed out" if isinstance(exc, TimeoutError) else f"{exc}"
            tail = proc.log_tail()
            self.res.failures.append(
                {"server": server, "phase": phase, "round": round_no, "error": msg, "log_tail": tail}
            )
            self.res.failed[server].update(f"{k}.{kind}" for k in failing for kind in KINDS)
            print(f"  !! {LABELS[server]} {phase} (round {round_no}) failed: {msg}", file=sys.stderr)
            if tail:
                print(
                    "     server log tail:\n" + "\n".join("       " + ln for ln in tail.splitlines()), file=sys.stderr
                )
        finally:
            proc.stop()

    async def run(self) -> Results:
        cfg = self.cfg
        # One untimed start of each server: bytecode caches, so round 1 does not pay for compilation.
        for server in cfg.servers():
            proc = ServerProc(server, cfg.modes[0], self.library, self.log_dir)
            try:
                await proc.start(cfg.start_timeout)
            except BenchError as exc:
                print(f"  !! {LABELS[server]} warm-up start failed: {exc}\n{proc.log_tail()}", file=sys.stderr)
            finally:
                proc.stop()
        for rnd in range(1, cfg.rounds + 1):
            order = cfg.servers() if rnd % 2 else tuple(reversed(cfg.servers()))
            print(f"round {rnd}/{cfg.rounds}: order {' -> '.join(LABELS[s] for s in order)}", file=sys.stderr)
            for mode in cfg.modes:
                for server in order:
                    await self.session(server, mode, rnd)
        return self.res


# ------------------------------------------------------------------------------------------- report


def fmt(kind: str, value: float | None) -> str:
    if value is None:
        return "-"
    if kind == "rps":
        return f"{value:,.0f} req/s"
    if kind == "cpu_per_request":
        return f"{value * 1e6:,.0f} us CPU"
    ms = value * 1000
    return f"{ms:.3f} ms" if ms < 10 else f"{ms:,.1f} ms"


def build_rows(res: Results, cfg: Config) -> list[JsonObj]:
    rows: list[JsonObj] = []
    for m in metrics_for(cfg):
        key = f"{m.mode.key}.c{m.concurrency}"
        values: dict[str, float | None] = {}
        cells: dict[str, str] = {}
        for server in SERVERS:
            if cfg.only not in (None, server):
                values[server], cells[server] = None, "skipped"
            elif f"{key}.{m.kind}" in res.failed[server]:
                values[server], cells[server] = None, "FAILED"
            else:
                values[server] = res.median(server, key, m.kind)
                cells[server] = fmt(m.kind, values[server])
        pd, sdk = values[PD], values[SDK]
        rat: float | None = None
        if pd and sdk:
            rat = pd / sdk if m.kind == "rps" else sdk / pd
        status = ""
        if m.target_ratio is not None and cfg.only is None:
            status = "?" if rat is None else ("PASS" if rat >= m.target_ratio else "MISS")
        rows.append(
            {
                "key": f"{key}.{m.kind}",
                "metric": m.label,
                "unit": "req/s" if m.kind == "rps" else "s",
                PD: pd,
                SDK: sdk,
                "ratio": rat,
                "target": m.target,
                "status": status,
                "cells": [cells[PD], cells[SDK]],
            }
        )
    # Errors: every response of every measurement (warm-up included) that was not a correct result.
    counts = {s: res.errors(s) for s in SERVERS}
    failed_any = {s: bool(res.failed[s]) for s in SERVERS}
    cells = {
        s: "skipped"
        if cfg.only not in (None, s)
        else f"{counts[s]:,} of {res.requests(s):,}" + (" +FAILED" * failed_any[s])
        for s in SERVERS
    }
    pd_ok = counts[PD] == 0 and not failed_any[PD]
    rows.append(
        {
            "key": "errors",
            "metric": "failed responses (all measurements)",
            "unit": "count",
            PD: counts[PD],
            SDK: counts[SDK],
            "ratio": None,
            "target": "none (promptdeck)",
            "status": "" if cfg.only == SDK else ("PASS" if pd_ok else "MISS"),
            "cells": [cells[PD], cells[SDK]],
        }
    )
    return rows


def print_table(header: Sequence[str], body: Sequence[Sequence[str]], right: set[int], out: Any = sys.stdout) -> None:
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).rjust(widths[i]) if i in right else str(c).ljust(widths[i]) for i, c in enumerate(cells)]
        return "| " + " | ".join(parts) + " |"

    print(line(header), file=out)
    print(
        "|" + "|".join(("-" * (w + 1) + ":") if i in right else "-" * (w + 2) for i, w in enumerate(widths)) + "|",
        file=out,
    )
    for row in body:
        print(line(row), file=out)


def print_results(rows: list[JsonObj]) -> None:
    body = [
        [r["metric"], *r["cells"], f"{r['ratio']:.1f}x" if r["ratio"] is not None else "-", r["target"], r["status"]]
        for r in rows
    ]
    print_table(["metric", "promptdeck", "SDK", "ratio", "target", ""], body, {1, 2, 3})


def cpu_rows(res: Results, cfg: Config) -> list[list[str]]:
    rows: list[list[str]] = []
    for mode in cfg.modes:
        for conc in cfg.concurrency:
            key = f"{mode.key}.c{conc}"
            row = [f"{mode.label}, c={conc}"]
            for server in SERVERS:
                for name in ("server_cpu", "client_cpu", "other_cpu"):
                    value = res.median(server, key, name)
                    row.append("-" if value is None else f"{value:.0%}")
            rows.append(row)
    return rows


def parse_args(argv: Sequence[str] | None) -> tuple[Config, argparse.Namespace]:
    p = argparse.ArgumentParser(
        description="Benchmark promptdeck against the official MCP Python SDK over Streamable HTTP.",
    )
    p.add_argument("--rounds", type=int, help="alternating rounds; medians are over rounds (default 3, quick 1)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, short measurements")
    p.add_argument("--only", choices=SERVERS, help="measure one server only")
    p.add_argument(
        "--era",
        choices=ERAS,
        help=f"legacy: initialize, then {PROTOCOL_VERSION}; modern: {MODERN_VERSION}, _meta and headers on every "
        "request (default both)",
    )
    p.add_argument("--mode", choices=list(MODES), help="measure one mode only (default all of the era)")
    p.add_argument("--json", type=Path, metavar="FILE", help="write samples, medians and ratios to FILE")
    p.add_argument("--duration", type=float, help="seconds per timed measurement (default 5, quick 2)")
    p.add_argument("--warmup", type=float, help="untimed seconds before each measurement (default 1, quick 0.5)")
    p.add_argument(
        "--concurrency",
        type=int,
        nargs="+",
        default=[1, 32],
        metavar="N",
        help="client connections, one request in flight each (default 1 32)",
    )
    p.add_argument("--small", type=int, default=10, help="prompts in the library (default 10)")
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds a measurement may overrun before it fails (default 60)"
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed, not only on errors")
    a = p.parse_args(argv)
    quick = bool(a.quick)
    cfg = Config(
        rounds=a.rounds if a.rounds is not None else (1 if quick else 3),
        duration=a.duration if a.duration is not None else (2.0 if quick else 5.0),
        warmup=a.warmup if a.warmup is not None else (0.5 if quick else 1.0),
        concurrency=tuple(a.concurrency),
        small=a.small,
        timeout=a.timeout,
        start_timeout=30.0,
        only=a.only,
        modes=tuple(m for m in MODES.values() if a.era in (None, m.era) and a.mode in (None, m.key)),
        quick=quick,
    )
    if cfg.rounds < 1 or cfg.small < 1 or min(cfg.concurrency) < 1:
        p.error("--rounds, --small and --concurrency must be at least 1")
    if cfg.duration <= 0 or cfg.warmup < 0:
        p.error("--duration must be positive and --warmup not negative")
    if not cfg.modes:
        p.error(f"--mode {a.mode} is not of the {a.era} era")
    if len(set(cfg.concurrency)) != len(cfg.concurrency):
        p.error("--concurrency values must differ")
    return cfg, a


def main(argv: Sequence[str] | None = None) -> int:
    cfg, args = parse_args(argv)
    library = ensure_library(cfg.small)
    warm_page_cache(library)
    print(f"library: {cfg.small} prompts in {library}", file=sys.stderr)
    log_dir = Path(tempfile.mkdtemp(prefix="promptdeck-bench-http-"))
    load_before = load_average()
    t_run = time.perf_counter()
    try:
        res = asyncio.run(Bench(cfg, library, log_dir).run())
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    wall = time.perf_counter() - t_run
    load_after = load_average()

    rows = build_rows(res, cfg)
    print()
    print(
        f"promptdeck vs official MCP SDK over Streamable HTTP -- medians of {cfg.rounds} alternating round(s)"
        f"{' (quick)' if cfg.quick else ''}; ratio > 1 means promptdeck is better"
    )
    print(
        f"prompts/get on {cfg.small} prompts, closed loop: {cfg.duration:g} s timed after {cfg.warmup:g} s warm-up "
        f"per measurement; c = client connections, one request in flight each"
    )
    eras = {m.era for m in cfg.modes}
    if LEGACY in eras:
        print(f"legacy modes: initialize on each connection, then {PROTOCOL_VERSION}")
    if MODERN in eras:
        print(
            f"{MODERN_VERSION} modes: no initialize, no session; server/discover on each connection, then every "
            "request with _meta and MCP-Protocol-Version, Mcp-Method, Mcp-Name; results must say resultType"
        )
    print()
    print_results(rows)
    print()
    print(
        f"CPU during the timed window (median; 100% = one core of {os.cpu_count()}): each server is one process; "
        "'other' is the rest of the machine (other processes, kernel, steal)"
    )
    print_table(
        ["measurement", "promptdeck", "client", "other", "SDK", "client", "other"],
        cpu_rows(res, cfg),
        {1, 2, 3, 4, 5, 6},
    )
    busy = [
        s["other_cpu"]
        for samples in (res.samples[srv] for srv in SERVERS)
        for runs in samples.values()
        for s in runs
        if s["other_cpu"] is not None and s["other_cpu"] > OTHER_CPU_WARN
    ]
    if busy:
        res.notes.append(
            f"the machine was busy during {len(busy)} measurement(s) (other processes used up to {max(busy):.0%} "
            "of a core): figures are noisy; compare ratios, or rerun on an idle machine"
        )
    for note in res.notes:
        print(f"note: {note}")
    if res.failures:
        print()
        print(f"{len(res.failures)} measurement(s) FAILED:")
        for f in res.failures:
            print(f"- {LABELS[f['server']]}, {f['phase']}, round {f['round']}: {f['error']}")
    errors = {s: res.errors(s) for s in SERVERS}
    for server in SERVERS:
        if errors[server]:
            examples = [e for samples in res.samples[server].values() for s in samples for e in s["error_samples"]]
            print(f"{LABELS[server]}: {errors[server]} failed response(s), e.g. {examples[:2]}")
    print(
        f"\n(benchmark wall time {wall:.0f} s; load average before {load_before}, after {load_after}; "
        f"{os.cpu_count()} CPUs)"
    )

    if args.json:
        payload = {
            "environment": environment() | {"loadavg_before": load_before, "loadavg_after": load_after},
            "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(cfg).items()}
            | {"modes": [m.key for m in cfg.modes]},
            "modes": {m.key: {"label": m.label, "protocolVersion": m.version} for m in cfg.modes},
            "servers": {s: {m.key: server_command(s, Path("DIR"), "PORT", m) for m in cfg.modes} for s in SERVERS},
            "units": "req/s; latencies in seconds; CPU as a fraction of one core; one sample per round",
            "cpus": os.cpu_count(),
            "samples": res.samples,
            "start_seconds": res.start_seconds,
            "rows": [{k: v for k, v in r.items() if k != "cells"} for r in rows],
            "failures": res.failures,
            "notes": res.notes,
            "wall_seconds": wall,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    if res.failures or any(errors.values()):
        return 1
    missed = [r for r in rows if r["status"] in ("MISS", "?")]
    if args.strict and missed and cfg.only is None:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
