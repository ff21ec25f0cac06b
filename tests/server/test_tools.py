"""Prompts offered as tools (``serve --tools``), for clients that call tools but show no prompts.

Driven with the official SDK client (which checks structured results against each tool's output schema)
and with raw messages whose every answer is validated against the official schema of its revision,
strictly: a field the revision lacks (annotations in 2024-11-05, say) fails the test.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError as SdkError

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.spec import Prompt
from promptdeck.protocol.errors import InvalidParams
from promptdeck.server.tools import SCAN_LIMIT, ToolOptions, ToolSet
from tests.support.http_server import http_server
from tests.support.libraries import copy_examples
from tests.support.modern import (
    ELICITS,
    HttpPeer,
    StdioPeer,
    error_code,
    initialize,
    legacy,
    listen,
    notification,
    on_subscription,
    request,
)
from tests.support.paths import REPO
from tests.support.sdk_stdio import REVISIONS, connect

EXAMPLES = REPO / "examples" / "prompts"
ids = itertools.count(1)


def example_names() -> list[str]:
    with StdioPeer(EXAMPLES, "--no-watch") as peer:
        peer.call(initialize(0))
        return [p["name"] for p in peer.call(legacy(1, "prompts/list"))["result"]["prompts"]]


def texts(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


# -- the official SDK client, every legacy revision ---------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_sdk_client_lists_and_calls_one_tool_per_prompt(revision: str, tmp_path: Path) -> None:
    async def run() -> None:
        async with connect(["--tools", "--no-watch", str(EXAMPLES)], revision, tmp_path / "log") as (session, init):
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed is True
            tools = (await session.list_tools()).tools
            prompts = (await session.list_prompts()).prompts
            assert sorted(t.name for t in tools) == sorted(p.name.replace(".", "_") for p in prompts)
            summarize = next(t for t in tools if t.name == "summarize")
            bullets = summarize.input_schema["properties"]["bullets"]
            assert [bullets[k] for k in ("type", "minimum", "maximum", "default")] == ["integer", 1, 10, 5]
            modern_fields = revision >= "2025-06-18"
            assert (summarize.output_schema is not None) is modern_fields
            assert (summarize.annotations is not None) is (revision >= "2025-03-26")

            # JSON-typed arguments, converted and checked as prompts/get checks its strings.
            called = await session.call_tool("summarize", {"text": "The cat sat.", "bullets": 3})
            assert not called.is_error, called
            rendered = await session.get_prompt("summarize", {"text": "The cat sat.", "bullets": "3"})
            assert texts(called) == rendered.messages[0].content.text
            if modern_fields:  # the SDK has checked it against the tool's outputSchema
                wire = rendered.model_dump(mode="json", by_alias=True, exclude_none=True)
                assert called.structured_content == {k: wire[k] for k in ("description", "messages")}
            else:
                assert called.structured_content is None

            # The caller's mistakes are results the model reads; the server keeps serving.
            for arguments, said in (({}, "missing required argument 'text'"),
                                    ({"text": "x", "bullets": 11}, "argument 'bullets' must be at most 10"),
                                    ({"text": "x", "bullets": [1]}, "argument 'bullets' must be a string, number"),
                                    ({"text": "x", "colour": "red"}, "has no argument 'colour'")):
                if not arguments:
                    called = await session.call_tool("code-review", {})
                    said = "missing required argument 'code'"
                else:
                    called = await session.call_tool("summarize", arguments)
                assert called.is_error and said in texts(called), (arguments, called)
            with pytest.raises(SdkError) as unknown:
                await session.call_tool("no-such-tool", {})
            assert unknown.value.error.code == -32602 and "no-such-tool" in unknown.value.error.message

            # A prompt of several speakers, and one whose message is an image.
            review = await session.call_tool("code-review", {"code": "print(1)"})
            assert not review.is_error and [block.type for block in review.content] == ["text", "resource", "text"]
            assert review.content[1].resource.text == "print(1)"
            image = await session.call_tool("describe-image", {})
            assert any(block.type == "image" for block in image.content), image.content

    asyncio.run(run())


# -- every revision's schema, strictly ----------------------------------------------------------


@pytest.mark.parametrize("options", [(), ("--tools-per-prompt", "0")], ids=["per-prompt", "two-tools"])
def test_tool_results_match_every_revision_schema(options: tuple[str, ...]) -> None:
    """StdioPeer validates each answer against its revision's schema, unknown fields included."""
    per_prompt = not options
    for revision in REVISIONS:
        with StdioPeer(EXAMPLES, "--no-watch", "--tools", *options) as peer:
            init = peer.call(initialize(0, revision))["result"]
            assert init["capabilities"]["tools"] == {"listChanged": True}
            peer.send(notification("notifications/initialized"))
            tools = peer.call(legacy(1, "tools/list"))["result"]["tools"]
            names = [tool["name"] for tool in tools]
            assert names == sorted(names)
            if per_prompt:
                assert "git_commit" in names and "list_prompts" not in names
                result = peer.call(legacy(2, "tools/call", {"name": "git_commit", "arguments": {"diff": "+x"}}))
            else:
                assert names == ["get_prompt", "list_prompts"]
                result = peer.call(legacy(2, "tools/call", {"name": "get_prompt", "arguments": {
                    "name": "git.commit", "arguments": {"diff": "+x"}}}))
                listed = peer.call(legacy(3, "tools/call", {"name": "list_prompts", "arguments": {"query": "COMMIT"}}))
                assert [p["name"] for p in structured(listed, revision)["prompts"]] == ["git.commit"] \
                    if revision >= "2025-06-18" else "git.commit" in listed["result"]["content"][0]["text"]
            assert not result["result"].get("isError"), result
            assert "+x" in json.dumps(result["result"]["content"])
    # 2026-07-28 on the same process kind: cacheable pages, the envelope on calls.
    with StdioPeer(EXAMPLES, "--no-watch", "--tools", *options) as peer:
        discovered = peer.call(request(next(ids), "server/discover"))["result"]
        assert discovered["capabilities"]["tools"] == {"listChanged": True}
        page = peer.call(request(next(ids), "tools/list"))["result"]
        assert page["cacheScope"] == "public" and page["ttlMs"] == 60_000 and page["resultType"] == "complete"
        name = "summarize" if per_prompt else "get_prompt"
        arguments: dict[str, Any] = {"bullets": 2} if per_prompt else {"name": "summarize",
                                                                       "arguments": {"bullets": 2}}
        called = peer.call(request(next(ids), "tools/call", {"name": name, "arguments": arguments}))["result"]
        assert called["resultType"] == "complete" and "at most 2 bullet points" in called["content"][0]["text"]


