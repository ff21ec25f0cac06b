"""A composed prompt (partials, ``prompt()``, a role line bringing a prompt's messages) renders the same over
every way a client gets it: what ``promptdeck render --json`` prints is what stdio (both eras), Streamable
HTTP, a tool call (``serve --tools``) and the web playground in a real browser give (issue 31)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptdeck.protocol.revisions import REVISIONS
from promptdeck.server.tools import rendered
from tests.support.browser import Pages
from tests.support.http_server import http_server
from tests.support.libraries import COMPOSED_ARGS, composed_library
from tests.support.modern import HttpPeer, StdioPeer, get_prompt, initialize, legacy

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return composed_library(tmp_path_factory.mktemp("composed"))


@pytest.fixture(scope="module")
def printed(folder: Path) -> dict[str, Any]:
    """``promptdeck render --json FOLDER review -a …``: the reference every transport is held to."""
    pairs = [part for name, value in COMPOSED_ARGS.items() for part in ("-a", f"{name}={value}")]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "render", str(folder), "review", *pairs, "--json"],
                          capture_output=True, text=True, timeout=60, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    roles = [m["role"] for m in result["messages"]]
    assert roles == ["user", "user", "assistant", "user"], roles
    first = result["messages"][0]["content"]["text"]
    assert first.startswith("House rules.\nBe blunt, and keep it short.\n\nLook at:\n- correctness\n- naming")
    return result


@pytest.fixture(scope="module")
def endpoint(folder: Path) -> Iterator[str]:
    with http_server(str(folder), "--no-watch") as url:
        yield url


def test_stdio_gives_what_render_prints_in_both_eras(folder: Path, printed: dict[str, Any]) -> None:
    with StdioPeer(folder) as peer:
        assert "result" in peer.call(initialize(1))
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        got = peer.call(legacy(2, "prompts/get", {"name": "review", "arguments": COMPOSED_ARGS}))
        assert got["result"] == printed
        modern = peer.call(get_prompt(3, "review", COMPOSED_ARGS))
        assert modern["result"]["messages"] == printed["messages"]


def test_http_gives_what_render_prints(endpoint: str, printed: dict[str, Any]) -> None:
    peer = HttpPeer(endpoint)
    try:
        answer = peer.call(get_prompt(1, "review", COMPOSED_ARGS))
    finally:
        peer.close()
    assert peer.status == 200 and answer["result"]["messages"] == printed["messages"]
    assert answer["result"]["description"] == printed["description"]


def test_a_tool_call_gives_what_render_prints(folder: Path, printed: dict[str, Any]) -> None:
    with StdioPeer(folder, "--tools") as peer:
        assert "result" in peer.call(initialize(1))
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        got = peer.call(legacy(2, "tools/call", {"name": "review", "arguments": COMPOSED_ARGS}))
    assert got["result"] == rendered(printed, REVISIONS["2025-11-25"])


def test_the_playground_shows_what_render_prints(pages: Pages, endpoint: str, printed: dict[str, Any]) -> None:
    page = pages.open(f"{endpoint.removesuffix('mcp')}#/p/review", permissions=["clipboard-read", "clipboard-write"])
    page.wait_for_selector("#fields .field")
    page.locator("#fields [name=code]").fill(COMPOSED_ARGS["code"])
    page.locator("#fields [name=tone]").fill(COMPOSED_ARGS["tone"])
    page.click("#render")
    page.wait_for_selector(".message")
    page.click("#copy-json")
    expect(page.locator("#status")).to_have_text("Conversation copied as JSON")
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == printed["messages"]

