"""Reading one file of another tool's format as ``native.build`` does, and rendering the prompt it gives:
for the readers' unit tests (tests/sources/files/native/)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from promptdeck.prompts.arguments import bind
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Message, Text
from promptdeck.protocol.errors import PromptFileError
from promptdeck.sources.files import native
from promptdeck.sources.files.library import TemplateFolder
from promptdeck.sources.files.paths import prompt_format


def library(root: Path, files: dict[str, str] | None = None) -> TemplateFolder:
    """A library at ``root`` holding ``files`` (relative path -> text)."""
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return TemplateFolder(root)


def build(root: Path, rel: str, text: str) -> tuple[Prompt | None, list[PromptFileError]]:
    """``rel`` holding ``text`` read by its format's reader, as a folder's load reads it: the prompt, or the
    problems (each naming the file and its line)."""
    kind = prompt_format(rel)
    assert kind is not None and kind in native.READERS, rel
    return native.build(library(root, {rel: text}), rel, native.Native(kind, text))


def problem(root: Path, rel: str, text: str) -> tuple[str, int | None, str]:
    """The one problem of ``rel`` holding ``text``: (the file it names, its line, its reason)."""
    prompt, problems = build(root, rel, text)
    assert prompt is None, prompt
    [found] = problems
    return found.path, found.line, found.reason


def messages(prompt: Prompt, **raw: Any) -> list[Message]:
    """The messages ``prompt`` renders for the argument values ``raw``."""
    out = prompt.render(bind(prompt.arguments, raw, prompt.name), RenderContext(prompt.name))
    if not isinstance(out, list):
        out = asyncio.run(_awaited(out))
    return out


async def _awaited(pending: Any) -> list[Message]:
    result: list[Message] = await pending
    return result


def text(prompt: Prompt, **raw: Any) -> str:
    """The text of the one message ``prompt`` renders for ``raw`` ("" when it renders none)."""
    found = messages(prompt, **raw)
    if not found:
        return ""
    [message] = found
    assert isinstance(message.content, Text)
    return message.content.text
