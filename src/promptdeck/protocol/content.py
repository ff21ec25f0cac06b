"""What a prompt's messages are made of, once for the server and the client: MCP's content blocks.

The types follow the wire (camelCase names, a ``type`` tag, an embedded resource's contents nested
under ``resource``), so promptdeck's client decodes a server's answer straight into them, and the
server's prompts make the very same objects. Binary data (an image's, audio's, a blob's) is raw
``bytes`` here and base64 on the wire, both ways.

One model serves every revision: ``content_to_wire`` shapes a block for one revision, leaving out
what it lacks (``_meta`` and ``title`` before 2025-06-18, ``lastModified`` before its revision) and
down-converting what it cannot carry (``resource_link`` to text before 2025-06-18; audio before
2025-03-26 cannot be sent at all).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from .errors import InternalError
from .revisions import Revision

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")


class _Block(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel", gc=False):
    """Common settings: immutable, camelCase on the wire, defaults left out when encoding.

    ``gc=False``: the cyclic garbage collector does not track these objects. They are frozen and hold
    decoded JSON, so they cannot form a cycle (unless someone stores one inside its own ``_meta``), and a
    10,000-prompt listing makes tens of thousands of them: tracked, the collections they trigger took
    over half of the client's ``list_prompts`` time (benchmarks/bench_client.py).
    """


class Annotations(_Block, frozen=True):
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


class Text(_Block, frozen=True, tag_field="type", tag="text"):
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Image(_Block, frozen=True, tag_field="type", tag="image"):
    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Audio(_Block, frozen=True, tag_field="type", tag="audio"):
    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceContents(_Block, frozen=True):
    """An embedded resource's contents: ``text``, or ``blob`` (raw bytes) for binary data."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    def __post_init__(self) -> None:
        if self.text is not None and self.blob is not None:
            raise ValueError(f"resource {self.uri!r} holds text or a blob, not both")


class Resource(_Block, frozen=True, tag_field="type", tag="resource"):
    """An embedded resource (``resource(...)`` makes one from its parts)."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


#: The longest URI a server looks up or follows; a longer one is not found, and is not echoed whole in the error.
#: Here, below the server's params and the catalogs that both hold URIs to it.
MAX_URI_CHARS = 4096


class ResourceLink(_Block, frozen=True, tag_field="type", tag="resource_link"):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: tuple[dict[str, Any], ...] = ()
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


Content = Text | Image | Audio | Resource | ResourceLink


class Message(_Block, frozen=True):
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


def resource(uri: str, mime_type: str | None = None, *, text: str | None = None, blob: bytes | None = None,
             annotations: Annotations | None = None) -> Resource:
    """An embedded resource holding ``text`` or ``blob``."""
    return Resource(ResourceContents(uri, mime_type, text, blob), annotations)


def _b64(data: bytes) -> str:
    import base64  # only binary content needs it: not at the top, which is on the stdio start-up path

    return base64.b64encode(data).decode("ascii")


def contents_to_wire(inner: ResourceContents, rev: Revision) -> dict[str, Any]:
    """A resource's contents as ``rev`` carries them: an embedded resource's, or one of a ``resources/read``
    result. The MIME type is always sent (the prompts page asks for it)."""
    default = "application/octet-stream" if inner.blob is not None else "text/plain"
    out: dict[str, Any] = {"uri": inner.uri, "mimeType": inner.mime_type or default}
    if inner.blob is not None:
        out["blob"] = _b64(inner.blob)
    else:
        out["text"] = inner.text or ""
    if inner.meta is not None and rev.meta:
        out["_meta"] = inner.meta
    return out


def resource_to_wire(link: ResourceLink, rev: Revision) -> dict[str, Any]:
    """A link's fields as ``rev`` carries them (``title`` from 2025-06-18, ``icons`` from 2025-11-25), without
    its type, annotations or ``_meta``: a ``resource_link`` block's, and a ``resources/list`` entry's (the
    spec's ``Resource``, which a link is with a type)."""
    out: dict[str, Any] = {"uri": link.uri, "name": link.name}
    if link.title is not None and rev.titles:
        out["title"] = link.title
    if link.description is not None:
        out["description"] = link.description
    if link.mime_type is not None:
        out["mimeType"] = link.mime_type
    if link.size is not None:
        out["size"] = link.size
    if link.icons and rev.icons:
        out["icons"] = list(link.icons)
    return out


def content_to_wire(content: Content, rev: Revision) -> dict[str, Any]:
    """One block as ``rev`` carries it (see the module docstring)."""
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
        out = {"type": "resource", "resource": contents_to_wire(content.resource, rev)}
    elif not rev.resource_link:
        # No link type before 2025-06-18: name the link in words so nothing is lost.
        out = {"type": "text", "text": link_text(content)}
    else:
        out = {"type": "resource_link", **resource_to_wire(content, rev)}
    if content.annotations is not None:
        wire = content.annotations.to_wire(rev)
        if wire:
            out["annotations"] = wire
    # A block down-converted to another type (a link as text) keeps no _meta of the type it no longer is.
    if content.meta is not None and rev.meta and out["type"] == content.__struct_config__.tag:
        out["_meta"] = content.meta
    return out


def link_text(link: ResourceLink) -> str:
    """A link in words, for a peer that takes no link: its title (or name), URI and description."""
    text = f"{link.title or link.name}: {link.uri}"
    return f"{text} ({link.description})" if link.description else text


#: Where a block sent as text says what it was (``as_text``), and a result how many such blocks it has.
META_TEXT_RESOURCE = "promptdeck.dev/textResource"
META_TEXT_RESOURCES = "promptdeck.dev/textResources"


def as_text(content: Content) -> Content:
    """``content`` for a client that takes text blocks only (``serve --text-resources``): an embedded text
    resource becomes a text block of its text, a link the words an older revision gets (``link_text``), each
    with ``_meta`` saying what it was. Other blocks (a blob, an image, audio) are ``content`` itself."""
    if isinstance(content, Resource):
        inner = content.resource
        if inner.text is None:
            return content
        was = {"type": "resource", "uri": inner.uri, "mimeType": inner.mime_type or "text/plain"}
        return Text(inner.text, content.annotations, {**(content.meta or {}), META_TEXT_RESOURCE: was})
    if isinstance(content, ResourceLink):
        was = {"type": "resource_link", "uri": content.uri, "name": content.name}
        return Text(link_text(content), content.annotations, {**(content.meta or {}), META_TEXT_RESOURCE: was})
    return content


def messages_to_wire(messages: list[Message], rev: Revision, text_resources: bool = False) -> list[dict[str, Any]]:
    """The messages as ``rev`` carries them; with ``text_resources``, text resources and links as text
    (``as_text``)."""
    if text_resources:
        return [{"role": m.role, "content": content_to_wire(as_text(m.content), rev)} for m in messages]
    return [{"role": m.role, "content": content_to_wire(m.content, rev)} for m in messages]
