"""Speaking MCP 2026-07-28 ("modern") to a real promptdeck: request builders, a stdio peer, HTTP helpers.

Every message a server sends for a modern request, and every subscription notification, goes
through ``check``: the official 2026-07-28 schema when it is present (strict: no field the revision
does not define) and the envelope every modern result carries (``resultType``, ``serverInfo``).
Messages of a legacy session go through ``check_legacy``, which refuses every modern-only field.
"""

from __future__ import annotations

import asyncio
import base64
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx

from promptdeck.protocol.revisions import META_VERSION as VERSION_KEY
from promptdeck.protocol.revisions import PREFIX

# The _meta keys (spelled out by the spec; the schema check holds the server to them).
from promptdeck.server.modern import META_CAPABILITIES as CAPABILITIES_KEY
from promptdeck.server.modern import META_SERVER_INFO as SERVER_INFO_KEY
from promptdeck.server.modern import META_SUBSCRIPTION as SUBSCRIPTION_KEY

from .schema import schema_available, validate_message

REVISION = "2026-07-28"
LEGACY_REVISION = "2025-11-25"
CLIENT_INFO_KEY = PREFIX + "clientInfo"
CLIENT_INFO = {"name": "modern-tests", "version": "1"}
#: The client capabilities of a client that can show forms.
ELICITS: dict[str, Any] = {"elicitation": {}}
#: Result fields that exist only in 2026-07-28; a legacy session must never see one.
MODERN_ONLY = frozenset({"resultType", "ttlMs", "cacheScope", "inputRequests", "requestState"})
#: Result fields of the legacy handshake; a modern result must never carry one.
LEGACY_ONLY = frozenset({"protocolVersion", "serverInfo"})
#: How long any wait may take before a test fails: generous, since CI machines are slow and shared.
DEADLINE = 20.0
BOTH = "application/json, text/event-stream"

Message = dict[str, Any]


# -- messages --------------------------------------------------------------------------------------


def request(request_id: int | str, method: str, params: Mapping[str, Any] | None = None, *,
            capabilities: Mapping[str, Any] | None = None, version: object = REVISION,
            omit: Collection[str] = (), meta: Mapping[str, Any] | None = None) -> Message:
    """A modern request: ``params._meta`` carries the version, the capabilities and the client's name.

    ``omit`` leaves out ``_meta`` keys (to test the server's checks); ``meta`` adds or replaces some.
    """
    fields: dict[str, Any] = {VERSION_KEY: version, CAPABILITIES_KEY: dict(capabilities or {}),
                              CLIENT_INFO_KEY: CLIENT_INFO, **(meta or {})}
    for key in omit:
        fields.pop(key, None)
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": fields}}


def legacy(request_id: int | str, method: str, params: Mapping[str, Any] | None = None) -> Message:
    """A request with exactly ``params`` (no ``_meta`` added): a legacy one, or a modern one spelled out by hand."""
    message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def initialize(request_id: int | str, revision: str = LEGACY_REVISION,
               capabilities: Mapping[str, Any] | None = None) -> Message:
    return legacy(request_id, "initialize", {"protocolVersion": revision, "capabilities": dict(capabilities or {}),
                                             "clientInfo": CLIENT_INFO})


