"""Prompts and rendered messages as terminal text (the cli layer's; nothing here prints). What the server
sent goes through the terminal gate (``terminal.shown``) here, as the text is made."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from typing import Any

import msgspec

from ..client.types import PromptInfo, RenderedPrompt
from .terminal import Shown, shown, styled

WIDTH = 72


def format_messages(result: RenderedPrompt | dict[str, Any], *, color: bool = True) -> Shown:
    """A prompts/get result (typed, or as it came off the wire) as readable text, one block per message: the
    messages' text keeps its lines, with every control sequence escaped; a role or description is one line."""
    wire: dict[str, Any] = msgspec.to_builtins(result) if isinstance(result, RenderedPrompt) else result
    look = styled if color else _plain
    lines: list[str] = []
    for message in wire["messages"]:
        lines.append(look(f"── {shown(message['role'])} ".ljust(WIDTH, "─"), bold=True))
        lines.append(shown(describe_content(message["content"]), lines=True))
    if wire.get("description"):
        lines.append(look(f"({shown(wire['description'])})", dim=True))
    return Shown("\n".join(lines))


def _plain(text: str, **_: Any) -> str:
    return shown(text, lines=True)


def _size(data: str) -> str:
    try:
        return f"{len(base64.b64decode(data, validate=True)):,} bytes"
    except (binascii.Error, ValueError):
        return "invalid base64"


def describe_content(content: dict[str, Any]) -> str:
    """Text as is; binary content as a one-line summary."""
    kind = content.get("type")
    if kind == "text":
        return str(content["text"])
    if kind in ("image", "audio"):
        return f"[{kind} {content.get('mimeType', '?')}, {_size(content.get('data', ''))}]"
    if kind == "resource":
        resource = content["resource"]
        head = f"[resource {resource['uri']} ({resource.get('mimeType', '?')})]"
        if "text" in resource:
            return f"{head}\n{resource['text']}"
        return f"{head} {_size(resource.get('blob', ''))}"
    if kind == "resource_link":
        return f"[link {content.get('title') or content['name']}: {content['uri']}]"
    return json.dumps(content)


def arguments_summary(prompt: PromptInfo) -> str:
    """``code*, language``: the arguments, required ones starred."""
    return ", ".join(arg.name + ("*" if arg.required else "") for arg in prompt.arguments)


def format_table(prompts: Iterable[PromptInfo], width: int = 120) -> str:
    """Name, title and arguments in aligned columns, cut to ``width``."""
    rows = [(shown(p.name), shown(p.title or ""), shown(arguments_summary(p))) for p in prompts]
    if not rows:
        return "(no prompts)"
    header = ("NAME", "TITLE", "ARGUMENTS (* required)")
    name_w = max(len(header[0]), *(len(r[0]) for r in rows))
    title_w = min(max(len(header[1]), *(len(r[1]) for r in rows)), 40)
    out = []
    for name, title, args in (header, *rows):
        title = title if len(title) <= title_w else title[: title_w - 1] + "…"
        line = f"{name.ljust(name_w)}  {title.ljust(title_w)}  {args}".rstrip()
        out.append(line if len(line) <= width else line[: width - 1] + "…")
    return "\n".join(out)
