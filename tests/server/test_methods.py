"""The one method table (server/methods.py) and typed params (server/params.py): every method an era answers is
declared there, capabilities and server/discover come from it, a wrong param is one -32602 naming the field
in both eras, and a feature's guard refuses its methods where the server lacks it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from promptdeck import PromptServer
from promptdeck.protocol.jsonrpc import Request
from promptdeck.protocol.revisions import LATEST, NEWEST_MODERN, REVISIONS
from promptdeck.server import methods
from promptdeck.server.legacy import LegacySession
from promptdeck.server.local import LocalClient
from promptdeck.server.methods import BOTH, LEGACY, METHODS, MODERN, capabilities
from promptdeck.server.outcome import Answer
from tests.support.modern import request

#: Every client-to-server request method of every MCP revision (and the skills extension's), besides
#: names no revision has: an era answers a name here only when the table declares it for that era.
SPEC_METHODS = ("initialize", "ping", "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
                "resources/list", "resources/read", "resources/templates/list", "resources/subscribe",
                "resources/unsubscribe", "tools/list", "tools/call", "server/discover", "subscriptions/listen",
                "tasks/get", "tasks/list", "tasks/result", "tasks/cancel", "roots/list", "sampling/createMessage",
                "elicitation/create", "skills/list", "skills/get", "resources/directory/read", "prompts/render")


@pytest.fixture
def server(tmp_path: Path) -> PromptServer:
    (tmp_path / "hello.md").write_text("Say hello.\n")
    (tmp_path / "skills/git/SKILL.md").parent.mkdir(parents=True)
    (tmp_path / "skills/git/SKILL.md").write_text("---\nname: git\ndescription: Git.\n---\nUse git.\n")
    served = PromptServer("t", tools=True)
    served.add_folder(tmp_path)
    return served


def legacy(server: PromptServer, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    client = LocalClient(server, LATEST.version)
    return client.request(method, params)


def modern(server: PromptServer, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    client = LocalClient(server, LATEST.version)  # a modern request rides on any stdio connection
    return client.request(method, request(1, method, params)["params"])


def code(answer: dict[str, Any]) -> int | None:
    return answer["error"]["code"] if "error" in answer else None


def not_offered(answer: dict[str, Any]) -> bool:
    return code(answer) == -32601


@pytest.mark.parametrize("name", SPEC_METHODS)
def test_an_era_answers_a_method_only_when_the_table_declares_it_for_that_era(
        server: PromptServer, name: str) -> None:
    declared = METHODS.get(name)
    for era, ask in ((LEGACY, legacy), (MODERN, modern)):
        if name == "initialize" and era == LEGACY:
            continue  # the session's own initialize comes first, and a second is refused by the lifecycle
        offered = declared is not None and era in declared.eras
        assert not_offered(ask(server, name, {})) is not offered, (era, name)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_without_its_declaration_no_era_answers_a_method(server: PromptServer, name: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Each era finds its methods in the table alone: take one out, and neither era answers it any more."""
    server.catalog  # noqa: B018  (loaded before the table loses a method)
    clients = {LEGACY: LocalClient(server, LATEST.version), MODERN: LocalClient(server, LATEST.version)}
    monkeypatch.delitem(METHODS, name)
    for era, client in clients.items():
        if era == LEGACY and name == "initialize":
            continue  # refused by the lifecycle in a session that has begun: below, one that has not
        params = request(1, name, {})["params"] if era == MODERN else {}
        assert not_offered(client.request(name, params)), (era, name)
    if name == "initialize":  # which only a session that has not begun may send
        answer = LegacySession(server, lambda _message: None).handle(Request(1, name, {}), lambda _message: None)
        assert isinstance(answer, Answer) and not_offered(msgspec.json.decode(answer.data))


def test_every_declared_method_is_answered_by_its_eras(server: PromptServer) -> None:
    for name, method in METHODS.items():
        if name in ("initialize", "subscriptions/listen"):
            continue  # the handshake itself, and a stream (its own tests: test_modern.py)
        for era, ask in ((LEGACY, legacy), (MODERN, modern)):
            if era in method.eras:
                assert not not_offered(ask(server, name, {})), (era, name)


