"""promptdeck: serve a prompt library to any MCP client, spec-exact and fast."""

from .prompts.arguments import Argument
from .prompts.catalog import Catalog
from .prompts.content import Annotations, Audio, Image, Message, Resource, ResourceLink, Text, assistant, user
from .prompts.spec import Prompt, RenderContext
from .protocol.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    LibraryError,
    McpError,
    MethodNotFound,
    ParseError,
    PromptdeckError,
    PromptFileError,
)
from .server.app import PromptServer
from .sources.python import Arg

__all__ = [
    "Annotations",
    "Arg",
    "Argument",
    "Audio",
    "Catalog",
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
    "PromptServer",
    "PromptdeckError",
    "RenderContext",
    "Resource",
    "ResourceLink",
    "Text",
    "assistant",
    "user",
]
