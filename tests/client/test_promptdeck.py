"""promptdeck's client against promptdeck's server, a real process: stdio, Streamable HTTP with sessions
and stateless, and the 2024-11-05 ``/sse`` endpoint, in each era the transport allows."""

from __future__ import annotations

import asyncio
import secrets
import shlex
from pathlib import Path
from typing import Any, cast

import pytest

from promptdeck.client import (
    AudioContent,
    Completion,
    EmbeddedResource,
    Era,
    ImageContent,
    RenderedPrompt,
    ResourceLinkContent,
    TextContent,
    connect,
)
from promptdeck.client.http import HttpChannel, LegacySseChannel
from promptdeck.protocol.errors import ConnectionFailed, InvalidParams
from promptdeck.protocol.revisions import LATEST
from tests.support.client_servers import PYTHON, check_new_session, forget_session, recorded, refused, run, serve
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES
from tests.support.schema import schema_available, schema_missing_reason, validate_message
from tests.support.traffic import read_log

MODERN = "2026-07-28"
TRANSPORTS = ("stdio", "http", "stateless", "sse")


def target_of(transport: str, request: pytest.FixtureRequest) -> str | list[str]:
    if transport == "stdio":
        return serve(EXAMPLES, "--no-watch")
    if transport == "stateless":
        return str(request.getfixturevalue("examples_stateless"))
    url = str(request.getfixturevalue("examples_http"))
    return url.removesuffix("/mcp") + "/sse" if transport == "sse" else url


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["auto", "legacy"])
def era(request: pytest.FixtureRequest) -> Era:
    return cast(Era, request.param)


def expected_era(transport: str, era: str) -> str:
    # 2024-11-05 HTTP+SSE has no modern era; everything else lands modern when asked to detect.
    return "modern" if era == "auto" and transport != "sse" else "legacy"


def test_connects_in_the_era_the_transport_allows(transport: str, era: Era, request: pytest.FixtureRequest) -> None:
    async def scenario() -> None:
        async with connect(target_of(transport, request), era=era) as client:
            wanted = expected_era(transport, era)
            assert client.era == wanted
            assert client.protocol_version == (MODERN if wanted == "modern" else LATEST.version)
            assert client.server_info["name"] == "promptdeck"
            assert "prompts" in client.capabilities and "completions" in client.capabilities
            channel = client._channel
            if transport == "sse":
                assert isinstance(channel, LegacySseChannel)
            elif transport != "stdio":
                assert isinstance(channel, HttpChannel) and channel.modern == (wanted == "modern")
                # A stateful legacy session has an id; stateless servers and the modern era have none.
                assert (channel.session_id is not None) == (transport == "http" and wanted == "legacy")

    run(scenario())


def test_a_modern_only_connection_to_the_sse_endpoint_fails(request: pytest.FixtureRequest) -> None:
    run(refused(ConnectionFailed, "2026-07-28", target_of("sse", request), era="modern"))


def test_lists_renders_and_completes_every_example(transport: str, era: Era, request: pytest.FixtureRequest) -> None:
    async def scenario() -> None:
        async with connect(target_of(transport, request), era=era) as client:
            prompts = await client.list_prompts()
            assert [prompt.name for prompt in prompts] == sorted(EXAMPLE_ARGS)
            assert client.prompts == prompts
            review = next(prompt for prompt in prompts if prompt.name == "code-review")
            assert review.label == review.title == "Code review"
            assert {argument.name: argument.required for argument in review.arguments}["code"] is True
            for name, arguments in EXAMPLE_ARGS.items():
                rendered = await client.get_prompt(name, **arguments)
                assert rendered.messages, name
                # 2026-07-28 results say who answered; a legacy result has no _meta.
                served_by = (rendered.meta or {}).get("io.modelcontextprotocol/serverInfo", {}).get("name")
                assert served_by == ("promptdeck" if client.era == "modern" else None), rendered.meta
            completion = await client.complete("code-review", "language", "py")
            assert "python" in completion.values and not completion.has_more

    run(scenario())


def test_content_types_arrive_typed(transport: str, request: pytest.FixtureRequest) -> None:
    async def scenario() -> None:
        async with connect(target_of(transport, request)) as client:
            image = (await client.get_prompt("describe-image")).messages[0].content
            assert isinstance(image, ImageContent) and image.mime_type == "image/png"
            assert image.data == (EXAMPLES / "_material" / "diagram.png").read_bytes()
            audio = (await client.get_prompt("standup.transcribe")).messages[0].content
            assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
            assert audio.data == (EXAMPLES / "_material" / "standup.wav").read_bytes()
            tests = (await client.get_prompt("write-tests", **EXAMPLE_ARGS["write-tests"])).messages
            embedded = tests[0].content
            assert isinstance(embedded, EmbeddedResource)
            assert embedded.resource.uri == "promptdeck:///_material/service.py"
            assert embedded.resource.text == (EXAMPLES / "_material" / "service.py").read_text()
            assert isinstance(tests[-1].content, TextContent)
            commit = (await client.get_prompt("git.commit", **EXAMPLE_ARGS["git.commit"])).messages
            link = commit[-1].content
            assert isinstance(link, ResourceLinkContent) and link.uri and link.name
            debug = (await client.get_prompt("debug.workflow", **EXAMPLE_ARGS["debug.workflow"])).messages
            assert [message.role for message in debug][:2] == ["user", "assistant"]

    run(scenario())


