"""Prompts defined in Python: signatures become arguments; results become messages."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import pytest

from promptdeck import Arg, PromptServer, RenderContext, assistant, user
from promptdeck.prompts.arguments import MISSING, SpecError
from promptdeck.prompts.content import Image, Text
from promptdeck.protocol.errors import InternalError
from promptdeck.server.local import LocalClient
from promptdeck.sources.python import prompt_from_function


def test_signature_to_arguments() -> None:
    def review(code: str, level: int = 2, ratio: float = 0.5, strict: bool = False,
               lang: Literal["py", "go"] = "py", note: str | None = None,
               path: Annotated[str, Arg(description="A file", type="path", pattern=r".*\.py")] = "a.py") -> str:
        """Review some code."""
        return code

    p = prompt_from_function(review)
    assert p.name == "review" and p.description == "Review some code."
    args = {a.name: a for a in p.arguments}
    assert args["code"].required and args["code"].type == "string"
    assert (args["level"].type, args["level"].default) == ("integer", 2)
    assert (args["ratio"].type, args["strict"].type) == ("number", "boolean")
    assert args["lang"].enum == ("py", "go")
    assert not args["note"].required and args["note"].default is MISSING
    assert args["path"].type == "path" and args["path"].description == "A file"


def test_unsupported_signatures_are_spec_errors() -> None:
    def bad(items: list[str]) -> str:
        return ""

    def star(*args: str) -> str:
        return ""

    with pytest.raises(SpecError, match="items"):
        prompt_from_function(bad)
    with pytest.raises(SpecError, match=r"\*args"):
        prompt_from_function(star)


def test_results_become_messages_and_context_reports_progress() -> None:
    server = PromptServer()

    @server.prompt(title="Two", tags=["x"])
    def two(topic: str, ctx: RenderContext) -> list[Any]:
        ctx.progress(1, 1)
        return [user(f"about {topic}"), assistant("ok"), Image(b"\x89PNG", "image/png")]

    @server.prompt("async-one")
    async def one() -> str:
        await asyncio.sleep(0)
        return "async"

    @server.prompt()
    def wrong() -> int:
        return 5

    p = server.catalog.require("two")
    messages = p.render({"topic": "t"}, RenderContext("two"))
    assert isinstance(messages, list)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[0].content == Text("about t")
    client = LocalClient(server, "2025-11-25")
    assert client.request("prompts/get", {"name": "async-one"})["result"]["messages"][0]["content"]["text"] == "async"
    assert client.request("prompts/get", {"name": "wrong"})["error"]["code"] == -32603
    with pytest.raises(InternalError):
        server.catalog.require("wrong").render({}, RenderContext("wrong"))


def test_completer_decorator_serves_any_prompt() -> None:
    server = PromptServer()

    @server.prompt()
    def greet(name: str) -> str:
        return f"hi {name}"

    @server.completer("greet", "name")
    def names(value: str, context: Mapping[str, str]) -> list[str]:
        return [n for n in ["ada", "alan", "grace"] if n.startswith(value)]

    client = LocalClient(server, "2025-11-25")
    result = client.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                    "argument": {"name": "name", "value": "a"}})
    assert result["result"]["completion"] == {"values": ["ada", "alan"], "total": 2, "hasMore": False}
    missing = client.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                     "argument": {"name": "nope", "value": ""}})
    assert missing["error"]["code"] == -32602
