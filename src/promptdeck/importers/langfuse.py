"""Langfuse prompts: its prompts API's JSON, one record per version (``GET /api/public/v2/prompts/NAME``).

A record is ``{"name", "version", "type": "text"|"chat", "prompt": text or [{"role", "content"}],
"config", "labels", "tags", "commitMessage"}``; an input is one record, a list of them, or ``{"data": [...]}``
(``fetch.py`` gathers them from a server). ``prompt`` is ``{{variable}}`` text; ``config`` is kept as the
model settings; ``labels`` become labels (but ``latest``, which Langfuse moves by itself); a chat's
message placeholder and a ``@@@langfusePrompt:...@@@`` reference are named, not translated.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .build import make_version
from .model import Imported, in_order, items, name_of, refuse, typed

#: Langfuse moves ``latest`` to each new version itself: the newest version is promptdeck's newest too.
IMPLICIT_LABELS = frozenset({"latest"})


class _Message(msgspec.Struct, kw_only=True):
    type: str | None = None
    role: str | None = None
    content: str | None = None
    name: str | None = None


class _Record(msgspec.Struct, kw_only=True, rename="camel"):
    name: str
    version: int
    type: str = "text"
    prompt: str | list[_Message]
    config: dict[str, Any] | None = None
    labels: list[str] = []
    tags: list[str] = []
    commit_message: str | None = None


def read(data: bytes | Any, where: str) -> list[Imported]:
    """``data``: the input's bytes, or JSON already decoded (``fetch.py``)."""
    from .model import decode_json

    value = decode_json(data, where) if isinstance(data, bytes) else data
    by_name: dict[str, list[_Record]] = {}
    for index, raw in enumerate(items(value, where, "data", "prompts")):
        name = name_of(raw, "name", where, index)
        record = typed(raw, _Record, f"{where}: prompt {name!r}")
        if record.type not in ("text", "chat") or isinstance(record.prompt, str) != (record.type == "text"):
            raise refuse(where, f"prompt {name!r} version {record.version}: a {record.type!r} prompt with "
                         f"{'text' if isinstance(record.prompt, str) else 'messages'}")
        by_name.setdefault(name, []).append(record)
    return in_order(by_name, where, lambda r: r.version, lambda r: r.version, _version)


def _version(record: _Record) -> Any:
    messages: list[tuple[str, str]] = []
    notes: list[str] = []
    if isinstance(record.prompt, str):
        messages.append(("user", record.prompt))
    else:
        for message in record.prompt:
            if message.type == "placeholder" or message.content is None:
                notes.append(f"the message placeholder {message.name or ''!r} (messages given at run time)")
            else:
                messages.append((message.role or "user", message.content))
    return make_version(str(record.version), messages, "mustache", model=record.config or {},
                        labels=[label for label in record.labels if label not in IMPLICIT_LABELS],
                        tags=record.tags, message=record.commit_message or "", untranslated=notes)
