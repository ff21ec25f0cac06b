"""``promptdeck test``, and the tests ``check`` and ``publish`` read, as real processes; a store label's tests on
SQLite and on the throwaway PostgreSQL cluster."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

GREET = """---
arguments:
  - {name: who, required: true}
tests:
  - description: greets
    vars: {who: Ada}
    assert:
      - {type: contains, value: Hello Ada}
  - vars: {}
    error: {code: -32602, message: missing}
---
Hello {{ who }}!
"""
FAILING = GREET.replace("value: Hello Ada}", "value: Goodbye}\n      - {type: max-length, value: 3}")


#: the command as these tests run it, which the hints name (tests/cli/test_first_hour.py)
PROG = f"{shlex.quote(sys.executable)} -m promptdeck"


def pd(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def library(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_passing_library(tmp_path: Path) -> None:
    lib = library(tmp_path / "lib", {"greet.md": GREET, "plain.md": "No tests.\n"})
    done = pd("test", str(lib))
    assert (done.returncode, done.stdout, done.stderr) == (0, "2 of 2 test cases passed in 1 prompt\n", "")


def test_a_failing_case_is_one_line_naming_prompt_case_and_assertions(tmp_path: Path) -> None:
    lib = library(tmp_path / "lib", {"greet.md": FAILING, "other.md": GREET.replace("Ada", "Bo")})
    done = pd("test", str(lib))
    assert done.returncode == 1
    assert done.stdout == ("FAIL prompt 'greet', 'greets': assertion 1 (contains 'Goodbye'): expected the text to "
                           "contain 'Goodbye'; it was 'Hello Ada!'; assertion 2 (max-length 3): expected the text to "
                           "be at most 3 characters long (it has 10); it was 'Hello Ada!'\n")
    assert done.stderr == "3 of 4 test cases passed in 2 prompts; 1 failed\n"
    only = pd("test", str(lib), "other")
    assert (only.returncode, only.stdout) == (0, "2 of 2 test cases passed in 1 prompt\n")
    report = json.loads(pd("test", str(lib), "--json").stdout)
    assert (report["passed"], report["cases"], report["failed"]) == (False, 4, 1)
    failed = report["prompts"][0]["cases"][0]
    assert failed["asserts"][0] == {"type": "contains", "value": "Goodbye", "passed": False,
                                    "message": "expected the text to contain 'Goodbye'; it was 'Hello Ada!'"}


def test_an_unknown_name_and_a_library_with_problems(tmp_path: Path) -> None:
    lib = library(tmp_path / "lib", {"greet.md": GREET})
    done = pd("test", str(lib), "gret")
    assert (done.returncode, done.stderr) == (2, "promptdeck: unknown prompt 'gret'; did you mean 'greet'?\n")
    bad = library(tmp_path / "bad", {"greet.md": GREET.replace("type: contains", "type: contain")})
    done = pd("test", str(bad))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "greet.md:8: test case 1: assertion 1: unknown assertion type 'contain'; did you mean 'contains'? (known: "
        "equals, contains, icontains, contains-any, contains-all, icontains-any, icontains-all, starts-with, regex, "
        "is-json, max-length, and each with not-)",
        f"promptdeck: 1 problem in {bad}; fix them first ({PROG} check {bad})"]
    assert pd("test").returncode == 2 and pd("test", "--store", "x.db").returncode == 2


def test_check_validates_the_tests_at_their_lines(tmp_path: Path) -> None:
    text = GREET.replace("type: contains, value: Hello Ada}", 'type: regex, value: "(x+)+y"}')
    lib = library(tmp_path / "lib", {"greet.md": text.replace("vars: {}", "vars: {whom: x}\n    message: 0")})
    done = pd("check", str(lib))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines] == ["greet.md:8", "greet.md:10"]
    assert "backtracks catastrophically" in lines[0] and "message must be a message's number" in lines[1]


def test_publish_runs_the_tests_of_a_prompt_that_composes_others_as_test_does(tmp_path: Path) -> None:
    """Publish reads again only the files that hold tests; one that composes another prompt needs that prompt
    too, so the library is read whole, and publish judges the case as `promptdeck test` does."""
    composing = ("---\ntests:\n  - vars: {}\n    assert:\n      - {type: contains, value: Be kind}\n---\n"
                 "{{ prompt(\"rules\") }} Hello!\n")
    lib = library(tmp_path / "lib", {"greet.md": composing, "rules.md": "Be kind.\n"})
    assert pd("test", str(lib)).returncode == 0
    store = f"sqlite:///{tmp_path}/s.db"
    done = pd("publish", str(lib), "--store", store, "--label", "production", "-m", "composed")
    assert done.returncode == 0, done.stderr
    (lib / "rules.md").write_text("Be rude.\n")  # greet's own bytes unchanged: its case now fails
    refused = pd("publish", str(lib), "--store", store, "--label", "production", "-m", "rude")
    assert refused.returncode == 1 and "FAIL prompt 'greet', case 1" in refused.stdout + refused.stderr
    assert "no prompt 'rules'" not in refused.stdout + refused.stderr


def test_publish_refuses_failing_tests_unless_skipped_and_test_reads_a_label(tmp_path: Path, store_url: str) -> None:
    sidecar = "- vars: {arguments: a.py}\n  assert: [{type: starts-with, value: Review a.py}]\n"
    lib = library(tmp_path / "lib", {"greet.md": GREET, ".claude/commands/review.md": "Review $ARGUMENTS\n",
                                     ".claude/commands/review.tests.yaml": sidecar})
    first = pd("publish", str(lib), "--store", store_url, "--label", "production", "-m", "first")
    assert first.returncode == 0, first.stderr
    assert ".claude/commands/review.tests.yaml" in first.stdout  # the sidecar is kept with its prompt
    (lib / "greet.md").write_text(FAILING)
    refused = pd("publish", str(lib), "--store", store_url, "--label", "production", "-m", "second")
    assert refused.returncode == 1
    assert refused.stdout.startswith("FAIL prompt 'greet', 'greets': assertion 1 (contains 'Goodbye')")
    assert refused.stderr.endswith(f"promptdeck: nothing published: 1 test case failed ({PROG} test "
                                   f"{lib}); --skip-tests publishes anyway\n")
    label = pd("test", "--store", store_url, "--label", "production")
    assert (label.returncode, label.stdout) == (0, "3 of 3 test cases passed in 2 prompts\n")  # nothing changed
    skipped = pd("publish", str(lib), "--store", store_url, "--label", "production", "-m", "second", "--skip-tests")
    assert skipped.returncode == 0, skipped.stderr
    history = pd("history", "greet", "--store", store_url).stdout.splitlines()
    assert "second [tests skipped: --skip-tests]" in history[0] and "[tests skipped" not in history[1]
    label = pd("test", "--store", store_url, "--label", "production", "--json")
    assert label.returncode == 1 and json.loads(label.stdout)["failed"] == 1
    named = pd("test", "--store", store_url, "--label", "production", "review")
    assert (named.returncode, named.stdout) == (0, "1 of 1 test case passed in 1 prompt\n")
    missing = pd("test", "--store", store_url, "--label", "staging")
    assert missing.returncode == 1 and "no label 'staging'" in missing.stderr
