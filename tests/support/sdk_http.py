"""Driving ``promptdeck serve --http`` with the official MCP Python SDK's Streamable HTTP client.

Every request body the SDK POSTs and every JSON-RPC message the server sends back (JSON bodies,
and each SSE event, GET stream included) is written to a log in the stdio recorder's format
(``> `` client, ``< `` server), so ``tests.support.traffic.validate_traffic`` can check the
server's side against the official schema of the negotiated revision.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any
from unittest import mock

import httpx2
import mcp.client.session as sdk_session
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

REVISIONS = ("2025-03-26", "2025-06-18", "2025-11-25")

Handler = Callable[[Any], Awaitable[None]]


class _RecordingStream(httpx2.AsyncByteStream):
    """Passes a response body through, logging each complete JSON-RPC message as it goes by."""

    def __init__(self, inner: httpx2.AsyncByteStream, log: IO[bytes], sse: bool) -> None:
        self.inner = inner
        self.log = log
        self.sse = sse
        self.buffer = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.buffer += chunk
            if self.sse:
                self._events()
            yield chunk
        if not self.sse and self.buffer.strip():
            self._write(self.buffer)
            self.buffer = b""

    def _events(self) -> None:
        text = self.buffer.replace(b"\r\n", b"\n")
        *complete, self.buffer = text.split(b"\n\n")
        for block in complete:
            data = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
            payload = b"\n".join(data)
            if payload.strip():  # a priming event carries an id and empty data
                self._write(payload)

    def _write(self, payload: bytes) -> None:
        decoded = json.loads(payload)
        for message in decoded if isinstance(decoded, list) else [decoded]:
            self.log.write(b"< " + json.dumps(message).encode() + b"\n")
        self.log.flush()

    async def aclose(self) -> None:
        await self.inner.aclose()


class RecordingTransport(httpx2.AsyncBaseTransport):
    def __init__(self, log: IO[bytes]) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.log = log
        #: Each POST's decoded body with the headers it went out with.
        self.posts: list[tuple[Any, httpx2.Headers]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            body = json.loads(request.content)
            self.posts.append((body, request.headers))
            for message in body if isinstance(body, list) else [body]:
                self.log.write(b"> " + json.dumps(message).encode() + b"\n")
            self.log.flush()
        response = await self.inner.handle_async_request(request)
        if 200 <= response.status_code < 300:
            # Error statuses carry id-less JSON-RPC errors, which only the 2026 schema allows.
            sse = response.headers.get("content-type", "").startswith("text/event-stream")
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            response.stream = _RecordingStream(response.stream, self.log, sse)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def recording_client(transport: RecordingTransport) -> httpx2.AsyncClient:
    """An HTTP client for the SDK's Streamable HTTP transport that goes through ``transport``."""
    return httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(30, read=60))


@asynccontextmanager
async def connect_http(url: str, revision: str, log: Path, message_handler: Handler | None = None,
                       **options: Any) -> AsyncIterator[tuple[Any, Any]]:
    """An initialized SDK ``ClientSession`` on the Streamable HTTP endpoint ``url`` offering ``revision``;
    ``options`` go to ``ClientSession`` (an ``elicitation_callback``)."""
    with open(log, "ab") as sink:
        client = recording_client(RecordingTransport(sink))
        # The SDK always offers its newest handshake revision; pin the one under test.
        with mock.patch.object(sdk_session, "LATEST_HANDSHAKE_VERSION", revision):
            async with client, streamable_http_client(url, http_client=client) as (read, write):
                async with ClientSession(read, write, message_handler=message_handler, **options) as session:
                    result = await session.initialize()
                    yield session, result
