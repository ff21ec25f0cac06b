"""A prompts server built on the official MCP Python SDK, for promptdeck's client to talk to.

    python sdk_server.py lowlevel|mcpserver stdio|http|sse [PORT]

Both APIs serve the same prompts: ``greet(name, greeting?)`` (text), ``picture`` (an image and a
text), ``document(topic)`` (an embedded resource), with completion of ``greet``'s ``name``; the
low-level one also ``café ☕``, a name an HTTP header can carry only encoded.
The ``mcpserver`` one also has ``ask-name`` (asks the client for a name: ``input_required`` at
2026-07-28, an ``elicitation/create`` request in a legacy session) and ``grow`` (adds a prompt
``grown-N`` and announces the change to 2026-07-28 subscriptions).
HTTP listens on 127.0.0.1 only; ``sse`` is the 2024-11-05 HTTP+SSE transport (``/sse``).
"""

from __future__ import annotations

import base64
import sys
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

HOST = "127.0.0.1"
#: Eight bytes are enough: the client only checks the content type, MIME type and data round trip.
IMAGE = b"\x89PNG\r\n\x1a\n"
IMAGE_B64 = base64.b64encode(IMAGE).decode()
NAMES = ("Alice", "Albert", "Bob")
UNICODE = "café ☕"
MODERN = "2026-07-28"


def greeting_for(arguments: dict[str, str]) -> str:
    return f"{arguments.get('greeting') or 'Hello'}, {arguments['name']}!"


def names(prefix: str) -> list[str]:
    return [name for name in NAMES if name.startswith(prefix)]


# -- the low-level API: every request handled by hand --------------------------------------------


LOWLEVEL_PROMPTS = [
    types.Prompt(name="greet", description="Greets someone", arguments=[
        types.PromptArgument(name="name", description="Who", required=True),
        types.PromptArgument(name="greeting", description="How", required=False)]),
    types.Prompt(name="picture", description="An image"),
    types.Prompt(name="document", description="An embedded note",
                 arguments=[types.PromptArgument(name="topic", required=True)]),
    types.Prompt(name=UNICODE, description="Not plain ASCII"),
]


async def lowlevel_list(ctx: Any, params: Any) -> Any:
    return types.ListPromptsResult(prompts=LOWLEVEL_PROMPTS)


async def lowlevel_get(ctx: Any, params: Any) -> Any:
    arguments: dict[str, str] = dict(params.arguments or {})
    if params.name == "greet":
        if "name" not in arguments:
            raise MCPError(code=types.INVALID_PARAMS, message="greet needs a name")
        return types.GetPromptResult(description="A greeting", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=greeting_for(arguments)))])
    if params.name == "picture":
        return types.GetPromptResult(messages=[
            types.PromptMessage(role="user", content=types.ImageContent(type="image", data=IMAGE_B64,
                                                                        mime_type="image/png")),
            types.PromptMessage(role="assistant", content=types.TextContent(type="text", text="A picture."))])
    if params.name == "document":
        resource = types.TextResourceContents(uri=f"note://{arguments.get('topic', '')}", text="the note",
                                              mime_type="text/plain")
        return types.GetPromptResult(messages=[
            types.PromptMessage(role="user", content=types.EmbeddedResource(type="resource", resource=resource))])
    if params.name == UNICODE:
        return types.GetPromptResult(messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=f"Served {UNICODE}"))])
    raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt named {params.name}")


async def lowlevel_complete(ctx: Any, params: Any) -> Any:
    values = names(params.argument.value) if params.argument.name == "name" else []
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


def lowlevel() -> Any:
    return Server("sdk-lowlevel", version="1.0", on_list_prompts=lowlevel_list, on_get_prompt=lowlevel_get,
                  on_completion=lowlevel_complete)


async def run_lowlevel_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions(prompts_changed=True)))


# -- MCPServer (the former FastMCP): prompts are decorated functions ------------------------------


class Name(BaseModel):
    name: str


def mcpserver() -> Any:
    # Registered by calling the SDK's decorators (the SDK is untyped to mypy here, so no @ syntax).
    server = MCPServer("sdk-mcpserver", version="2.0")
    grown: list[str] = []

    def greet(name: str, greeting: str = "") -> str:
        return greeting_for({"name": name, "greeting": greeting})

    def picture() -> list[Message]:
        return [UserMessage(types.ImageContent(type="image", data=IMAGE_B64, mime_type="image/png")),
                Message("A picture.", role="assistant")]

    def document(topic: str) -> list[Message]:
        resource = types.TextResourceContents(uri=f"note://{topic}", text="the note", mime_type="text/plain")
        return [UserMessage(types.EmbeddedResource(type="resource", resource=resource))]

    async def ask_name(ctx: Context) -> Any:
        if ctx.protocol_version != MODERN:  # a legacy session: ask with a server-initiated request
            answer = await ctx.elicit("Who should be greeted?", Name)
            return f"Hello, {answer.data.name}!" if answer.action == "accept" else "Nobody to greet."
        responses = ctx.input_responses or {}
        if "who" not in responses:
            ask = types.ElicitRequest(params=types.ElicitRequestFormParams(
                message="Who should be greeted?",
                requested_schema={"type": "object", "properties": {"name": {"type": "string"}},
                                  "required": ["name"]}))
            return types.InputRequiredResult(input_requests={"who": ask})
        content = getattr(responses["who"], "content", None) or {}
        return f"Hello, {content.get('name')}!"

    async def grow(ctx: Context) -> str:
        name = f"grown-{len(grown) + 1}"
        grown.append(name)
        server.prompt(name=name, description="Grown at run time")(lambda: f"I am {name}.")
        await ctx.notify_prompts_changed()
        return f"added {name}"

    async def complete(ref: Any, argument: Any, context: Any) -> Any:
        if getattr(ref, "name", None) == "greet" and argument.name == "name":
            values = names(argument.value)
            return types.Completion(values=values, total=len(values), has_more=False)
        return None

    server.prompt(description="Greets someone")(greet)
    server.prompt(description="An image")(picture)
    server.prompt(description="An embedded note")(document)
    server.prompt(name="ask-name", description="Asks the client who to greet")(ask_name)
    server.prompt(description="Adds a prompt and tells subscribers")(grow)
    server.completion()(complete)
    return server


def main() -> None:
    api, transport = sys.argv[1], sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    if api == "mcpserver":
        server = mcpserver()
        if transport == "stdio":
            server.run()
        elif transport == "sse":
            server.run("sse", host=HOST, port=port)
        else:
            server.run("streamable-http", host=HOST, port=port)
        return
    low = lowlevel()
    if transport == "stdio":
        import anyio

        anyio.run(run_lowlevel_stdio, low)
        return
    import uvicorn

    uvicorn.run(low.streamable_http_app(host=HOST), host=HOST, port=port, log_level="warning")


if __name__ == "__main__":
    main()
