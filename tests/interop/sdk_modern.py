"""Driving promptdeck with the official MCP Python SDK's high-level ``mcp.Client``, era by era.

How SDK 2.3 is made to speak 2026-07-28: ``Client(server, mode=...)`` where ``mode`` is

* ``"auto"`` (its default): a ``server/discover`` probe at the newest modern revision, whose
  ``DiscoverResult`` is adopted; anything else falls back to ``initialize`` (``mcp.client._probe``);
* a modern revision (``"2026-07-28"``): adopted at once, without a probe;
* ``"legacy"``: the ``initialize`` handshake, offering ``mcp.client.session.LATEST_HANDSHAKE_VERSION``,
  which ``sdk_client`` patches to pin one legacy revision.

A modern client stamps ``_meta`` (version, clientInfo, clientCapabilities) and, over HTTP, the
``MCP-Protocol-Version``/``Mcp-Method``/``Mcp-Name`` headers on every request. Everything else the
suite needs is in the SDK's client too: ``Client.listen`` opens ``subscriptions/listen``, and
``Client.get_prompt`` resolves ``input_required`` by handing each ``elicitation/create`` to the
``elicitation_callback`` and retrying with ``inputResponses`` and the echoed ``requestState``.
So no piece is driven with raw JSON-RPC.

The transports record like the legacy suites: stdio through ``tests/support/recorder.py``, HTTP
through ``sdk_http.RecordingTransport`` (which also keeps each POST's headers).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import httpx2
import mcp.client.session as sdk_session
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.http_server import http_server
from tests.support.schema import schema_available, schema_missing_reason
from tests.support.sdk_http import RecordingTransport, recording_client
from tests.support.sdk_stdio import recorded_serve
from tests.support.traffic import read_log, validate_traffic

MODERN = "2026-07-28"
PREFIX = "io.modelcontextprotocol/"
#: How the suites run promptdeck: over stdio, or over HTTP with sessions or without.
TRANSPORTS: dict[str, tuple[str, ...]] = {"stdio": (), "http": (), "http-stateless": ("--stateless",)}
#: Results of the legacy era must not carry these; a modern result always has the first.
MODERN_ONLY = frozenset({"resultType", "ttlMs", "cacheScope", "inputRequests", "requestState"})


@contextmanager
def serving(transport: str, folder: str, *options: str) -> Iterator[str | list[str]]:
    """What ``sdk_client`` connects to: a URL of a running HTTP server, or the arguments of ``serve`` (stdio)."""
    if transport == "stdio":
        yield [folder, *options]
        return
    with http_server(folder, *options, *TRANSPORTS[transport]) as url:
        yield url


class Recorded:
    """One SDK client's view of its traffic: the log file, and (HTTP) every POST's headers."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.http: RecordingTransport | None = None

    @property
    def posts(self) -> list[tuple[Any, httpx2.Headers]]:
        return [] if self.http is None else self.http.posts


@asynccontextmanager
async def sdk_client(target: str | list[str], recorded: Recorded, *, mode: str = "auto",
                     legacy_revision: str | None = None, **options: Any) -> AsyncIterator[Client]:
    """An entered ``mcp.Client`` on ``target`` (see ``serving``); ``options`` go to ``Client``."""
    async with AsyncExitStack() as stack:
        if legacy_revision is not None:
            stack.enter_context(mock.patch.object(sdk_session, "LATEST_HANDSHAKE_VERSION", legacy_revision))
        server: Any
        if isinstance(target, str):
            sink = stack.enter_context(open(recorded.log, "ab"))
            recorded.http = RecordingTransport(sink)
            http = await stack.enter_async_context(recording_client(recorded.http))
            server = streamable_http_client(target, http_client=http)
        else:
            server = recorded_serve(target, recorded.log)
        options.setdefault("read_timeout_seconds", 60)
        yield await stack.enter_async_context(Client(server, mode=mode, **options))


def check_modern(recorded: Recorded) -> tuple[list[dict[str, Any]], list[Any]]:
    """Validate a modern client's traffic; returns (sent, received)."""
    if not schema_available(MODERN):
        pytest.skip(schema_missing_reason(MODERN))
    assert validate_traffic(recorded.log, MODERN) > 0
    sent, received = read_log(recorded.log)
    assert "initialize" not in {m.get("method") for m in sent}
    for message in sent:
        if "id" in message:  # every request states its era and capabilities itself
            meta = message["params"]["_meta"]
            assert meta[PREFIX + "protocolVersion"] == MODERN and PREFIX + "clientCapabilities" in meta, message
    for message in received:
        if "result" in message:
            assert message["result"]["resultType"] in ("complete", "input_required"), message
            assert message["result"]["_meta"][PREFIX + "serverInfo"]["name"] == "promptdeck", message
    for body, headers in recorded.posts:
        assert headers["mcp-protocol-version"] == MODERN and headers["mcp-method"] == body["method"], body
        if body["method"] == "prompts/get":
            assert headers["mcp-name"] == body["params"]["name"], body
    return sent, received
