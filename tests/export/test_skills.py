"""Exporting a library's skills into each tool's skill folder: byte for byte, outermost skills only, a
clash or a broken skill refusing the whole export."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from promptdeck.export.skills import SKILL_FOLDERS, export_skills, outermost
from promptdeck.prompts.skills import Skill, SkillFile
from tests.support.cli import pd
from tests.support.libraries import EXAMPLES


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("target", sorted(SKILL_FOLDERS))
def test_the_example_skill_is_copied_byte_for_byte_where_the_tool_loads_it(target: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = pd("export", str(EXAMPLES), str(out), "--to", target)
    assert done.returncode == 0, done.stderr
    skill = tree(EXAMPLES / "skills" / "changelog")
    assert {f"{SKILL_FOLDERS[target]}/changelog/{rel}": data for rel, data in skill.items()} == \
        {rel: data for rel, data in tree(out).items() if rel.startswith(SKILL_FOLDERS[target])}


def library(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    outer = root / ".agents" / "skills" / "pdf"
    (outer / "forms" / "refs").mkdir(parents=True)
    (outer / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs.\n---\nRead forms/.\n")
    (outer / "logo.bin").write_bytes(bytes(range(256)) * 3)
    (outer / "forms" / "SKILL.md").write_text("---\nname: forms\ndescription: Forms.\n---\nFill them.\n")
    (outer / "forms" / "refs" / "fields.md").write_text("Fields.\n")
    (root / "hello.md").write_text("---\ndescription: Hi\n---\nHello.\n")
    return root


def test_a_nested_skill_travels_inside_the_one_that_holds_it(tmp_path: Path) -> None:
    root, out = library(tmp_path), tmp_path / "out"
    done = pd("export", str(root), str(out), "--to", "claude-code")
    assert "wrote 1 prompt and 1 skill of library" in done.stdout, done.stderr
    written = tree(out)
    assert sorted(rel for rel in written if rel.startswith(".claude/skills/")) == [
        ".claude/skills/pdf/SKILL.md", ".claude/skills/pdf/forms/SKILL.md", ".claude/skills/pdf/forms/refs/fields.md",
        ".claude/skills/pdf/logo.bin"]
    assert written[".claude/skills/pdf/logo.bin"] == bytes(range(256)) * 3


def test_a_target_without_skill_folders_says_what_it_left_out(tmp_path: Path) -> None:
    done = pd("export", str(library(tmp_path)), str(tmp_path / "out"), "--to", "prompty")
    assert done.returncode == 0
    assert "warning: prompty has no skill folder; 1 skill not written" in done.stderr
    assert list(tree(tmp_path / "out")) == ["hello.prompty"]


def test_a_broken_skill_refuses_the_whole_export(tmp_path: Path) -> None:
    root = library(tmp_path)
    (root / ".agents" / "skills" / "pdf" / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: PDFs.\n---\n")
    done = pd("export", str(root), str(tmp_path / "out"), "--to", "codex", check=False)
    assert done.returncode == 1
    assert "does not match the skill's folder 'pdf'" in done.stderr
    assert not (tmp_path / "out").exists() or tree(tmp_path / "out") == {}


def made(*path: str) -> Skill:
    data = f"---\nname: {path[-1]}\ndescription: x\n---\n".encode()
    file = SkillFile("SKILL.md", len(data), "text/markdown", "sha256:" + hashlib.sha256(data).hexdigest())
    return Skill(path, {"name": path[-1], "description": "x"}, (file,))


def test_two_outermost_skills_of_one_name_are_refused() -> None:
    skills: dict[tuple[str, ...], Skill] = {("team-a", "x"): made("team-a", "x"), ("team-b", "x"): made("team-b", "x")}
    assert [s.path for s in outermost(skills)] == [("team-a", "x"), ("team-b", "x")]
    with pytest.raises(ValueError, match=r"skill://team-a/x and skill://team-b/x would both be written to "
                                         r"\.github/skills/x"):
        export_skills(skills, lambda skill, rel: b"", "copilot")
    assert export_skills(skills, lambda skill, rel: b"", "dotprompt") == []
