"""The MCP write tools (``serve --store URL --write-tools``) under attack, against a real ``promptdeck serve
--http`` with bearer tokens, on a store whose production label requires one approval by a holder of
``release``: a reader that lists or calls them, a writer reading a restricted prompt's versions or proposal
through them, an agent approving its own proposal, and arguments too large or of the wrong shape. The rule
of who may use them is ``principals.may_write``, the one every store write goes through (checked by
``test_every_store_write_is_decided_by_the_one_rule``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from promptdeck.sources.files.source import MAX_PROMPT_FILE_BYTES
from promptdeck.sources.store.database import Store
from tests.support.http_rpc import messages_of, post_as, rpc, start_session
from tests.support.http_server import http_server
from tests.support.modern import HttpPeer, request
from tests.support.paths import REPO
from tests.support.publishing import GREET, greet_store
from tests.support.store_api import GREET_1, cli, make_store, post

#: agent writes (the MCP tools); rev reviews; bob only reads; hal writes and sees hr's prompts
TOKENS = ("agent:agent-token-0123456789 store:write release\nrev:rev-token-0123456789 store:write release\n"
          "bob:bob-token-0123456789\nhal:hal-token-0123456789 store:write hr\n")
AGENT, REV, BOB, HAL = ({"authorization": f"Bearer {name}-token-0123456789"} for name in ("agent", "rev", "bob", "hal"))
WRITE_TOOLS = ["comment_on_proposal", "prompt_diff", "prompt_source", "prompt_versions", "propose_change",
               "read_proposal"]


class Session:
    """One MCP session over HTTP as one principal."""

    def __init__(self, client: httpx.Client, url: str, who: dict[str, str]) -> None:
        self.client, self.url = client, url
        self.headers = start_session(client, url, headers=who)
        self.ids = 1

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.ids += 1
        answer = self.client.post(self.url, json=rpc(method, params, self.ids), headers=self.headers)
        assert answer.status_code == 200, answer.text
        [message] = messages_of(answer)
        return dict(message)

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        return self.ask("tools/call", {"name": tool, "arguments": arguments})


@contextmanager
def served(tmp_path: Path, *options: str) -> Iterator[tuple[str, str, httpx.Client]]:
    tmp_path.mkdir(exist_ok=True)
    url = make_store(tmp_path)
    cli("protect", "production", "--scope", "release", "--require-approvals", "1", "--store", url)
    (tmp_path / "tokens").write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tmp_path / "tokens"), *options) as endpoint, \
            httpx.Client(timeout=60) as client:
        yield endpoint, url, client


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["result"]["content"])


def test_the_write_tools_are_offered_only_when_asked_and_only_to_writers(tmp_path: Path) -> None:
    with served(tmp_path, "--tools") as (endpoint, _, client):  # prompt tools, but no --write-tools
        listed = Session(client, endpoint, AGENT).ask("tools/list")["result"]["tools"]
        assert not {t["name"] for t in listed} & set(WRITE_TOOLS)
        refused = Session(client, endpoint, AGENT).call("propose_change", files=[{"prompt": "greet", "text": "x"}])
        assert refused["error"]["code"] == -32602 and "unknown tool" in refused["error"]["message"]
    with served(tmp_path / "asked", "--write-tools") as (endpoint, _, client):
        agent = Session(client, endpoint, AGENT)
        assert [t["name"] for t in agent.ask("tools/list")["result"]["tools"]] == WRITE_TOOLS
        reader = Session(client, endpoint, BOB)
        assert reader.ask("tools/list")["result"]["tools"] == []
        for tool, arguments in (("propose_change", {"files": [{"prompt": "greet", "text": "Hi"}]}),
                                ("prompt_versions", {"prompt": "greet"}),
                                ("comment_on_proposal", {"proposal": 1, "message": "hi"})):
            error = reader.call(tool, **arguments)["error"]
            assert error["code"] == -32602, error
            assert error["message"] == f"tool {tool!r} needs the scope store:write, which this principal does not hold"
            assert error["data"] == {"tool": tool, "scope": "store:write"}


def test_an_agent_proposes_nothing_moves_and_it_cannot_approve_its_own(tmp_path: Path) -> None:
    with served(tmp_path, "--write-tools") as (endpoint, url, client):
        agent = Session(client, endpoint, AGENT)
        versions = agent.call("prompt_versions", prompt="greet")["result"]["structuredContent"]["versions"]
        assert [(v["version"], v["labels"]) for v in versions] == [(2, []), (1, ["production"])]
        assert text(agent.call("prompt_source", prompt="greet", version=1)) == GREET_1
        diff = text(agent.call("prompt_diff", prompt="greet", **{"from": 1, "to": 2}))
        assert "- Hello {{ who }}!" in diff and "+   - name: mood" in diff
        proposed = agent.call("propose_change", message="warmer", files=[
            {"prompt": "greet", "text": GREET_1.replace("Hello", "Warm hello"), "base": 2}])["result"]
        assert not proposed.get("isError"), proposed
        number = proposed["structuredContent"]["proposal"]
        assert proposed["structuredContent"]["files"] == {"greet.md": 3}
        with Store(url) as store:
            assert store.reads.position("production").files["greet.md"] == 1  # type: ignore[union-attr]
            opened = store.proposals.get(number)
            assert (opened.state, opened.author, opened.label, opened.files) == ("open", "agent", "production",
                                                                                 {"greet.md": 3})
        # The agent's proposal is reviewed like any other: its author cannot approve it, a reviewer can.
        base = endpoint.removesuffix("/mcp")
        own = post(base, "/proposal/approve", AGENT, {"id": number})
        assert own.status_code == 409 and f"agent wrote proposal {number}" in own.json()["error"], own.text
        assert "approvals" not in text(agent.call("comment_on_proposal", proposal=number, message="please review"))
        assert post(base, "/proposal/approve", REV, {"id": number}).json()["approvals"] == ["rev"]
        shown = agent.call("read_proposal", proposal=number)["result"]["structuredContent"]
        assert [(r["kind"], r["principal"]) for r in shown["reviews"]] == [
            ("open", "agent"), ("comment", "agent"), ("approve", "rev")]
        # A base older than the newest version refuses the change, as the web editor's save does.
        stale = agent.call("propose_change", files=[{"prompt": "greet", "text": "Hi\n", "base": 1}])["result"]
        assert stale["isError"] and "has a newer version 3" in stale["content"][0]["text"]
        with Store(url) as store:
            assert store.reads.position("production").files["greet.md"] == 1  # type: ignore[union-attr]
            assert [p.id for p in store.proposals.find()] == [number]


def test_a_stateless_server_records_the_principal_as_the_author(tmp_path: Path) -> None:
    with served(tmp_path, "--write-tools", "--stateless") as (endpoint, url, _):
        answer = post_as(endpoint, "agent-token-0123456789", "tools/call", {"name": "propose_change", "arguments": {
            "files": [{"prompt": "greet", "text": GREET_1.replace("Hello", "Hey")}]}})
        [message] = messages_of(answer)
        assert not message["result"].get("isError"), message
        assert messages_of(post_as(endpoint, "bob-token-0123456789", "tools/list"))[0]["result"]["tools"] == []
    with Store(url) as store:
        assert [(p.author, p.files) for p in store.proposals.find()] == [("agent", {"greet.md": 3})]


def test_the_2026_era_keeps_the_write_tools_list_private_and_the_author_its_principal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/store.db"
    greet_store(tmp_path, url)  # no restricted prompt: the tools alone make the list depend on who asks
    (tmp_path / "tokens").write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tmp_path / "tokens"), "--write-tools") as endpoint:
        peer = HttpPeer(endpoint)
        try:
            tokens = {who: f"Bearer {who}-token-0123456789" for who in ("agent", "bob")}
            listed = peer.call(request(1, "tools/list"), authorization=tokens["agent"])["result"]
            assert [t["name"] for t in listed["tools"]] == WRITE_TOOLS and listed["cacheScope"] == "private"
            assert peer.call(request(2, "tools/list"), authorization=tokens["bob"])["result"]["tools"] == []
            called = peer.call(request(3, "tools/call", {"name": "propose_change", "arguments": {"files": [
                {"prompt": "greet", "text": GREET.format("Hey")}]}}), authorization=tokens["agent"])
            assert called["result"]["structuredContent"]["author"] == "agent", called  # checked by the schema
        finally:
            peer.close()
    with Store(url) as store:
        assert [p.author for p in store.proposals.find()] == ["agent"]


def test_a_restricted_prompt_is_invisible_through_the_write_tools(tmp_path: Path) -> None:
    with served(tmp_path, "--write-tools") as (endpoint, url, client):
        hal, agent = Session(client, endpoint, HAL), Session(client, endpoint, AGENT)
        assert hal.call("prompt_versions", prompt="salaries")["result"]["structuredContent"]["versions"]
        widened = hal.call("propose_change", files=[{"prompt": "salaries", "text": "Salaries for all.\n"}])
        number = widened["result"]["structuredContent"]["proposal"]
        for tool, arguments in (("prompt_versions", {"prompt": "salaries"}),
                                ("prompt_source", {"prompt": "salaries", "version": 1}),
                                ("prompt_diff", {"prompt": "salaries", "from": 1, "to": 2}),
                                ("propose_change", {"files": [{"prompt": "salaries", "text": "mine\n"}]})):
            hidden, unknown = (agent.call(tool, **{**arguments, **over}) for over in ({}, {"prompt": "nothing"}))
            if tool == "propose_change":
                hidden = agent.call(tool, files=[{"prompt": "salaries", "text": "mine\n"}])
                unknown = agent.call(tool, files=[{"prompt": "nothing", "text": "mine\n"}])
            assert hidden["result"]["isError"] and "structuredContent" not in hidden["result"], hidden
            assert text(hidden) == text(unknown).replace("'nothing'", "'salaries'") == \
                "no prompt 'salaries' in label production"
        for tool, arguments in (("read_proposal", {}), ("comment_on_proposal", {"message": "seen it"})):
            hidden = agent.call(tool, proposal=number, **arguments)["result"]
            assert hidden["isError"] and hidden["content"][0]["text"] == f"no proposal {number}"
    with Store(url) as store:
        assert [r.kind for r in store.proposals.reviews(number)] == ["open"]
        assert store.reads.position("production").files["salaries.md"] == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(("arguments", "field"), [
    ({}, "files"),
    ({"files": []}, "$.files"),
    ({"files": [{"prompt": "greet"}]}, "$.files[0]"),
    ({"files": [{"prompt": "greet", "text": 3}]}, "$.files[0].text"),
    ({"files": [{"prompt": "greet", "text": "x" * (MAX_PROMPT_FILE_BYTES + 1)}]}, "$.files[0].text"),
    ({"files": [{"prompt": "greet", "text": "x", "path": "../x"}]}, "path"),
    ({"files": [{"prompt": "greet", "text": "a"}, {"prompt": "greet", "text": "b"}]}, "$.files[1].prompt"),
    ({"files": [{"prompt": "greet", "text": "x"}] * 21}, "$.files"),
    ({"files": [{"prompt": "greet", "text": "x"}], "label": "no way"}, "$.label"),
    ({"files": [{"prompt": "greet", "text": "x"}], "message": "m" * 2001}, "$.message"),
])
def test_malformed_or_oversized_arguments_are_refused_naming_the_field(tmp_path: Path, arguments: dict[str, Any],
                                                                       field: str) -> None:
    url = make_store(tmp_path)
    (tmp_path / "tokens").write_text(TOKENS)
    with http_server("", "--store", url, "--token-file", str(tmp_path / "tokens"), "--write-tools",
                     "--max-body", str(4 * MAX_PROMPT_FILE_BYTES)) as endpoint, httpx.Client(timeout=60) as client:
        agent = Session(client, endpoint, AGENT)
        error = agent.call("propose_change", **arguments)["error"]
        assert error["code"] == -32602 and field in error["message"], error
        for tool, bad in (("prompt_source", {"prompt": "greet", "version": "1"}),
                          ("comment_on_proposal", {"proposal": 0, "message": "x"})):
            wrong = agent.call(tool, **bad)["error"]
            assert wrong["code"] == -32602 and re.search(r"\$\.(version|proposal)", wrong["message"]), wrong
        assert agent.ask("tools/list")["result"]["tools"]  # the server keeps serving
    with Store(url) as store:
        assert store.proposals.find() == [] and store.reads.latest()["greet.md"].version == 2


def test_every_store_write_is_decided_by_the_one_rule() -> None:
    """Whoever writes to the store from a server (``/api/store``, the write tools) asks ``may_write``: no
    module but the rule's own tests a principal's scopes against the write scope another way."""
    src = REPO / "src" / "promptdeck"
    deciding = {path.relative_to(src).as_posix() for path in src.rglob("*.py")
                if re.search(r"\bmay_write\(", path.read_text())}
    assert deciding == {"server/security/principals.py", "server/web/store_api.py", "server/web/store_tools.py"}
    for path in src.rglob("*.py"):
        source = path.read_text()
        if "write_scope" in source and path.name != "principals.py":
            assert not re.search(r"missing_scopes\([^)]*write_scope|write_scope\s+(not\s+)?in\b", source), path
