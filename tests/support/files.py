"""Prompt files for a test: written into a folder, loaded as a FileSource, rendered as prompts/get does."""

from __future__ import annotations

from pathlib import Path

from promptdeck.prompts.arguments import bind
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Message
from promptdeck.sources.files.source import FileSource

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
Files = dict[str, str | bytes]


def write(root: Path, files: Files) -> Path:
    """Writes ``files`` (relative path -> text or bytes) under ``root``; returns ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def load(root: Path, files: Files, *, compile_all: bool = True) -> FileSource:
    write(root, files)
    source = FileSource(root)
    source.load(compile_all=compile_all)
    return source


def prompts(source: FileSource) -> dict[str, Prompt]:
    return {p.name: p for p in source.prompts()}


def only(source: FileSource) -> Prompt:
    [prompt] = source.prompts()
    return prompt


def render(prompt: Prompt, **raw: str) -> list[Message]:
    """What prompts/get does: bind the client's strings (defaults, types), then render."""
    result = prompt.render(bind(prompt.arguments, raw, prompt.name), RenderContext(prompt.name))
    assert isinstance(result, list)
    return result


def skill_md(name: str = "pdf", description: str = "Work with PDFs", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n# {name}\n\nDo the work.\n"
