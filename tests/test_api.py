"""The public API (promptdeck.__all__) and the import rules of DESIGN.md, checked in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import promptdeck
from tests.support.paths import REPO

EXAMPLES = REPO / "examples" / "prompts"

PUBLIC = [
    "Annotations", "Arg", "Argument", "Audio", "Catalog", "Client", "ClientError", "ConnectionFailed", "Image",
    "InternalError", "InvalidParams", "InvalidRequest", "LibraryError", "McpError", "Message", "MethodNotFound",
    "ParseError", "Prompt", "PromptFileError", "PromptListing", "PromptServer", "PromptdeckError", "Prompts",
    "ProtocolViolation", "RenderContext", "Rendered", "RequestTimeout", "Resource", "ResourceLink", "Suggestions",
    "Text", "ToolOptions", "assistant", "connect", "resource", "user",
]


def python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def modules_after(imports: str) -> set[str]:
    """Top-level packages in sys.modules of a fresh interpreter after ``imports``."""
    out = python(f"import sys\n{imports}\nprint(' '.join(sorted(sys.modules)))")
    return {m.split(".")[0] for m in out.split()}


# -- the public API -----------------------------------------------------------------------------------


def test_all_is_pinned() -> None:
    assert promptdeck.__all__ == sorted(promptdeck.__all__, key=str)
    assert promptdeck.__all__ == PUBLIC


def test_every_public_name_resolves_to_its_object() -> None:
    from promptdeck.protocol.content import Message
    from promptdeck.protocol.errors import InvalidParams, McpError
    from promptdeck.server.app import PromptServer

    for name in PUBLIC:
        assert getattr(promptdeck, name) is not None, name
    assert promptdeck.PromptServer is PromptServer
    assert promptdeck.Message is Message
    assert issubclass(promptdeck.InvalidParams, McpError) and promptdeck.InvalidParams is InvalidParams


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="module 'promptdeck' has no attribute 'Nope'"):
        promptdeck.Nope  # noqa: B018


def test_every_public_name_imports_in_a_fresh_interpreter() -> None:
    out = python(f"from promptdeck import {', '.join(PUBLIC)}\nprint('ok')")
    assert out == "ok\n"


#: What only HTTP needs (the server, the client, the ASGI-compatibility tests).
HTTP = ("uvicorn", "httpx", "httptools", "uvloop")


def test_importing_the_package_loads_nothing_heavy() -> None:
    loaded = modules_after("import promptdeck")
    assert not loaded & {"jinja2", "yaml", "click", "watchfiles", "asyncio", *HTTP}


def test_the_error_tree() -> None:
    from promptdeck import (
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

    codes = {ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602}
    for kind, code in codes.items():
        assert issubclass(kind, McpError) and kind("m").code == code
    assert InternalError("why").code == -32603
    assert issubclass(McpError, PromptdeckError) and issubclass(LibraryError, PromptdeckError)
    assert issubclass(PromptFileError, LibraryError) and not issubclass(LibraryError, McpError)
    error = PromptFileError("a/b.md", "broken", 3)
    assert (str(error), error.path, error.line, error.reason) == ("a/b.md:3: broken", "a/b.md", 3, "broken")
    assert str(PromptFileError("a.md", "whole file")) == "a.md: whole file"


# -- layering -----------------------------------------------------------------------------------------


def test_the_protocol_layer_is_sans_io() -> None:
    loaded = modules_after("import promptdeck.protocol.jsonrpc, promptdeck.protocol.lifecycle, "
                           "promptdeck.protocol.revisions, promptdeck.protocol.errors")
    assert "promptdeck" in loaded and "msgspec" in loaded
    assert not loaded & {"asyncio", "anyio", "uvicorn", "jinja2", "httpx", "click", "yaml", "watchfiles",
                         "socket", "selectors", "ssl"}


def test_the_stdio_path_does_not_import_http_libraries() -> None:
    out = python("import promptdeck.cli.main, promptdeck.server.stdio, sys; "
                 f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HTTP!r}))")
    assert out == "[]\n"


def test_serve_start_up_does_not_import_http_libraries() -> None:
    """`python -X importtime -m promptdeck serve DIR`: answer a handshake and a listing, then read what it imported."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
    ]
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "promptdeck", "serve", "--no-watch",
                           str(EXAMPLES)], input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert len(answers[1]["result"]["prompts"]) >= 10
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "promptdeck.server.stdio" in imported  # importtime did report
    assert not {m for m in imported if m.split(".")[0] in HTTP}


