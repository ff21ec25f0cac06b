"""The official MCP Python SDK client speaks 2026-07-28 to ``promptdeck serve``, a real process, over
stdio and over HTTP (with sessions and stateless), and older revisions to the same server.

How the SDK is made to speak 2026-07-28, and why no piece needs raw JSON-RPC: see ``sdk_modern``.
Every server message is recorded and validated against the official schema of its era (strict:
no field the revision does not define), and every modern result must carry ``resultType`` and the
server's identity in ``_meta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.context import ClientRequestContext
from mcp.client.subscriptions import PromptsListChanged
from mcp.shared.exceptions import MCPError

from tests.support.interop_checks import (
    all_pages,
    check_argument_errors,
    check_completions,
    check_examples_render,
    prompt_text,
)
from tests.support.libraries import EXAMPLE_ARGS, EXAMPLES, copy_examples
from tests.support.schema import schema_available, schema_missing_reason
from tests.support.sdk_http import REVISIONS as HTTP_REVISIONS
from tests.support.sdk_stdio import REVISIONS as STDIO_REVISIONS
from tests.support.traffic import read_log, validate_traffic

from .sdk_modern import MODERN, MODERN_ONLY, PREFIX, TRANSPORTS, Recorded, check_modern, sdk_client, serving

pytestmark = pytest.mark.slow

#: How long any wait on the server may take: generous, CI machines are shared.
DEADLINE = 20


@pytest.fixture(params=sorted(TRANSPORTS))
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def check_legacy(recorded: Recorded, revision: str) -> None:
    if not schema_available(revision):
        pytest.skip(schema_missing_reason(revision))
    assert validate_traffic(recorded.log, revision) > 0
    sent, received = read_log(recorded.log)
    assert sent[0]["method"] == "initialize" and sent[0]["params"]["protocolVersion"] == revision
    assert not any(PREFIX + "protocolVersion" in (m.get("params") or {}).get("_meta", {}) for m in sent)
    for message in received:
        assert not MODERN_ONLY & set(message.get("result", {})), message


@pytest.fixture
def modern(tmp_path: Path) -> Iterator[Recorded]:
    """The recording of the test's modern client, validated when the test is done."""
    recorded = Recorded(tmp_path / "modern.log")
    yield recorded
    check_modern(recorded)


@pytest.mark.parametrize("mode", ["auto", MODERN])
def test_era_detection_modern_and_legacy_clients_on_one_server(transport: str, mode: str, modern: Recorded,
                                                               tmp_path: Path) -> None:
    legacy_revisions = STDIO_REVISIONS if transport == "stdio" else HTTP_REVISIONS

    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern, mode=mode) as client:
            assert client.protocol_version == MODERN
            assert client.session.initialize_result is None
            if mode == "auto":  # found out by the server/discover probe
                discovered = client.session.discover_result
                assert discovered is not None
                assert discovered.supported_versions[0] == MODERN
                assert set(legacy_revisions) <= set(discovered.supported_versions)
                assert client.server_capabilities.prompts is not None
                assert client.server_capabilities.prompts.list_changed is True
                assert client.server_capabilities.completions is not None
                assert client.server_info is not None and client.server_info.name == "promptdeck"
            assert {p.name for p in (await client.list_prompts()).prompts} == set(EXAMPLE_ARGS)
            # The same server (over HTTP, the same endpoint, while the modern client is connected)
            # gives an SDK pinned to an older revision a legacy session.
            for revision in legacy_revisions:
                old = Recorded(tmp_path / f"legacy-{revision}.log")
                async with sdk_client(target, old, mode="legacy", legacy_revision=revision) as legacy:
                    assert legacy.protocol_version == revision
                    assert legacy.session.discover_result is None
                    init = legacy.session.initialize_result
                    assert init is not None and init.server_info.name == "promptdeck"
                    assert {p.name for p in (await legacy.list_prompts()).prompts} == set(EXAMPLE_ARGS)
                    summary = await legacy.get_prompt("summarize", {"text": "legacy era"})
                    assert "legacy era" in prompt_text(summary)
                check_legacy(old, revision)
            assert "modern era" in prompt_text(await client.get_prompt("summarize", {"text": "modern era"}))

    with serving(transport, str(EXAMPLES), "--no-watch") as target:
        anyio.run(run, target)
    sent, _ = read_log(modern.log)
    assert (sent[0]["method"] == "server/discover") == (mode == "auto")


