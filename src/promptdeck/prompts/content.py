"""What a rendered prompt is made of: messages holding one content block each.

These are the domain's own types; ``to_wire`` shapes them for one protocol
revision, leaving out what that revision lacks and down-converting
``resource_link`` to text before 2025-06-18.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ..protocol.errors import InternalError
from ..protocol.revisions import Revision

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")


class Annotations(msgspec.Struct, frozen=True):
    audience: tuple[Role, ...] | None = None
    priority: float | None = None
    last_modified: str | None = None

    def to_wire(self, rev: Revision) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        if self.audience is not None:
            out["audience"] = list(self.audience)
        if self.priority is not None:
            out["priority"] = self.priority
        if self.last_modified is not None and rev.last_modified:
            out["lastModified"] = self.last_modified
        return out or None


class Text(msgspec.Struct, frozen=True):
    text: str
    annotations: Annotations | None = None


class Image(msgspec.Struct, frozen=True):
    data: bytes
    mime_type: str
    annotations: Annotations | None = None


class Audio(msgspec.Struct, frozen=True):
    data: bytes
    mime_type: str
    annotations: Annotations | None = None


class Resource(msgspec.Struct, frozen=True):
    """An embedded resource: ``text`` or ``blob`` (raw bytes, sent base64)."""

    uri: str
    mime_type: str
    text: str | None = None
    blob: bytes | None = None
    annotations: Annotations | None = None


class ResourceLink(msgspec.Struct, frozen=True):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None


Content = Text | Image | Audio | Resource | ResourceLink


class Message(msgspec.Struct, frozen=True):
    role: Role
    content: Content

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be 'user' or 'assistant', got {self.role!r}")


def user(content: str | Content) -> Message:
    """A user message; a string becomes a text block."""
    return Message("user", Text(content) if isinstance(content, str) else content)


def assistant(content: str | Content) -> Message:
    """An assistant message; a string becomes a text block."""
    return Message("assistant", Text(content) if isinstance(content, str) else content)


def _b64(data: bytes) -> str:
    import base64  # only binary content needs it: not at the top, which is on the stdio start-up path (issue 29)

    return base64.b64encode(data).decode("ascii")


def content_to_wire(content: Content, rev: Revision) -> dict[str, Any]:
    out: dict[str, Any]
    if isinstance(content, Text):
        out = {"type": "text", "text": content.text}
    elif isinstance(content, Image):
        out = {"type": "image", "data": _b64(content.data), "mimeType": content.mime_type}
    elif isinstance(content, Audio):
        if not rev.audio:
            raise InternalError(f"audio content cannot be sent to a {rev.version} client")
        out = {"type": "audio", "data": _b64(content.data), "mimeType": content.mime_type}
    elif isinstance(content, Resource):
        res: dict[str, Any] = {"uri": content.uri, "mimeType": content.mime_type}
        if content.blob is not None:
            res["blob"] = _b64(content.blob)
        else:
            res["text"] = content.text or ""
        out = {"type": "resource", "resource": res}
    else:
        if not rev.resource_link:
            # No link type before 2025-06-18: name the link in words so nothing is lost.
            label = content.title or content.name
            text = f"{label}: {content.uri}"
            if content.description:
                text += f" ({content.description})"
            out = {"type": "text", "text": text}
        else:
            out = {"type": "resource_link", "uri": content.uri, "name": content.name}
            if content.title is not None:
                out["title"] = content.title
            if content.description is not None:
                out["description"] = content.description
            if content.mime_type is not None:
                out["mimeType"] = content.mime_type
            if content.size is not None:
                out["size"] = content.size
    if content.annotations is not None:
        wire = content.annotations.to_wire(rev)
        if wire:
            out["annotations"] = wire
    return out


def messages_to_wire(messages: list[Message], rev: Revision) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": content_to_wire(m.content, rev)} for m in messages]
