"""``/api/graph`` in process (issue 31): the answer for a library past ``MAX_GRAPH_PROMPTS`` (what the prompt uses,
"used by" unknown), and the graph kept while the catalog is the same one and made again when it changes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import pytest

from promptdeck.server.app import PromptServer
from promptdeck.server.security.principals import Principal
from promptdeck.server.web import graph_api
from promptdeck.server.web.graph_api import GraphApi
from tests.support.libraries import composed_library


def ask(api: GraphApi, name: str, scopes: frozenset[str] | None = frozenset()) -> tuple[int, dict[str, Any]]:
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/api/graph", "query_string": f"prompt={name}".encode()}
    asyncio.run(api(scope, receive, send, Principal("p", scopes)))
    return sent[0]["status"], json.loads(sent[1]["body"])


@pytest.fixture
def server(tmp_path: Path) -> PromptServer:
    server = PromptServer()
    server.add_folder(str(composed_library(tmp_path)), compile_all=True)
    return server


def test_past_the_cap_the_prompts_own_parts_are_answered_and_its_users_are_unknown(
        server: PromptServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_api, "MAX_GRAPH_PROMPTS", 2)
    status, review = ask(GraphApi(server), "review")
    assert status == 200
    assert review["uses"] == {"files": ["_partials/lists.j2"], "prompts": ["few-shot", "rules"], "dynamic": False}
    assert review["usedBy"] is None and review["affects"] is None
    # its parts through the prompts it composes, as far as the cap goes
    assert set(review["parts"]["prompts"]) == {"few-shot", "rules"}


def test_a_graph_is_kept_for_its_catalog_and_made_again_for_a_new_one(server: PromptServer, tmp_path: Path) -> None:
    api = GraphApi(server)
    assert ask(api, "rules")[1]["usedBy"] == ["review"]
    kept = dict(api._graphs)
    assert ask(api, "rules")[1]["usedBy"] == ["review"] and api._graphs == kept  # the same graph
    (tmp_path / "more.md").write_text('{{ prompt("rules", tone="kind") }}\n')
    server.reload_paths([str(tmp_path / "more.md")])
    assert ask(api, "rules")[1]["usedBy"] == ["more", "review"]


def test_a_store_labels_graph_is_its_stored_prompts(tmp_path: Path) -> None:
    from tests.support.cli import pd

    url = f"sqlite:///{tmp_path / 'prompts.db'}"
    pd("publish", str(composed_library(tmp_path / "library")), "--store", url, "--label", "production")
    server = PromptServer()
    server.add_store(url, label="production")
    try:
        api = GraphApi(server)
        status, rules = ask(api, "rules")
        assert status == 200 and rules["uses"]["files"] == ["_partials/tone.md"] and rules["usedBy"] == ["review"]
        assert ask(api, "review")[1]["uses"]["prompts"] == ["few-shot", "rules"]
    finally:
        for source in server.sources:
            getattr(source, "close", lambda: None)()
