"""Prompts defined in Python (sources/python.py and PromptServer.prompt): signatures become arguments,
docstrings descriptions, and whatever the function returns becomes messages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import pytest

from promptdeck import Arg, PromptServer, RenderContext, assistant, user
from promptdeck.prompts.arguments import MISSING, SpecError, bind
from promptdeck.prompts.spec import Prompt
from promptdeck.protocol.content import Audio, Image, Message, ResourceLink, Text, resource
from promptdeck.protocol.errors import InternalError
from promptdeck.protocol.revisions import LATEST
from promptdeck.server.local import LocalClient
from promptdeck.sources.python import PythonSource, prompt_from_function


def run(prompt: Prompt, **raw: str) -> list[Message]:
    """Bind the client's strings like prompts/get does and render, awaiting an async prompt."""
    result: Any = prompt.render(bind(prompt.arguments, raw, prompt.name), RenderContext(prompt.name))
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    assert isinstance(result, list)
    return result


def get(server: PromptServer, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return LocalClient(server, LATEST.version).request("prompts/get", params)


# -- signatures ---------------------------------------------------------------------------------------


def test_signature_to_arguments() -> None:
    def review(code: str, level: int = 2, ratio: float = 0.5, strict: bool = False,  # type: ignore[no-untyped-def]
               lang: Literal["py", "go"] = "py", size: Literal[1, 2, 3] = 2, note: str | None = None,
               other: Optional[str] = None, untyped="x",  # noqa: UP045
               path: Annotated[str, Arg(description="A file", title="File", type="path", pattern=r".*\.py",
                                        max=50, examples=("a.py",))] = "a.py") -> str:
        return code

    p = prompt_from_function(review)
    args = {a.name: a for a in p.arguments}
    assert list(args) == ["code", "level", "ratio", "strict", "lang", "size", "note", "other", "untyped", "path"]
    assert (args["code"].type, args["code"].required, args["code"].default) == ("string", True, MISSING)
    assert (args["level"].type, args["level"].default, args["level"].required) == ("integer", 2, False)
    assert (args["ratio"].type, args["ratio"].default) == ("number", 0.5)
    assert (args["strict"].type, args["strict"].default) == ("boolean", False)
    assert (args["lang"].type, args["lang"].enum, args["lang"].default) == ("string", ("py", "go"), "py")
    assert (args["size"].type, args["size"].enum) == ("integer", (1, 2, 3))
    for optional in ("note", "other"):
        assert (args[optional].type, args[optional].required, args[optional].default) == ("string", False, MISSING)
    assert (args["untyped"].type, args["untyped"].default) == ("string", "x")
    path = args["path"]
    assert (path.type, path.description, path.title, path.max, path.examples) == ("path", "A file", "File", 50,
                                                                                  ("a.py",))
    assert path.pattern is not None and path.pattern.pattern == r".*\.py"
    assert args["lang"].wire_description == "(one of: py, go; default: py)"


def test_annotated_arg_bounds_and_types() -> None:
    def scored(n: Annotated[int, Arg(min=1, max=5, description="Score")],
               flag: Optional[bool] = None) -> str:  # noqa: UP045
        return f"{n!r} {flag!r}"

    p = prompt_from_function(scored)
    n, flag = p.arguments
    assert (n.type, n.min, n.max, n.required, n.wire_description) == ("integer", 1, 5, True, "Score (integer 1..5)")
    assert (flag.type, flag.required) == ("boolean", False)
    assert run(p, n="4", flag="yes")[0].content == Text("4 True")
    assert run(p, n="4")[0].content == Text("4 None")


def test_names_titles_and_descriptions() -> None:
    def code_review(x: str) -> str:
        """Review code.

            Indented detail line.
        """
        return x

    def no_doc() -> str:
        return ""

    p = prompt_from_function(code_review)
    assert p.name == "code_review"  # the function's own name, as the official SDK gives it
    assert p.description == "Review code.\n\nIndented detail line."
    assert p.title is None and p.source == f"python:{__name__}.{code_review.__qualname__}"
    assert prompt_from_function(no_doc).description is None
    named = prompt_from_function(code_review, name="cr", title="Code review", description="Own words",
                                 tags=["code"], icons=[{"src": "https://example.com/i.png"}])
    assert (named.name, named.title, named.description, named.tags) == ("cr", "Code review", "Own words",
                                                                        frozenset({"code"}))
    assert named.icons == ({"src": "https://example.com/i.png"},)


@pytest.mark.parametrize("signature_of, words", [
    ("list", "argument 'items': type list[str] is not one of str, int, float, bool, Literal"),
    ("dict", "argument 'd'"),
    ("star", r"*args and **kwargs cannot be prompt arguments"),
    ("kwargs", r"*args and **kwargs cannot be prompt arguments"),
    ("badtype", "argument 'a': type "),
    ("baddefault", "default 'many': argument 'n' must be an integer"),
])
def test_unsupported_signatures_are_spec_errors(signature_of: str, words: str) -> None:
    def list_(items: list[str]) -> str:
        return ""

    def dict_(d: dict[str, int]) -> str:
        return ""

    def star(*args: str) -> str:
        return ""

    def kwargs(**kw: str) -> str:
        return ""

    def badtype(a: Annotated[str, Arg(type="date")]) -> str:
        return ""

    def baddefault(n: int = "many") -> str:  # type: ignore[assignment]
        return ""

    fns: dict[str, Callable[..., Any]] = {"list": list_, "dict": dict_, "star": star, "kwargs": kwargs,
                                          "badtype": badtype, "baddefault": baddefault}
    with pytest.raises(SpecError) as err:
        prompt_from_function(fns[signature_of])
    assert words in str(err.value)


def test_a_bad_name_is_refused() -> None:
    def fine() -> str:
        return ""

    with pytest.raises(ValueError, match="prompt name 'has space'"):
        prompt_from_function(fine, name="has space")


# -- results ------------------------------------------------------------------------------------------


def test_a_string_is_one_user_message() -> None:
    def greet(name: str, times: int = 1) -> str:
        return f"hello {name} x{times!r}"

    assert run(prompt_from_function(greet), name="ada", times="3") == [Message("user", Text("hello ada x3"))]


def test_a_message_a_block_and_lists_of_them() -> None:
    image = Image(b"\x89PNG", "image/png")

    def one_message() -> Message:
        return assistant("ok")

    def one_block() -> Image:
        return image

    def many() -> list[Any]:
        return [user("a"), "b", (assistant("c"), resource("u", "text/plain", text="r")),
                [ResourceLink("https://x", "x")], Audio(b"a", "audio/wav")]

    assert run(prompt_from_function(one_message)) == [Message("assistant", Text("ok"))]
    assert run(prompt_from_function(one_block)) == [Message("user", image)]
    assert run(prompt_from_function(many)) == [
        Message("user", Text("a")), Message("user", Text("b")), Message("assistant", Text("c")),
        Message("user", resource("u", "text/plain", text="r")), Message("user", ResourceLink("https://x", "x")),
        Message("user", Audio(b"a", "audio/wav"))]


def test_an_empty_list_is_no_messages() -> None:
    def nothing() -> list[Message]:
        return []

    assert run(prompt_from_function(nothing)) == []


@pytest.mark.parametrize("value, kind", [(5, "int"), (None, "NoneType"), ({"role": "user"}, "dict"),
                                         (["ok", 3.5], "float"), (b"bytes", "bytes")])
def test_a_bad_return_value_is_internal_error(value: Any, kind: str) -> None:
    def wrong() -> Any:
        return value

    with pytest.raises(InternalError) as err:
        run(prompt_from_function(wrong))
    assert err.value.code == -32603 and err.value.message == "Internal error"
    assert err.value.detail == f"prompt 'wrong' returned {kind}; return str, Message or a list"


def test_async_prompts() -> None:
    async def later(topic: str) -> list[Message]:
        await asyncio.sleep(0)
        return [user(f"about {topic}"), assistant("sure")]

    async def bad() -> int:
        return 5

    p = prompt_from_function(later)
    pending = p.render({"topic": "t"}, RenderContext("later"))
    assert asyncio.iscoroutine(pending)
    assert asyncio.run(pending) == [Message("user", Text("about t")), Message("assistant", Text("sure"))]
    with pytest.raises(InternalError, match="Internal error"):
        run(prompt_from_function(bad))


def test_render_context_is_passed_to_the_parameter_annotated_with_it() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    def slow(topic: str, context: RenderContext, level: int = 1) -> str:
        context.progress(1, 2, "half")
        context.progress(2, 2)
        return f"{context.prompt}: {topic} {level}"

    p = prompt_from_function(slow)
    assert [a.name for a in p.arguments] == ["topic", "level"]
    result = p.render({"topic": "x", "level": 3},
                      RenderContext("slow", lambda done, total, message: seen.append((done, total, message))))
    assert result == [Message("user", Text("slow: x 3"))]
    assert seen == [(1, 2, "half"), (2, 2, None)]
    # Without a progress callback, progress is a no-op.
    assert run(p, topic="y") == [Message("user", Text("slow: y 1"))]


def test_an_optional_parameter_without_default_gets_none() -> None:
    def maybe(note: str | None) -> str:
        return f"note={note}"

    p = prompt_from_function(maybe)
    assert not p.arguments[0].required
    assert run(p) == [Message("user", Text("note=None"))]


def test_positional_only_parameters_work_or_are_refused() -> None:
    def positional(a: str, /) -> str:
        return a

    try:
        p = prompt_from_function(positional)
    except SpecError:
        return
    assert run(p, a="x") == [Message("user", Text("x"))]


# -- PromptServer.prompt and completer ----------------------------------------------------------------


def test_the_decorator_registers_and_returns_the_function() -> None:
    server = PromptServer()

    @server.prompt(title="Two", tags=["x"], icons=[{"src": "https://example.com/i.png"}])
    def two_things(topic: str) -> str:
        """Talk about a topic."""
        return f"about {topic}"

    assert two_things("direct") == "about direct"
    p = server.catalog.require("two_things").parsed()
    assert (p.title, p.description, p.tags) == ("Two", "Talk about a topic.", frozenset({"x"}))
    assert p.descriptor(LATEST)["icons"] == [{"src": "https://example.com/i.png"}]

    @server.prompt("custom.name")
    def whatever() -> str:
        return "w"

    assert server.catalog.names == ["custom.name", "two_things"]


def test_python_prompts_through_a_session() -> None:
    server = PromptServer()

    @server.prompt()
    def greet(name: str, excited: bool = False) -> str:
        """Greet someone."""
        return f"hi {name}{'!' if excited else '.'}"

    @server.prompt("async-one")
    async def one() -> str:
        await asyncio.sleep(0)
        return "async"

    assert get(server, "greet", {"name": "ada", "excited": "yes"})["result"] == {
        "description": "Greet someone.",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi ada!"}}]}
    assert get(server, "async-one")["result"]["messages"][0]["content"]["text"] == "async"
    missing = get(server, "greet")["error"]
    assert missing["code"] == -32602 and "missing required argument 'name'" in missing["message"]
    bad = get(server, "greet", {"name": "x", "excited": "perhaps"})["error"]
    assert bad["code"] == -32602 and "argument 'excited' must be true or false" in bad["message"]


def test_a_bad_return_type_is_a_generic_error_on_the_wire_and_details_in_the_log(
        caplog: pytest.LogCaptureFixture) -> None:
    server = PromptServer()

    @server.prompt()
    def wrong() -> int:
        return 5

    @server.prompt()
    async def wrong_async() -> int:
        return 6

    with caplog.at_level(logging.ERROR, logger="promptdeck"):
        for name in ("wrong", "wrong_async"):
            assert get(server, name)["error"] == {"code": -32603, "message": "Internal error"}
    assert "prompt 'wrong' returned int" in caplog.text
    assert "prompt 'wrong_async' returned int" in caplog.text


def test_a_raising_prompt_is_internal_error() -> None:
    server = PromptServer()

    @server.prompt()
    def boom() -> str:
        raise RuntimeError("secret detail")

    error = get(server, "boom")["error"]
    assert error == {"code": -32603, "message": "Internal error"}


def test_completer_decorator() -> None:
    server = PromptServer()

    @server.prompt()
    def greet(name: str, lang: Literal["en", "de"] = "en") -> str:
        return f"hi {name}"

    @server.completer("greet", "name")
    def names(value: str, context: Mapping[str, str]) -> list[str]:
        base = ["ada", "alan", "grace"] if context.get("lang") != "de" else ["anna"]
        return [n for n in base if n.startswith(value)]

    assert names("g", {}) == ["grace"]  # the decorator returns the function
    assert server.completers[("greet", "name")] is names
    client = LocalClient(server, "2025-11-25")

    def complete(argument: str, value: str, context: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": {"type": "ref/prompt", "name": "greet"},
                                  "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        return client.request("completion/complete", params)

    assert complete("name", "a")["result"]["completion"] == {"values": ["ada", "alan"], "total": 2, "hasMore": False}
    assert complete("name", "a", {"lang": "de"})["result"]["completion"]["values"] == ["anna"]
    assert complete("lang", "")["result"]["completion"]["values"] == ["en", "de"]
    assert complete("nope", "")["error"]["code"] == -32602


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_an_async_completer_is_awaited_and_bounded(revision: str, monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    from promptdeck import Suggestions
    from promptdeck.prompts import completion
    from promptdeck.protocol.errors import InvalidParams

    server = PromptServer()

    @server.prompt()
    def find(topic: str, team: str = "", owner: str = "") -> str:
        return topic

    @server.completer("find", "topic")
    async def topics(value: str, context: Mapping[str, str]) -> list[str]:
        await asyncio.sleep(0)
        return ["learning", "Lean", "machine learning"]

    @server.completer("find", "team")
    async def teams(value: str, context: Mapping[str, str]) -> list[str]:
        if value == "?":
            raise InvalidParams("team: type a letter first", {"argument": "team"})
        if value == "boom":
            raise RuntimeError("secret detail")
        await asyncio.Event().wait()  # never answers
        return []

    @server.completer("find", "owner")
    def owners(value: str, context: Mapping[str, str]) -> Suggestions:
        return Suggestions(["Grace Hopper", "Ada"], total=40, has_more=True)  # chosen by the hook: kept as is

    client = LocalClient(server, revision)

    def complete(argument: str, value: str) -> dict[str, Any]:
        return client.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "find"},
                                                      "argument": {"name": argument, "value": value}})

    # Ranked by the typed prefix, as a sync completer's values are: exact case first.
    assert complete("topic", "le")["result"]["completion"] == {"values": ["learning", "Lean"], "total": 2,
                                                               "hasMore": False}
    assert complete("owner", "x")["result"]["completion"] == {"values": ["Grace Hopper", "Ada"], "total": 40,
                                                              "hasMore": True}
    refused = complete("team", "?")["error"]
    assert refused["code"] == -32602 and refused["message"] == "team: type a letter first"
    with caplog.at_level(logging.ERROR, logger="promptdeck"):
        assert complete("team", "boom")["error"] == {"code": -32603, "message": "Internal error"}
        monkeypatch.setattr(completion, "HOOK_SECONDS", 0.01)
        assert complete("team", "a")["error"] == {"code": -32603, "message": "Internal error"}
    assert "completer for find/team failed: RuntimeError('secret detail')" in caplog.text
    assert "completer for find/team did not answer within 0.01 s" in caplog.text


def test_a_pending_async_completer_holds_up_no_other_request() -> None:
    """Over HTTP, while a completer waits, the same server answers another request; only then does the
    completer get what it waits for (ordering alone: a completer that held the loop would never answer)."""
    import httpx

    from promptdeck.server.http.app import create_app
    from tests.support.modern import BOTH, headers_for, request

    server = PromptServer()
    released = asyncio.Event()

    @server.prompt()
    def find(topic: str) -> str:
        return topic

    @server.completer("find", "topic")
    async def topics(value: str, context: Mapping[str, str]) -> list[str]:
        await released.wait()
        return ["later"]

    async def run() -> list[str]:
        order: list[str] = []
        app = create_app(server, stateless=True)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            async def ask(message: dict[str, Any], name: str) -> None:
                answer = await client.post("/mcp", json=message, headers={**headers_for(message), "accept": BOTH})
                assert answer.status_code == 200, answer.text
                order.append(name)
                if name == "list":
                    released.set()

            completing = request(1, "completion/complete", {"ref": {"type": "ref/prompt", "name": "find"},
                                                            "argument": {"name": "topic", "value": ""}})
            async with asyncio.timeout(30):  # a completer holding the loop would hang here, not pass
                await asyncio.gather(ask(completing, "complete"), ask(request(2, "prompts/list"), "list"))
        return order

    assert asyncio.run(run()) == ["list", "complete"]


def test_completer_for_a_file_prompt(tmp_path: Path) -> None:
    (tmp_path / "ask.md").write_text("---\narguments:\n  - {name: team}\n---\nAsk {{ team }}\n")
    server = PromptServer()
    server.add_folder(tmp_path)

    @server.completer("ask", "team")
    def teams(value: str, context: Mapping[str, str]) -> list[str]:
        return ["ops", "web"]

    result = LocalClient(server, "2025-11-25").request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "ask"}, "argument": {"name": "team", "value": "w"}})
    assert result["result"]["completion"]["values"] == ["web"]


def test_python_source_on_its_own() -> None:
    source = PythonSource()

    @source.prompt()
    def a() -> str:
        return "a"

    def b() -> str:
        return "b"

    source.add(prompt_from_function(b, name="bee"))
    assert [p.name for p in source.prompts()] == ["a", "bee"]
    # Registering a name again replaces the prompt.
    source.add(prompt_from_function(a, name="bee"))
    assert run(source.prompts()[1]) == [Message("user", Text("a"))]
