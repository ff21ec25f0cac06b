"""The MCP client configurations the README gives, so that none of them can rot unseen.

Each snippet in the README's "Use it from an MCP client" is a shell command, run as written from a
promptdeck folder (one whose ``.venv/bin/promptdeck`` is this venv's) with a home folder whose ``prompts``
is the example library: a heredoc prints the client's configuration with the real paths filled in, and
``claude mcp add`` is given to a stand-in ``claude`` that hands back its words. What comes out is parsed
as its client reads it (JSON, TOML, or a command line), checked against the keys that client documents,
and then run: the command it names is started as the client would start it and asked, by the official
MCP SDK's client, to initialize and list its prompts, which must be the example library's. Nothing in
between is changed. docs/http.md's Gemini CLI over HTTP is checked the same way, its port made a free one.

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
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
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
from tests.support.paths import REPO

README = REPO / "README.md"
HTTP_PAGE = REPO / "docs" / "http.md"
PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
PORT = 8000  # the port the HTTP snippet uses


def snippets() -> dict[str, str]:
    """``{label: shell block}`` for each ``**Label**`` in the README's client section and the block after it."""
    text = README.read_text()
    section = text.split("## Use it from an MCP client\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    for label, body in re.findall(r"^\*\*([^*]+)\*\*(.*?)(?=^\*\*|\Z)", section, re.S | re.M):
        (block,) = re.findall(r"^```sh\n(.*?)^```", body, re.S | re.M)
        found[label] = block
    return found


@dataclass
class Reader:
    """A reader's machine: the promptdeck folder (with its venv's command) and a home holding ``prompts``."""

    repo: Path
    home: Path

    @classmethod
    def at(cls, tmp_path: Path) -> Reader:
        repo, home = tmp_path / "promptdeck", tmp_path / "home"
        (repo / ".venv" / "bin").mkdir(parents=True)
        (repo / ".venv" / "bin" / "promptdeck").symlink_to(PROMPTDECK)
        home.mkdir()
        (home / "prompts").symlink_to(EXAMPLES)
        return cls(repo, home)

    @property
    def command(self) -> str:
        return str(self.repo / ".venv" / "bin" / "promptdeck")

    @property
    def library(self) -> str:
        return str(self.home / "prompts")

    def run(self, snippet: str) -> str:
        """The snippet's output, run by bash in the promptdeck folder; ``claude`` prints its words, NUL-ended."""
        script = "claude() { printf '%s\\0' \"$@\"; }\n" + snippet
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=self.repo, capture_output=True,
                              text=True, timeout=30, env={**os.environ, "HOME": str(self.home)})
        assert done.returncode == 0, done.stderr
        return done.stdout


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
    """``claude mcp add [--transport stdio] [--scope S] NAME -- COMMAND [ARGS...]``, options before the name;
    ``text`` is the words the shell gave ``claude``, each ended by a NUL."""
    words = text.split("\0")
    assert words[-1] == "", words
    words = words[:-1]
    assert words[:2] == ["mcp", "add"], words
    split = words.index("--")
    options, (name,) = words[2:split - 1], words[split - 1:split]
    assert name == "promptdeck" and not name.startswith("-")
    pairs = dict(zip(options[::2], options[1::2], strict=True))
    assert set(pairs) <= {"--transport", "--scope", "-s", "-t"}, options
    assert pairs.get("--transport", "stdio") == "stdio"
    assert pairs.get("--scope", pairs.get("-s", "local")) in {"local", "project", "user"}
    command, *args = words[split + 1:]
    return command, args


SHARED = "Claude Desktop, Cursor and Gemini CLI"  # one mcpServers entry, one snippet
STDIO: dict[str, tuple[str, Callable[[str], Launch]]] = {
    "Claude Desktop": (SHARED, mcp_servers_json),
    "Claude Code": ("Claude Code", claude_code_add),
    "VS Code": ("VS Code", vscode_json),
    "Cursor": (SHARED, mcp_servers_json),
    "Gemini CLI": (SHARED, mcp_servers_json),
    "Codex": ("Codex", codex_toml),
}


