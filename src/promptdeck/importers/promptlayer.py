"""PromptLayer prompt templates: its template export, one record per version.

A record is PromptLayer's prompt template as its API gives it: ``{"prompt_name", "version",
"prompt_template": {"type": "chat"|"completion", "messages": [{"role", "content": [{"type": "text",
"text"}]}] or "content": [...], "input_variables", "template_format": "f-string"|"jinja2"}, "metadata":
{"model": {"provider", "name", "parameters"}}, "release_labels", "tags", "commit_message"}``. An input is one
record, a list of them, or ``{"prompt_templates": [...]}``. The model's provider, name and parameters
become the model settings; release labels become labels; ``@@@snippet@@@`` references are named.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .build import make_version
from .model import Imported, Version, decode_json, in_order, items, name_of, typed


class _Content(msgspec.Struct, kw_only=True):
    type: str = "text"
    text: str | None = None


class _Message(msgspec.Struct, kw_only=True):
    role: str = "user"
    content: list[_Content] | str = []
    template_format: str | None = None


class _Template(msgspec.Struct, kw_only=True):
    type: str = "chat"
    messages: list[_Message] = []
    content: list[_Content] | str = []
    input_variables: list[str] = []
    template_format: str = "f-string"


class _Model(msgspec.Struct, kw_only=True):
    provider: str | None = None
    name: str | None = None
    parameters: dict[str, Any] = {}


class _Metadata(msgspec.Struct, kw_only=True):
    model: _Model | None = None


class _Record(msgspec.Struct, kw_only=True):
    prompt_name: str
    version: int
    prompt_template: _Template
    metadata: _Metadata | None = None
    release_labels: list[str] = []
    tags: list[str] = []
    commit_message: str | None = None


def read(data: bytes, where: str) -> list[Imported]:
    by_name: dict[str, list[_Record]] = {}
    for index, raw in enumerate(items(decode_json(data, where), where, "prompt_templates", "items")):
        name = name_of(raw, "prompt_name", where, index)
        by_name.setdefault(name, []).append(typed(raw, _Record, f"{where}: prompt {name!r}"))
    return in_order(by_name, where, lambda r: r.version, lambda r: r.version, _version)


def _text(content: list[_Content] | str, notes: list[str]) -> str:
    if isinstance(content, str):
        return content
    for part in content:
        if part.type != "text":
            notes.append(f"a {part.type!r} part of a message (left out)")
    return "".join(part.text or "" for part in content if part.type == "text")


def _version(record: _Record) -> Version:
    template = record.prompt_template
    notes: list[str] = []
    if template.type == "completion":
        messages = [("user", _text(template.content, notes))]
        syntaxes = [template.template_format]
    else:
        messages = [(m.role, _text(m.content, notes)) for m in template.messages]
        syntaxes = [m.template_format or template.template_format for m in template.messages]
    model: dict[str, Any] = {}
    if record.metadata is not None and record.metadata.model is not None:
        given = record.metadata.model
        model = {k: v for k, v in (("provider", given.provider), ("name", given.name)) if v is not None}
        model.update(given.parameters)
    return make_version(str(record.version), messages, syntaxes, declared=template.input_variables, model=model,
                        labels=record.release_labels, tags=record.tags, message=record.commit_message or "",
                        untranslated=notes)
