"""promptdeck's client against servers built on the official MCP Python SDK (``servers/sdk_server.py``):
the low-level ``Server`` and ``MCPServer``, over stdio and Streamable HTTP in both eras, and the
2024-11-05 HTTP+SSE transport. Their known deviations (PEERS.md) are expected, not copied."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any, cast

import pytest

from promptdeck.client import (
    Client,
    EmbeddedResource,
    Era,
    ImageContent,
    TextContent,
    connect,
)
from promptdeck.client.http import HttpChannel, LegacySseChannel
from promptdeck.protocol.errors import ConnectionFailed, InternalError, InvalidParams, McpError
from tests.support.client_servers import DEADLINE, check_new_session, forget_session, http_peer, refused, run, script
from tests.support.watching import started, unwatchable

from .servers.sdk_server import IMAGE_B64, UNICODE

pytestmark = pytest.mark.slow

MODERN = "2026-07-28"
PROMPTS = {"lowlevel": ["greet", "picture", "document", UNICODE],
           "mcpserver": ["greet", "picture", "document", "ask-name", "grow"]}


class Peers:
    """SDK servers over HTTP, each started the first time a test asks for it and kept for the module."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.urls: dict[tuple[str, str], str] = {}

    def url(self, api: str, transport: str = "http") -> str:
        if (api, transport) not in self.urls:
            path = "/sse" if transport == "sse" else "/mcp"
            self.urls[api, transport] = self.stack.enter_context(
                http_peer(lambda port: script("sdk_server.py", api, transport, str(port)), path=path))
        return self.urls[api, transport]


@pytest.fixture(scope="module")
def peers() -> Iterator[Peers]:
    with ExitStack() as stack:
        yield Peers(stack)


@pytest.fixture(params=["lowlevel", "mcpserver"])
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, api: str, peers: Peers) -> str | list[str]:
    return script("sdk_server.py", api, "stdio") if request.param == "stdio" else peers.url(api)


@pytest.fixture(params=["auto", "legacy"])
def era(request: pytest.FixtureRequest) -> Era:
    return cast(Era, request.param)


