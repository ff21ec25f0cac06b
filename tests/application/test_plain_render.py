"""A plain prompt (text messages that only substitute names) renders in-process by ``handlers.plain_render``,
not the general path, and gives exactly what ``prompts/get`` gives: escaping, unicode, empty strings, values
holding template syntax, defaults, and the same errors for a wrong type, a missing required argument, an unknown one
and an optional one that the template uses left out."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from promptdeck import Prompts
from promptdeck.protocol.errors import InvalidParams
from promptdeck.server import handlers
from tests.support.http_server import http_server

PLAIN = """---
description: A plain prompt
arguments:
  - name: topic
    required: true
  - name: note
  - name: count
    type: integer
    default: 3
---
system: You write <short> & "exact" answers about {{ topic }}.

user: Tell me {{ count }} things about {{ topic }} ({{ note }}).
"""

#: arguments -> what each checks
CASES: list[dict[str, Any]] = [
    {"topic": "<b>&amp;\"'</b>", "note": "n"},                        # nothing is escaped
    {"topic": "café ☕ 日本 \U0001f600", "note": "ü", "count": "7"},   # unicode, an integer sent as text
    {"topic": "", "note": ""},                                        # empty strings
    {"topic": "{{ note }}", "note": "{% for x in y %}{{ x }}{% endfor %}"},  # values are never templates
    {"topic": "t", "note": "n"},                                      # count left out: its default
    {"topic": "t", "note": "n", "count": "10"},                       # a default overridden
]
#: a wrong type, a missing required argument, an unknown one, an optional one the template uses left out
BAD: list[dict[str, Any]] = [{"topic": "t", "count": "many"}, {"note": "n"}, {"topic": "t", "colour": "red"},
                             {"topic": "t"}]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "plain.md").write_text(PLAIN, encoding="utf-8")
    return tmp_path


async def sdk_side(url: str) -> tuple[list[dict[str, Any]], list[str]]:
    async with httpx2.AsyncClient(timeout=30) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        got = [(await session.get_prompt("plain", case)).model_dump(mode="json", by_alias=True, exclude_none=True)
               for case in CASES]
        errors = []
        for case in BAD:
            with pytest.raises(MCPError) as caught:
                await session.get_prompt("plain", case)
            errors.append(caught.value.error.message)
        return got, errors


def test_a_plain_prompt_renders_as_prompts_get_gives_it(folder: Path) -> None:
    with http_server(str(folder), "--no-watch") as url:
        expected, errors = asyncio.run(sdk_side(url))
    with Prompts(str(folder), watch=False) as prompts:
        for case, want in zip(CASES, expected, strict=True):
            rendered = prompts.render("plain", **case)
            assert rendered.messages == want["messages"], case
            assert rendered.description == want["description"]
        for case, message in zip(BAD, errors, strict=True):
            with pytest.raises(InvalidParams) as caught:
                prompts.render("plain", **case)
            assert caught.value.message == message, case


def test_a_plain_prompt_never_takes_the_general_path(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def general(*_: object) -> dict[str, Any]:
        raise AssertionError("a plain prompt took the general render path")

    monkeypatch.setattr(handlers, "render", general)
    with Prompts(str(folder), watch=False) as prompts:
        for case in CASES:
            assert prompts.render("plain", **case).messages
            assert asyncio.run(prompts.arender("plain", **case)).messages


def test_a_refused_argument_is_said_by_the_general_path(folder: Path) -> None:
    """``plain_render`` gives up on any failure; the general path names it (so both fail alike)."""
    with Prompts(str(folder), watch=False) as prompts:
        local = prompts._local
        assert local is not None
        offered = local.catalog(None).require("plain")
        assert handlers.plain_render(local._server, offered, {"topic": "t", "count": "many"}) is None
        assert handlers.plain_render(local._server, offered, {"topic": "t"}) is None
        assert handlers.plain_render(local._server, offered, {"topic": "t", "note": "n"}) is not None


def test_a_plain_prompt_renders_by_its_precompiled_render(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Prompts.render`` checks and joins by ``prompts.plain.PlainRender`` made once per prompt: neither
    ``plain_render`` nor the general path runs, and every render is still a ``Rendered`` of its own."""
    def other(*_: object) -> dict[str, Any]:
        raise AssertionError("a plain prompt's render did not take its precompiled render")

    with Prompts(str(folder), watch=False) as prompts:
        first = prompts.render("plain", topic="a", note="n")
        monkeypatch.setattr(handlers, "plain_render", other)
        monkeypatch.setattr(handlers, "render", other)
        again = prompts.render("plain", topic="b", note="n")
        assert again.messages != first.messages and "about b" in again.text()
        assert asyncio.run(prompts.arender("plain", topic="b", note="n")) == again
        assert (again.name, again.description, again.source, again.stale) == \
            (first.name, first.description, first.source, first.stale)


def test_a_changed_file_is_rendered_as_changed(folder: Path) -> None:
    """The precompiled render is the prompt object's: a file changed on disk makes a new one."""
    with Prompts(str(folder), watch=True) as prompts:
        assert "about t" in prompts.render("plain", topic="t", note="n").text()
        (folder / "plain.md").write_text(PLAIN.replace("Tell me", "Now tell me"), encoding="utf-8")
        deadline = time.monotonic() + 60
        while "Now tell me" not in prompts.render("plain", topic="t", note="n").text():
            assert time.monotonic() < deadline, "the change was never rendered"
            time.sleep(0.05)


def test_a_scoped_plain_prompt_is_refused_to_a_token_without_its_scope(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "secret.md").write_text(
        "---\nscopes: [hr]\narguments: [{name: who, required: true}]\n---\nPay {{ who }}\n", encoding="utf-8")
    tokens = tmp_path / "tokens"
    tokens.write_text("ann:ann-token-0123456789 hr\nbob:bob-token-0123456789\n")
    with Prompts(str(tmp_path / "lib"), token="ann-token-0123456789", tokens=str(tokens), watch=False) as ann:
        for _ in range(3):
            assert ann.render("secret", who="x").text() == "Pay x"
    with Prompts(str(tmp_path / "lib"), token="bob-token-0123456789", tokens=str(tokens), watch=False) as bob:
        for _ in range(3):
            with pytest.raises(InvalidParams, match="secret"):
                bob.render("secret", who="x")
