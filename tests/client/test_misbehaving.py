"""Servers that go wrong, as real processes: each failure surfaces as the right ClientError, never a hang.

Timeouts here are generous on purpose: a test that expects ProtocolViolation or ConnectionFailed would
see RequestTimeout instead if the client hung, so the class of the error is what proves it did not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptdeck.client import TextContent, connect, stdio
from promptdeck.protocol.errors import ClientError, ConnectionFailed, McpError, ProtocolViolation, RequestTimeout
from tests.support.client_servers import DEADLINE, PYTHON, eventually, http_peer, refused, run, script
from tests.support.http_server import free_port


def bad(mode: str, log: Path) -> list[str]:
    return script("bad_stdio.py", mode, str(log))


def received(log: Path) -> list[dict[str, Any]]:
    """What the misbehaving server read from the client."""
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "received.jsonl"


# -- listings ---------------------------------------------------------------------------------------


def test_a_cursor_loop_is_named(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("cursor-loop", log), timeout=DEADLINE) as client:
            with pytest.raises(ProtocolViolation, match=r"cursor 'a' twice \(a loop, after 3 pages\)"):
                await client.list_prompts()

    run(scenario())
    assert [m.get("params", {}).get("cursor") for m in received(log) if m.get("method") == "prompts/list"] == \
        [None, "a", "b"]


def test_endless_cursors_stop_at_max_pages(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("endless", log), timeout=DEADLINE, max_pages=25) as client:
            with pytest.raises(ProtocolViolation, match="still more pages after 25"):
                await client.list_prompts()

    run(scenario())
    assert sum(message.get("method") == "prompts/list" for message in received(log)) == 25


@pytest.mark.parametrize(("mode", "method"), [("not-a-list", "prompts/list"), ("bad-content", "prompts/get")])
def test_a_result_that_breaks_the_schema_is_a_protocol_violation(mode: str, method: str, log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad(mode, log), timeout=DEADLINE) as client:
            with pytest.raises(ProtocolViolation, match=f"{method}: the server's result does not fit"):
                await (client.list_prompts() if method == "prompts/list" else client.get_prompt("alpha"))
            # One bad result does not spoil the connection.
            assert (await client.request("ping")) == {}

    run(scenario())


# -- garbage, silence and death ---------------------------------------------------------------------


def test_garbage_before_the_handshake_fails_the_connection(log: Path) -> None:
    run(refused(ProtocolViolation, "not JSON-RPC.*chattiest server", bad("garbage-start", log), probe_timeout=DEADLINE))


def test_garbage_mid_session_fails_this_and_every_later_request(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("garbage", log), timeout=DEADLINE) as client:
            assert client.era == "legacy"
            with pytest.raises(ProtocolViolation, match="html"):
                await client.list_prompts()
            with pytest.raises(ProtocolViolation, match="html"):
                await client.get_prompt("alpha")

    run(scenario())


def test_a_server_that_never_answers_times_out_and_is_told_to_cancel(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("silent", log), timeout=1.0) as client:
            with pytest.raises(RequestTimeout, match=r"prompts/get: no answer within 1 s \(cancelled\)"):
                await client.get_prompt("alpha")
            [asked] = [m for m in received(log) if m.get("method") == "prompts/get"]

            def cancelled() -> list[dict[str, Any]]:
                return [m for m in received(log) if m.get("method") == "notifications/cancelled"]

            await eventually(lambda: bool(cancelled()), "notifications/cancelled to reach the server")
            [cancel] = cancelled()
            assert cancel["params"]["requestId"] == asked["id"] and "id" not in cancel
            # The session goes on.
            assert [prompt.name for prompt in await client.list_prompts()] == ["alpha"]

    run(scenario())


def test_a_request_the_caller_cancels_is_cancelled_on_the_server(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("silent", log), timeout=DEADLINE) as client:
            pending = asyncio.ensure_future(client.get_prompt("alpha"))
            await eventually(lambda: any(m.get("method") == "prompts/get" for m in received(log)), "the request")
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
            assert pending.cancelled()
            await eventually(lambda: any(m.get("method") == "notifications/cancelled" for m in received(log)),
                             "notifications/cancelled to reach the server")
            assert [prompt.name for prompt in await client.list_prompts()] == ["alpha"]

    run(scenario())
    [asked] = [m for m in received(log) if m.get("method") == "prompts/get"]
    [cancel] = [m for m in received(log) if m.get("method") == "notifications/cancelled"]
    assert cancel["params"] == {"requestId": asked["id"], "reason": "cancelled by the client"}


def test_a_server_that_exits_mid_request_is_quoted(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("exit", log), timeout=DEADLINE) as client:
            with pytest.raises(ConnectionFailed, match="exited with code 3: boom: the database is on fire"):
                await client.get_prompt("alpha")
            with pytest.raises(ConnectionFailed, match="boom"):
                await client.list_prompts()

    run(scenario())


def test_a_server_that_dies_at_start_is_quoted() -> None:
    argv = [PYTHON, "-c", "import sys; sys.stderr.write('no config file at /etc/nowhere\\n'); sys.exit(2)"]

    run(refused(ConnectionFailed, "exited with code 2: no config file at /etc/nowhere", argv, probe_timeout=DEADLINE))


@pytest.mark.parametrize("argv", [["/no/such/promptdeck-server"], ["no-such-command-for-promptdeck-tests", "x"], []])
def test_a_command_that_cannot_start(argv: list[str]) -> None:
    run(refused(ConnectionFailed, "could not start|empty server command", argv))


def test_the_client_answers_what_the_server_asks_and_ignores_what_it_did_not(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("asks", log), timeout=DEADLINE) as client:
            # The server answers only once the client has answered its ping and its sampling request.
            got = await client.get_prompt("alpha")
            assert got.messages[0].content == TextContent(text="asked")

    run(scenario())
    answers = {message["id"]: message for message in received(log) if "method" not in message}
    assert answers["s-ping"]["result"] == {}
    assert answers["s-sample"]["error"]["code"] == -32601
    assert "nobody-asked" not in answers


def test_input_required_rounds_are_bounded(log: Path) -> None:
    rounds: list[str] = []

    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        rounds.append(message)
        return {"x": str(len(rounds))}

    async def scenario() -> None:
        async with connect(bad("input-loop", log), timeout=DEADLINE, elicit=elicit) as client:
            assert client.era == "modern"
            with pytest.raises(ProtocolViolation, match="still wants input after 8 rounds"):
                await client.get_prompt("alpha", topic="t")

    run(scenario())
    gets = [message["params"] for message in received(log) if message.get("method") == "prompts/get"]
    assert len(gets) == len(rounds) == 8
    assert "requestState" not in gets[0] and "inputResponses" not in gets[0]
    for number, params in enumerate(gets[1:], start=1):
        # Each retry repeats the arguments, echoes the state and answers the question asked.
        assert params["arguments"] == {"topic": "t"} and params["requestState"] == str(number)
        assert params["inputResponses"] == {"again": {"action": "accept", "content": {"x": str(number)}}}


def test_input_required_asking_for_what_the_client_does_not_offer(log: Path) -> None:
    async def elicit(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        raise AssertionError("not a form")

    async def scenario() -> None:
        async with connect(bad("sampling", log), timeout=DEADLINE, elicit=elicit) as client:
            with pytest.raises(ProtocolViolation, match="'sampling/createMessage'"):
                await client.get_prompt("alpha")

    run(scenario())


def test_messages_in_pieces_and_several_to_a_write_are_framed(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("dribble", log), timeout=DEADLINE) as client:
            assert client.server_info["name"] == "bad-dribble"
            for _ in range(3):
                assert [prompt.name for prompt in await client.list_prompts()] == ["alpha"]
                assert (await client.get_prompt("alpha")).messages[0].content == TextContent(text="A")

    run(scenario())


def test_a_message_of_megabytes(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("big", log), timeout=DEADLINE) as client:
            [prompt] = await client.list_prompts()
            assert prompt.description == "x" * 3_000_000

    run(scenario())


def test_a_message_over_the_limit_is_a_protocol_violation(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio, "MAX_MESSAGE", 1 << 20)

    async def scenario() -> None:
        async with connect(bad("big", log), timeout=DEADLINE) as client:
            with pytest.raises(ProtocolViolation, match="over 1048576 bytes"):
                await client.list_prompts()

    run(scenario())


def test_a_server_that_logs_megabytes_to_stderr_still_answers(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("noisy", log), timeout=DEADLINE) as client:
            assert [prompt.name for prompt in await client.list_prompts()] == ["alpha"]

    run(scenario())


def test_the_server_gets_the_environment_and_folder_it_is_given(tmp_path: Path) -> None:
    async def scenario() -> None:
        # LOG is relative: it lands in the server's working folder.
        async with connect(bad("quiet", Path("here.jsonl")), env={"BAD_NAME": "named by env"},
                           cwd=str(tmp_path), timeout=DEADLINE) as client:
            assert client.server_info["name"] == "named by env"

    run(scenario())
    assert received(tmp_path / "here.jsonl")[0]["method"] == "server/discover"


# -- era detection over stdio -------------------------------------------------------------------------


def test_a_probe_that_gets_no_answer_fails_instead_of_guessing(log: Path) -> None:
    """Silence is no era: the probe waits the request timeout (a server may still be starting) and then
    fails, rather than sending initialize to what may be a slow 2026-07-28 server (issue 38)."""
    error = run(refused(RequestTimeout, r"server/discover: no answer within 1 s", bad("ignore-discover", log),
                        timeout=1))
    assert "protocol era is unknown" in str(error) and "era 'legacy'" in str(error)
    probe, *rest = received(log)
    assert probe["method"] == "server/discover"
    assert "initialize" not in [message.get("method") for message in rest]

    async def pinned() -> None:  # told to, the client speaks the legacy way to it
        async with connect(bad("ignore-discover", log), era="legacy", timeout=DEADLINE) as client:
            assert client.era == "legacy" and client.protocol_version == "2025-11-25"

    run(pinned())


def test_unsupported_version_naming_a_legacy_revision_means_legacy(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("unsupported-legacy", log), timeout=DEADLINE) as client:
            assert client.era == "legacy" and client.protocol_version == "2025-06-18"

    run(scenario())


def test_unsupported_version_naming_nothing_we_speak_fails(log: Path) -> None:
    run(refused(ConnectionFailed, "2099-01-01", bad("unsupported", log)))
    assert "initialize" not in [message.get("method") for message in received(log)]


def test_a_modern_only_client_refuses_a_legacy_server(log: Path) -> None:
    run(refused(ConnectionFailed, "does not speak MCP 2026-07-28", bad("quiet", log), era="modern"))


def test_method_not_found_from_a_server_is_its_error(log: Path) -> None:
    async def scenario() -> None:
        async with connect(bad("quiet", log), timeout=DEADLINE) as client:
            with pytest.raises(McpError) as raised:
                await client.complete("alpha", "x")
            assert raised.value.code == -32601

    run(scenario())


# -- HTTP -------------------------------------------------------------------------------------------


def test_nothing_listening_is_a_connection_failure() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"

    for era in ("auto", "legacy", "modern"):
        run(refused(ConnectionFailed, "cannot reach", url, era=era))


@pytest.fixture
def raw_http(request: pytest.FixtureRequest, log: Path) -> Iterator[str]:
    mode = str(request.param)
    with http_peer(lambda port: script("bad_http.py", mode, str(port), str(log))) as url:
        yield url


@pytest.mark.parametrize("raw_http", ["html404"], indirect=True)
def test_an_http_server_without_mcp_is_reported_with_its_status(raw_http: str) -> None:
    failure = run(refused(ConnectionFailed, "neither Streamable HTTP nor .* HTTP\\+SSE .*404", raw_http))
    assert failure.status == 404


@pytest.mark.parametrize("raw_http", ["text-plain"], indirect=True)
def test_an_http_answer_that_is_neither_json_nor_sse(raw_http: str) -> None:
    run(refused(ProtocolViolation, "text/plain", raw_http))


@pytest.mark.parametrize("raw_http", ["crlf"], indirect=True)
def test_event_streams_written_the_unusual_ways_are_read(raw_http: str) -> None:
    async def scenario() -> None:
        async with connect(raw_http, timeout=DEADLINE) as client:
            assert client.era == "modern" and client.server_info["name"] == "raw-crlf"
            [prompt] = await client.list_prompts()
            assert prompt.description == "line\r\nends"
            got = await client.get_prompt("crlf", who="CRLF")
            assert got.messages[0].content == TextContent(text="Hello, CRLF!")

    run(scenario())


@pytest.mark.parametrize("raw_http", ["cut"], indirect=True)
def test_a_stream_that_ends_before_the_answer(raw_http: str) -> None:
    async def scenario() -> None:
        async with connect(raw_http, timeout=DEADLINE) as client:
            with pytest.raises(ConnectionFailed, match="prompts/get: the server closed the stream before answering"):
                await client.get_prompt("crlf")

    run(scenario())


@pytest.mark.parametrize("raw_http", ["foreign-sse"], indirect=True)
def test_an_sse_endpoint_on_another_origin_is_refused(raw_http: str) -> None:
    """The endpoint would receive the client's credentials: it must be where the client was sent."""

    run(refused(ProtocolViolation, "another origin", raw_http, token="a-secret-that-must-stay-home"))


