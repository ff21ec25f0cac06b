"""The README's MCP client configurations, so that none of them can rot unseen.

Each snippet in "Use it from an MCP client" is taken from the README, parsed as its client reads it (JSON,
TOML, or a shell command line), checked against the keys that client documents, and then run: the command it
names is started as the client would start it and asked, by the official MCP SDK's client, to initialize
and list its prompts, which must be the example library's. ``uvx promptdeck`` (the command for users, which
tests/test_packaging.py runs from the built wheel) is mapped to this venv's ``promptdeck`` entry point, the
placeholder library path to the examples, and the HTTP port to a free one; nothing else is changed.

The client documentation each shape follows: Claude Desktop, modelcontextprotocol.io's guide to local
servers (``mcpServers`` with ``command``/``args``); Claude Code, code.claude.com/docs/en/mcp (``claude mcp
add [options] <name> -- <command> [args...]``, ``--scope local|project|user``); VS Code,
code.visualstudio.com/docs/copilot/reference/mcp-configuration (top key ``servers``, ``type: "stdio"``);
Cursor, cursor.com/docs/context/mcp (``mcpServers``); Gemini CLI, geminicli.com/docs/tools/mcp-server
(``mcpServers``; ``command`` for stdio, ``httpUrl`` for Streamable HTTP, ``url`` for SSE); Codex,
developers.openai.com/codex/mcp (``[mcp_servers.<name>]`` with ``command``/``args`` in config.toml).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from promptdeck.server.app import PromptServer
from tests.support.http_server import free_port, stop
from tests.support.libraries import EXAMPLES

README = Path(__file__).resolve().parent.parent / "README.md"
PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
PLACEHOLDER = "/absolute/path/to/prompts"
PORT = 8000  # the port the README's HTTP snippets use


def snippets() -> dict[str, tuple[str, str]]:
    """``{client: (language, text)}`` for each ``**Client**`` label in the section and the block after it."""
    text = README.read_text()
    section = text.split("## Use it from an MCP client\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, tuple[str, str]] = {}
    for label, body in re.findall(r"^\*\*([^*]+)\*\*(.*?)(?=^\*\*|\Z)", section, re.S | re.M):
        blocks = re.findall(r"^```(\w+)\n(.*?)^```", body, re.S | re.M)
        for index, (language, block) in enumerate(blocks):
            found[label if index == 0 else f"{label} #{index + 1}"] = (language, block)
    return found


Launch = tuple[str, list[str]]  # (command, args) as the client would spawn them


def one_server(servers: Any, documented: set[str]) -> dict[str, Any]:
    assert isinstance(servers, dict) and list(servers) == ["promptdeck"], servers
    entry = servers["promptdeck"]
    assert isinstance(entry, dict) and set(entry) <= documented, f"keys {sorted(entry)} beyond {sorted(documented)}"
    return entry


def mcp_servers_json(text: str) -> Launch:
    """Claude Desktop, Cursor and Gemini CLI: ``{"mcpServers": {name: {"command", "args", "env"}}}``."""
    config = json.loads(text)
    assert list(config) == ["mcpServers"], config
    entry = one_server(config["mcpServers"], {"command", "args", "env"})
    return entry["command"], entry["args"]


def vscode_json(text: str) -> Launch:
    """VS Code: top key ``servers``; a stdio server says ``"type": "stdio"``."""
    config = json.loads(text)
    assert list(config) == ["servers"], config
    entry = one_server(config["servers"], {"type", "command", "args", "env", "envFile"})
    assert entry["type"] == "stdio"
    return entry["command"], entry["args"]


def codex_toml(text: str) -> Launch:
    """Codex: a ``[mcp_servers.NAME]`` table in config.toml."""
    config = tomllib.loads(text)
    assert list(config) == ["mcp_servers"], config
    entry = one_server(config["mcp_servers"], {"command", "args", "env", "cwd"})
    return entry["command"], entry["args"]


def claude_code_add(text: str) -> Launch:
    """``claude mcp add [--transport stdio] [--scope S] NAME -- COMMAND [ARGS...]``, options before the name."""
    (line,) = [line for line in text.splitlines() if line.strip()]
    words = shlex.split(line)
    assert words[:3] == ["claude", "mcp", "add"], words
    split = words.index("--")
    options, (name,) = words[3:split - 1], words[split - 1:split]
    assert name == "promptdeck" and not name.startswith("-")
    pairs = dict(zip(options[::2], options[1::2], strict=True))
    assert set(pairs) <= {"--transport", "--scope", "-s", "-t"}, options
    assert pairs.get("--transport", "stdio") == "stdio"
    assert pairs.get("--scope", pairs.get("-s", "local")) in {"local", "project", "user"}
    command, *args = words[split + 1:]
    return command, args


STDIO: dict[str, Callable[[str], Launch]] = {
    "Claude Desktop": mcp_servers_json,
    "Claude Code": claude_code_add,
    "VS Code": vscode_json,
    "Cursor": mcp_servers_json,
    "Gemini CLI": mcp_servers_json,
    "Codex": codex_toml,
}
LANGUAGES = {"Claude Desktop": "json", "Claude Code": "sh", "VS Code": "json", "Cursor": "json",
             "Gemini CLI": "json", "Codex": "toml"}


def test_the_readme_has_a_snippet_for_each_client() -> None:
    found = snippets()
    for client, language in LANGUAGES.items():
        assert found[client][0] == language, client
    assert found["Gemini CLI over HTTP"][0] == "sh" and found["Gemini CLI over HTTP #2"][0] == "json"


def as_run_here(launch: Launch, workspace: Path) -> Launch:
    """``uvx promptdeck ...`` as this venv runs it, with the placeholder library and VS Code's workspace."""
    command, args = launch
    assert command == "uvx" and args[:2] == ["promptdeck", "serve"], launch
    folders = [a.replace(PLACEHOLDER, str(EXAMPLES)).replace("${workspaceFolder}", str(workspace))
               for a in args[2:]]
    return PROMPTDECK, ["serve", *folders]


