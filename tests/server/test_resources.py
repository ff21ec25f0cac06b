"""The resource methods in both eras, in memory: shapes per revision, scopes, subscriptions and changes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from promptdeck import PromptServer
from promptdeck.protocol import jsonrpc
from promptdeck.server.legacy import LegacySession
from promptdeck.server.resources import MAX_SUBSCRIBED
from tests.support.modern import REVISION, request
from tests.support.resources import LEGACY, Client, modern_answer
from tests.support.schema import schema_available, validate_message

GUIDE = "promptdeck:///_material/guide.txt"
PAY = "promptdeck:///_hr/pay.csv"


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    write(tmp_path, "_material/guide.txt", "the guide\n")
    write(tmp_path, "_material/notes.txt", "notes\n")
    write(tmp_path, "_hr/pay.csv", "name,pay\n")
    write(tmp_path, "guide.md", "---\narguments:\n  - {name: file, type: path, pattern: '_material/.*'}\n---\n"
                                "user: {resource: _material/guide.txt}\n\nuser: {resource_link: \"{{ file }}\"}\n")
    write(tmp_path, "hr.md", "---\nscopes: [hr]\n---\nuser: {resource_link: _hr/pay.csv}\n")
    return tmp_path


def served(library: Path, **options: Any) -> PromptServer:
    server = PromptServer("t", **options)
    server.add_folder(library)
    return server


@pytest.mark.parametrize("revision", LEGACY)
def test_each_revision_lists_and_reads_in_its_own_shapes(library: Path, revision: str) -> None:
    client = Client(served(library), revision)
    assert client.initialize["result"]["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    listed = client.call("resources/list")["result"]["resources"]
    assert [entry["uri"] for entry in listed] == [PAY, GUIDE, "promptdeck:///_material/notes.txt"]  # stdio: all
    assert ("title" in listed[0]) == (revision >= "2025-06-18")
    read = client.call("resources/read", {"uri": GUIDE})["result"]
    assert read == {"contents": [{"uri": GUIDE, "mimeType": "text/plain", "text": "the guide\n"}]}
    templates = client.call("resources/templates/list")["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["promptdeck:///{+path}"]
    assert client.call("resources/subscribe", {"uri": GUIDE})["result"] == {}
    assert client.call("resources/unsubscribe", {"uri": GUIDE})["result"] == {}


def test_what_a_principal_may_not_see_is_not_found(library: Path) -> None:
    anonymous, hr = Client(served(library), "2025-11-25", frozenset()), Client(served(library), "2025-11-25",
                                                                                frozenset({"hr"}))
    assert PAY not in [e["uri"] for e in anonymous.call("resources/list")["result"]["resources"]]
    assert PAY in [e["uri"] for e in hr.call("resources/list")["result"]["resources"]]
    hidden = anonymous.call("resources/read", {"uri": PAY})["error"]
    unknown = anonymous.call("resources/read", {"uri": PAY + "x"})["error"]
    assert hidden == {"code": -32602, "message": f"Resource not found: {PAY!r}", "data": {"uri": PAY}}
    assert unknown == {"code": -32602, "message": f"Resource not found: {PAY + 'x'!r}", "data": {"uri": PAY + "x"}}
    assert hr.call("resources/read", {"uri": PAY})["result"]["contents"][0]["text"] == "name,pay\n"


def test_a_server_without_resources_offers_none() -> None:
    server = PromptServer("t")

    @server.prompt()
    def hello() -> str:
        return "Hello"

    client = Client(server, "2025-11-25")
    assert "resources" not in client.initialize["result"]["capabilities"]
    for method in ("resources/list", "resources/read", "resources/templates/list", "resources/subscribe"):
        assert client.call(method, {"uri": GUIDE})["error"]["code"] == -32601


def test_subscriptions_are_bounded_and_need_a_uri(library: Path) -> None:
    client = Client(served(library), "2025-11-25")
    assert client.call("resources/subscribe", {})["error"]["code"] == -32602
    assert client.call("resources/subscribe", {"uri": 3})["error"]["code"] == -32602
    for i in range(MAX_SUBSCRIBED):
        assert "result" in client.request("resources/subscribe", {"uri": f"x://{i}"})
    assert client.call("resources/subscribe", {"uri": "x://one-more"})["error"]["code"] == -32602
    assert "result" in client.call("resources/subscribe", {"uri": "x://0"})  # again: no new one


def test_a_changed_file_reaches_its_subscriber_and_a_new_one_the_list(library: Path) -> None:
    server = served(library)
    client, other = Client(server, "2025-11-25"), Client(server, "2025-11-25", frozenset())
    client.call("resources/list")
    client.call("resources/subscribe", {"uri": GUIDE})
    other.call("resources/subscribe", {"uri": PAY})  # hidden from it: accepted, never told
    (library / "_material/guide.txt").write_text("a longer guide now\n")
    os.utime(library / "_material/guide.txt", ns=(1, 1))
    server.reload_paths([str(library / "_material/guide.txt")])
    assert [n["method"] for n in client.heard()] == ["notifications/resources/updated"]
    (library / "_hr/pay.csv").write_text("changed\n")
    write(library, "_material/new.txt", "new\n")
    server.reload_paths([str(library / "_material/new.txt"), str(library / "_hr/pay.csv")])
    assert client.heard() == [{"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}]
    assert other.heard() == []
    server.reload_paths([str(library / "_material/new.txt")])  # nothing changed: nothing said
    assert client.heard() == []
    client.call("resources/unsubscribe", {"uri": GUIDE})
    (library / "_material/guide.txt").write_text("and again\n")
    server.reload_paths([str(library / "_material/guide.txt")])
    assert client.heard() == []


def test_2026_results_carry_their_cache_hints(library: Path) -> None:
    server = served(library, list_ttl_ms=5_000)
    session = LegacySession(server, lambda _: None)
    discover = modern_answer(session, "server/discover")["result"]
    assert discover["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    listed = modern_answer(session, "resources/list")["result"]
    read = modern_answer(session, "resources/read", {"uri": GUIDE})["result"]
    templates = modern_answer(session, "resources/templates/list")["result"]
    for result in (listed, read, templates):
        assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 5_000, "private")
    assert read["contents"][0]["text"] == "the guide\n"
    assert modern_answer(session, "resources/read", {"uri": PAY}, frozenset())["error"]["data"] == {"uri": PAY}
    # 2026-07-28 subscribes on subscriptions/listen (resourceSubscriptions): there is no resources/subscribe
    assert modern_answer(session, "resources/subscribe", {"uri": GUIDE})["error"]["code"] == -32601


def test_2026_listen_follows_resources_and_tags_what_it_sends(library: Path) -> None:
    server = served(library)
    sent: list[bytes] = []
    session = LegacySession(server, sent.append)
    message = request(7, "subscriptions/listen", {"notifications": {
        "resourcesListChanged": True, "resourceSubscriptions": [GUIDE, PAY, 5]}})
    session.scopes = frozenset()
    assert session.handle(jsonrpc.decode(json.dumps(message).encode()), sent.append) is None  # type: ignore[arg-type]
    ack = json.loads(sent.pop(0))
    assert ack["params"]["notifications"] == {"resourcesListChanged": True, "resourceSubscriptions": [GUIDE, PAY]}
    (library / "_material/guide.txt").write_text("changed guide text\n")
    write(library, "_material/new.txt", "new\n")
    server.reload_paths([str(library / "_material/guide.txt"), str(library / "_material/new.txt")])
    notes = [json.loads(line) for line in sent]
    for note in notes:
        assert note["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
        if schema_available(REVISION):
            validate_message(REVISION, note)
    assert [(n["method"], n["params"].get("uri")) for n in notes] == [
        ("notifications/resources/list_changed", None), ("notifications/resources/updated", GUIDE)]


def test_text_resources_go_as_text_and_say_so(library: Path) -> None:
    for revision in LEGACY:
        client = Client(served(library, text_resources=True), revision)
        result = client.call("prompts/get", {"name": "guide", "arguments": {"file": "_material/notes.txt"}})["result"]
        blocks = [m["content"] for m in result["messages"]]
        assert [b["type"] for b in blocks] == ["text", "text"]
        assert blocks[0]["text"] == "the guide\n"
        assert result["_meta"] == {"promptdeck.dev/textResources": 2}
        if revision >= "2025-06-18":
            assert blocks[0]["_meta"] == {"promptdeck.dev/textResource": {
                "type": "resource", "uri": GUIDE, "mimeType": "text/plain"}}
            assert blocks[1]["_meta"]["promptdeck.dev/textResource"]["type"] == "resource_link"
        else:
            assert "_meta" not in blocks[0]
    plain = Client(served(library), "2025-11-25").call("prompts/get", {"name": "guide", "arguments": {
        "file": "_material/notes.txt"}})["result"]
    assert [m["content"]["type"] for m in plain["messages"]] == ["resource", "resource_link"]
    assert "_meta" not in plain
    session = LegacySession(served(library, text_resources=True), lambda _: None)
    get = {"name": "guide", "arguments": {"file": "_material/notes.txt"}}
    got = modern_answer(session, "prompts/get", get)["result"]
    assert got["_meta"]["promptdeck.dev/textResources"] == 2
    assert "io.modelcontextprotocol/serverInfo" in got["_meta"]
