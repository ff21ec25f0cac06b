"""Writing a library's Agent Skills into another tool's skill folder (``promptdeck export --to FORMAT``).

A skill is already in the one format every tool reads (a folder with a
``SKILL.md``), so nothing is translated: each file is copied byte for byte,
into the folder where the target tool looks for project skills. A skill nested
in another travels inside it, as the files of the one that holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..prompts.skills import Skill

#: Where each target tool loads a project's skills from (docs/skills.md lists who reads which).
SKILL_FOLDERS = {
    "claude-code": ".claude/skills",
    "codex": ".agents/skills",
    "copilot": ".github/skills",
    "cursor": ".cursor/skills",
    "gemini": ".gemini/skills",
}


@dataclass(frozen=True)
class ExportedSkill:
    """One skill as written for a target: its name and its files (path below the output folder, bytes)."""

    name: str
    files: tuple[tuple[str, bytes], ...]


def outermost(skills: Mapping[tuple[str, ...], Skill]) -> list[Skill]:
    """The skills no other skill of ``skills`` holds, by path."""
    paths = set(skills)
    return [skill for path, skill in sorted(skills.items()) if not any(path[:n] in paths for n in range(1, len(path)))]


def export_skills(skills: Mapping[tuple[str, ...], Skill], read: Callable[[Skill, str], bytes],
                  target: str) -> list[ExportedSkill]:
    """Every outermost skill, for ``target``'s skill folder; ``[]`` for a target that has none (see
    ``SKILL_FOLDERS``). ``ValueError`` when two skills of one name would share a folder."""
    folder = SKILL_FOLDERS.get(target)
    if folder is None:
        return []
    taken: dict[str, Skill] = {}
    out = []
    for skill in outermost(skills):
        other = taken.setdefault(skill.name, skill)
        if other is not skill:
            raise ValueError(f"skills {other.directory_uri} and {skill.directory_uri} would both be written to "
                             f"{folder}/{skill.name}; nothing was written")
        out.append(ExportedSkill(skill.name, tuple((f"{folder}/{skill.name}/{file.path}", read(skill, file.path))
                                                   for file in skill.files)))
    return out