def example_names() -> list[str]:
    folder = PromptServer()
    folder.add_folder(EXAMPLES)
    return folder.catalog.names


async def listed(session: ClientSession) -> list[str]:
    result = await session.initialize()
    assert result.server_info.name == "promptdeck"
    return [p.name for p in (await session.list_prompts()).prompts]


@pytest.mark.parametrize("client", sorted(STDIO))
def test_the_snippet_starts_a_server_that_lists_the_examples(client: str, tmp_path: Path) -> None:
    language, text = snippets()[client]
    launch = STDIO[client](text)
    (tmp_path / "prompts").symlink_to(EXAMPLES)  # ${workspaceFolder}/prompts
    command, args = as_run_here(launch, tmp_path)
    names: list[str] = []

    async def run() -> None:
        async with stdio_client(StdioServerParameters(command=command, args=args, cwd=tmp_path)) as (read, write):
            async with ClientSession(read, write) as session:
                names.extend(await listed(session))
                if "--tools" in args:  # a client that uses only tools (Codex) gets the prompts as tools
                    tools = [t.name for t in (await session.list_tools()).tools]
                    assert tools == sorted(n.replace(".", "_") for n in example_names()), tools

    anyio.run(run)
    assert names == example_names()
    assert ("--tools" in args) is (client == "Codex"), args


# Another client's shape (or a plain mistake) in a snippet: each must fail its client's check.
WRONG: dict[str, tuple[str, Callable[[str], str]]] = {
    "VS Code under Claude's key": ("VS Code", lambda t: t.replace('"servers"', '"mcpServers"')),
    "VS Code without its type": ("VS Code", lambda t: t.replace('"type": "stdio",', "")),
    "Cursor under VS Code's key": ("Cursor", lambda t: t.replace('"mcpServers"', '"servers"')),
    "Codex in Claude's spelling": ("Codex", lambda t: t.replace("mcp_servers", "mcpServers")),
    "Claude Code with the name after --": ("Claude Code",
                                           lambda t: t.replace("promptdeck -- uvx", "-- promptdeck uvx")),
    "Claude Code with an unknown scope": ("Claude Code", lambda t: re.sub(r"--scope \w+", "--scope team", t)),
    "Gemini CLI with a stray key": ("Gemini CLI", lambda t: t.replace('"command"', '"cmd"')),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_the_shape_checks_refuse_another_clients_shape(case: str) -> None:
    client, spoil = WRONG[case]
    text = snippets()[client][1]
    spoiled = spoil(text)
    assert spoiled != text, case
    with pytest.raises((AssertionError, ValueError, KeyError)):
        STDIO[client](spoiled)


def test_gemini_over_http_reaches_the_server_its_command_starts(tmp_path: Path) -> None:
    found = snippets()
    words = shlex.split(found["Gemini CLI over HTTP"][1].strip())
    # ``uvx --from 'promptdeck[http]' promptdeck``: the package with the extra that serves HTTP.
    assert words[:4] == ["uvx", "--from", "promptdeck[http]", "promptdeck"] and words[4] == "serve", words
    port = free_port()
    command = [PROMPTDECK, *(w.replace(PLACEHOLDER, str(EXAMPLES)) for w in words[4:])]
    command[command.index("--http") + 1] = command[command.index("--http") + 1].replace(str(PORT), str(port))
    config = json.loads(found["Gemini CLI over HTTP #2"][1])
    entry = one_server(config["mcpServers"], {"httpUrl", "headers", "timeout", "trust"})
    url = entry["httpUrl"].replace(f":{PORT}/", f":{port}/")
    assert url == f"http://localhost:{port}/mcp", entry
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30  # a bound on start-up, not a measurement
        while True:
            try:
                if httpx.get(url.replace("/mcp", "/healthz"), timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        names: list[str] = []

        async def run() -> None:
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
                names.extend(await listed(session))

        anyio.run(run)
        assert names == example_names()
    finally:
        stop(server)

