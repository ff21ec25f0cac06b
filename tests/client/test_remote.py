"""Another server's prompts as a source (client/remote.py): listed at load, rendered and completed through
the remote, its refusals passed on as -32602 and its other faults as -32603 naming the server, a name
promptdeck cannot serve reported, and a server that cannot be used refused at load naming it."""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from promptdeck.client.remote import RemoteSource
from promptdeck.prompts.spec import RenderContext
from promptdeck.protocol.content import Message, Text
from promptdeck.protocol.errors import INTERNAL_ERROR, InvalidParams, LibraryError, McpError

GREET = "---\ndescription: Greets\ntags: [people]\narguments:\n  - {name: who, title: Who, required: true, " \
        "enum: [ann, bob]}\n---\nHello {{ who }}!\n"

#: A legacy server listing one prompt promptdeck can serve and one it cannot, that fails every prompts/get.
ODD = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if id is None:
        continue
    if method == "initialize":
        answer = {"result": {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"prompts": {}},
                             "serverInfo": {"name": "odd", "version": "1"}}}
    elif method == "prompts/list":
        answer = {"result": {"prompts": [{"name": "fine"}, {"name": "has space"}]}}
    elif method == "prompts/get":
        answer = {"error": {"code": -32000, "message": "database down"}}
    else:
        answer = {"error": {"code": -32601, "message": "no " + method}}
    print(json.dumps({"jsonrpc": "2.0", "id": id, **answer}), flush=True)
"""


def rendered(source: RemoteSource, name: str, values: dict[str, Any]) -> list[Message]:
    [prompt] = [p for p in source.prompts() if p.name == name]

    async def main() -> list[Message]:
        result = prompt.render(values, RenderContext(name))
        assert not isinstance(result, list)
        return await result

    return asyncio.run(main())


@pytest.fixture
def greet(tmp_path: Path) -> Any:
    (tmp_path / "greet.md").write_text(GREET)
    source = RemoteSource(shlex.join([sys.executable, "-m", "promptdeck", "serve", str(tmp_path), "--no-watch"]))
    assert source.load() == []
    yield source
    source.close()


def test_the_remote_listing_becomes_prompts(greet: RemoteSource) -> None:
    [prompt] = greet.prompts()
    assert (prompt.name, prompt.description, prompt.source) == ("greet", "Greets", greet.target)
    assert prompt.tags == frozenset({"people"})
    [argument] = prompt.arguments
    assert (argument.name, argument.title, argument.required) == ("who", "Who", True)


def test_renders_and_completions_go_to_the_remote(greet: RemoteSource) -> None:
    assert rendered(greet, "greet", {"who": "bob"})[0].content == Text(text="Hello bob!")
    [prompt] = greet.prompts()

    async def complete() -> list[str]:
        found = prompt.completers["who"]("a", {})
        assert not isinstance(found, list)
        return list(await found)  # type: ignore[misc]

    assert asyncio.run(complete()) == ["ann"]


def test_a_remote_refusal_stays_invalid_params(greet: RemoteSource) -> None:
    with pytest.raises(InvalidParams, match="who"):
        rendered(greet, "greet", {"who": "carol"})


def test_other_remote_faults_are_internal_errors_naming_the_server(caplog: pytest.LogCaptureFixture) -> None:
    source = RemoteSource(shlex.join([sys.executable, "-c", ODD]))
    try:
        [problem] = source.load()
        assert isinstance(problem, LibraryError)
        assert "lists a prompt named 'has space', which promptdeck cannot serve" in str(problem)
        assert [p.name for p in source.prompts()] == ["fine"]
        with caplog.at_level(logging.WARNING, "promptdeck.remote"), pytest.raises(McpError) as caught:
            rendered(source, "fine", {})
        assert caught.value.code == INTERNAL_ERROR
        assert caught.value.message == f"the server at {source.target} answered with error -32000: database down"
        assert "database down" in caplog.text
    finally:
        source.close()
    with pytest.raises(McpError, match="is not reachable"):
        rendered(source, "fine", {})  # closed: a render says so rather than hang


def test_a_server_that_cannot_be_used_is_refused_at_load() -> None:
    source = RemoteSource("/no/such/server --flag")
    with pytest.raises(LibraryError, match=r"cannot use the server at /no/such/server --flag: could not start"):
        source.load()
