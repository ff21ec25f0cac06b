"""Assertions the interop suites share, whatever the era or transport of the SDK client driving promptdeck."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.libraries import EXAMPLE_ARGS

#: ``session.get_prompt`` or ``Client.get_prompt``: a prompt's name and arguments to its result.
GetPrompt = Callable[[str, dict[str, str]], Awaitable[types.GetPromptResult]]


def prompt_text(result: types.GetPromptResult) -> str:
    """The text of a rendered prompt: its text blocks and embedded text resources, one per line."""
    parts: list[str] = []
    for message in result.messages:
        content = message.content
        if content.type == "text":
            parts.append(content.text)
        elif content.type == "resource" and isinstance(content.resource, types.TextResourceContents):
            parts.append(content.resource.text)
    return "\n".join(parts)


async def check_examples_render(get: GetPrompt, *, skip: Collection[str] = ()) -> None:
    """Every example prompt renders with ``EXAMPLE_ARGS``, and shows the argument values given."""
    for name, arguments in sorted(EXAMPLE_ARGS.items()):
        if name in skip:
            continue
        result = await get(name, arguments)
        assert result.messages, name
        for value in arguments.values():
            if not value.startswith("_material/"):
                assert value in prompt_text(result), (name, value)


async def check_argument_errors(get: GetPrompt) -> None:
    """An unknown prompt, and a missing, invalid or unknown argument, are -32602 naming the culprit."""
    for name, arguments, culprit in [
        ("no-such-prompt", {}, "no-such-prompt"),
        ("code-review", {}, "'code'"),
        ("code-review", {"code": "x", "strictness": "eleven"}, "strictness"),
        ("code-review", {"code": "x", "colour": "red"}, "colour"),
    ]:
        with pytest.raises(MCPError) as err:
            await get(name, arguments)
        assert err.value.error.code == -32602 and culprit in err.value.error.message, (name, arguments)


#: ``session.complete`` or ``Client.complete``: a reference and the argument being typed to completions.
Complete = Callable[[types.PromptReference, dict[str, str]], Awaitable[types.CompleteResult]]


async def check_completions(complete: Complete) -> None:
    """Completion of an enum argument, and of a path argument from the library's files."""
    done = await complete(types.PromptReference(type="ref/prompt", name="code-review"),
                          {"name": "language", "value": "py"})
    assert done.completion.values == ["python"]
    assert done.completion.total == 1 and done.completion.has_more is False
    files = await complete(types.PromptReference(type="ref/prompt", name="write-tests"),
                           {"name": "source", "value": "_material/s"})
    assert "_material/service.py" in files.completion.values


async def all_pages(fetch: Callable[[str | None], Awaitable[types.ListPromptsResult]]) -> list[types.ListPromptsResult]:
    """Every page of ``prompts/list``, fetching each with the cursor the previous one returned."""
    pages = [await fetch(None)]
    while pages[-1].next_cursor is not None:
        pages.append(await fetch(pages[-1].next_cursor))
    return pages
