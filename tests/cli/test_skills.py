"""``skills`` and ``skill`` (cli/skills.py) against a stdio server serving one skill
(tests/client/servers/bad_skills.py): listed as a table or JSON, fetched into a folder with every digest
checked, and a server that lies about a digest refused with nothing written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.skills import skill, skills
from tests.support.paths import TESTS

pytestmark = pytest.mark.usefixtures("kept_logging")


def server(mode: str = "honest") -> str:
    return f"{sys.executable} {TESTS / 'client' / 'servers' / 'bad_skills.py'} {mode}"


def run(command: object, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), prog_name="promptdeck")  # type: ignore[arg-type]


def test_skills_are_listed_with_their_description_and_files() -> None:
    done = run(skills, server())
    assert done.exit_code == 0, done.output
    assert done.stdout == "skill://team/demo/SKILL.md  A demo skill.  (3 files)\n"


def test_skills_as_json() -> None:
    [entry] = json.loads(run(skills, server(), "--json").stdout)
    assert entry["uri"] == "skill://team/demo/SKILL.md" and entry["frontmatter"]["name"] == "demo"


def test_a_skill_is_written_as_a_folder(tmp_path: Path) -> None:
    done = run(skill, server(), "skill://team/demo", "--to", str(tmp_path))
    assert done.exit_code == 0, done.output
    assert done.stdout == f"wrote {tmp_path}/demo/ (3 files, every digest checked)\n"
    assert (tmp_path / "demo" / "SKILL.md").read_text().startswith("---\nname: demo\n")
    again = run(skill, server(), "skill://team/demo/SKILL.md", "--to", str(tmp_path))
    assert again.exit_code == 1 and "--replace" in again.stderr


def test_a_digest_that_does_not_match_writes_nothing(tmp_path: Path) -> None:
    done = run(skill, server("digest"), "skill://team/demo", "--to", str(tmp_path))
    assert done.exit_code == 1 and "refs/guide.txt" in done.stderr and "digest" in done.stderr
    assert list(tmp_path.iterdir()) == []
