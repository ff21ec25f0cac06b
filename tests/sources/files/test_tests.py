"""A prompt file's tests as read from files (sources/files/tests.py): front matter and sidecar, every problem
at its line, and nothing of them in what clients see."""

from __future__ import annotations

from pathlib import Path

from promptdeck.prompts.catalog import Catalog
from promptdeck.protocol.revisions import REVISIONS
from promptdeck.sources.files.source import FileSource
from promptdeck.sources.files.tests import sidecar_of

BODY = "Hello {{ who }}\n"
FRONT = "---\ndescription: Greets.\narguments:\n  - {name: who, required: true}\n"


def load(root: Path, files: dict[str, str]) -> tuple[FileSource, list[str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    source = FileSource(root)
    return source, [str(e) for e in source.load(compile_all=True)]


def test_problems_are_at_their_lines(tmp_path: Path) -> None:
    text = FRONT + """tests:
  - description: one
    vars:
      who: Ada
      whom: Bob
    assert:
      - type: contians
        value: Ada
      - {type: regex, value: "(a+)+b"}
  - vars: {who: Ada}
    assert:
      - type: contains
        value: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
  - 7
---
""" + BODY
    text = text.replace("x" * 90, "x" * 10_001)
    _, problems = load(tmp_path, {"g.md": text})
    assert [p.split(": test case")[0] for p in problems] == ["g.md:9", "g.md:11", "g.md:13", "g.md:17", "g.md:18"]
    assert "vars names 'whom'" in problems[0] and "unknown assertion type 'contians'" in problems[1]
    assert "backtracks catastrophically" in problems[2] and "at most 10000 are allowed" in problems[3]
    assert problems[4] == "g.md:18: test case 3: must be a mapping with vars and assert"


def test_tests_is_not_a_listing_field_and_listings_do_not_change(tmp_path: Path) -> None:
    plain, _ = load(tmp_path / "a", {"g.md": FRONT + "---\n" + BODY})
    tested, problems = load(tmp_path / "b", {"g.md": FRONT + "tests:\n  - {vars: {who: A}, assert: [{type: "
                                             "contains, value: A}]}\n---\n" + BODY})
    assert problems == []
    before, after = Catalog(plain.prompts()), Catalog(tested.prompts())
    assert after.require("g").parsed().tests is not None and before.require("g").parsed().tests is None
    for rev in REVISIONS.values():
        assert before.page(rev) == after.page(rev)  # byte for byte
    assert b"tests" not in after.signature()


def test_a_sidecar_beside_another_tools_file(tmp_path: Path) -> None:
    files = {".claude/commands/review.md": "Review $ARGUMENTS\n",
             ".claude/commands/review.tests.yaml": "- vars: {arguments: x.py}\n  assert:\n"
                                                   "    - {type: equals, value: Review x.py}\n"}
    source, problems = load(tmp_path, files)
    assert problems == []
    tests = Catalog(source.prompts()).require("review").parsed().tests
    assert tests is not None and tests.origin == ".claude/commands/review.tests.yaml"
    assert tests.cases[0].vars == {"arguments": "x.py"}


def test_a_bad_sidecar_is_a_problem_at_its_line_and_keeps_the_last_good_version(tmp_path: Path) -> None:
    good = "- vars: {arguments: x}\n  assert: [{type: contains, value: x}]\n"
    source, problems = load(tmp_path, {".claude/commands/review.md": "Review $ARGUMENTS\n",
                                       ".claude/commands/review.tests.yaml": good})
    assert problems == []
    sidecar = tmp_path / ".claude/commands/review.tests.yaml"
    sidecar.write_text(good + "- vars: {arguments: x}\n  assert: [{type: nope}]\n")
    reported = source.reload([str(sidecar)])  # as the watcher hands it a changed file
    assert [str(e) for e in reported] == [str(e) for errs in source.errors.values() for e in errs] == [
        ".claude/commands/review.tests.yaml:4: test case 2: assertion 1: unknown assertion type 'nope' (known: "
        "equals, contains, icontains, contains-any, contains-all, icontains-any, icontains-all, starts-with, "
        "regex, is-json, max-length, and each with not-)"]
    served = Catalog(source.prompts()).require("review").parsed().tests
    assert served is not None and len(served.cases) == 1  # still the good one
    sidecar.write_text("- [unclosed\n")
    source.update([str(sidecar)])
    assert [str(e) for errs in source.errors.values() for e in errs][0].startswith(
        ".claude/commands/review.tests.yaml:1: tests file is not valid YAML")


def test_sidecar_names() -> None:
    assert sidecar_of(".claude/commands/git/review.md") == ".claude/commands/git/review.tests.yaml"
    assert sidecar_of(".github/prompts/a.prompt.md") == ".github/prompts/a.tests.yaml"
    assert sidecar_of("x.prompty") == "x.tests.yaml"
    assert sidecar_of(".gemini/commands/deploy.toml") == ".gemini/commands/deploy.tests.yaml"


def test_a_promptdeck_file_reads_no_sidecar(tmp_path: Path) -> None:
    source, problems = load(tmp_path, {"g.md": FRONT + "---\n" + BODY, "g.tests.yaml": "- nonsense"})
    assert problems == [] and Catalog(source.prompts()).require("g").parsed().tests is None


def test_a_gemini_command_and_a_copilot_prompt_file_take_their_sidecars(tmp_path: Path) -> None:
    files = {".gemini/commands/deploy.toml": 'description = "Deploy"\nprompt = "Deploy {{args}} now"\n',
             ".gemini/commands/deploy.tests.yaml": "- vars: {args: web}\n  assert: [{type: equals, value: Deploy web"
                                                   " now}]\n",
             ".github/prompts/fix.prompt.md": "---\ndescription: Fix\n---\nFix it.\n",
             ".github/prompts/fix.tests.yaml": "- vars: {}\n  assert: [{type: contains, value: Fix}]\n"}
    source, problems = load(tmp_path, files)
    assert problems == []
    from promptdeck.prompts.testing import run_tests

    report = run_tests(Catalog(source.prompts()))
    assert [(p.prompt, p.passed) for p in report.prompts] == [("deploy", True), ("fix", True)]
