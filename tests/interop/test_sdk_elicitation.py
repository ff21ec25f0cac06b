"""The official MCP Python SDK's ``ClientSession(elicitation_callback=...)`` against ``promptdeck serve``, a
real process, over stdio and over Streamable HTTP (``serve --http``): a 2025-06-18 or 2025-11-25 session whose
client can fill in forms is asked for a prompt's missing arguments with ``elicitation/create``, and the prompt
renders with what it answers; a declined or cancelled form, or a client that offers no callback, gets the
-32602 it always got. The same for the per-prompt tools of ``serve --tools``. Every server message, the
questions included, is validated against the official schema of the session's revision (the ``log`` fixture).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

from tests.support.http_server import http_server
from tests.support.interop_checks import prompt_text
from tests.support.libraries import BRIEF, BRIEF_ANSWER, BRIEF_RENDERED
from tests.support.schema import schema_available
from tests.support.sdk_http import connect_http
from tests.support.sdk_stdio import connect
from tests.support.traffic import read_log, validate_traffic

pytestmark = pytest.mark.slow

#: What the asked-for arguments look like in the form, for both revisions.
SCHEMA = {"type": "object", "required": ["topic", "pages", "audience", "urgent"], "properties": {
    "topic": {"type": "string", "title": "Topic", "description": "What the brief is about", "minLength": 3,
              "maxLength": 80},
    "pages": {"type": "integer", "description": "How many pages", "minimum": 1, "maximum": 5},
    "audience": {"type": "string", "enum": ["engineers", "managers"], "description": "Who reads it"},
    "urgent": {"type": "boolean", "description": "Whether it is urgent"}}}


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("elicit-library")
    (folder / "brief.md").write_text(BRIEF)
    (folder / "hello.md").write_text("Hello!\n")
    return folder


@pytest.fixture(scope="module", params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def target(transport: str, library: Path) -> Iterator[str | list[str]]:
    """``serve --tools`` (a tool per prompt): an HTTP URL, or stdio's ``serve`` arguments."""
    options = ["--no-watch", "--tools"]
    if transport == "stdio":
        yield [str(library), *options]
        return
    with http_server(str(library), *options) as url:
        yield url


@pytest.fixture(params=["2025-06-18", "2025-11-25"])
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Form:
    """An ``elicitation_callback``: answers each form with ``action`` (and ``content`` when accepting; a test
    changes them between requests), and keeps what it was asked."""

    def __init__(self, action: str = "accept",
                 content: dict[str, str | int | float | bool | list[str] | None] | None = None) -> None:
        self.action = action
        self.content = content
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: ClientRequestContext,
                       params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params)
        if self.action != "accept":
            return types.ElicitResult(action=self.action)
        return types.ElicitResult(action="accept", content=self.content)


@asynccontextmanager
async def session_on(target: str | list[str], revision: str, log: Path, **options: Any) -> AsyncIterator[Any]:
    if isinstance(target, str):
        async with connect_http(target, revision, log, **options) as (session, result):
            assert result.protocol_version == revision
            yield session
    else:
        async with connect(target, revision, log, **options) as (session, result):
            assert result.protocol_version == revision
            yield session


def questions(log: Path) -> list[dict[str, Any]]:
    _, received = read_log(log)
    return [m for m in received if m.get("method") == "elicitation/create"]