@pytest.mark.parametrize("raw_http", ["resume"], indirect=True)
def test_a_legacy_stream_cut_after_an_event_id_is_resumed_with_a_get(raw_http: str) -> None:
    async def scenario() -> None:
        async with connect(raw_http, timeout=DEADLINE) as client:
            assert client.era == "legacy" and client.server_info["name"] == "raw-resume"
            got = await client.get_prompt("anything")
            assert got.messages[0].content == TextContent(text="resumed")

    run(scenario())


@pytest.mark.parametrize(("raw_http", "era"), [("hang-modern", "modern"), ("hang-legacy", "legacy")],
                         indirect=["raw_http"])
def test_an_http_request_without_answer_times_out(raw_http: str, era: str, log: Path) -> None:
    async def scenario() -> None:
        async with connect(raw_http, timeout=1.0) as client:
            assert client.era == era
            with pytest.raises(RequestTimeout, match="prompts/get: no answer within 1 s"):
                await client.get_prompt("crlf")
            if era == "legacy":
                # A legacy session is told; a modern request is cancelled by closing its stream.
                def cancelled() -> list[dict[str, Any]]:
                    return [m for m in received(log) if m.get("method") == "notifications/cancelled"]

                await eventually(lambda: bool(cancelled()), "notifications/cancelled to reach the server")
                [asked] = [m for m in received(log) if m.get("method") == "prompts/get"]
                assert cancelled()[0]["params"]["requestId"] == asked["id"]
            else:
                assert not any(m.get("method") == "notifications/cancelled" for m in received(log))

    run(scenario())


