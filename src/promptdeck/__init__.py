"""promptdeck: serve a prompt library to any MCP client, and read the prompts of any MCP server."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .application import PromptListing, Prompts, Rendered
    from .client.session import Client, connect
    from .prompts.arguments import Argument
    from .prompts.catalog import Catalog
    from .prompts.completion import Suggestions
    from .prompts.spec import Prompt, RenderContext
    from .protocol.content import (
        Annotations,
        Audio,
        Image,
        Message,
        Resource,
        ResourceLink,
        Text,
        assistant,
        resource,
        user,
    )
    from .protocol.errors import (
        ClientError,
        ConnectionFailed,
        InternalError,
        InvalidParams,
        InvalidRequest,
        LibraryError,
        McpError,
        MethodNotFound,
        ParseError,
        PromptdeckError,
        PromptFileError,
        ProtocolViolation,
        RequestTimeout,
    )
    from .server.app import PromptServer
    from .server.tools import ToolOptions
    from .sources.python import Arg

# Names load on first use, so `promptdeck serve` pays only for what the stdio path needs.
_WHERE: dict[str, str] = {
    "Annotations": ".protocol.content",
    "Arg": ".sources.python",
    "Argument": ".prompts.arguments",
    "Audio": ".protocol.content",
    "Catalog": ".prompts.catalog",
    "Client": ".client.session",
    "ClientError": ".protocol.errors",
    "ConnectionFailed": ".protocol.errors",
    "Image": ".protocol.content",
    "InternalError": ".protocol.errors",
    "InvalidParams": ".protocol.errors",
    "InvalidRequest": ".protocol.errors",
    "LibraryError": ".protocol.errors",
    "McpError": ".protocol.errors",
    "Message": ".protocol.content",
    "MethodNotFound": ".protocol.errors",
    "ParseError": ".protocol.errors",
    "Prompt": ".prompts.spec",
    "PromptListing": ".application",
    "Prompts": ".application",
    "PromptFileError": ".protocol.errors",
    "PromptServer": ".server.app",
    "PromptdeckError": ".protocol.errors",
    "ProtocolViolation": ".protocol.errors",
    "RenderContext": ".prompts.spec",
    "Rendered": ".application",
    "RequestTimeout": ".protocol.errors",
    "Resource": ".protocol.content",
    "ResourceLink": ".protocol.content",
    "Suggestions": ".prompts.completion",
    "Text": ".protocol.content",
    "ToolOptions": ".server.tools",
    "assistant": ".protocol.content",
    "connect": ".client.session",
    "resource": ".protocol.content",
    "user": ".protocol.content",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'promptdeck' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Annotations",
    "Arg",
    "Argument",
    "Audio",
    "Catalog",
    "Client",
    "ClientError",
    "ConnectionFailed",
    "Image",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LibraryError",
    "McpError",
    "Message",
    "MethodNotFound",
    "ParseError",
    "Prompt",
    "PromptFileError",
    "PromptListing",
    "PromptServer",
    "PromptdeckError",
    "Prompts",
    "ProtocolViolation",
    "RenderContext",
    "Rendered",
    "RequestTimeout",
    "Resource",
    "ResourceLink",
    "Suggestions",
    "Text",
    "ToolOptions",
    "assistant",
    "connect",
    "resource",
    "user",
]