async def name_zed(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    assert message == "Who should be greeted?" and schema["properties"]["name"]["type"] == "string"
    return {"name": "Zed"}


async def check_prompts(client: Client, api: str) -> None:
    """What both SDK servers serve alike."""
    assert [prompt.name for prompt in await client.list_prompts()] == PROMPTS[api]
    greet = (await client.list_prompts())[0]
    assert [(argument.name, argument.required) for argument in greet.arguments] == [("name", True),
                                                                                     ("greeting", False)]
    hello = await client.get_prompt("greet", name="Ann")
    assert [message.content for message in hello.messages] == [TextContent(text="Hello, Ann!")]
    hi = await client.get_prompt("greet", name="Ann", greeting="Hi")
    assert hi.messages[0].content == TextContent(text="Hi, Ann!")
    picture = (await client.get_prompt("picture")).messages
    assert picture[0].content == ImageContent(data=base64.b64decode(IMAGE_B64), mime_type="image/png")
    assert (picture[1].role, picture[1].content) == ("assistant", TextContent(text="A picture."))
    [note] = (await client.get_prompt("document", topic="x")).messages
    assert isinstance(note.content, EmbeddedResource)
    assert (note.content.resource.uri, note.content.resource.text) == ("note://x", "the note")
    assert (await client.complete("greet", "name", "Al")).values == ("Alice", "Albert")
    assert (await client.complete("greet", "name", "Z")).values == ()


async def check_errors(client: Client, api: str) -> None:
    if api == "lowlevel":  # a handler raising MCPError(-32602) is passed through as is
        with pytest.raises(InvalidParams, match="no prompt named nope"):
            await client.get_prompt("nope")
        with pytest.raises(InvalidParams, match="needs a name"):
            await client.get_prompt("greet")
    elif client.era == "legacy":  # MCPServer's deviation: code 0
        for name, said in (("nope", "Unknown prompt: nope"), ("greet", "Missing required arguments")):
            with pytest.raises(McpError, match=said) as raised:
                await client.get_prompt(name)
            assert type(raised.value) is McpError and raised.value.code == 0
    else:  # ... which at 2026-07-28 the SDK turns into a generic internal error
        for name in ("nope", "greet"):
            with pytest.raises(InternalError) as failed:
                await client.get_prompt(name)
            assert failed.value.code == -32603


def test_sdk_servers_in_both_eras(api: str, target: str | list[str], era: Era) -> None:
    async def scenario() -> None:
        async with connect(target, era=era, elicit=name_zed, timeout=DEADLINE) as client:
            # SDK 2.3 speaks 2026-07-28: detection lands modern, and a pinned legacy client gets 2025-11-25.
            assert client.era == ("modern" if era == "auto" else "legacy")
            assert client.protocol_version == (MODERN if era == "auto" else "2025-11-25")
            assert client.server_info["name"] == f"sdk-{api}"
            await check_prompts(client, api)
            await check_errors(client, api)
            if api == "lowlevel":
                # Over modern HTTP the name also travels in Mcp-Name, base64-wrapped; the SDK checks it.
                unicode = await client.get_prompt(UNICODE)
                assert unicode.messages[0].content == TextContent(text=f"Served {UNICODE}")
            else:
                # input_required at 2026-07-28, a server-initiated elicitation/create in a legacy session.
                asked = await client.get_prompt("ask-name")
                assert asked.messages[0].content == TextContent(text="Hello, Zed!")

    run(scenario())


def test_sdk_over_http_uses_the_eras_transport(api: str, peers: Peers) -> None:
    sdk_http = peers.url(api)

    async def scenario() -> None:
        async with connect(sdk_http) as modern, connect(sdk_http, era="legacy") as legacy:
            for client, session in ((modern, False), (legacy, True)):
                channel = client._channel
                assert isinstance(channel, HttpChannel) and (channel.session_id is not None) == session
                assert len(await client.list_prompts()) == len(PROMPTS[api])

    run(scenario())


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_sdk_sse_server_through_the_2024_fallback(era: Era, peers: Peers) -> None:
    sdk_sse = peers.url("mcpserver", "sse")

    async def scenario() -> None:
        async with connect(sdk_sse, era=era, elicit=name_zed, timeout=DEADLINE) as client:
            assert isinstance(client._channel, LegacySseChannel)
            assert client.era == "legacy" and client.protocol_version == "2025-11-25"
            await check_prompts(client, "mcpserver")
            await check_errors(client, "mcpserver")
            assert (await client.get_prompt("ask-name")).messages[0].content == TextContent(text="Hello, Zed!")

    run(scenario())


def test_sdk_sse_server_is_not_modern(peers: Peers) -> None:
    sdk_sse = peers.url("mcpserver", "sse")

    run(refused(ConnectionFailed, "2026-07-28", sdk_sse, era="modern"))


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_watch_sees_an_mcpserver_prompt_added_at_run_time(transport: str, peers: Peers) -> None:
    target = script("sdk_server.py", "mcpserver", "stdio") if transport == "stdio" else peers.url("mcpserver")

    async def scenario() -> None:
        async with connect(target, timeout=DEADLINE) as client:
            assert client.era == "modern" and client.capabilities["prompts"]["listChanged"] is True
            [watcher] = await started(client)
            before = {prompt.name for prompt in client.prompts or ()}
            grown = (await client.get_prompt("grow")).messages[0].content
            assert isinstance(grown, TextContent) and grown.text.startswith("added grown-")
            change = await watcher.next_change(0)
            assert change.added == (grown.text.removeprefix("added "),)
            assert {prompt.name for prompt in change.prompts} == before | set(change.added)
            await watcher.stop()

    run(scenario())


def test_an_mcpserver_legacy_session_cannot_be_watched(peers: Peers) -> None:
    """MCPServer advertises listChanged false to legacy sessions (PEERS.md): watch says so at once."""
    assert run(unwatchable(peers.url("mcpserver"), era="legacy")) == {"listChanged": False}



@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_redirected_url_is_followed(era: Era, peers: Peers) -> None:
    """The SDK's app answers ``/mcp/`` with a 307 to ``/mcp`` (as Starlette does), keeping method and body."""
    url = peers.url("lowlevel") + "/"

    async def scenario() -> None:
        async with connect(url, era=era, timeout=DEADLINE) as client:
            assert client.era == ("modern" if era == "auto" else "legacy")
            assert [prompt.name for prompt in await client.list_prompts()] == PROMPTS["lowlevel"]

    run(scenario())


def test_a_forgotten_sdk_session_is_started_anew(peers: Peers) -> None:
    async def scenario() -> None:
        async with connect(peers.url("lowlevel"), era="legacy", timeout=DEADLINE) as client:
            expired = await forget_session(client)
            await check_new_session(client, expired)

    run(scenario())
