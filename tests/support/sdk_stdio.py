"""Driving ``promptdeck serve`` with the official MCP Python SDK client over real stdio pipes."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import mcp.client.session as sdk_session
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

RECORDER = Path(__file__).resolve().parents[1] / "support" / "recorder.py"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

Handler = Callable[[Any], Awaitable[None]]


def recorded_serve(serve_args: list[str], log: Path) -> StdioServerParameters:
    """``promptdeck serve SERVE_ARGS`` behind the recorder, which appends every line both ways to ``log``.

    With this process's environment: the SDK's default keeps only a few variables, and without
    ``PYTHONPATH`` a checkout other than the one installed would serve the installed one's code."""
    return StdioServerParameters(
        command=sys.executable,
        args=[str(RECORDER), str(log), "--", sys.executable, "-m", "promptdeck", "serve", *serve_args],
        # The whole environment, not the SDK's few safe variables: PYTHONPATH says which promptdeck is tested.
        env=dict(os.environ),
    )


@asynccontextmanager
async def connect(serve_args: list[str], revision: str, log: Path, message_handler: Handler | None = None,
                  **options: Any) -> AsyncIterator[tuple[Any, Any]]:
    """An initialized SDK ``ClientSession`` on ``promptdeck serve SERVE_ARGS`` that offers ``revision``;
    ``options`` go to ``ClientSession`` (an ``elicitation_callback``)."""
    # The SDK always offers its newest handshake revision; pin the one under test.
    with mock.patch.object(sdk_session, "LATEST_HANDSHAKE_VERSION", revision):
        async with stdio_client(recorded_serve(serve_args, log)) as (read, write):
            async with ClientSession(read, write, message_handler=message_handler, **options) as session:
                result = await session.initialize()
                yield session, result
