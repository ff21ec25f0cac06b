"""``/api/store`` on a skill's files (``?skill=URI``), against a real ``promptdeck serve --http`` of a store made
with the real ``promptdeck publish``: the same access rule as for prompts. A skill whose scopes the principal
lacks has no files to it (404, in the words of an unknown one), its versions are left out of label moves it
is shown, and a writer moves no label through them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.files import skill_md, write
from tests.support.store_api import ALICE, BOB, CAROL, cli, get, post, serving

PNG = b"\x89PNG\r\n\x1a\n\x00" + bytes(range(256))
PAYROLL = skill_md("payroll", "Monthly payroll checks", "metadata:\n  promptdeck-scopes: hr\n")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """(the server's base URL, the store URL, the library): two publishes to production, the second changing a
    public skill and the payroll skill, which only hr may see."""
    library, url = tmp_path / "lib", f"sqlite:///{tmp_path / 'store.db'}"
    write(library, {"greet.md": "Hello!\n", ".claude/skills/git/SKILL.md": skill_md("git", "Git workflow"),
                    ".claude/skills/git/references/branches.md": "main\n",
                    "skills/payroll/SKILL.md": PAYROLL, "skills/payroll/rates.csv": "grade,rate\nA,10\n",
                    "skills/payroll/logo.png": PNG})
    cli("publish", str(library), "--store", url, "--label", "production", "-m", "first", "--author", "root")
    write(library, {".claude/skills/git/references/branches.md": "main and topics\n",
                    "skills/payroll/rates.csv": "grade,rate\nA,11\n", "skills/payroll/logo.png": PNG[::-1]})
    cli("publish", str(library), "--store", url, "--label", "production", "-m", "second", "--author", "root")
    with serving(tmp_path, url) as (base, _):
        yield base, url, library


def test_a_skills_file_has_its_history_versions_and_diffs(served: tuple[str, str, Path]) -> None:
    base, _, _ = served
    found = get(base, "/history", BOB, skill="skill://git/references/branches.md")
    assert found.status_code == 200, found.text
    assert found.json()["path"] == ".claude/skills/git/references/branches.md"
    assert [(v["version"], v["message"], v["labels"]) for v in found.json()["versions"]] == \
        [(2, "second", ["production"]), (1, "first", [])]
    first = get(base, "/version", BOB, skill="skill://git/references/branches.md", version=1).json()
    assert first["text"] == "main\n" and first["binary"] is False and first["size"] == 5
    assert first["digest"] == "sha256:" + hashlib.sha256(b"main\n").hexdigest()
    diff = get(base, "/diff", BOB, skill="skill://git/references/branches.md", **{"from": 1, "to": 2}).json()
    assert diff["source"] == [{"op": "replace", "left": [1, "main"], "right": [1, "main and topics"]}]
    assert diff["same"] is False and diff["binary"] is False
    skill = get(base, "/history", BOB, skill="skill://git/SKILL.md").json()
    assert [v["version"] for v in skill["versions"]] == [1]


def test_a_binary_file_has_no_text_and_no_line_diff(served: tuple[str, str, Path]) -> None:
    base, _, _ = served
    logo = get(base, "/version", CAROL, skill="skill://payroll/logo.png", version=2).json()
    assert logo["binary"] is True and logo["text"] is None and logo["size"] == len(PNG)
    assert logo["digest"] == "sha256:" + hashlib.sha256(PNG[::-1]).hexdigest()
    diff = get(base, "/diff", CAROL, skill="skill://payroll/logo.png", **{"from": 1, "to": 2}).json()
    assert diff["binary"] is True and diff["source"] == [] and diff["same"] is False


def test_a_skill_hidden_by_scopes_has_no_files_to_its_principal(served: tuple[str, str, Path]) -> None:
    base, _, _ = served
    for route, extra in (("/history", {}), ("/version", {"version": 1}), ("/diff", {"from": 1, "to": 2})):
        hidden = get(base, route, BOB, skill="skill://payroll/rates.csv", **extra)
        unknown = get(base, route, BOB, skill="skill://nobody/rates.csv", **extra)
        assert hidden.status_code == unknown.status_code == 404, route
        assert hidden.json()["error"].replace("payroll", "X") == unknown.json()["error"].replace("nobody", "X")
        assert get(base, route, CAROL, skill="skill://payroll/rates.csv", **extra).status_code == 200, route
    assert get(base, "/history", BOB, skill="skill://payroll/SKILL.md").status_code == 404
    # A folder, a malformed URI, a way out: no file of any skill.
    for uri in ("skill://git/references", "skill://git/../payroll/rates.csv", "skill://git/%2e%2e/x", "file:///etc"):
        assert get(base, "/history", CAROL, skill=uri).status_code == 404, uri


def test_label_moves_through_a_hidden_skill_are_shown_bare_and_refused_to_a_writer_without_its_scopes(
        served: tuple[str, str, Path]) -> None:
    base, url, library = served
    write(library, {"skills/payroll/rates.csv": "grade,rate\nA,12\n"})
    cli("publish", str(library), "--store", url, "--label", "production", "-m", "raise", "--author", "hr-bot")
    bob = get(base, "", BOB).json()["labels"][0]
    assert bob["reason"] == "label moved" and bob["author"] is None  # it changed only what bob may not see
    carol = get(base, "", CAROL).json()["labels"][0]
    assert carol["reason"] == "publish 3" and carol["author"] == "hr-bot"
    refused = post(base, "/rollback", ALICE, {"label": "production"})  # alice writes, but may not see payroll
    assert refused.status_code == 403 and "outside your scopes" in refused.json()["error"]
    assert "[production]" in cli("history", "skill://payroll/rates.csv", "--store", url).splitlines()[0]


def test_an_edit_of_a_skills_skill_md_is_held_to_the_skills_rules(served: tuple[str, str, Path]) -> None:
    """The web editor saves a SKILL.md served as a prompt; what would break the skill is refused at its line,
    as a publish of the folder would refuse it."""
    base, url, _ = served
    renamed = "---\nname: gitflow\ndescription: Git workflow\n---\nUse git.\n"
    found = post(base, "/check", BOB, {"prompt": "git", "text": renamed}).json()["problems"]
    assert {"line": 2, "message": "name 'gitflow' does not match the skill's folder 'git'"} in found
    no_description = post(base, "/check", BOB, {"prompt": "git", "text": "---\nname: git\n---\nUse git.\n"}).json()
    assert [p["line"] for p in no_description["problems"]] == [1]
    assert "gives no description" in no_description["problems"][0]["message"]
    saved = post(base, "/publish", ALICE, {"prompt": "git", "text": renamed, "base": 1})
    assert saved.status_code == 422
    assert "SKILL.md v2" not in cli("history", "skill://git", "--store", url)
    fine = skill_md("git", "Git workflow, kept short")
    assert post(base, "/check", BOB, {"prompt": "git", "text": fine}).json() == {"problems": []}
