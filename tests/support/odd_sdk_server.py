"""An official SDK server (stdio) whose prompts are what promptdeck's ``ui`` must hold its ground against:

- ``bad name``: a name promptdeck cannot serve (left out, and said so);
- ``broken``: a render that raises (the SDK's own error code, whatever it is, must come back as -32603);
- ``garbled``: an image whose data is not base64 (-32603, never served on as if it were);
- ``asks``: a 2026-07-28 render that asks for more input every time (the client gives up: -32603, saying why);
- ``fine``: a good prompt beside them, which must still work;
- ``search``: a ``topic`` completed by substring, not prefix, with a total of its own (passed on as
  chosen), and refused with -32602 for ``?``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import InputRequiredResult, Prompt
from mcp.shared.exceptions import MCPError
from mcp.types import Completion, ImageContent

server = MCPServer(name="odd-sdk-server", log_level="WARNING")


def bad_name() -> str:
    return "never listed by promptdeck"


def broken() -> str:
    raise RuntimeError("the render fell over")


def garbled() -> list[ImageContent]:
    return [ImageContent(type="image", data="%%% not base64 %%%", mime_type="image/png")]


def asks() -> InputRequiredResult:
    return InputRequiredResult(request_state="ask me again")


def fine() -> str:
    return "All is well."


for name, render in (("bad name", bad_name), ("broken", broken), ("garbled", garbled), ("asks", asks),
                     ("fine", fine)):
    server.add_prompt(Prompt.from_function(render, name=name))  # what @server.prompt(name=...) does



def search(topic: str) -> str:
    return f"Search for {topic}."


server.add_prompt(Prompt.from_function(search, name="search"))


@server.completion()  # type: ignore[untyped-decorator]  # the SDK leaves its decorator untyped
async def complete(ref: object, argument: object, context: object) -> Completion:
    value = str(getattr(argument, "value", ""))
    if value == "?":
        raise MCPError(-32602, "topic: type a word first", {"argument": "topic"})
    return Completion(values=[t for t in ("Machine learning", "learning rate") if value in t], total=7, has_more=True)


if __name__ == "__main__":
    server.run(transport="stdio")
