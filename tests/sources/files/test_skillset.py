"""A library's skills (sources/files/skillset.py) through ``FileSource``: every kind of skill folder, a tool's
skill folder served directly, two folders giving one skill, linked skill folders, hot reload that keeps a
broken skill's last good version, reads of exactly the bytes listed, and scopes that hide a skill and its
prompt alike."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import pytest

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.skills import Skill, resolve_skill_uri
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources import Source
from promptdeck.sources.files.paths import SKILL_FOLDERS, SkillLimits
from promptdeck.sources.files.source import FileSource
from tests.support.files import skill_md, write


def loaded(root: Path, **options: object) -> tuple[FileSource, list[str]]:
    source = FileSource(root, **options)  # type: ignore[arg-type]
    return source, [str(e) for e in source.load()]


def paths(source: FileSource) -> list[tuple[str, ...]]:
    return list(source.skills())


def digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


# -- where skills are found -----------------------------------------------------------------------------


def test_every_kind_of_skill_folder_is_read(tmp_path: Path) -> None:
    names = {}
    for i, (folder, _tools) in enumerate(SKILL_FOLDERS):
        name = f"s{i}"
        names[name] = folder
        write(tmp_path, {f"{folder}{name}/SKILL.md": skill_md(name)})
    source, problems = loaded(tmp_path)
    assert problems == []
    assert {s.path: s.origin for s in source.skills().values()} == {
        (name,): folder + name for name, folder in names.items()}


def test_the_skill_folders_are_the_ones_tools_document() -> None:
    assert [folder for folder, _ in SKILL_FOLDERS] == [
        ".agents/skills/", ".claude/skills/", ".codex/skills/", ".cursor/skills/", ".gemini/skills/",
        ".github/skills/", ".opencode/skills/", "skills/"]
    assert [f for f, _ in SKILL_FOLDERS] == sorted(f for f, _ in SKILL_FOLDERS)  # claimed in byte order


def test_skill_md_stays_a_prompt_and_a_skills_other_files_are_no_prompts(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/explain/SKILL.md": skill_md("explain"),
                     "skills/pdf/SKILL.md": skill_md("pdf"), "skills/pdf/references/guide.md": "# not a prompt\n",
                     "skills/README.md": "a prompt, as every .md of a library is\n", "hello.md": "hi\n"})
    source, problems = loaded(tmp_path)
    assert problems == []
    assert sorted(p.name for p in source.prompts()) == ["explain", "hello", "pdf", "skills.README"]
    assert sorted(paths(source)) == [("explain",), ("pdf",)]


def test_what_is_not_a_skill_beside_skills_is_passed_over_or_said(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/README.md": "x", ".claude/skills/_shared/a.md": "x",
                     ".claude/skills/.system/s/SKILL.md": skill_md("s"), "skills/notes/todo.md": "x"})
    source, problems = loaded(tmp_path)
    assert paths(source) == []
    assert problems == ["skills/notes: is no skill: it has no SKILL.md"]


@pytest.mark.parametrize(("served", "found"), [
    (".agents/skills", [("a",)]),
    (".agents", [("a",)]),
    (".claude", [("c",)]),
    (".claude/skills", [("c",)]),
    (".claude/skills/c", [("c",)]),
    (".opencode/skills", [("o",)]),
])
def test_a_tools_skill_folder_may_be_served_directly(tmp_path: Path, served: str,
                                                      found: list[tuple[str, ...]]) -> None:
    write(tmp_path, {".agents/skills/a/SKILL.md": skill_md("a"), ".claude/skills/c/SKILL.md": skill_md("c"),
                     ".opencode/skills/o/SKILL.md": skill_md("o")})
    source, problems = loaded(tmp_path / served)
    assert problems == [] and paths(source) == found


def test_problems_name_files_below_the_folder_served(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/c/SKILL.md": skill_md("d")})
    _, problems = loaded(tmp_path / ".claude" / "skills")
    assert problems == ["c/SKILL.md:2: name 'd' does not match the skill's folder 'c'"]


def test_skills_can_be_turned_off(tmp_path: Path) -> None:
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md("Bad")})
    source, problems = loaded(tmp_path, skills=False)
    assert problems == [] and source.skills() == {} and source.skill_set is None
    with pytest.raises(InvalidParams):
        source.read_skill_file(_any_skill(), "SKILL.md")


def _any_skill() -> Skill:
    from promptdeck.prompts.skills import SkillFile

    return Skill(("x",), {}, (SkillFile("SKILL.md", 0, "text/markdown", "sha256:" + "0" * 64),))


def test_a_source_serves_no_skills_unless_it_says_so() -> None:
    class Plain(Source):
        def prompts(self) -> list[object]:  # type: ignore[override]
            return []

    assert Plain().skills() == {}
    with pytest.raises(InvalidParams):
        Plain().read_skill_file(_any_skill(), "SKILL.md")


def test_limits_are_the_sources(tmp_path: Path) -> None:
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md(), "skills/pdf/a.md": "a", "skills/pdf/b.md": "b"})
    source, problems = loaded(tmp_path, skill_limits=SkillLimits(max_files=2))
    assert paths(source) == [] and problems == ["skills/pdf: holds more than 2 files"]


# -- one skill-path, two folders ------------------------------------------------------------------------


def test_the_same_skill_kept_for_two_tools_is_served_once_without_a_problem(tmp_path: Path) -> None:
    files = {"SKILL.md": skill_md("git"), "refs/a.md": "a"}
    write(tmp_path, {f".claude/skills/git/{rel}": text for rel, text in files.items()})
    write(tmp_path, {f".agents/skills/git/{rel}": text for rel, text in files.items()})
    source, problems = loaded(tmp_path)
    assert problems == [] and paths(source) == [("git",)]
    assert source.skills()[("git",)].origin == ".agents/skills/git"  # the first in byte order


def test_two_folders_giving_one_skill_other_bytes_is_a_problem_of_the_later_one(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/git/SKILL.md": skill_md("git"),
                     "skills/git/SKILL.md": skill_md("git", description="another")})
    source, problems = loaded(tmp_path)
    assert source.skills()[("git",)].origin == ".claude/skills/git"
    assert problems == ["skills/git: skill git is already served from .claude/skills/git, whose files differ: "
                        "one of them is not served"]


def test_a_skill_folder_linked_inside_the_library_is_one_skill(tmp_path: Path) -> None:
    write(tmp_path, {".agents/skills/git/SKILL.md": skill_md("git")})
    (tmp_path / ".claude" / "skills").mkdir(parents=True)
    os.symlink("../../.agents/skills/git", tmp_path / ".claude" / "skills" / "git")
    source, problems = loaded(tmp_path)
    assert problems == [] and paths(source) == [("git",)]


def test_a_skill_folder_linked_out_of_the_library_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere", {"git/SKILL.md": skill_md("git")})
    (tmp_path / "lib" / "skills").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere" / "git", tmp_path / "lib" / "skills" / "git")
    source, problems = loaded(tmp_path / "lib")
    assert paths(source) == [] and problems == ["skills/git: is a link that leads out of the library"]


def test_a_skill_folder_linked_to_a_hidden_folder_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path, {".git/x/SKILL.md": skill_md("x")})
    (tmp_path / "skills").mkdir()
    os.symlink("../.git/x", tmp_path / "skills" / "x")
    source, problems = loaded(tmp_path)
    assert paths(source) == [] and problems == ["skills/x: is a link to a hidden folder"]


# -- reading --------------------------------------------------------------------------------------------


def test_a_file_read_is_the_bytes_listed(tmp_path: Path) -> None:
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md(), "skills/pdf/bin/x": b"\x00\x01"})
    source, _ = loaded(tmp_path)
    skill = source.skills()[("pdf",)]
    for file in skill.files:
        data = source.read_skill_file(skill, file.path)
        assert "sha256:" + hashlib.sha256(data).hexdigest() == file.digest and len(data) == file.size
    with pytest.raises(InvalidParams):
        source.read_skill_file(skill, "nope")


def test_a_nested_skills_files_are_read_from_its_own_folder(tmp_path: Path) -> None:
    write(tmp_path, {"skills/outer/SKILL.md": skill_md("outer"), "skills/outer/inner/SKILL.md": skill_md("inner"),
                     "skills/outer/inner/x.md": "x"})
    source, _ = loaded(tmp_path)
    inner = source.skills()[("outer", "inner")]
    assert source.read_skill_file(inner, "x.md") == b"x"
    target = resolve_skill_uri("skill://outer/inner/x.md", source.skills())
    assert target is not None and source.read_skill_file(target.skill, target.rel) == b"x"


# -- reload ---------------------------------------------------------------------------------------------


def test_a_changed_file_changes_its_digest(tmp_path: Path) -> None:
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md(), "skills/pdf/a.md": "one"})
    source, _ = loaded(tmp_path)
    before = source.skills()
    write(tmp_path, {"skills/pdf/a.md": "two"})
    assert source.reload([str(tmp_path / "skills/pdf/a.md")]) == []
    after = source.skills()
    assert after is not before  # a new snapshot; the old one is as it was
    assert before[("pdf",)].file("a.md").digest != after[("pdf",)].file("a.md").digest  # type: ignore[union-attr]
    assert after[("pdf",)].file("a.md").digest == digest(tmp_path / "skills/pdf/a.md")  # type: ignore[union-attr]
    assert source.read_skill_file(after[("pdf",)], "a.md") == b"two"


def test_a_broken_reload_keeps_the_last_good_version(tmp_path: Path) -> None:
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md(), "skills/pdf/a.md": "one"})
    source, _ = loaded(tmp_path)
    good = source.skills()[("pdf",)]
    write(tmp_path, {"skills/pdf/SKILL.md": "---\nname: pdf\ndescription: [\n---\n", "skills/pdf/a.md": "two"})
    problems = [str(e) for e in source.reload([str(tmp_path / "skills/pdf/SKILL.md")])]
    assert problems and all(p.startswith("skills/pdf/SKILL.md:4: front matter is not valid YAML") for p in problems)
    assert source.skills()[("pdf",)] is good
    with pytest.raises(InvalidParams, match="changed since"):  # never bytes the listing does not promise
        source.read_skill_file(good, "a.md")
    write(tmp_path, {"skills/pdf/SKILL.md": skill_md()})
    assert source.reload([str(tmp_path / "skills/pdf/SKILL.md")]) == []
    fixed = source.skills()[("pdf",)]
    assert fixed is not good and source.read_skill_file(fixed, "a.md") == b"two"


def test_a_skill_whose_skill_md_or_folder_is_gone_is_gone(tmp_path: Path) -> None:
    write(tmp_path, {"skills/a/SKILL.md": skill_md("a"), "skills/b/SKILL.md": skill_md("b")})
    source, _ = loaded(tmp_path)
    (tmp_path / "skills/a/SKILL.md").unlink()
    shutil.rmtree(tmp_path / "skills/b")
    problems = [str(e) for e in source.reload([str(tmp_path / "skills/a/SKILL.md"), str(tmp_path / "skills/b")])]
    assert paths(source) == [] and problems == ["skills/a: is no skill: it has no SKILL.md"]


def test_a_new_skill_folder_is_found_by_a_change_above_it(tmp_path: Path) -> None:
    write(tmp_path, {"hello.md": "hi"})
    source, _ = loaded(tmp_path)
    write(tmp_path, {".github/skills/new/SKILL.md": skill_md("new")})
    source.reload([str(tmp_path / ".github")])  # the watcher may report only the folder made
    assert paths(source) == [("new",)]
    shutil.rmtree(tmp_path / ".github")
    source.reload([str(tmp_path / ".github")])
    assert paths(source) == []


def test_a_change_in_a_linked_skill_folder_reaches_the_skill(tmp_path: Path) -> None:
    write(tmp_path / "shared", {"git/SKILL.md": skill_md("git"), "git/a.md": "one"})
    (tmp_path / "lib" / "skills").mkdir(parents=True)
    os.symlink("../../shared/git", tmp_path / "lib" / "skills" / "git")
    write(tmp_path / "lib", {".gitkeep": ""})
    # the shared folder lies outside this library: a link out, so not served at all
    source, problems = loaded(tmp_path / "lib")
    assert paths(source) == [] and problems == ["skills/git: is a link that leads out of the library"]
    write(tmp_path / "lib", {".agents/skills/git/SKILL.md": skill_md("git"), ".agents/skills/git/a.md": "one"})
    shutil.rmtree(tmp_path / "lib" / "skills")
    (tmp_path / "lib" / "skills").mkdir()
    os.symlink("../.agents/skills/git", tmp_path / "lib" / "skills" / "git")
    source, problems = loaded(tmp_path / "lib")
    assert problems == [] and paths(source) == [("git",)]
    write(tmp_path / "lib", {".agents/skills/git/a.md": "two"})
    source.reload([str(tmp_path / "lib/.agents/skills/git/a.md")])
    assert source.read_skill_file(source.skills()[("git",)], "a.md") == b"two"


def test_changes_made_while_loading_are_found(tmp_path: Path) -> None:
    write(tmp_path, {"skills/a/SKILL.md": skill_md("a"), "skills/b/SKILL.md": skill_md("b")})
    time.sleep(0.2)  # older than the load by more than the slack ``changed_since_load`` allows
    source, _ = loaded(tmp_path)
    assert source.changed_since_load() == []
    write(tmp_path, {"skills/a/new.md": "n"})
    write(tmp_path, {"skills/c/SKILL.md": skill_md("c")})
    changed = source.changed_since_load()
    assert [p for p in changed if "/skills/" in p and not p.endswith(".md")] == [
        str(tmp_path / "skills/a"), str(tmp_path / "skills/c")]
    source.reload(changed)
    assert paths(source) == [("a",), ("b",), ("c",)]
    assert source.skills()[("a",)].file("new.md") is not None


# -- scopes ---------------------------------------------------------------------------------------------


def test_scopes_hide_the_skill_and_its_prompt_alike(tmp_path: Path) -> None:
    hr = "metadata:\n  promptdeck-scopes: hr\n"
    write(tmp_path, {".claude/skills/pay/SKILL.md": skill_md("pay", extra=hr),
                     ".claude/skills/open/SKILL.md": skill_md("open")})
    source, problems = loaded(tmp_path)
    assert problems == []
    skills = source.skills()
    assert skills[("pay",)].scopes == {"hr"}
    catalog = Catalog(source.prompts())
    assert catalog.view(frozenset()).names == ["open"]
    assert catalog.view(frozenset({"hr"})).names == ["open", "pay"]
    assert resolve_skill_uri("skill://pay/SKILL.md", skills, frozenset()) is None
    assert resolve_skill_uri("skill://pay/SKILL.md", skills, frozenset({"hr:x"})) is None
    assert resolve_skill_uri("skill://pay/SKILL.md", skills, frozenset({"hr"})) is not None


def test_bad_scopes_are_a_problem_of_the_prompt_and_of_the_skill(tmp_path: Path) -> None:
    write(tmp_path, {".claude/skills/pay/SKILL.md": skill_md("pay", extra="scopes: a\nmetadata:\n"
                                                                             "  promptdeck-scopes: b\n")})
    source, problems = loaded(tmp_path)
    assert paths(source) == [] and source.prompts() == []
    expected = (".claude/skills/pay/SKILL.md:4: scopes and metadata.promptdeck-scopes name different scopes: "
                "keep one of them")
    assert problems == [expected, expected]  # once as a prompt, once as a skill: `check` shows it once


def test_a_template_reads_a_skills_files_only_where_every_reader_may_see_the_skill(tmp_path: Path) -> None:
    hr = "metadata:\n  promptdeck-scopes: hr\n"
    write(tmp_path, {"skills/pay/SKILL.md": skill_md("pay", extra=hr), "skills/pay/rates.md": "SECRET",
                     "skills/open/SKILL.md": skill_md("open"), "skills/open/guide.md": "open",
                     "peek.md": '{{ read("skills/pay/rates.md") }}', "peek-md.md": '{{ read("skills/pay/SKILL.md") }}',
                     "hr.md": '---\nscopes: [hr]\n---\n{{ read("skills/pay/rates.md") }}',
                     "fine.md": '{{ read("skills/open/guide.md") }}'})
    source, problems = loaded(tmp_path)
    assert [p.split(":", 1)[0] for p in problems] == ["peek-md.md", "peek.md"]
    assert all("restricted to hr; a prompt seen by everyone may not read it" in p for p in problems)
    assert sorted(p.name for p in source.prompts()) == ["fine", "hr", "open", "pay"]


def test_the_servers_file_watcher_reaches_skills_in_hidden_folders(tmp_path: Path) -> None:
    import threading

    from promptdeck.server.app import PromptServer
    from promptdeck.server.watch import WatchThread

    write(tmp_path, {".agents/skills/pdf/SKILL.md": skill_md(), ".agents/skills/pdf/a.md": "one"})
    server = PromptServer()
    server.add_folder(tmp_path)
    (source,) = server.sources
    watcher = WatchThread(server, threading.RLock())
    watcher.start()
    try:
        deadline = time.monotonic() + 20
        while True:  # written until seen: the watcher may not be watching yet at the first write
            write(tmp_path, {".agents/skills/pdf/a.md": "two", ".agents/skills/new/SKILL.md": skill_md("new")})
            skills = source.skills()
            pdf = skills[("pdf",)].file("a.md")
            if ("new",) in skills and pdf is not None and pdf.digest == digest(tmp_path / ".agents/skills/pdf/a.md"):
                break
            assert time.monotonic() < deadline, "the watcher never reloaded the skills"
            time.sleep(0.2)
    finally:
        watcher.stop()
        watcher.join(10)
    assert source.read_skill_file(source.skills()[("pdf",)], "a.md") == b"two"