def test_server_errors_come_back_as_their_class(transport: str, era: Era, request: pytest.FixtureRequest) -> None:
    async def scenario() -> None:
        async with connect(target_of(transport, request), era=era) as client:
            with pytest.raises(InvalidParams, match="no-such-prompt") as unknown:
                await client.get_prompt("no-such-prompt")
            assert unknown.value.code == -32602
            with pytest.raises(InvalidParams) as missing:
                await client.get_prompt("code-review")
            assert missing.value.code == -32602 and missing.value.data["missing"] == ["code"]
            with pytest.raises(InvalidParams, match="purpose"):
                await client.get_prompt("describe-image", purpose="sing")
            # The connection is still good after errors.
            assert len(await client.list_prompts()) == len(EXAMPLE_ARGS)

    run(scenario())


def test_arguments_must_be_strings() -> None:
    async def scenario() -> None:
        async with connect(serve(EXAMPLES, "--no-watch")) as client:
            with pytest.raises(TypeError, match="'code' of prompt 'code-review' must be a string, not int"):
                await client.get_prompt("code-review", code=3)  # type: ignore[arg-type]

    run(scenario())


def test_a_command_line_string_is_split_like_a_shell_would() -> None:
    async def scenario() -> None:
        line = shlex.join(serve(EXAMPLES, "--no-watch", "--name", "two words"))
        async with connect(line) as client:
            assert client.server_info["name"] == "two words"

    run(scenario())


def test_request_sends_any_method_with_the_eras_envelope(transport: str, request: pytest.FixtureRequest) -> None:
    async def scenario() -> None:
        async with connect(target_of(transport, request)) as client:
            page = await client.request("prompts/list")
            assert [prompt["name"] for prompt in page["prompts"]] == sorted(EXAMPLE_ARGS)
            if client.era == "modern":
                assert page["resultType"] == "complete" and page["ttlMs"] >= 0
            else:
                assert "resultType" not in page and "ttlMs" not in page
            got = await client.request("prompts/get", {"name": "summarize", "arguments": {"text": "hi"}},
                                       name="summarize")
            assert got["messages"][0]["content"]["text"].endswith("hi")

    run(scenario())


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_what_the_client_sends_fits_the_schema(era: Era, tmp_path: Path) -> None:
    """Every message the client writes is valid in the revision it speaks (recorded on the pipe)."""
    log = tmp_path / "traffic.log"

    async def scenario() -> str:
        async with connect(recorded(log, serve(EXAMPLES, "--no-watch")), era=era) as client:
            await client.list_prompts()
            await client.get_prompt("summarize", text="schema")
            await client.complete("code-review", "language", "p", context={"code": "x"})
            with pytest.raises(InvalidParams):
                await client.get_prompt("nope")
            return client.protocol_version

    revision = run(scenario())
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))
    sent, _ = read_log(log)
    methods = [message.get("method") for message in sent]
    assert {"prompts/list", "prompts/get", "completion/complete"} <= set(methods)
    assert ("initialize" in methods) == (era == "legacy")
    for message in sent:
        if message.get("method") == "server/discover" and era == "legacy":
            raise AssertionError("a legacy-pinned client must not probe")
        validate_message(revision, message)
        if revision == MODERN and "id" in message:
            meta = message["params"]["_meta"]
            assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
            assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "promptdeck"
    completes = [message for message in sent if message.get("method") == "completion/complete"]
    assert completes[0]["params"]["context"] == {"arguments": {"code": "x"}}


def test_many_requests_at_once_are_matched_to_their_answers(transport: str, request: pytest.FixtureRequest) -> None:
    texts = [f"text number {index}" for index in range(80)]

    async def scenario() -> None:
        async with connect(target_of(transport, request)) as client:
            got = await asyncio.gather(*(client.get_prompt("summarize", text=text) for text in texts),
                                       client.list_prompts(), client.complete("code-review", "language", "ru"))
            rendered, listing, completion = got[:-2], got[-2], got[-1]
            for text, prompt in zip(texts, rendered, strict=True):
                content = cast(RenderedPrompt, prompt).messages[0].content
                assert isinstance(content, TextContent) and content.text.endswith(f"\n\n{text}")
            assert len(cast(tuple[Any, ...], listing)) == len(EXAMPLE_ARGS)
            assert "rust" in cast(Completion, completion).values

    run(scenario())