def notification(method: str, params: Mapping[str, Any] | None = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def reply(question: Mapping[str, Any], **body: Any) -> Message:
    """The client's response to a request the server sent (``result=...`` or ``error=...``), under its id."""
    return {"jsonrpc": "2.0", "id": question["id"], **body}


def batch(method: str, count: int, params: Mapping[str, Any] | None = None) -> list[Message]:
    """A JSON-RPC batch of ``count`` legacy ``method`` requests, ids 0 to count - 1 in order."""
    return [legacy(n, method, params) for n in range(count)]


def stdio_line(message: object) -> bytes:
    """A message (or a batch, or any JSON value) framed as stdio carries it: its JSON and a newline."""
    return json.dumps(message).encode() + b"\n"


def get_prompt(request_id: int | str, name: str, arguments: Mapping[str, str] | None = None, *,
               capabilities: Mapping[str, Any] | None = None, **extra: Any) -> Message:
    params: dict[str, Any] = {"name": name, **extra}
    if arguments is not None:
        params["arguments"] = dict(arguments)
    return request(request_id, "prompts/get", params, capabilities=capabilities)


def listen(request_id: int | str, **wanted: bool) -> Message:
    return request(request_id, "subscriptions/listen", {"notifications": wanted})


def subscription_of(message: Mapping[str, Any]) -> object:
    """The subscription id a notification carries in ``params._meta`` (None when it carries none)."""
    meta = (message.get("params") or {}).get("_meta") or {}
    return meta.get(SUBSCRIPTION_KEY)


def answer_to(request_id: object) -> Callable[[Mapping[str, Any]], bool]:
    """Matches the response to request ``request_id`` (not a request of the server's that reuses the id)."""
    return lambda m: "method" not in m and m.get("id") == request_id


def on_subscription(subscription: object) -> Callable[[Mapping[str, Any]], bool]:
    return lambda m: subscription_of(m) == subscription


def is_list_changed(subscription: object) -> Callable[[Mapping[str, Any]], bool]:
    return lambda m: m.get("method") == "notifications/prompts/list_changed" and subscription_of(m) == subscription


def error_code(message: Mapping[str, Any]) -> int:
    assert "error" in message, f"expected an error, got {message}"
    code: int = message["error"]["code"]
    return code


# -- checks ----------------------------------------------------------------------------------------


def check(message: Mapping[str, Any], method: str | None = None) -> None:
    """A message the server sent in the modern era: valid 2026-07-28, with the modern result envelope."""
    if schema_available(REVISION):
        validate_message(REVISION, message, method)
    result = message.get("result")
    if isinstance(result, Mapping):
        assert result.get("resultType") in ("complete", "input_required"), message
        assert not LEGACY_ONLY & set(result), message
        assert set(result["_meta"][SERVER_INFO_KEY]) >= {"name", "version"}, message


def check_legacy(message: Mapping[str, Any], revision: str, method: str | None = None) -> None:
    """A message of a legacy session: valid in its revision, without a field only 2026-07-28 has."""
    if schema_available(revision):
        validate_message(revision, message, method)
    result = message.get("result")
    if isinstance(result, Mapping):
        assert not MODERN_ONLY & set(result), message
        assert SERVER_INFO_KEY not in (result.get("_meta") or {}), message
    assert subscription_of(message) is None, message


# -- stdio -----------------------------------------------------------------------------------------

#: ``promptdeck serve`` as this interpreter runs it: the command ``exchange`` runs unless told another.
SERVE = (sys.executable, "-m", "promptdeck", "serve")


def exchange(lines: Iterable[bytes], *arguments: str, command: Sequence[str] = SERVE,
             timeout: float = 120) -> tuple[list[Message], str, int]:
    """Run ``command ARGUMENTS`` with ``lines`` as its whole stdin, to its exit after the end of input;
    (every message it wrote to stdout, its stderr, its exit code). A script sent at once, every answer seen."""
    done = subprocess.run([*command, *arguments], input=b"".join(lines), capture_output=True, timeout=timeout)
    return [json.loads(text) for text in done.stdout.splitlines()], done.stderr.decode(), done.returncode


def by_id(messages: Iterable[Mapping[str, Any]]) -> dict[Any, Message]:
    """The responses (and requests) among ``messages``, by id: the notifications left out."""
    return {m["id"]: dict(m) for m in messages if "id" in m}


class StdioPeer:
    """``promptdeck serve FOLDER`` as a process, spoken to line by line; every answer is checked.

    Messages are read on a thread; ``take`` returns the first that matches and keeps the others
    for later calls, so a test can wait for one subscription's notification while others arrive.
    """

    http = False
    #: stdio has no status codes; HttpPeer's twin of this is the last answer's status
    status: int | None = None

    def __init__(self, folder: Path | None, *options: str) -> None:
        """``folder`` None: the options say what to serve (``--store URL``)."""
        self._stderr = tempfile.TemporaryFile()
        served = [] if folder is None else [str(folder)]
        self.proc = subprocess.Popen([sys.executable, "-m", "promptdeck", "serve", *served, *options],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._inbox: queue.Queue[Message | None] = queue.Queue()
        self.backlog: list[Message] = []
        self.ended = False
        #: request id -> (method, revision) for every request sent, to check its answer by
        self._sent: dict[object, tuple[str, str]] = {}
        #: the revision of the legacy session, once initialized
        self.legacy_revision: str | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def __enter__(self) -> StdioPeer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(DEADLINE)  # it stops at the end of stdout
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self._stderr.close()

    @property
    def stderr(self) -> str:
        """What the server logged so far."""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self._inbox.put(json.loads(line))
        self._inbox.put(None)

    def send(self, message: Mapping[str, Any]) -> None:
        if "id" in message and "method" in message:
            params = message.get("params") or {}
            modern = VERSION_KEY in (params.get("_meta") or {})
            if message["method"] == "initialize":
                self.legacy_revision = params["protocolVersion"]
            revision = REVISION if modern else self.legacy_revision or LEGACY_REVISION
            self._sent[message["id"]] = (message["method"], revision)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, message: Mapping[str, Any]) -> Message:
        """Send a request and wait for its answer."""
        self.send(message)
        return self.take(answer_to(message["id"]))

    def take(self, matches: Callable[[Message], bool], timeout: float = DEADLINE) -> Message:
        found = self.poll(matches, timeout)
        assert found is not None, f"nothing matching arrived within {timeout} s; unclaimed: {self.backlog}"
        return found

    def poll(self, matches: Callable[[Message], bool], timeout: float) -> Message | None:
        """The first message that matches, waiting up to ``timeout`` seconds; None if none came."""
        for index, message in enumerate(self.backlog):
            if matches(message):
                return self.backlog.pop(index)
        deadline = time.monotonic() + timeout
        while not self.ended:
            try:
                received = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if received is None:
                self.ended = True
                break
            self._check(received)
            if matches(received):
                return received
            self.backlog.append(received)
        return None

    def finish(self) -> tuple[list[Message], int]:
        """Close stdin; (every message not yet taken, the exit code) once the server has exited."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.poll(lambda _m: False, DEADLINE)  # reads everything up to the end of stdout
        assert self.ended, "the server did not close stdout after its stdin closed"
        rest, self.backlog = self.backlog, []
        return rest, self.proc.wait(DEADLINE)

    def _check(self, message: Message) -> None:
        if "method" in message:  # a notification or request: modern ones belong to a subscription (an ending one's
            # notifications/cancelled too), legacy ones to the session (a question it gave up on, cancelled)
            if subscription_of(message) is not None:
                check(message)
            else:
                check_legacy(message, self.legacy_revision or LEGACY_REVISION)
            return
        method, revision = self._sent.get(message.get("id"), (None, REVISION))
        if revision == REVISION:
            check(message, method)
        else:
            check_legacy(message, revision, method)


def keep_editing(folder: Path, arrived: Callable[[], bool], deadline: float = DEADLINE) -> int:
    """Add a prompt file to ``folder`` until ``arrived()`` says the change was noticed; returns the count.

    A watcher may not be watching yet when the first file is written, so another is added each time
    ``arrived`` (which should wait a little) says nothing came.
    """
    give_up = time.monotonic() + deadline
    added = 0
    while True:
        (folder / f"added-{added}.md").write_text(f"Added prompt number {added}.\n")
        added += 1
        if arrived():
            return added
        assert time.monotonic() < give_up, f"no list_changed after {added} new prompt files"


# -- HTTP ------------------------------------------------------------------------------------------


def wrap(value: str) -> str:
    """The ``=?base64?...?=`` form of a header value."""
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def headers_for(message: Mapping[str, Any], **override: str | None) -> dict[str, str]:
    """The headers a modern POST carries: they repeat the version, the method and (prompts/get) the name.

    ``override`` replaces one (``mcp_name="x"``) or, given None, leaves it out.
    """
    params = message.get("params") or {}
    headers: dict[str, str | None] = {"accept": BOTH, "content-type": "application/json",
                                      "mcp-protocol-version": (params.get("_meta") or {}).get(VERSION_KEY),
                                      "mcp-method": message["method"]}
    if message["method"] in ("prompts/get", "tools/call"):
        headers["mcp-name"] = params.get("name")
    elif message["method"] == "resources/read":
        headers["mcp-name"] = header_safe(params.get("uri"))
    headers.update({k.replace("_", "-"): v for k, v in override.items()})
    return {k: v for k, v in headers.items() if v is not None}


def header_safe(value: object) -> str | None:
    """``value`` as a header carries it: as it is when it is plain visible ASCII, else ``=?base64?…?=``."""
    if not isinstance(value, str):
        return None
    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?"):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def sse_messages(text: str) -> list[Message]:
    """The JSON-RPC messages in an SSE body (one ``data: `` line an event, as promptdeck writes them)."""
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line[6:].strip()]


def answers(response: httpx.Response) -> list[Message]:
    """The JSON-RPC messages of a POST answer, JSON or SSE."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return [response.json()]
    return sse_messages(response.text)


def post(client: httpx.Client, url: str, message: Mapping[str, Any], **override: str | None) -> tuple[int, Message]:
    """POST one modern request; (HTTP status, its checked answer). The answer never opens a session."""
    response = client.post(url, json=message, headers=headers_for(message, **override))
    assert "mcp-session-id" not in response.headers, response.headers
    *related, answer = answers(response)
    assert answer.get("id") == message["id"], answer
    for item in [*related, answer]:
        check(item, message["method"] if item is answer else None)
    return response.status_code, answer


class HttpPeer:
    """The HTTP twin of ``StdioPeer.call``: one POST a request, ``status`` the last answer's HTTP status."""

    http = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.client = httpx.Client(timeout=DEADLINE)
        self.status: int | None = None

    def call(self, message: Mapping[str, Any], **override: str | None) -> Message:
        self.status, answer = post(self.client, self.url, message, **override)
        return answer

    def close(self) -> None:
        self.client.close()


class Listener:
    """An open ``subscriptions/listen`` over HTTP: its SSE stream, read into a queue as it comes."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.messages: asyncio.Queue[Message | None] = asyncio.Queue()
        self.failure: AssertionError | None = None
        self.pump = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        try:
            async for line in self.response.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    message = json.loads(line[5:])
                    check(message, "subscriptions/listen" if "id" in message else None)
                    self.messages.put_nowait(message)
        except AssertionError as exc:
            self.failure = exc
        finally:
            self.messages.put_nowait(None)  # the stream ended

    async def next(self, timeout: float = DEADLINE) -> Message | None:
        """The next message on the stream; None once the stream has ended. Fails after ``timeout``."""
        try:
            message = await asyncio.wait_for(self.messages.get(), timeout)
        except TimeoutError:
            raise AssertionError(f"nothing on the listen stream within {timeout} s") from None
        if message is None:
            self.messages.put_nowait(None)  # stays ended for later calls
            if self.failure is not None:
                raise self.failure
        return message

    async def poll(self, timeout: float) -> Message | None:
        """The next message, or None when nothing came within ``timeout`` (or the stream ended)."""
        try:
            return await self.next(timeout)
        except AssertionError:
            if self.failure is not None:
                raise
            return None


@asynccontextmanager
async def http_listen(client: httpx.AsyncClient, url: str, request_id: int | str,
                      **wanted: bool) -> AsyncIterator[Listener]:
    """Open a subscription; leaving the block closes its stream (which ends it)."""
    message = listen(request_id, **wanted)
    async with client.stream("POST", url, json=message, headers=headers_for(message)) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"  # proxies must not hold events back
        listener = Listener(response)
        try:
            yield listener
        finally:
            listener.pump.cancel()
            try:
                await listener.pump
            except (asyncio.CancelledError, httpx.HTTPError):
                pass
