"""``SkillCatalog``: the skills of several sources as one, paged listings per principal, entries, folders, and
the files as resources; nothing read but through the source's reader."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import pytest

from promptdeck.prompts import skill_catalog
from promptdeck.prompts.catalog import encode_cursor
from promptdeck.prompts.resources import Sight
from promptdeck.prompts.skill_catalog import SkillCatalog, SkillResources
from promptdeck.prompts.skills import Skill, SkillFile
from promptdeck.protocol.errors import InvalidParams
from promptdeck.protocol.revisions import LATEST

Paths = Mapping[tuple[str, ...], Skill]


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def make(path: tuple[str, ...], files: dict[str, bytes], scopes: frozenset[str] = frozenset(),
         **front: object) -> Skill:
    listed = tuple(SkillFile(rel, len(data), "text/markdown" if rel.endswith(".md") else "application/octet-stream",
                             digest(data)) for rel, data in sorted(files.items(), key=lambda i: (i[0] != "SKILL.md",
                                                                                                  i[0])))
    return Skill(path, {"name": path[-1], "description": f"The {path[-1]} skill.", **front}, listed, scopes=scopes)


class Source:
    """A source's skills and its reader, counting what it reads."""

    def __init__(self, *skills: tuple[Skill, dict[str, bytes]]) -> None:
        self.skills: Paths = {skill.path: skill for skill, _ in skills}
        self.bytes = {skill.path: files for skill, files in skills}
        self.reads: list[tuple[str, str]] = []

    def read(self, skill: Skill, rel: str) -> bytes:
        self.reads.append(("/".join(skill.path), rel))
        data = self.bytes[skill.path].get(rel)
        if data is None:
            raise InvalidParams(f"no file {rel}")
        return data


def one(name: str, scopes: frozenset[str] = frozenset(), extra: dict[str, bytes] | None = None,
        ) -> tuple[Skill, dict[str, bytes]]:
    files = {"SKILL.md": f"---\nname: {name}\n---\n".encode(), **(extra or {})}
    return make((name,), files, scopes), files


def test_the_first_source_wins_a_skill_path_and_nothing_mixes_two_sources() -> None:
    first = Source(one("git"), (make(("pdf",), {"SKILL.md": b"a"}), {"SKILL.md": b"a"}))
    second = Source(one("git"), (make(("pdf", "forms"), {"SKILL.md": b"b"}), {"SKILL.md": b"b"}), one("tea"))
    catalog = SkillCatalog([(first.skills, first.read), (second.skills, second.read)])
    assert sorted(catalog.skills) == [("git",), ("pdf",), ("tea",)]
    assert catalog.readers[("git",)] == first.read and catalog.readers[("tea",)] == second.read
    # and the other way round: a later source's skill may not enclose an earlier one's
    third = SkillCatalog([(second.skills, second.read), (first.skills, first.read)])
    assert sorted(third.skills) == [("git",), ("pdf", "forms"), ("tea",)]


def test_pages_are_encoded_once_bounded_and_never_split_a_skill(monkeypatch: pytest.MonkeyPatch) -> None:
    source = Source(*(one(f"s{i}", extra={"a.md": b"x", "b.md": b"y"}) for i in range(5)))
    catalog = SkillCatalog([(source.skills, source.read)], page_size=2)
    first = catalog.page(None)
    assert first is catalog.page(None)  # cached
    page = json.loads(first)
    assert [entry["uri"] for entry in page["skills"]] == ["skill://s0/SKILL.md", "skill://s1/SKILL.md"]
    assert json.loads(catalog.page(None, page["nextCursor"]))["skills"][0]["uri"] == "skill://s2/SKILL.md"
    monkeypatch.setattr(skill_catalog, "MAX_PAGE_FILES", 4)
    bounded = SkillCatalog([(source.skills, source.read)], page_size=10)
    assert [len(json.loads(bounded.page(None))["skills"])] == [1]  # 3 files each: one skill a page
    with pytest.raises(InvalidParams):
        catalog.page(None, "bogus")
    assert source.reads == []


def test_listings_follow_scopes_and_are_shared_when_nothing_is_restricted() -> None:
    open_source = Source(one("a"), one("b"))
    shared = SkillCatalog([(open_source.skills, open_source.read)])
    assert not shared.restricted and shared.listing(frozenset()) is shared.listing(frozenset({"x"}))
    source = Source(one("a"), one("hr", frozenset({"hr"})))
    catalog = SkillCatalog([(source.skills, source.read)])
    assert catalog.restricted
    assert [s.name for s in catalog.listing(frozenset()).skills] == ["a"]
    assert [s.name for s in catalog.listing(frozenset({"hr"})).skills] == ["a", "hr"]
    assert [s.name for s in catalog.listing(None).skills] == ["a", "hr"]
    with pytest.raises(InvalidParams, match="^Skill not found: 'skill://hr/SKILL.md'$"):
        catalog.get("skill://hr/SKILL.md", frozenset())
    assert catalog.get("skill://hr/SKILL.md", frozenset({"hr"}))["skill"]["uri"] == "skill://hr/SKILL.md"


def test_files_read_through_the_source_as_text_or_blob_and_stamped_by_digest() -> None:
    source = Source(one("a", extra={"notes.md": b"# notes\n", "data.bin": b"\x00\x01", "bad.md": b"\xff\xfe"}))
    catalog = SkillCatalog([(source.skills, source.read)])
    sight = Sight(frozenset(), None)  # type: ignore[arg-type]  # the skills need no prompts
    provider = SkillResources(catalog)
    text = provider.read("skill://a/notes.md", sight)
    assert text is not None and (text.text, text.mime_type) == ("# notes\n", "text/markdown")
    blob = provider.read("skill://a/data.bin", sight)
    assert blob is not None and blob.blob == b"\x00\x01"
    not_utf8 = provider.read("skill://a/bad.md", sight)  # a text type whose bytes are not UTF-8: as they are
    assert not_utf8 is not None and not_utf8.blob == b"\xff\xfe" and not_utf8.mime_type == "text/markdown"
    assert provider.stamp("skill://a/notes.md", sight) == digest(b"# notes\n")
    assert provider.stamp("skill://a", sight) is None  # a folder is no readable resource
    del source.bytes[("a",)]["notes.md"]  # the source refuses it now (changed since listed): not served
    assert provider.read("skill://a/notes.md", sight) is None
    assert [r.uri for r in provider.resources(sight)] == [
        "skill://a/SKILL.md", "skill://a/bad.md", "skill://a/data.bin", "skill://a/notes.md"]


def test_a_directory_page_names_its_children_and_refuses_the_rest() -> None:
    source = Source(one("a", extra={"x/one.md": b"1", "x/two.md": b"2", "top.md": b"t"}))
    catalog = SkillCatalog([(source.skills, source.read)], page_size=1)
    pages, cursor = [], None
    while True:
        result = catalog.directory("skill://a", None, LATEST, cursor)
        pages.append([(entry["name"], entry.get("mimeType")) for entry in result["resources"]])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == [[("a", "text/markdown")], [("top.md", "text/markdown")], [("x", "inode/directory")]]
    for uri in ("skill://a/top.md", "skill://b", "skill://a/y", None):
        with pytest.raises(InvalidParams, match="^Directory not found"):
            catalog.directory(uri, None, LATEST)
    assert catalog.directory("skill://a", None, LATEST, encode_cursor("zzz"))["resources"] == []
