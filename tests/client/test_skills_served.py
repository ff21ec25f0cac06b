"""promptdeck's own client against promptdeck's own server: ``promptdeck skills`` lists the example library's
skill, and ``promptdeck skill … --to DIR`` writes a folder byte-identical to the source skill
(``examples/prompts/skills/changelog``), over stdio and Streamable HTTP, in both eras.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.http_server import http_server
from tests.support.paths import EXAMPLES

pytestmark = pytest.mark.slow

SOURCE = EXAMPLES / "skills/changelog"
URI = "skill://changelog/SKILL.md"


def promptdeck(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *arguments], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch") as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest) -> str:
    if request.param == "http":
        return str(request.getfixturevalue("http_url"))
    return shlex.join([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-watch"])


def files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file()}


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_skills_lists_the_example_skill(target: str, era: str) -> None:
    done = promptdeck("skills", target, "--era", era, "--json")
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads(done.stdout)
    assert entry["uri"] == URI and entry["frontmatter"]["name"] == "changelog"
    assert [item["uri"] for item in entry["resources"]] == [URI, "skill://changelog/references/style.md"]
    shown = promptdeck("skills", target, "--era", era)
    assert shown.returncode == 0 and shown.stdout.startswith(URI) and "(2 files)" in shown.stdout, shown


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_skill_writes_a_folder_identical_to_the_source(target: str, era: str, tmp_path: Path) -> None:
    into = tmp_path / ".claude/skills"
    done = promptdeck("skill", target, URI, "--to", str(into), "--era", era)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {into / 'changelog'}/ (2 files, every digest checked)"
    assert files(into / "changelog") == files(SOURCE)
    # By the folder's URI too; a second fetch refuses to overwrite unless told to.
    again = promptdeck("skill", target, "skill://changelog", "--to", str(into), "--era", era)
    assert again.returncode != 0 and "changelog" in again.stderr
    replaced = promptdeck("skill", target, "skill://changelog", "--to", str(into), "--era", era, "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert files(into / "changelog") == files(SOURCE)


def test_no_skills_turns_the_extension_off() -> None:
    target = shlex.join([sys.executable, "-m", "promptdeck", "serve", str(EXAMPLES), "--no-watch", "--no-skills"])
    done = promptdeck("skills", target, "--era", "legacy")
    assert done.returncode != 0 and "does not serve skills" in done.stderr, done


def test_no_skills_over_http_too() -> None:
    with http_server(str(EXAMPLES), "--no-watch", "--no-skills") as url:
        for era in ("legacy", "modern"):
            done = promptdeck("skills", url, "--era", era)
            assert done.returncode != 0 and "does not serve skills" in done.stderr, done