def test_a_missing_argument_is_asked_for_and_the_answer_renders(target: str | list[str], revision: str,
                                                                 log: Path) -> None:
    form = Form(content=BRIEF_ANSWER)

    async def run() -> None:
        async with session_on(target, revision, log, elicitation_callback=form) as session:
            assert prompt_text(await session.get_prompt("brief")) == BRIEF_RENDERED
            # Only what is missing is asked for; what was given stays.
            form.content = {"pages": 2, "audience": "managers", "urgent": True}
            given = await session.get_prompt("brief", {"topic": "queues", "tone": "formal"})
            assert prompt_text(given) == "A formal brief of 2 pages on queues for managers, urgent."
            # Nothing missing: nothing asked.
            assert prompt_text(await session.get_prompt("hello")) == "Hello!"

    anyio.run(run)
    asked, partly = form.asked
    assert isinstance(asked, types.ElicitRequestFormParams)
    assert asked.requested_schema == SCHEMA and "'brief'" in asked.message
    assert list(partly.requested_schema["properties"]) == ["pages", "audience", "urgent"]
    sent = questions(log)
    assert len(sent) == 2
    # 2025-06-18 has form mode alone, and no field that says so.
    assert all(("mode" in q["params"]) is (revision == "2025-11-25") for q in sent)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_form_is_the_error_a_client_that_was_not_asked_gets(
        target: str | list[str], revision: str, log: Path, action: str) -> None:
    form = Form(action)

    async def run() -> None:
        async with session_on(target, revision, log, elicitation_callback=form) as session:
            with pytest.raises(MCPError) as err:
                await session.get_prompt("brief", {"topic": "queues"})
            assert err.value.error.code == -32602
            assert err.value.error.message.startswith("prompt 'brief' is missing required argument 'pages'")
            assert f"the user chose {action!r}" in err.value.error.message
            assert err.value.error.data == {"prompt": "brief", "missing": ["pages", "audience", "urgent"]}

    anyio.run(run)
    assert len(form.asked) == 1


def test_a_client_without_a_callback_is_not_asked(target: str | list[str], revision: str, log: Path) -> None:
    async def run() -> None:
        async with session_on(target, revision, log) as session:
            with pytest.raises(MCPError) as err:
                await session.get_prompt("brief")
            assert err.value.error.code == -32602
            assert err.value.error.message == "prompt 'brief' is missing required argument 'topic', 'pages', " \
                                              "'audience', 'urgent'"

    anyio.run(run)
    sent, _ = read_log(log)
    assert "elicitation" not in sent[0]["params"]["capabilities"]
    assert questions(log) == []


def test_a_prompts_tool_asks_as_prompts_get_does(target: str | list[str], revision: str, log: Path) -> None:
    """A form declined is a -32602 error, as in the 2026-07-28 era; without a callback the model gets the
    isError result it always got."""
    form = Form(content=BRIEF_ANSWER)

    async def run() -> None:
        async with session_on(target, revision, log, elicitation_callback=form) as session:
            called = await session.call_tool("brief", {})
            assert not called.is_error and called.content[0].text == BRIEF_RENDERED
            form.action = "decline"
            with pytest.raises(MCPError) as err:
                await session.call_tool("brief", {"topic": "queues"})
            assert err.value.error.code == -32602 and err.value.error.data["missing"] == ["pages", "audience",
                                                                                           "urgent"]
        async with session_on(target, revision, log) as plain:
            unasked = await plain.call_tool("brief", {})
            assert unasked.is_error and "missing required argument" in unasked.content[0].text

    anyio.run(run)
    assert len(form.asked) == 2 and form.asked[0].requested_schema == SCHEMA


def test_a_2025_03_26_session_is_never_asked(target: str | list[str], tmp_path: Path) -> None:
    """Elicitation came with 2025-06-18: an older session is answered as before, whatever its client offers.
    (Over stdio 2024-11-05 too; its HTTP transport is another one.)"""
    form = Form(content=BRIEF_ANSWER)
    older = ["2025-03-26"] + (["2024-11-05"] if isinstance(target, list) else [])

    async def run(revision: str, log: Path) -> None:
        async with session_on(target, revision, log, elicitation_callback=form) as session:
            with pytest.raises(MCPError) as err:
                await session.get_prompt("brief")
            assert err.value.error.code == -32602

    for revision in older:
        log = tmp_path / f"{revision}.log"
        anyio.run(run, revision, log)
        assert questions(log) == []
        if schema_available(revision):
            assert validate_traffic(log, revision) > 0
    assert form.asked == []