@pytest.mark.parametrize("raw_http", ["no-get"], indirect=True)
def test_a_legacy_session_without_a_get_stream_cannot_be_watched(raw_http: str) -> None:
    """The server offers listChanged but refuses the GET stream it would come on: watch says so."""

    async def scenario() -> None:
        async with connect(raw_http, era="legacy", timeout=DEADLINE) as client:
            with pytest.raises(ClientError, match="offers no GET stream"):
                async for _ in client.watch():
                    pass
            assert client.prompts is None  # it gave up before listing

    run(scenario())


@pytest.mark.parametrize("raw_http", ["gated-get"], indirect=True)
def test_a_legacy_watch_lists_only_once_its_stream_is_open(raw_http: str, log: Path) -> None:
    """Otherwise a change between the watch's first listing and the GET stream opening would be lost."""
    from tests.support.watching import Watcher

    async def scenario() -> None:
        async with connect(raw_http, timeout=DEADLINE) as client:
            watcher = Watcher(client)
            await eventually(lambda: {"get": "waiting"} in received(log), "the GET stream to be asked for")
            Path(f"{log}.gate").touch()
            await eventually(lambda: client.prompts is not None, "the watch's first listing")
            assert not watcher.task.done(), watcher.error
            await watcher.stop()

    run(scenario())
    order = [entry.get("get") or entry.get("method") for entry in received(log)]
    assert "open" in order and order.index("open") < order.index("prompts/list"), order
