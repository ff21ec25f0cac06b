"""The public API and the layering rules of DESIGN.md."""

from __future__ import annotations

import subprocess
import sys

import promptdeck

PUBLIC = ["Annotations", "Arg", "Argument", "Audio", "Catalog", "Image", "InternalError", "InvalidParams",
          "InvalidRequest", "LibraryError", "McpError", "Message", "MethodNotFound", "ParseError", "Prompt",
          "PromptFileError", "PromptServer", "PromptdeckError", "RenderContext", "Resource", "ResourceLink", "Text",
          "assistant", "user"]


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert sorted(promptdeck.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(promptdeck, name) is not None


def loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return {m.split(".")[0] for m in out.stdout.split()}


def test_protocol_layer_is_sans_io() -> None:
    mods = loaded_after("import promptdeck.protocol.jsonrpc, promptdeck.protocol.lifecycle, "
                        "promptdeck.protocol.revisions, promptdeck.protocol.errors")
    assert not mods & {"asyncio", "anyio", "uvicorn", "jinja2", "socket", "selectors"}


def test_stdio_start_up_path_stays_light() -> None:
    mods = loaded_after("import promptdeck._entry, promptdeck._serve, promptdeck.server.app, "
                        "promptdeck.server.stdio")
    assert not mods & {"uvicorn", "httpx", "click", "asyncio", "jinja2", "yaml", "watchfiles"}
