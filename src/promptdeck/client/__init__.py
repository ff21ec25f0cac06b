"""promptdeck's client: list, render, complete and watch the prompts of any MCP server."""

from __future__ import annotations

from .oauth import OAuth
from .oauth_store import TokenStore
from .resources import ResourceInfo, SkillFile, SkillInfo
from .session import Client, Elicit, Era, connect
from .skill_folder import fetch_skill
from .types import (
    ArgumentInfo,
    AudioContent,
    Completion,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ListChange,
    PromptInfo,
    PromptMessage,
    RenderedPrompt,
    ResourceContents,
    ResourceLinkContent,
    TextContent,
)

__all__ = [
    "ArgumentInfo",
    "AudioContent",
    "Client",
    "Completion",
    "ContentBlock",
    "Elicit",
    "EmbeddedResource",
    "Era",
    "ImageContent",
    "ListChange",
    "OAuth",
    "PromptInfo",
    "PromptMessage",
    "RenderedPrompt",
    "ResourceContents",
    "ResourceInfo",
    "ResourceLinkContent",
    "SkillFile",
    "SkillInfo",
    "TextContent",
    "TokenStore",
    "connect",
    "fetch_skill",
]
