"""Prompt tests on ``/api/store`` (server/web/store_tests.py): a prompt's tests and their results, the editor's
text tested with each check and save, a failing save refused unless skip_tests (and then said in its message),
and a hidden prompt's tests hidden, against real ``serve --http`` processes on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.store_api import ALICE, BOB, CAROL, cli, get, post, serving

GREET = """---
arguments:
  - {name: who, required: true}
tests:
  - description: greets
    vars: {who: Ada}
    assert:
      - {type: contains, value: Hello Ada}
---
Hello {{ who }}!
"""
SECRET = """---
scopes: [hr]
tests:
  - vars: {}
    assert:
      - {type: contains, value: private}
---
Salaries are private.
"""


def store(tmp: Path, url: str | None = None) -> str:
    library, url = tmp / "lib", url or f"sqlite:///{tmp / 'store.db'}"
    library.mkdir()
    (library / "greet.md").write_text(GREET)
    (library / "salaries.md").write_text(SECRET)
    (library / "plain.md").write_text("No tests.\n")
    (library / ".claude/commands").mkdir(parents=True)
    (library / ".claude/commands/review.md").write_text("Review $ARGUMENTS\n")
    (library / ".claude/commands/review.tests.yaml").write_text(
        "- vars: {arguments: a.py}\n  assert: [{type: starts-with, value: Review a.py}]\n")
    cli("publish", str(library), "--store", url, "--label", "production", "-m", "first")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    if request.param == "sqlite":
        url = store(tmp_path)
        with serving(tmp_path, url) as both:
            yield both
        return
    from tests.support.postgres import cluster, new_database

    with cluster() as postgres, serving(tmp_path, store(tmp_path, new_database(postgres))) as both:
        yield both


def test_tests_checks_and_saves(served: tuple[str, str]) -> None:
    base, url = served
    shown = get(base, "/tests", ALICE, prompt="greet").json()
    assert shown["tests"]["origin"] == "front matter"
    assert shown["tests"]["cases"] == [{"description": "greets", "vars": {"who": "Ada"},
                                        "assert": [{"type": "contains", "value": "Hello Ada"}]}]
    report = shown["tests"]["report"]
    assert (report["passed"], report["cases"], report["failed"]) == (True, 1, 0)
    assert get(base, "/tests", BOB, prompt="plain").json() == {"prompt": "plain", "tests": None}
    # A reader sees the cases, not run: running them needs the write scope.
    unrun = get(base, "/tests", BOB, prompt="greet").json()["tests"]
    assert unrun == {**shown["tests"], "report": None, "notRun": "running tests needs the scope store:write"}
    # Another tool's file: its tests file comes from the label with it.
    review = get(base, "/tests", ALICE, prompt="review").json()["tests"]
    assert review["origin"] == ".claude/commands/review.tests.yaml" and review["report"]["passed"] is True

    # The editor's text is tested with its check: here it no longer says what its test expects.
    failing = GREET.replace("Hello {{ who }}!", "Goodbye {{ who }}!")
    checked = post(base, "/check", ALICE, {"prompt": "greet", "text": failing}).json()
    assert checked["problems"] == []
    case = checked["tests"]["report"]["prompts"][0]["cases"][0]
    assert case["passed"] is False and case["message"] == (
        "prompt 'greet', 'greets': assertion 1 (contains 'Hello Ada'): expected the text to contain 'Hello Ada'; "
        "it was 'Goodbye Ada!'")
    # A text with problems is not tested: its problems come first.
    by_reader = post(base, "/check", BOB, {"prompt": "greet", "text": failing}).json()
    assert by_reader["problems"] == [] and by_reader["tests"]["report"] is None
    broken = post(base, "/check", BOB, {"prompt": "greet", "text": GREET.replace("contains", "contain")}).json()
    assert "tests" not in broken and "unknown assertion type 'contain'" in broken["problems"][0]["message"]
    assert broken["problems"][0]["line"] == 8

    # A save of failing tests is refused, with the report; skip_tests saves it, and its message says so.
    refused = post(base, "/publish", ALICE, {"prompt": "greet", "text": failing, "message": "bye", "base": 1})
    assert refused.status_code == 422
    assert refused.json()["error"] == "nothing saved: 1 test case of greet.md failed"
    assert refused.json()["tests"]["report"]["failed"] == 1 and refused.json()["problems"] == []
    assert "v2" not in cli("history", "greet", "--store", url)
    saved = post(base, "/publish", ALICE, {"prompt": "greet", "text": failing, "message": "bye", "base": 1,
                                           "skip_tests": True})
    assert saved.status_code == 200 and saved.json()["version"] == 2
    assert "bye [tests skipped: saved with skip_tests]" in cli("history", "greet", "--store", url).splitlines()[0]
    passing = post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET.replace("Ada}", "Ada} # ok"),
                                             "message": "back", "base": 2})
    assert passing.status_code == 200 and passing.json()["version"] == 3
    assert post(base, "/publish", ALICE, {"prompt": "greet", "text": GREET, "skip_tests": "yes"}).status_code == 400


def test_a_hidden_prompts_tests_are_hidden(served: tuple[str, str]) -> None:
    base, _ = served
    hidden = get(base, "/tests", BOB, prompt="salaries")
    unknown = get(base, "/tests", BOB, prompt="no-such-prompt")
    assert hidden.status_code == unknown.status_code == 404
    assert hidden.json()["error"] == "no prompt 'salaries' in label production"
    assert post(base, "/check", BOB, {"prompt": "salaries", "text": SECRET}).status_code == 404
    seen = get(base, "/tests", CAROL, prompt="salaries").json()  # carol holds hr, but may not write
    assert seen["tests"]["cases"][0]["assert"] == [{"type": "contains", "value": "private"}]
    assert seen["tests"]["report"] is None
