"""A plain prompt (text messages that only substitute names) renders in-process by ``handlers.plain_render``,
not the general path, and gives exactly what ``prompts/get`` gives: escaping, unicode, empty strings, values
holding template syntax, defaults, and the same errors for a wrong type, a missing required argument, an unknown one
and an optional one that the template uses left out."""

from __future__ import annotations

import asyncio
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