def structured(answer: dict[str, Any], revision: str) -> dict[str, Any]:
    content = answer["result"].get("structuredContent")
    assert (content is not None) is (revision >= "2025-06-18"), answer
    return content or {}


# -- the two tools, and the switch to them -------------------------------------------------------


def test_two_tools_page_through_a_large_library(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    names = [f"p{i:03d}" for i in range(130)]
    for i, name in enumerate(names):
        parity = "even" if i % 2 == 0 else "odd"
        (folder / f"{name}.md").write_text(f"---\ndescription: {parity} one\n---\nNumber {i}.\n")
    with StdioPeer(folder, "--no-watch", "--tools", "--tools-per-prompt", "100") as peer:
        peer.call(initialize(0))
        peer.send(notification("notifications/initialized"))
        assert [t["name"] for t in peer.call(legacy(1, "tools/list"))["result"]["tools"]] == \
            ["get_prompt", "list_prompts"]  # 130 prompts > 100: the two tools

        def walk(query: str | None) -> list[str]:
            seen: list[str] = []
            cursor = None
            for request_id in itertools.count(10):
                arguments = {k: v for k, v in (("query", query), ("cursor", cursor)) if v is not None}
                got = peer.call(legacy(request_id, "tools/call", {"name": "list_prompts", "arguments": arguments}))
                content = got["result"]["structuredContent"]
                seen += [p["name"] for p in content["prompts"]]
                cursor = content.get("nextCursor")
                if cursor is None:
                    return seen
            raise AssertionError("unreachable")

        assert walk(None) == names  # each once, in order, over three pages
        assert walk("EVEN one") == names[::2]
        got = peer.call(legacy(2, "tools/call", {"name": "get_prompt", "arguments": {"name": "p007"}}))
        assert got["result"]["content"] == [{"type": "text", "text": "Number 7."}]
        # Mistakes are results: an unknown prompt, a forged cursor, an oversized query, a stray key.
        mistakes: list[tuple[dict[str, object], str]] = [
            ({"name": "nope"}, "unknown prompt 'nope'"),
            ({"arguments": {}}, 'needs "name"'),
            ({"name": "p001", "extra": 1}, "not 'extra'"),
        ]
        for arguments, said in mistakes:
            got = peer.call(legacy(next(ids), "tools/call", {"name": "get_prompt", "arguments": arguments}))
            assert got["result"]["isError"] is True and said in got["result"]["content"][0]["text"], got
        mistakes = [({"cursor": "forged"}, "invalid cursor"), ({"query": "x" * 201}, "longer than 200"),
                    ({"query": 5}, '"query" must be a string')]
        for arguments, said in mistakes:
            got = peer.call(legacy(next(ids), "tools/call", {"name": "list_prompts", "arguments": arguments}))
            assert got["result"]["isError"] is True and said in got["result"]["content"][0]["text"], got
        # Not an object at all: the request itself is malformed.
        got = peer.call(legacy(next(ids), "tools/call", {"name": "list_prompts", "arguments": [1]}))
        assert error_code(got) == -32602


def _catalog(*names: str, page_size: int = 100) -> Catalog:
    return Catalog([Prompt(name, lambda values, ctx: []) for name in names], page_size=page_size)


def test_names_clients_refuse_mean_two_tools() -> None:
    options = ToolOptions(per_prompt_limit=10)
    assert ToolSet(_catalog("a.b", "c"), options).per_prompt
    # '.' becomes '_', so these two would share a tool name: never guessed apart, the two tools instead.
    assert not ToolSet(_catalog("a.b", "a_b"), options).per_prompt
    assert not ToolSet(_catalog("x" * 65), options).per_prompt  # past 64 characters
    assert not ToolSet(_catalog("list_prompts"), options).per_prompt  # the list tool's own name
    prefixed = ToolSet(_catalog("a.b"), ToolOptions(prefix="team-"))
    assert prefixed.target("team-a_b") == "a.b"
    with pytest.raises(ValueError, match="two names"):
        ToolOptions(list_name="same", get_name="same")
    with pytest.raises(ValueError, match="1-64 letters"):
        ToolOptions(get_name="get.prompt")


def test_write_tools_join_a_tool_set_and_keep_their_names() -> None:
    from promptdeck.server.tools import PromptTools

    write = ({"name": "prompt_versions", "inputSchema": {"type": "object"}},)
    options = ToolOptions(per_prompt_limit=10)
    # A prompt whose tool would take a write tool's name: the two tools, never a guess between the two.
    assert not ToolSet(_catalog("prompt_versions"), options, write).per_prompt
    assert ToolSet(_catalog("prompt_versions"), options).per_prompt
    alone = PromptTools(None)  # --write-tools without --tools: only theirs, and they never change
    catalog = _catalog("a", "b")
    assert json.loads(alone.of(catalog, write).signature()) == list(write)
    assert json.loads(alone.of(catalog).signature()) == [] and not alone.changed(catalog, _catalog("c"))
    with pytest.raises(InvalidParams, match="unknown tool 'a'"):
        alone.of(catalog).target("a")


def test_the_list_tool_examines_a_bounded_number_of_prompts_per_call() -> None:
    from promptdeck.protocol.revisions import LATEST
    from promptdeck.server.tools import Call, listing_result

    catalog = _catalog(*(f"p{i:05d}" for i in range(SCAN_LIMIT + 10)))
    result = listing_result(catalog, Call("list_prompts", None, {}, {"query": "p00009"}), LATEST)
    # One match in the first SCAN_LIMIT prompts, then a cursor to go on from, not a scan of them all.
    assert [p["name"] for p in result["structuredContent"]["prompts"]] == ["p00009"]
    cursor = result["structuredContent"]["nextCursor"]
    rest = listing_result(catalog, Call("list_prompts", None, {}, {"query": "p0500", "cursor": cursor}), LATEST)
    assert [p["name"] for p in rest["structuredContent"]["prompts"]] == [f"p0500{i}" for i in range(10)]
    assert "nextCursor" not in rest["structuredContent"]


# -- list_changed follows the library -------------------------------------------------------------


def test_tools_list_changed_follows_the_library(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path / "library")
    with StdioPeer(folder, "--tools") as peer:
        peer.call(initialize(0))
        peer.send(notification("notifications/initialized"))
        peer.call(legacy(1, "tools/list"))
        sub = next(ids)
        peer.send(listen(sub, promptsListChanged=True, toolsListChanged=True))
        ack = peer.take(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        assert ack["params"]["notifications"] == {"promptsListChanged": True, "toolsListChanged": True}
        (folder / "added.md").write_text("A prompt added while serving.\n")
        peer.take(lambda m: m.get("method") == "notifications/tools/list_changed" and "params" not in m)
        peer.take(lambda m: m.get("method") == "notifications/tools/list_changed" and on_subscription(sub)(m))
        tools = peer.call(legacy(2, "tools/list"))["result"]["tools"]
        assert "added" in [tool["name"] for tool in tools]


def test_a_subscription_without_tools_hears_no_tool_changes_and_two_tools_never_change(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path / "library")
    with StdioPeer(folder, "--tools", "--tools-per-prompt", "0") as peer:
        peer.call(initialize(0))
        peer.send(notification("notifications/initialized"))
        sub = next(ids)
        peer.send(listen(sub, promptsListChanged=True, toolsListChanged=True))
        peer.take(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        (folder / "added.md").write_text("A prompt added while serving.\n")
        peer.take(lambda m: m.get("method") == "notifications/prompts/list_changed" and on_subscription(sub)(m))
        peer.take(lambda m: m.get("method") == "notifications/prompts/list_changed" and "params" not in m)
        # The two tools are what they were: no tools/list_changed on either stream.
        assert peer.poll(lambda m: m.get("method") == "notifications/tools/list_changed", 1.0) is None
    with StdioPeer(EXAMPLES, "--no-watch") as plain:
        sub = next(ids)
        plain.send(listen(sub, promptsListChanged=True, toolsListChanged=True))
        ack = plain.take(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
        assert ack["params"]["notifications"] == {"promptsListChanged": True}  # no tools without --tools
        assert error_code(plain.call(request(next(ids), "tools/list"))) == -32601


# -- 2026-07-28: a form for missing arguments ------------------------------------------------------


@pytest.mark.parametrize("via_get", [False, True], ids=["prompt-tool", "get-tool"])
def test_modern_call_asks_for_missing_arguments_with_a_form(via_get: bool) -> None:
    options = ("--tools-per-prompt", "0") if via_get else ()
    name = "get_prompt" if via_get else "code-review"
    arguments: dict[str, Any] = {"name": "code-review", "arguments": {}} if via_get else {}
    with StdioPeer(EXAMPLES, "--no-watch", "--tools", *options) as peer:
        asked = peer.call(request(next(ids), "tools/call", {"name": name, "arguments": arguments},
                                  capabilities=ELICITS))["result"]
        assert asked["resultType"] == "input_required"
        form = asked["inputRequests"]["arguments"]["params"]["requestedSchema"]
        assert form["required"] == ["code"]
        answer = {"arguments": {"action": "accept", "content": {"code": "print(2)"}}}
        done = peer.call(request(next(ids), "tools/call", {"name": name, "arguments": arguments,
                                                           "requestState": asked["requestState"],
                                                           "inputResponses": answer}, capabilities=ELICITS))
        assert done["result"]["resultType"] == "complete" and "print(2)" in json.dumps(done["result"]["content"])
        # The state is spent, and bound to its call: replaying it, or using it for another tool, fails.
        replay = peer.call(request(next(ids), "tools/call", {"name": name, "arguments": arguments,
                                                             "requestState": asked["requestState"],
                                                             "inputResponses": answer}, capabilities=ELICITS))
        assert error_code(replay) == -32602
        # Without elicitation the model is told what is missing.
        told = peer.call(request(next(ids), "tools/call", {"name": name, "arguments": arguments}))["result"]
        assert told["isError"] is True and "missing required argument 'code'" in told["content"][0]["text"]


# -- HTTP: access control, audit, rate limits ------------------------------------------------------

PAYROLL = "---\ndescription: Payroll questions\nscopes: [hr]\n---\nAnswer the payroll question.\n"


def test_tools_follow_scopes_audit_and_rate_limits(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "greet.md").write_text("Say hello.\n")
    (folder / "payroll.md").write_text(PAYROLL)
    tokens = tmp_path / "tokens"
    tokens.write_text("alice: alice-secret-token-0123 hr\nbob: bob-secret-token-0123456\n")
    log = tmp_path / "server.log"
    with http_server(str(folder), "-v", "--no-watch", "--tools", "--token-file", str(tokens), "--rate-limit", "20",
                     log=log) as url:
        alice, bob = HttpPeer(url), HttpPeer(url)
        alice.client.headers["authorization"] = "Bearer alice-secret-token-0123"
        bob.client.headers["authorization"] = "Bearer bob-secret-token-0123456"
        listed = {who: [t["name"] for t in peer.call(request(next(ids), "tools/list"))["result"]["tools"]]
                  for who, peer in (("alice", alice), ("bob", bob))}
        assert listed == {"alice": ["greet", "payroll"], "bob": ["greet"]}
        page = alice.call(request(next(ids), "tools/list"))["result"]
        assert page["cacheScope"] == "private"  # what is listed depends on who asks
        hidden = bob.call(request(next(ids), "tools/call", {"name": "payroll", "arguments": {}}))
        assert error_code(hidden) == -32602 and "unknown tool 'payroll'" in hidden["error"]["message"]
        shown = alice.call(request(next(ids), "tools/call", {"name": "payroll", "arguments": {}}))
        assert "Answer the payroll question." in shown["result"]["content"][0]["text"]
        # The Mcp-Name header must repeat the tool's name, as for prompts/get.
        mismatch = httpx.post(url, json=request(next(ids), "tools/call", {"name": "greet"}), headers={
            "authorization": "Bearer alice-secret-token-0123", "accept": "application/json, text/event-stream",
            "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
            "mcp-name": "payroll"})
        assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020
        statuses = [httpx.post(url, json=request(next(ids), "tools/call", {"name": "greet"}), headers={
            "authorization": "Bearer bob-secret-token-0123456", "accept": "application/json, text/event-stream",
            "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call",
            "mcp-name": "greet"}).status_code for _ in range(25)]
        assert 429 in statuses  # tool calls count against the principal's rate like any request
        alice.close()
        bob.close()
    audit = [line for line in log.read_text().splitlines() if "tools/call principal=" in line]
    assert any("principal=alice tool='payroll' prompt=None outcome=ok" in line for line in audit), audit
    assert any("principal=bob tool='payroll' prompt=None outcome=error" in line for line in audit), audit


def test_tool_options_without_tools_are_refused(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--tool-prefix", "x"],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert done.returncode == 2 and "--tool-prefix: options of --tools" in done.stderr
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--tools", "--tool-names",
                           "a.b", "get"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
                          check=False)
    assert done.returncode == 2 and "tool name 'a.b' must be 1-64 letters" in done.stderr


PYTHON_SERVER = '''
from promptdeck.server.app import PromptServer
from promptdeck.server.tools import ToolOptions

server = PromptServer("py-tools", page_size=2, tools=ToolOptions(prefix="team-"))

@server.prompt(title="Greet")
def greet(name: str) -> str:
    """Greets someone."""
    return f"Say hello to {name}."

@server.prompt()
def farewell(name: str, times: int = 1) -> str:
    return f"Say goodbye to {name} {times} times."

@server.prompt()
def thanks() -> str:
    return "Say thank you."

server.serve()
'''


def test_python_api_offers_tools_and_pages_them(tmp_path: Path) -> None:
    import sys

    from mcp import ClientSession, types
    from mcp.client.stdio import StdioServerParameters, stdio_client

    script = tmp_path / "serve_tools.py"
    script.write_text(PYTHON_SERVER)

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=[str(script)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            first = await session.list_tools()
            assert [t.name for t in first.tools] == ["team-farewell", "team-greet"] and first.next_cursor
            second = await session.list_tools(params=types.PaginatedRequestParams(cursor=first.next_cursor))
            assert [t.name for t in second.tools] == ["team-thanks"] and second.next_cursor is None
            assert first.tools[0].input_schema["properties"]["times"] == {"type": "integer", "default": 1}
            called = await session.call_tool("team-farewell", {"name": "Ada", "times": 2})
            assert texts(called) == "Say goodbye to Ada 2 times."

    asyncio.run(run())


def test_tools_over_a_store_label(tmp_path: Path) -> None:
    """A label served from the store's listing (nothing parsed up front) offers the same tools."""
    import subprocess
    import sys

    store = tmp_path / "prompts.db"
    subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(EXAMPLES), "--store", str(store), "--label",
                    "production"], check=True, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    for options, expected in ((), "git_commit"), (("--tools-per-prompt", "0"), "list_prompts"):
        with StdioPeer(None, "--store", str(store), "--tools", "--no-watch", *options) as peer:
            peer.call(initialize(0))
            peer.send(notification("notifications/initialized"))
            names = [t["name"] for t in peer.call(legacy(1, "tools/list"))["result"]["tools"]]
            assert expected in names, names
            if expected == "list_prompts":
                found = peer.call(legacy(2, "tools/call", {"name": "list_prompts", "arguments": {"query": "git"}}))
                assert [p["name"] for p in found["result"]["structuredContent"]["prompts"]] == ["git.commit"]
                call = {"name": "get_prompt", "arguments": {"name": "summarize", "arguments": {"bullets": 2}}}
            else:
                call = {"name": "summarize", "arguments": {"bullets": 2}}
            got = peer.call(legacy(3, "tools/call", call))["result"]
            assert "at most 2 bullet points" in got["content"][0]["text"], got
