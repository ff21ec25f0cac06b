"""What a server's prompts look like to promptdeck's client: typed, immutable, decoded by msgspec.

The content of a rendered prompt is ``protocol.content``'s, the server's own types. The shapes follow the
MCP schema of every revision at once: fields a revision lacks (``title``,
``icons``, ``_meta``) are simply absent in older servers' answers, and unknown fields are ignored,
so one set of types reads 2024-11-05 through 2026-07-28.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ..protocol.content import (
    Audio,
    Content,
    Image,
    Message,
    Resource,
    ResourceContents,
    ResourceLink,
    Text,
)

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


# The content blocks are the server's own (``protocol.content``): one model, decoded straight from the
# wire. The names below are the client's for them, kept for code written against the client.
TextContent = Text
ImageContent = Image
AudioContent = Audio
EmbeddedResource = Resource
ResourceLinkContent = ResourceLink
PromptMessage = Message
ContentBlock = Content


class RenderedPrompt(_Wire, frozen=True):
    """The answer to ``prompts/get``: what to send to the model."""

    messages: tuple[Message, ...]
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
