"""OpenAI's stored prompt objects: the JSON the ``v1/prompts`` API returns, one object per version.

An object is ``{"object": "prompt", "id", "name", "version", "is_default", "messages": [{"role",
"content": text or [{"type": "input_text", "text"}]}], "variables": {NAME: default text or {"type",
"default"}}, "model", and settings (``temperature``, ``top_p``, ``max_output_tokens``, ``reasoning``,
``text``, ``tools``)}``. An input is one object, a list, or ``{"object": "list", "data": [...]}``. Messages
are Responses API input messages (the ``openai`` package's types); their text is ``{{variable}}`` text.
The version marked default gets the label ``production`` (what the API serves without a version); images
and files in messages are named and left out.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .build import make_version
from .model import Imported, Version, decode_json, in_order, items, typed

#: What an object holds beside its messages that promptdeck keeps as model settings, as it is.
SETTINGS = ("model", "temperature", "top_p", "max_output_tokens", "reasoning", "text", "tools", "tool_choice",
            "truncation", "store")
_TEXT_PARTS = ("input_text", "output_text", "text")


class _Part(msgspec.Struct, kw_only=True):
    type: str
    text: str | None = None


class _Message(msgspec.Struct, kw_only=True):
    role: str
    content: str | list[_Part]
    type: str = "message"


class _Variable(msgspec.Struct, kw_only=True):
    type: str = "string"
    default: str | int | float | bool | None = None
    description: str | None = None


class _Object(msgspec.Struct, kw_only=True):
    id: str
    name: str | None = None
    version: str | int
    is_default: bool = False
    messages: list[_Message] = []
    instructions: str | None = None
    variables: dict[str, str | _Variable] = {}
    description: str | None = None


def read(data: bytes, where: str) -> list[Imported]:
    by_name: dict[str, list[tuple[_Object, dict[str, Any]]]] = {}
    for index, raw in enumerate(items(decode_json(data, where), where, "data")):
        label = raw.get("name") or raw.get("id") or f"record {index}"
        found = typed(raw, _Object, f"{where}: prompt {label!r}")
        by_name.setdefault(found.name or found.id, []).append((found, raw))
    return in_order(by_name, where, lambda pair: _order(pair[0].version), lambda pair: str(pair[0].version),
                    lambda pair: _version(*pair))


def _order(version: str | int) -> tuple[int, str]:
    text = str(version)
    return (int(text), "") if text.isdigit() else (1 << 62, text)


def _version(obj: _Object, raw: dict[str, Any]) -> Version:
    notes: list[str] = []
    messages: list[tuple[str, str]] = [("developer", obj.instructions)] if obj.instructions else []
    for message in obj.messages:
        if isinstance(message.content, str):
            messages.append((message.role, message.content))
            continue
        for part in message.content:
            if part.type not in _TEXT_PARTS:
                notes.append(f"a {part.type!r} part of a message (left out)")
        messages.append((message.role, "".join(p.text or "" for p in message.content if p.type in _TEXT_PARTS)))
    types: dict[str, str] = {}
    defaults: dict[str, Any] = {}
    for name, variable in obj.variables.items():
        if isinstance(variable, str):
            continue  # a value the dashboard tried it with: not a default the API fills in
        types[name] = variable.type
        if variable.default is not None:
            defaults[name] = variable.default
    model = {key: raw[key] for key in SETTINGS if raw.get(key) is not None}
    return make_version(str(obj.version), messages, "mustache", types=types, defaults=defaults,
                        declared=list(obj.variables), model=model, labels=["production"] if obj.is_default else [],
                        description=obj.description, message=f"OpenAI prompt {obj.id} version {obj.version}",
                        untranslated=notes)
