"""The client's resource and skill requests (client/resources.py): pages walked to the end, a cursor loop and
an endless listing refused, answers checked against the schema, and skills asked of a server that serves
none refused before anything is sent. The server is a table of answers by method and cursor."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from promptdeck.client.resources import SKILLS_EXTENSION, ResourceInfo, ResourceMethods, SkillInfo
from promptdeck.protocol.errors import ClientError, ProtocolViolation
from tests.support.client_servers import run


class Scripted(ResourceMethods):
    """``ResourceMethods`` over a table: (method, cursor or uri) -> result."""

    def __init__(self, answers: dict[tuple[str, str | None], Any], capabilities: dict[str, Any] | None = None,
                 max_pages: int = 100) -> None:
        self.answers = answers
        self.capabilities = capabilities or {}
        self.max_pages = max_pages
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def _call(self, method: str, params: dict[str, Any], *, name: str | None = None,
                    timeout: float | None = None, id: Any = None) -> msgspec.Raw:
        self.asked.append((method, params))
        key = params.get("cursor", params.get("uri"))
        return msgspec.Raw(json.dumps(self.answers[(method, key)]).encode())


SKILLS = {"extensions": {SKILLS_EXTENSION: {"directoryRead": True}}}


def test_resources_are_listed_across_pages() -> None:
    server = Scripted({("resources/list", None): {"resources": [{"uri": "a://1", "name": "one"}], "nextCursor": "p2"},
                       ("resources/list", "p2"): {"resources": [{"uri": "a://2", "mimeType": "inode/directory"}]}})
    listed = run(server.list_resources())
    assert [r.uri for r in listed] == ["a://1", "a://2"]
    assert [r.is_directory for r in listed] == [False, True]
    assert server.asked == [("resources/list", {}), ("resources/list", {"cursor": "p2"})]


def test_a_cursor_sent_twice_is_a_loop() -> None:
    server = Scripted({("resources/list", None): {"resources": [], "nextCursor": "x"},
                       ("resources/list", "x"): {"resources": [], "nextCursor": "x"}})
    with pytest.raises(ProtocolViolation, match=r"resources/list: the server sent the cursor 'x' twice \(a loop, "
                                                r"after 2 pages\)"):
        run(server.list_resources())


def test_a_listing_past_max_pages_is_given_up() -> None:
    answers: dict[tuple[str, str | None], Any] = {("resources/list", None): {"resources": [], "nextCursor": "0"}}
    for n in range(10):
        answers[("resources/list", str(n))] = {"resources": [], "nextCursor": str(n + 1)}
    with pytest.raises(ProtocolViolation, match="resources/list: still more pages after 3; giving up"):
        run(Scripted(answers, max_pages=3).list_resources())


def test_a_read_is_decoded_and_a_bad_one_refused_naming_the_method() -> None:
    server = Scripted({("resources/read", "a://1"): {"contents": [{"uri": "a://1", "text": "hello"}]},
                       ("resources/read", "a://bad"): {"contents": "nope"}})
    [content] = run(server.read_resource("a://1"))
    assert (content.uri, content.text) == ("a://1", "hello")
    with pytest.raises(ProtocolViolation, match="resources/read: the server's result does not fit the MCP schema"):
        run(server.read_resource("a://bad"))


def test_skills_need_the_extension_and_directories_its_directory_read() -> None:
    bare = Scripted({})
    with pytest.raises(ClientError, match=f"does not serve skills \\(no {SKILLS_EXTENSION} extension"):
        run(bare.list_skills())
    with pytest.raises(ClientError, match="does not offer resources/directory/read"):
        run(Scripted({}, {"extensions": {SKILLS_EXTENSION: {}}}).read_directory("skill://x/"))
    assert bare.asked == []  # refused before anything was sent


def test_skills_are_listed_and_got() -> None:
    uri = "skill://team/review/SKILL.md"
    skill: dict[str, Any] = {"uri": uri, "frontmatter": {"description": "Reviews"},
             "resources": [{"uri": "skill://team/review/SKILL.md", "digest": "sha256:ab", "size": 3}]}
    server = Scripted({("skills/list", None): {"skills": [skill, {"uri": "skill://x/SKILL.md", "frontmatter":
                                                                  {"name": "named"}, "resources": "dynamic"}]},
                       ("skills/get", uri): {"skill": skill},
                       ("resources/directory/read", "skill://team/review"): {"resources": [{"uri": "skill://a"}]}},
                      SKILLS)
    first, dynamic = run(server.list_skills())
    assert (first.name, first.root, first.description) == ("review", "skill://team/review", "Reviews")
    assert [f.digest for f in first.files] == ["sha256:ab"]
    assert (dynamic.name, dynamic.files, dynamic.description) == ("named", (), "")
    assert run(server.get_skill(uri)) == first
    assert run(server.read_directory("skill://team/review")) == (ResourceInfo(uri="skill://a"),)
    assert isinstance(first, SkillInfo)
