"""promptdeck's client against the official "everything" reference server (Node, from tests/peers):
stdio, Streamable HTTP and its 2024-11-05 SSE transport. It speaks revisions up to 2025-11-25, so
detection must land legacy, and its four prompts exercise arguments, completion with context, and
embedded text and blob resources."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import cast

import pytest

from promptdeck.client import Client, EmbeddedResource, Era, TextContent, connect
from promptdeck.client.http import HttpChannel, LegacySseChannel
from promptdeck.protocol.errors import ConnectionFailed, InternalError, InvalidParams
from tests.support.client_servers import DEADLINE, EVERYTHING, SERVERS, http_peer, node, refused, run
from tests.support.watching import started

pytestmark = pytest.mark.slow

LOOPBACK = SERVERS / "loopback.mjs"


def listeners(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* writes them) listening on ``port``."""
    found = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            pytest.skip("no /proc/net to check listening addresses")
        for row in table.read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


class Everything:
    """The reference server over HTTP: one process per transport, started on first use."""

    def __init__(self, stack: ExitStack, binary: str) -> None:
        self.stack, self.node = stack, binary
        self.urls: dict[str, str] = {}

    def url(self, transport: str) -> str:
        if transport not in self.urls:
            argv = [self.node, "--import", LOOPBACK.as_uri(), str(EVERYTHING), transport]
            path = "/sse" if transport == "sse" else "/mcp"
            url = self.stack.enter_context(http_peer(lambda port: argv, path=path,
                                                     env_for=lambda port: {"PORT": str(port)}))
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            # The loopback preload works: nothing listens beyond 127.0.0.1 (0100007F).
            assert listeners(port) == {"0100007F"}, listeners(port)
            self.urls[transport] = url
        return self.urls[transport]


@pytest.fixture(scope="module")
def everything() -> Iterator[Everything]:
    binary = node()
    with ExitStack() as stack:
        yield Everything(stack, binary)


@pytest.fixture(params=["stdio", "streamableHttp", "sse"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def target_of(transport: str, everything: Everything) -> str | list[str]:
    return [everything.node, str(EVERYTHING), "stdio"] if transport == "stdio" else everything.url(transport)


async def check_prompts(client: Client) -> None:
    prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
    assert list(prompts) == ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"]
    assert prompts["simple-prompt"].label == "Simple Prompt" and not prompts["simple-prompt"].arguments
    assert [(a.name, a.required) for a in prompts["args-prompt"].arguments] == [("city", True), ("state", False)]
    assert [(a.name, a.required) for a in prompts["completable-prompt"].arguments] == [("department", True),
                                                                                      ("name", True)]
    simple = await client.get_prompt("simple-prompt")
    assert simple.messages[0].content == TextContent(text="This is a simple prompt without arguments.")
    weather = await client.get_prompt("args-prompt", city="Paris", state="Texas")
    assert weather.messages[0].content == TextContent(text="What's weather in Paris, Texas?")
    alone = await client.get_prompt("args-prompt", city="Lyon")
    assert alone.messages[0].content == TextContent(text="What's weather in Lyon?")


async def check_completion(client: Client) -> None:
    assert (await client.complete("completable-prompt", "department", "")).values == ("Engineering", "Sales",
                                                                                      "Marketing", "Support")
    assert (await client.complete("completable-prompt", "department", "S")).values == ("Sales", "Support")
    # The second argument's values depend on the first, sent as context.
    sales = await client.complete("completable-prompt", "name", "", {"department": "Sales"})
    assert sales.values == ("David", "Eve", "Frank")
    assert (await client.complete("completable-prompt", "name", "E", {"department": "Sales"})).values == ("Eve",)
    assert (await client.complete("completable-prompt", "name", "")).values == ()
    team = await client.get_prompt("completable-prompt", department="Sales", name="Eve")
    assert team.messages[0].content == TextContent(text="Please promote Eve to the head of the Sales team.")


async def check_resources(client: Client) -> None:
    text = (await client.get_prompt("resource-prompt", resourceType="Text", resourceId="3")).messages
    assert isinstance(text[0].content, TextContent) and "Text resource with id: 3" in text[0].content.text
    embedded = text[1].content
    assert isinstance(embedded, EmbeddedResource)
    assert embedded.resource.uri == "demo://resource/dynamic/text/3"
    assert embedded.resource.text is not None and embedded.resource.text.startswith("Resource 3:")
    blob = (await client.get_prompt("resource-prompt", resourceType="Blob", resourceId="4")).messages[1].content
    assert isinstance(blob, EmbeddedResource) and blob.resource.uri == "demo://resource/dynamic/blob/4"
    assert blob.resource.text is None and blob.resource.blob is not None
    assert blob.resource.blob.decode().startswith("Resource 4:")  # decoded from base64 already


async def check_errors(client: Client) -> None:
    with pytest.raises(InvalidParams, match="Prompt no-such-prompt not found") as unknown:
        await client.get_prompt("no-such-prompt")
    assert unknown.value.code == -32602
    with pytest.raises(InvalidParams, match="city"):
        await client.get_prompt("args-prompt")
    # A prompt handler that throws is an internal error, with the handler's message.
    with pytest.raises(InternalError, match="Invalid resourceType: Video"):
        await client.get_prompt("resource-prompt", resourceType="Video", resourceId="1")


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_everything_in_every_transport(transport: str, era: str, everything: Everything) -> None:
    async def scenario() -> None:
        async with connect(target_of(transport, everything), era=cast(Era, era), timeout=DEADLINE) as client:
            assert client.era == "legacy" and client.protocol_version == "2025-11-25"
            assert client.server_info["name"] == "mcp-servers/everything"
            channel = client._channel
            if transport == "sse":
                assert isinstance(channel, LegacySseChannel)
            elif transport == "streamableHttp":
                assert isinstance(channel, HttpChannel) and channel.session_id is not None
            await check_prompts(client)
            await check_completion(client)
            await check_resources(client)
            await check_errors(client)

    run(scenario())


def test_everything_is_not_modern(everything: Everything) -> None:
    for target in ([everything.node, str(EVERYTHING), "stdio"], everything.url("streamableHttp")):
        run(refused(ConnectionFailed, "does not speak MCP 2026-07-28", target, era="modern"))


def test_watch_listens_to_the_everything_server(transport: str, everything: Everything) -> None:
    """It announces prompts.listChanged, so watch() starts (and lists) on each transport.

    The reference server has no tool or request that changes its prompt list, so no change can be
    awaited here; the change path itself is covered against promptdeck and the SDK's MCPServer."""

    async def scenario() -> None:
        async with connect(target_of(transport, everything), timeout=DEADLINE) as client:
            assert client.capabilities["prompts"]["listChanged"] is True
            [watcher] = await started(client)
            assert [prompt.name for prompt in client.prompts or ()][:1] == ["simple-prompt"]
            assert not watcher.task.done(), watcher.error
            # Requests still flow while the watch listens (the legacy GET stream is open beside them).
            assert (await client.get_prompt("simple-prompt")).messages
            await watcher.stop()
            assert watcher.changes == []

    run(scenario())