def test_the_readme_has_a_snippet_for_each_client() -> None:
    found = snippets()
    assert sorted(found) == sorted({label for label, _ in STDIO.values()}), sorted(found)
    for client, (label, _) in STDIO.items():
        assert client in label, client


def launch_of(client: str, reader: Reader, spoil: Callable[[str], str] = lambda text: text) -> Launch:
    label, parse = STDIO[client]
    return parse(reader.run(spoil(snippets()[label])))


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
    reader = Reader.at(tmp_path)
    command, args = launch_of(client, reader)
    assert command == reader.command, command  # the venv's promptdeck, by its absolute path
    assert args == ["serve", *(["--tools"] if client == "Codex" else []), reader.library], args
    names: list[str] = []

    async def run() -> None:
        # A client starts its servers from a folder of its own choosing: not the promptdeck folder.
        async with stdio_client(StdioServerParameters(command=command, args=args, cwd=tmp_path)) as (read, write):
            async with ClientSession(read, write) as session:
                names.extend(await listed(session))
                if "--tools" in args:  # a client that uses only tools (Codex) gets the prompts as tools
                    tools = [t.name for t in (await session.list_tools()).tools]
                    assert tools == sorted(n.replace(".", "_") for n in example_names()), tools

    anyio.run(run)
    assert names == example_names()


# Another client's shape (or a plain mistake) in a snippet: each must fail its client's check.
WRONG: dict[str, tuple[str, Callable[[str], str]]] = {
    "VS Code under Claude's key": ("VS Code", lambda t: t.replace('"servers"', '"mcpServers"')),
    "VS Code without its type": ("VS Code", lambda t: t.replace('"type": "stdio",', "")),
    "Cursor under VS Code's key": ("Cursor", lambda t: t.replace('"mcpServers"', '"servers"')),
    "Codex in Claude's spelling": ("Codex", lambda t: t.replace("mcp_servers", "mcpServers")),
    "Claude Code with the name after --": ("Claude Code",
                                           lambda t: t.replace('promptdeck -- "$PWD', '-- promptdeck "$PWD')),
    "Claude Code with an unknown scope": ("Claude Code", lambda t: re.sub(r"--scope \w+", "--scope team", t)),
    "Gemini CLI with a stray key": ("Gemini CLI", lambda t: t.replace('"command"', '"cmd"')),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_the_shape_checks_refuse_another_clients_shape(case: str, tmp_path: Path) -> None:
    client, spoil = WRONG[case]
    text = snippets()[STDIO[client][0]]
    assert spoil(text) != text, case
    reader = Reader.at(tmp_path)
    with pytest.raises((AssertionError, ValueError, KeyError)):
        launch_of(client, reader, spoil)


def http_snippets() -> tuple[str, str]:
    """docs/http.md's command that starts the server, and the Gemini CLI entry that reaches it."""
    section = HTTP_PAGE.read_text().split("## A client over HTTP\n", 1)[1].split("\n## ", 1)[0]
    (command,) = re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M)
    (entry,) = re.findall(r"^```json\n(.*?)^```", section, re.S | re.M)
    return command.strip(), entry


def test_gemini_over_http_reaches_the_server_its_command_starts(tmp_path: Path) -> None:
    line, entry_text = http_snippets()
    words = shlex.split(line)
    # The venv's promptdeck (its dev install has the http extra) serving the reader's library over HTTP.
    assert words[:2] == [".venv/bin/promptdeck", "serve"] and words[words.index("--http") + 1] == str(PORT), words
    port = free_port()
    reader = Reader.at(tmp_path)
    config = json.loads(entry_text)
    entry = one_server(config["mcpServers"], {"httpUrl", "headers", "timeout", "trust"})
    url = entry["httpUrl"].replace(f":{PORT}/", f":{port}/")
    assert url == f"http://localhost:{port}/mcp", entry
    # As written but for the port; ``exec`` so that stopping bash stops the server.
    script = "exec " + line.replace(f"--http {PORT}", f"--http {port}")
    server = subprocess.Popen(["bash", "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              cwd=reader.repo, env={**os.environ, "HOME": str(reader.home)})
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