#: Everything of promptdeck that ``serve`` over stdio imports to answer ``initialize``. Each module on this
#: list costs start-up time an MCP client waits for every time it launches the server; the library itself,
#: the watcher, tools, the 2026-07-28 era and HTTP are imported when first needed (issue 29). A module new on
#: the handshake's path must be added here, with a reason.
STDIO_HANDSHAKE_PROMPTDECK = {
    "promptdeck", "promptdeck._version", "promptdeck.cli", "promptdeck.cli.entry", "promptdeck.cli.serve_stdio",
    "promptdeck.cli.stopping", "promptdeck.logs", "promptdeck.prompts", "promptdeck.prompts.access",
    "promptdeck.prompts.arguments", "promptdeck.prompts.catalog", "promptdeck.prompts.completion",
    "promptdeck.protocol.content", "promptdeck.prompts.execution", "promptdeck.prompts.limits",
    "promptdeck.prompts.spec", "promptdeck.protocol", "promptdeck.protocol.errors",
    "promptdeck.protocol.jsonrpc", "promptdeck.protocol.lifecycle", "promptdeck.protocol.revisions",
    "promptdeck.server", "promptdeck.server.app", "promptdeck.server.handlers", "promptdeck.server.legacy",
    "promptdeck.server.methods", "promptdeck.server.params",
    "promptdeck.server.outcome", "promptdeck.server.stdio", "promptdeck.server.watch", "promptdeck.sources",
    "promptdeck.sources.python",
    # every render is counted (``handlers.chosen``): the server holds its ``Usage`` from the start; the module
    # imports contextvars, time and typing only
    "promptdeck.prompts.usage",
}
#: The other packages it may import beyond the bare interpreter's own (C accelerators, ``_name``, aside):
#: msgspec and what msgspec imports (typing_extensions, inspect, datetime, decimal, uuid...), logging, signal.
#: Not asyncio (and ssl, socket, subprocess with it), json, pathlib, concurrent, base64, hashlib, dataclasses.
STDIO_HANDSHAKE_OTHERS = {
    "msgspec", "typing_extensions", "__future__", "ast", "atexit", "bisect", "collections", "contextlib",
    "contextvars", "copyreg", "datetime", "decimal", "dis", "enum", "functools", "importlib", "inspect",
    "itertools", "keyword", "linecache", "logging", "math", "numbers", "opcode", "operator", "platform", "re",
    "reprlib", "runpy", "signal", "string", "textwrap", "threading", "token", "tokenize", "traceback", "types",
    "typing", "uuid", "warnings", "weakref",
}


def _imported(argv: list[str], stdin: str = "") -> set[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], input=stdin, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def test_the_stdio_handshake_imports_only_what_it_needs() -> None:
    """`python -X importtime -m promptdeck serve DIR`, answering one ``initialize``: what it imported beyond the
    bare interpreter is pinned, so that a heavy import slipping onto the start-up path fails here."""
    handshake = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}) + "\n"
    imported = _imported(["-m", "promptdeck", "serve", str(EXAMPLES)], handshake) - _imported(["-c", "pass"])
    ours = {m for m in imported if m.split(".")[0] == "promptdeck"}
    assert ours == STDIO_HANDSHAKE_PROMPTDECK, (sorted(ours - STDIO_HANDSHAKE_PROMPTDECK),
                                                sorted(STDIO_HANDSHAKE_PROMPTDECK - ours))
    others = {m.split(".")[0] for m in imported - ours if not m.startswith("_")}
    assert others <= STDIO_HANDSHAKE_OTHERS, sorted(others - STDIO_HANDSHAKE_OTHERS)
