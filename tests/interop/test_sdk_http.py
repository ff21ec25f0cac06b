"""The official MCP Python SDK's Streamable HTTP client drives ``promptdeck serve --http``, a real
uvicorn process, per revision and per server mode (SSE answers, JSON answers, stateless).

Every server message of every session is recorded and validated against the official JSON schema
of the negotiated revision, unknown fields included.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.support.flag import Flag, setter_for
from tests.support.http_server import http_server
from tests.support.interop_checks import check_argument_errors, check_completions, check_examples_render
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES, copy_examples
from tests.support.sdk_http import REVISIONS, connect_http
from tests.support.traffic import read_log

pytestmark = pytest.mark.slow

MODES = {
    "sse": (),
    "json": ("--json-response",),
    "stateless": ("--stateless",),
}


@pytest.fixture(scope="module", params=sorted(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def url(mode: str) -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch", *MODES[mode]) as endpoint:
        yield endpoint


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)



def test_initialize_negotiates_each_revision(mode: str, url: str, revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect_http(url, revision, log) as (session, result):
            assert result.protocol_version == revision
            # A stateless server has no stream to announce list changes on, so it does not offer them.
            assert result.capabilities.prompts is not None
            assert bool(result.capabilities.prompts.list_changed) is (mode != "stateless")
            assert result.capabilities.logging is not None
            assert result.capabilities.completions is not None
            await session.send_ping()
            with warnings.catch_warnings():
                # The SDK marks logging deprecated (it is, from 2026-07-28); these revisions have it.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                assert await session.set_logging_level("debug") is not None

    anyio.run(run)


def test_get_every_example_prompt(url: str, revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect_http(url, revision, log) as (session, _):
            listed = {p.name for p in (await session.list_prompts()).prompts}
            assert listed == set(EXAMPLE_ARGS)
            await check_examples_render(session.get_prompt)
            image = await session.get_prompt("describe-image", {})
            pictures = [m.content for m in image.messages if m.content.type == "image"]
            assert pictures and base64.b64decode(pictures[0].data).startswith(b"\x89PNG")
            audio = await session.get_prompt("standup.transcribe", {})
            assert any(m.content.type == "audio" for m in audio.messages)

    anyio.run(run)


def test_completion(url: str, revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect_http(url, revision, log) as (session, _):
            await check_completions(session.complete)

    anyio.run(run)


def test_error_codes(url: str, revision: str, log: Path) -> None:
    async def run() -> None:
        async with connect_http(url, revision, log) as (session, _):
            await check_argument_errors(session.get_prompt)
            with pytest.raises(MCPError) as err:
                await session.list_prompts(params=types.PaginatedRequestParams(cursor="not-a-cursor"))
            assert err.value.error.code == -32602
            with pytest.raises(MCPError) as err:
                await session.list_tools()
            assert err.value.error.code == -32601
            # The session kept working through all of that.
            assert (await session.get_prompt("code-review", {"code": "x"})).messages

    anyio.run(run)


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-03-26"])
def test_list_changed_after_file_edit(revision: str, log: Path, tmp_path: Path) -> None:
    library = copy_examples(tmp_path / "library")
    changed = Flag()
    on_message = setter_for(types.PromptListChangedNotification, changed)

    async def run(url: str) -> None:
        async with connect_http(url, revision, log, on_message) as (session, _):
            before = {p.name for p in (await session.list_prompts()).prompts}
            await anyio.sleep(0.5)  # let the GET stream open and the watcher settle before the edit
            (library / "fresh.md").write_text("---\ndescription: Added while serving\n---\nHello!\n")
            with anyio.fail_after(10):
                await changed.wait()
            assert {p.name for p in (await session.list_prompts()).prompts} == before | {"fresh"}
            assert (await session.get_prompt("fresh", {})).messages[0].content.text == "Hello!"
            changed.clear()
            (library / "fresh.md").unlink()
            with anyio.fail_after(10):
                await changed.wait()
            assert {p.name for p in (await session.list_prompts()).prompts} == before

    with http_server(str(library)) as url:
        anyio.run(run, url)
    _, received = read_log(log)
    assert sum(m.get("method") == "notifications/prompts/list_changed" for m in received) == 2


@pytest.mark.parametrize("revision", ["2025-11-25"])
def test_stateless_replicas_answer_each_others_clients(revision: str, log: Path) -> None:
    """Behind a load balancer, a client initialized on one replica is served by another."""

    async def run(first: str, second: str) -> None:
        async with connect_http(first, revision, log) as (session, result):
            assert result.protocol_version == revision
            assert (await session.get_prompt("summarize", {"text": "hi"})).messages
            # The next request of the same client lands on the other replica.
            async with httpx.AsyncClient() as raw:
                answer = await raw.post(second, json={"jsonrpc": "2.0", "id": 7, "method": "prompts/get",
                                                      "params": {"name": "summarize", "arguments": {"text": "hi"}}},
                                        headers={"accept": "application/json, text/event-stream",
                                                 "mcp-protocol-version": revision})
            assert answer.status_code == 200, answer.text
            assert "hi" in answer.text
            assert (await session.get_prompt("summarize", {"text": "again"})).messages

    with http_server(str(EXAMPLES), "--no-watch", "--stateless") as first, \
            http_server(str(EXAMPLES), "--no-watch", "--stateless") as second:
        anyio.run(run, first, second)

