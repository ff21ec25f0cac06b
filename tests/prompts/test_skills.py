"""The skill value (prompts/skills.py): names and front matter by the Agent Skills format, scopes, the
``skill://`` URIs of SEP-2640 and their strict parsing, the listing entry, folders and their children."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from promptdeck.prompts.skills import (
    MAX_DESCRIPTION,
    Skill,
    SkillFile,
    SkillSpecError,
    check_front_matter,
    name_problem,
    parse_skill_uri,
    resolve_skill_uri,
    skill_scopes,
)

DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def make(path: tuple[str, ...], files: dict[str, bytes], *, folders: tuple[str, ...] = (),
         scopes: frozenset[str] = frozenset(), front: dict[str, Any] | None = None) -> Skill:
    made = tuple(SkillFile(rel, len(data), "text/markdown", digest(data)) for rel, data in files.items())
    return Skill(path, front or {"name": path[-1], "description": "d"}, made, folders, scopes)


# -- names and front matter ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "pdf-processing", "x1", "a" * 64, "0-9"])
def test_valid_names(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["", "A", "Pdf", "-pdf", "pdf-", "pdf--x", "pdf_x", "pdf x", "a" * 65, "café",
                                  "ｐｄｆ", 7, None, ["a"]])
def test_invalid_names(name: object) -> None:
    assert name_problem(name) is not None


def problems_of(front: dict[str, Any], folder: str = "s") -> list[tuple[str | None, str]]:
    return [(p.key, str(p)) for p in check_front_matter(front, folder)]


def test_a_minimal_front_matter_passes_and_unknown_keys_pass_through() -> None:
    assert problems_of({"name": "s", "description": "d", "argument-hint": "[x]", "model": "opus",
                        "allowed-tools": ["Read", "Bash(git:*)"], "license": "MIT", "compatibility": "git",
                        "metadata": {"version": "1.0", "n": 2}}) == []


def test_every_problem_of_a_front_matter_is_found_at_once_with_its_key() -> None:
    found = problems_of({"name": "Other", "description": 3, "license": ["MIT"], "compatibility": "x" * 501,
                         "metadata": "v1", "allowed-tools": {"a": 1}})
    assert [key for key, _ in found] == ["name", "description", "license", "compatibility", "metadata",
                                         "allowed-tools"]


def test_name_and_description_are_required() -> None:
    found = problems_of({})
    assert [key for key, _ in found] == [None, None]
    assert "no name" in found[0][1] and "no description" in found[1][1]


def test_the_name_must_be_the_folders() -> None:
    assert problems_of({"name": "git", "description": "d"}, "git-workflow") == [
        ("name", "name 'git' does not match the skill's folder 'git-workflow'")]


@pytest.mark.parametrize("description", ["", "   ", "x" * (MAX_DESCRIPTION + 1)])
def test_a_description_is_1_to_1024_characters(description: str) -> None:
    assert [key for key, _ in problems_of({"name": "s", "description": description})] == ["description"]
    assert problems_of({"name": "s", "description": "x" * MAX_DESCRIPTION}) == []


# -- scopes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("front", "scopes"), [
    ({}, set()),
    ({"metadata": {"promptdeck-scopes": "hr hr:payroll"}}, {"hr", "hr:payroll"}),
    ({"metadata": {"promptdeck-scopes": ["hr"]}}, {"hr"}),
    ({"scopes": ["eng"]}, {"eng"}),
    ({"scopes": "eng", "metadata": {"promptdeck-scopes": "eng"}}, {"eng"}),
    ({"metadata": {"scopes": "not ours"}}, set()),
])
def test_scopes_come_from_metadata_or_the_top_level(front: dict[str, Any], scopes: set[str]) -> None:
    assert skill_scopes(front) == scopes


@pytest.mark.parametrize(("front", "key"), [
    ({"metadata": {"promptdeck-scopes": 3}}, "metadata.promptdeck-scopes"),
    ({"metadata": {"promptdeck-scopes": ["a b"]}}, "metadata.promptdeck-scopes"),
    ({"scopes": [""]}, "scopes"),
    ({"scopes": "a", "metadata": {"promptdeck-scopes": "b"}}, "scopes"),
])
def test_scopes_that_are_not_names_or_disagree_are_refused(front: dict[str, Any], key: str) -> None:
    with pytest.raises(SkillSpecError) as caught:
        skill_scopes(front)
    assert caught.value.key == key
    assert [k for k, _ in problems_of({"name": "s", "description": "d", **front})] == [key]


def test_a_skill_is_visible_exactly_as_a_prompt_with_those_scopes_is() -> None:
    open_ = make(("a",), {"SKILL.md": b"x"})
    hr = make(("b",), {"SKILL.md": b"x"}, scopes=frozenset({"hr"}))
    assert open_.visible_to(frozenset()) and open_.visible_to(None)
    assert not hr.visible_to(frozenset()) and not hr.visible_to(frozenset({"eng"}))
    assert hr.visible_to(frozenset({"hr"})) and hr.visible_to(None)


# -- URIs and the entry ---------------------------------------------------------------------------------


def test_the_uris_of_a_skill() -> None:
    skill = make(("acme", "billing", "refunds"), {"SKILL.md": b"s", "examples/email.md": b"e"})
    assert skill.name == "refunds"
    assert skill.uri == "skill://acme/billing/refunds/SKILL.md"
    assert skill.directory_uri == "skill://acme/billing/refunds"
    assert skill.file_uri("examples/email.md") == "skill://acme/billing/refunds/examples/email.md"
    assert skill.directory_uri_of("examples") == "skill://acme/billing/refunds/examples"


def test_the_entry_lists_every_file_once_with_its_digest_and_size() -> None:
    files = {"SKILL.md": b"---\nname: pdf\n---\n", "a b.md": b"spaced", "refs/x?.md": b"odd"}
    skill = make(("pdf",), files)
    entry = skill.entry()
    assert entry["uri"] == "skill://pdf/SKILL.md" and entry["frontmatter"] == {"name": "pdf", "description": "d"}
    assert entry["resources"] == [
        {"uri": "skill://pdf/SKILL.md", "digest": digest(files["SKILL.md"]), "size": len(files["SKILL.md"])},
        {"uri": "skill://pdf/a%20b.md", "digest": digest(b"spaced"), "size": 6},
        {"uri": "skill://pdf/refs/x%3F.md", "digest": digest(b"odd"), "size": 3},
    ]
    assert all(DIGEST.match(r["digest"]) for r in entry["resources"])


def test_a_file_needs_a_well_formed_digest_and_a_skill_its_skill_md() -> None:
    with pytest.raises(ValueError):
        SkillFile("a", 1, "text/plain", "sha256:" + "A" * 64)
    with pytest.raises(ValueError):
        Skill(("s",), {}, (SkillFile("a", 1, "text/plain", digest(b"a")),))


def test_children_are_files_and_folders_in_byte_order_empty_folders_too() -> None:
    skill = make(("s",), {"SKILL.md": b"s", "b.md": b"b", "templates/regional/eu.md": b"e",
                          "templates/invoice.md": b"i"}, folders=("assets", "templates", "templates/regional"))
    root = skill.children()
    assert root is not None
    assert [(c.name, c.uri, c.file is None) for c in root] == [
        ("SKILL.md", "skill://s/SKILL.md", False), ("assets", "skill://s/assets", True),
        ("b.md", "skill://s/b.md", False), ("templates", "skill://s/templates", True)]
    assert [c.name for c in skill.children("templates") or ()] == ["invoice.md", "regional"]
    assert skill.children("assets") == ()
    assert skill.children("nope") is None and skill.children("b.md") is None
    # a folder named only by the files in it is a folder all the same
    assert make(("t",), {"SKILL.md": b"", "x/y/z.md": b""}).children("x") is not None


# -- parsing and resolving URIs -------------------------------------------------------------------------


@pytest.mark.parametrize("uri", [
    "skill://pdf/SKILL.md", "skill://pdf", "skill://acme/billing/refunds/examples/email.md",
    "skill://pdf/a%20b.md", "skill://pdf/caf%C3%A9.md"])
def test_well_formed_uris_parse(uri: str) -> None:
    assert parse_skill_uri(uri) is not None


@pytest.mark.parametrize("uri", [
    "skill://", "skill:///SKILL.md", "skill://pdf/", "skill://pdf//SKILL.md", "skill://pdf/./SKILL.md",
    "skill://pdf/../pdf/SKILL.md", "skill://pdf/refs/..", "skill://pdf/%2e%2e/x", "skill://pdf/%2E%2E/x",
    "skill://pdf/a%2Fb.md", "skill://pdf/a%5Cb.md", "skill://pdf/a%00b.md", "skill://pdf/a%0Ab.md",
    "skill://pdf/a\\b.md", "skill://pdf/SKILL.md?x=1", "skill://pdf/SKILL.md#top", "skill://pdf/%53KILL.md",
    "skill://pdf/a%20b.md%", "skill://pdf/%zz", "skill://pdf/%ff", "skill://pdf/a b.md", "SKILL://pdf/SKILL.md",
    "skills://pdf/SKILL.md", "file:///etc/passwd", "", 3, None, "skill://" + "a/" * 5000 + "SKILL.md"])
def test_malformed_uris_do_not_parse(uri: object) -> None:
    assert parse_skill_uri(uri) is None


@pytest.fixture
def served() -> dict[tuple[str, ...], Skill]:
    outer = make(("outer",), {"SKILL.md": b"o", "ref.md": b"r", "inner/SKILL.md": b"i", "inner/deep.md": b"d"},
                 folders=("inner",))
    inner = make(("outer", "inner"), {"SKILL.md": b"i", "deep.md": b"d"})
    hidden = make(("hr",), {"SKILL.md": b"h", "pay.md": b"p"}, scopes=frozenset({"hr"}))
    return {s.path: s for s in (outer, inner, hidden)}


def test_a_uri_resolves_to_the_innermost_skill_that_holds_it(served: dict[tuple[str, ...], Skill]) -> None:
    target = resolve_skill_uri("skill://outer/inner/SKILL.md", served)
    assert target is not None and target.skill.path == ("outer", "inner") and target.rel == "SKILL.md"
    assert target.is_skill and target.file is not None and not target.directory
    ref = resolve_skill_uri("skill://outer/ref.md", served)
    assert ref is not None and ref.skill.path == ("outer",) and not ref.is_skill
    folder = resolve_skill_uri("skill://outer/inner", served)
    assert folder is not None and folder.directory and folder.rel == "" and folder.skill.path == ("outer", "inner")
    root = resolve_skill_uri("skill://outer", served)
    assert root is not None and root.directory and root.file is None


@pytest.mark.parametrize("uri", ["skill://outer/nope.md", "skill://nope/SKILL.md", "skill://outer/ref.md/x",
                                 "skill://outer/../hr/pay.md", "skill://outer/%2e%2e/hr/pay.md", "skill://hr/pay.md",
                                 "skill://hr/SKILL.md", "skill://hr"])
def test_unknown_malformed_and_hidden_resolve_alike(served: dict[tuple[str, ...], Skill], uri: str) -> None:
    assert resolve_skill_uri(uri, served, frozenset()) is None


def test_a_hidden_skill_resolves_for_those_who_may_see_it(served: dict[tuple[str, ...], Skill]) -> None:
    assert resolve_skill_uri("skill://hr/pay.md", served, frozenset({"hr"})) is not None
    assert resolve_skill_uri("skill://hr/pay.md", served) is not None  # trusted
    assert resolve_skill_uri("skill://hr/pay.md", served, frozenset({"eng"})) is None