def test_list_walks_every_page(transport: str, modern: Recorded, big_library: tuple[Path, list[str]]) -> None:
    root, names = big_library

    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern) as client:
            pages = await all_pages(lambda cursor: client.list_prompts(cursor=cursor))
            assert [p.name for page in pages for p in page.prompts] == names
            assert len(pages) == 11  # 1,050 prompts at the default 100 a page
            assert all(page.ttl_ms == 4321 and page.cache_scope == "public" for page in pages)
            # The SDK caches the first page for ttlMs: asking again costs no request...
            lists = _count(modern, "prompts/list")
            again = await client.list_prompts()
            assert [p.name for p in again.prompts] == names[:100]
            assert _count(modern, "prompts/list") == lists
            # ...unless told to refresh.
            await client.list_prompts(cache_mode="refresh")
            assert _count(modern, "prompts/list") == lists + 1

    with serving(transport, str(root), "--no-watch", "--list-ttl", "4321") as target:
        anyio.run(run, target)


def test_get_with_arguments_and_errors(transport: str, modern: Recorded) -> None:
    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern) as client:
            await check_examples_render(client.get_prompt)
            typed = await client.get_prompt("code-review", {"code": "x = 1", "language": "rust",
                                                            "strictness": "3"})
            assert "rust" in prompt_text(typed)
            # A client that declares no elicitation gets the legacy errors, a missing argument included.
            await check_argument_errors(client.get_prompt)
            with pytest.raises(MCPError) as err:
                await client.list_prompts(cursor="not-a-cursor")
            assert err.value.error.code == -32602

    with serving(transport, str(EXAMPLES), "--no-watch") as target:
        anyio.run(run, target)


def test_completion(transport: str, modern: Recorded) -> None:
    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern) as client:
            await check_completions(client.complete)
            with pytest.raises(MCPError) as err:
                await client.complete(types.PromptReference(type="ref/prompt", name="no-such-prompt"),
                                      {"name": "x", "value": ""})
            assert err.value.error.code == -32602

    with serving(transport, str(EXAMPLES), "--no-watch") as target:
        anyio.run(run, target)
    _, received = read_log(modern.log)
    assert sum("completion" in m.get("result", {}) for m in received) == 2


def test_subscription_sees_file_edits(transport: str, modern: Recorded, tmp_path: Path) -> None:
    library = copy_examples(tmp_path / "library")

    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern) as client:
            before = {p.name for p in (await client.list_prompts()).prompts}  # now in the SDK's cache
            async with client.listen(prompts_list_changed=True) as subscription:
                assert subscription.honored.prompts_list_changed is True
                assert not subscription.honored.tools_list_changed
                await anyio.sleep(0.5)  # let the watcher settle before the edit
                (library / "fresh.md").write_text("---\ndescription: Added while serving\n---\nHello!\n")
                with anyio.fail_after(DEADLINE):
                    assert isinstance(await anext(subscription), PromptsListChanged)
                # The event evicted the cached list, so this one comes from the server.
                assert {p.name for p in (await client.list_prompts()).prompts} == before | {"fresh"}
                assert prompt_text(await client.get_prompt("fresh", {})) == "Hello!"
                (library / "fresh.md").unlink()
                with anyio.fail_after(DEADLINE):
                    assert isinstance(await anext(subscription), PromptsListChanged)
                assert {p.name for p in (await client.list_prompts()).prompts} == before

    with serving(transport, str(library)) as target:
        anyio.run(run, target)
    sent, received = read_log(modern.log)
    listen = next(m for m in sent if m.get("method") == "subscriptions/listen")
    assert listen["params"]["notifications"] == {"promptsListChanged": True}
    tagged = [m for m in received if (m.get("params") or {}).get("_meta", {}).get(PREFIX + "subscriptionId")]
    assert [m["method"] for m in tagged][:3] == ["notifications/subscriptions/acknowledged",
                                                 *["notifications/prompts/list_changed"] * 2]
    assert all(m["params"]["_meta"][PREFIX + "subscriptionId"] == listen["id"] for m in tagged)


