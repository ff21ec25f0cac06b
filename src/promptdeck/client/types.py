"""What a server's prompts look like to promptdeck's client: typed, immutable, decoded by msgspec.

The shapes follow the MCP schema of every revision at once: fields a revision lacks (``title``,
``icons``, ``_meta``) are simply absent in older servers' answers, and unknown fields are ignored,
so one set of types reads 2024-11-05 through 2026-07-28.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

__all__ = [
    "ArgumentInfo",
    "AudioContent",
    "Completion",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ListChange",
    "PromptInfo",
    "PromptMessage",
    "RenderedPrompt",
    "ResourceContents",
    "ResourceLinkContent",
    "TextContent",
]

Role = Literal["user", "assistant"]


class _Wire(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel", gc=False):
    """Common settings: immutable (restated on each subclass for type checkers), camelCase on the
    wire, defaults left out when encoding.

    ``gc=False``: the cyclic garbage collector does not track these objects. They are frozen and hold
    decoded JSON, so they cannot form a cycle (unless someone stores one inside its own ``_meta``
    dict), and a 10,000-prompt listing makes ~40,000 of them: tracked, the collections they trigger
    took over half of ``list_prompts``' time (benchmarks/bench_client.py).
    """


class ArgumentInfo(_Wire, frozen=True):
    name: str
    title: str | None = None
    description: str | None = None
    required: bool = False


class PromptInfo(_Wire, frozen=True):
    """One entry of ``prompts/list``."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[ArgumentInfo, ...] = ()
    icons: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    @property
    def label(self) -> str:
        """What to show a person: the title if the server gave one, else the name."""
        return self.title or self.name


class TextContent(_Wire, frozen=True, tag_field="type", tag="text"):
    text: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ImageContent(_Wire, frozen=True, tag_field="type", tag="image"):
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class AudioContent(_Wire, frozen=True, tag_field="type", tag="audio"):
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceContents(_Wire, frozen=True):
    """An embedded resource's contents: ``text``, or ``blob`` (base64) for binary data."""

    uri: str
    text: str | None = None
    blob: str | None = None
    mime_type: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError(f"resource {self.uri!r} needs exactly one of text and blob")


class EmbeddedResource(_Wire, frozen=True, tag_field="type", tag="resource"):
    resource: ResourceContents
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceLinkContent(_Wire, frozen=True, tag_field="type", tag="resource_link"):
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: tuple[dict[str, Any], ...] = ()
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLinkContent


class PromptMessage(_Wire, frozen=True):
    role: Role
    content: ContentBlock


class RenderedPrompt(_Wire, frozen=True):
    """The answer to ``prompts/get``: what to send to the model."""

    messages: tuple[PromptMessage, ...]
    description: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Completion(_Wire, frozen=True):
    """Suggested values for an argument (at most 100; ``has_more`` says whether the server had more)."""

    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False


class ListChange(msgspec.Struct, frozen=True, kw_only=True):
    """The server's prompt list changed: the new listing and what differs from the one before."""

    prompts: tuple[PromptInfo, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