def test_capabilities_are_the_tables_in_both_eras(server: PromptServer) -> None:
    init = LocalClient(server, "2025-11-25").initialize["result"]
    assert init["capabilities"] == capabilities(server, LEGACY, REVISIONS["2025-11-25"])
    assert list(init["capabilities"]) == ["prompts", "logging", "tools", "resources", "completions", "extensions"]
    discover = modern(server, "server/discover")["result"]
    assert discover["capabilities"] == capabilities(server, MODERN, NEWEST_MODERN)
    assert "logging" not in discover["capabilities"]  # logging/setLevel is a legacy session's
    # the bytes each era sent before the table: completions second in discover, fifth in initialize
    assert list(discover["capabilities"]) == ["prompts", "completions", "tools", "resources", "extensions"]
    assert "completions" not in LocalClient(server, "2024-11-05").initialize["result"]["capabilities"]


def test_a_capability_is_declared_only_with_a_method_that_offers_it(tmp_path: Path) -> None:
    (tmp_path / "hello.md").write_text("Hello.\n")
    bare = PromptServer("t", skills=False)
    bare.add_folder(tmp_path)
    declared = capabilities(bare, LEGACY, LATEST)
    assert "tools" not in declared and "extensions" not in declared
    for key in declared:
        assert any(m.capability is not None and m.capability.key == key and LEGACY in m.eras
                   and (m.feature is None or m.feature.offered(bare)) for m in METHODS.values())


def test_a_stateless_session_declares_the_quiet_values(server: PromptServer) -> None:
    quiet = capabilities(server, LEGACY, LATEST, announces=False)
    assert quiet["prompts"] == {} and quiet["tools"] == {} and quiet["resources"] == {}
    assert quiet["logging"] == {} and "directoryRead" in str(quiet["extensions"])


def test_a_methods_guard_refuses_it_where_the_feature_is_off(tmp_path: Path) -> None:
    (tmp_path / "hello.md").write_text("Hello.\n")
    bare = PromptServer("t")
    bare.add_folder(tmp_path)
    refused = legacy(bare, "tools/list")["error"]
    assert refused == {"code": -32601,
                       "message": "method 'tools/list' is not offered by this server (serve --tools offers it)"}
    assert modern(bare, "tools/call", {"name": 5})["error"] == {
        "code": -32601, "message": "method 'tools/call' is not offered by this server (serve --tools offers it)"}


@pytest.mark.parametrize(("method", "params", "message"), [
    ("prompts/get", {}, '"name" must be a string naming a prompt'),
    ("prompts/get", {"name": 5}, '"name" must be a string naming a prompt'),
    ("prompts/get", {"name": "hello", "arguments": [1]}, '"arguments" must be an object mapping names to strings'),
    ("prompts/get", {"name": 5, "arguments": 5}, '"name" must be a string naming a prompt'),  # the first declared
    ("prompts/list", {"cursor": 5}, "invalid cursor 5"),
    ("tools/list", {"cursor": ["x"]}, "invalid cursor ['x']"),
    ("tools/call", {"name": None}, '"name" must be a string naming a tool'),
    ("tools/call", {"name": "hello", "arguments": "x"}, '"arguments" must be an object'),
    ("completion/complete", {"ref": 1, "argument": {}}, 'completion/complete needs "ref" and "argument" objects'),
    ("resources/read", {"uri": 7}, "Resource not found: ''"),
    ("skills/get", {"uri": 7}, "Skill not found: ''"),
    ("resources/directory/read", {}, "Directory not found: ''"),
    ("resources/directory/read", {"uri": "skill://git", "cursor": 1}, "invalid cursor 1"),
    ("resources/list", {"cursor": {}}, "invalid cursor {}"),
    ("skills/list", {"cursor": False}, "invalid cursor False"),
])
def test_a_wrong_param_is_one_invalid_params_naming_it_in_both_eras(
        server: PromptServer, method: str, params: dict[str, Any], message: str) -> None:
    for ask in (legacy, modern):
        assert ask(server, method, params)["error"] == {"code": -32602, "message": message}, ask


def test_legacy_only_params_are_checked_as_declared(server: PromptServer) -> None:
    assert legacy(server, "logging/setLevel", {"level": 3})["error"]["message"].startswith("unknown log level 3;")
    assert legacy(server, "resources/subscribe", {})["error"]["message"].startswith('"uri" must be a URI')
    refused = modern(server, "subscriptions/listen", {})["error"]
    assert refused == {"code": -32602, "message": 'subscriptions/listen needs a "notifications" object'}


def test_the_table_is_consistent() -> None:
    for name, method in METHODS.items():
        assert method.name == name and method.eras <= BOTH and method.eras
        assert callable(method.handler)
    # The fast prompts/get is the declaration's (ModernEndpoint.plain_get runs it, and nothing else).
    assert METHODS["prompts/get"].plain is methods.plain_get
    assert [m.name for m in METHODS.values() if m.plain is not None] == ["prompts/get"]