# -- input_required (2026-07-28) ------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http", "stateless"])  # not sse: 2024-11-05 has no modern era
def test_input_required_is_answered_through_elicit(transport: str, request: pytest.FixtureRequest) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        asked.append((message, schema))
        return {"code": "def tricky(): return 42"}

    async def scenario() -> None:
        async with connect(target_of(transport, request), elicit=elicit) as client:
            assert client.era == "modern"
            rendered = await client.get_prompt("code-review")
            assert any(isinstance(m.content, EmbeddedResource) and m.content.resource.text == "def tricky(): return 42"
                       for m in rendered.messages)

    run(scenario())
    [(message, schema)] = asked
    assert "code-review" in message
    assert schema["type"] == "object" and schema["required"] == ["code"] and "code" in schema["properties"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_legacy_session_is_asked_through_elicit_too(transport: str, request: pytest.FixtureRequest) -> None:
    """promptdeck's client and server in the legacy era: the server's elicitation/create reaches ``elicit``."""
    asked: list[tuple[str, dict[str, Any]]] = []

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        asked.append((message, schema))
        return {"code": "def tricky(): return 42"} if len(asked) == 1 else None

    async def scenario() -> None:
        async with connect(target_of(transport, request), era="legacy", elicit=elicit) as client:
            assert client.era == "legacy"
            rendered = await client.get_prompt("code-review")
            assert any(isinstance(m.content, EmbeddedResource) and m.content.resource.text == "def tricky(): return 42"
                       for m in rendered.messages)
            with pytest.raises(InvalidParams) as raised:  # declined the second time
                await client.get_prompt("code-review")
            assert raised.value.code == -32602 and "'code'" in raised.value.message

    run(scenario())
    assert [schema["required"] for _, schema in asked] == [["code"], ["code"]]


@pytest.mark.parametrize("answer", ["none", "declines"])
def test_input_required_without_an_answer_is_invalid_params(answer: str) -> None:
    async def decline(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def scenario() -> None:
        elicit = decline if answer == "declines" else None
        async with connect(serve(EXAMPLES, "--no-watch"), elicit=elicit) as client:
            assert client.era == "modern"
            with pytest.raises(InvalidParams) as raised:
                await client.get_prompt("code-review")
            assert raised.value.code == -32602
            assert ("decline" in raised.value.message) == (answer == "declines")

    run(scenario())


# -- bearer tokens ---------------------------------------------------------------------------------


def test_a_401_is_a_connection_failure_until_the_right_token_is_sent(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(24)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"tester:{token}\n")

    async def scenario(url: str) -> None:
        for options in ({}, {"token": "not-the-token-at-all"}, {"token": token[:-1], "era": "legacy"}):
            failure = await refused(ConnectionFailed, "HTTP 401.*Bearer", url, **options)
            assert failure.status == 401, options
        async with connect(url, token=token) as client:
            assert client.era == "modern"
            assert len(await client.list_prompts()) == len(EXAMPLE_ARGS)
        async with connect(url, token=token, era="legacy") as client:
            assert client.era == "legacy" and len(await client.list_prompts()) == len(EXAMPLE_ARGS)
        sse = url.removesuffix("/mcp") + "/sse"
        async with connect(sse, headers={"authorization": f"Bearer {token}"}) as client:
            assert isinstance(client._channel, LegacySseChannel)
            assert len(await client.list_prompts()) == len(EXAMPLE_ARGS)

    with http_server(str(EXAMPLES), "--no-watch", "--token-file", str(tokens)) as url:
        run(scenario(url))


def test_a_rate_limit_is_a_connection_failure_saying_when_to_retry() -> None:
    async def scenario(url: str) -> None:
        async with connect(url) as client:
            with pytest.raises(ConnectionFailed, match=r"HTTP 429, rate limited; retry after \d+ s") as limited:
                for _ in range(10):
                    await client.list_prompts(refresh=True)
            assert limited.value.status == 429

    with http_server(str(EXAMPLES), "--no-watch", "--rate-limit", "3") as url:
        run(scenario(url))


def test_a_forgotten_legacy_session_is_started_anew(examples_http: str) -> None:
    """2025-03-26+: a 404 to a request carrying a session id means the client must initialize again."""

    async def scenario() -> None:
        async with connect(examples_http, era="legacy") as client:
            expired = await forget_session(client)
            await check_new_session(client, expired)

    run(scenario())


def test_token_and_headers_are_for_http_only() -> None:
    run(refused(ValueError, "HTTP", [PYTHON, "-c", "pass"], token="secret-token-here"))