class Form:
    """An ``elicitation_callback`` that fills in forms (or declines them) and keeps what it was asked."""

    def __init__(self, answer: dict[str, str | int | float | bool | list[str] | None] | None) -> None:
        self.answer = answer
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: ClientRequestContext,
                       params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params)
        if self.answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=self.answer)


def test_input_required_round_trip(transport: str, modern: Recorded, tmp_path: Path) -> None:
    form = Form({"code": "def sub(a, b):\n    return a + b"})

    async def run(target: str | list[str]) -> None:
        async with sdk_client(target, modern, elicitation_callback=form) as client:
            # code-review requires "code": a client that declares elicitation is asked for it.
            result = await client.get_prompt("code-review")
            assert "return a + b" in prompt_text(result)
            assert len(form.asked) == 1
            asked = form.asked[0]
            assert isinstance(asked, types.ElicitRequestFormParams)
            assert "code-review" in asked.message
            schema = asked.requested_schema
            assert schema["required"] == ["code"] and schema["properties"]["code"]["type"] == "string"
            # A declined form leaves the argument missing: the error a client without forms gets.
            decline = Form(None)
            async with sdk_client(target, Recorded(tmp_path / "declined.log"),
                                  elicitation_callback=decline) as declining:
                with pytest.raises(MCPError) as err:
                    await declining.get_prompt("code-review")
                assert err.value.error.code == -32602 and len(decline.asked) == 1
            # A client without elicitation is not asked at all.
            async with sdk_client(target, Recorded(tmp_path / "no-forms.log")) as plain:
                with pytest.raises(MCPError) as err:
                    await plain.get_prompt("code-review")
                assert err.value.error.code == -32602 and "'code'" in err.value.error.message
            # A legacy session that declares elicitation is asked too, with the same form, though never with
            # input_required (modern only): the server sends it elicitation/create.
            legacy_log = Recorded(tmp_path / "legacy.log")
            legacy_form = Form({"code": "def sub(a, b):\n    return a + b"})
            stateless = transport == "http-stateless"
            async with sdk_client(target, legacy_log, mode="legacy", legacy_revision="2025-11-25",
                                  elicitation_callback=legacy_form) as legacy:
                if stateless:  # its answer could not come back to a session: it is not asked
                    with pytest.raises(MCPError) as err:
                        await legacy.get_prompt("code-review")
                    assert err.value.error.code == -32602 and not legacy_form.asked
                else:
                    assert "return a + b" in prompt_text(await legacy.get_prompt("code-review"))
                    [legacy_asked] = legacy_form.asked
                    assert legacy_asked.requested_schema == schema and legacy_asked.message == asked.message
            check_legacy(legacy_log, "2025-11-25")

    with serving(transport, str(EXAMPLES), "--no-watch") as target:
        anyio.run(run, target)
    sent, received = check_modern(modern)
    gets = [m for m in sent if m.get("method") == "prompts/get"]
    assert len(gets) == 2 and gets[0]["id"] != gets[1]["id"]
    first = next(m["result"] for m in received if m.get("id") == gets[0]["id"])
    assert first["resultType"] == "input_required" and first["requestState"]
    assert set(first["inputRequests"]) == {"arguments"}
    assert first["inputRequests"]["arguments"]["method"] == "elicitation/create"
    retry = gets[1]["params"]
    assert retry["requestState"] == first["requestState"]  # echoed unchanged
    assert retry["inputResponses"]["arguments"]["action"] == "accept"
    assert gets[0]["params"]["_meta"][PREFIX + "clientCapabilities"]["elicitation"] is not None


def _count(recorded: Recorded, method: str) -> int:
    sent, _ = read_log(recorded.log)
    return sum(m.get("method") == method for m in sent)
