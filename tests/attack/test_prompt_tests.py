"""Hostile prompt tests: catastrophic and huge patterns, huge values, YAML bombs, sidecars that lead out of the
library, renders that do not end. Each is refused at its line or bounded in time."""

from __future__ import annotations

import os
import time
from pathlib import Path

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.testcases import Assertion
from promptdeck.prompts.testing import evaluate, run_tests
from promptdeck.sources.files.source import FileSource

HEAD = "---\narguments:\n  - {name: who, default: x}\ntests:\n"


def load(root: Path, files: dict[str, str | bytes]) -> tuple[FileSource, list[str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            (root / rel).write_bytes(text)
        else:
            (root / rel).write_text(text)
    source = FileSource(root)
    return source, [str(e) for e in source.load(compile_all=True)]


def test_a_catastrophic_regex_is_refused_at_its_line(tmp_path: Path) -> None:
    _, problems = load(tmp_path, {"p.md": HEAD + '  - vars: {}\n    assert:\n      - type: not-regex\n'
                                              '        value: "(\\\\w*,?)*$"\n---\nHi\n'})
    assert len(problems) == 1 and problems[0].startswith("p.md:8: test case 1: assertion 1: not-regex: the regular "
                                                         "expression takes longer than")
    assert "backtracks catastrophically" in problems[0]


def test_a_huge_value_is_refused_without_being_echoed(tmp_path: Path) -> None:
    huge = "y" * 500_000
    _, problems = load(tmp_path, {"p.md": HEAD + f"  - vars: {{}}\n    assert: [{{type: contains, value: {huge}}}]\n"
                                              "---\nHi\n"})
    assert len(problems) == 1 and "at most 10000 are allowed" in problems[0] and len(problems[0]) < 300


def test_yaml_aliases_in_tests_are_refused(tmp_path: Path) -> None:
    bomb = HEAD + '  - vars: &a {who: "lol"}\n    assert: [{type: contains, value: lol}]\n  - vars: *a\n' \
        '    assert: [{type: contains, value: lol}]\n---\nHi\n'
    _, problems = load(tmp_path, {"p.md": bomb})
    assert len(problems) == 1 and "aliases" in problems[0]


def test_a_sidecar_that_is_a_link_out_of_the_library_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_text("- vars: {arguments: x}\n  assert: [{type: contains, value: x}]\n")
    root = tmp_path / "lib"
    _, problems = load(root, {".claude/commands/r.md": "Review $ARGUMENTS\n"})
    os.symlink(outside, root / ".claude/commands/r.tests.yaml")
    source = FileSource(root)
    problems = [str(e) for e in source.load(compile_all=True)]
    assert problems == [".claude/commands/r.tests.yaml: file path '.claude/commands/r.tests.yaml' leaves the library"]
    assert source.prompts() == []  # no prompt with tests the author did not mean


def test_a_huge_sidecar_is_refused(tmp_path: Path) -> None:
    _, problems = load(tmp_path, {".claude/commands/r.md": "Review $ARGUMENTS\n",
                                  ".claude/commands/r.tests.yaml": "#" * (300 * 1024)})
    assert len(problems) == 1 and "larger than 262144 bytes" in problems[0]


def test_a_render_that_does_not_end_is_stopped_and_the_run_goes_on(tmp_path: Path) -> None:
    slow = HEAD + "  - vars: {}\n    assert: [{type: contains, value: x}]\n---\n" \
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n"
    fast = HEAD + "  - vars: {}\n    assert: [{type: contains, value: Hi}]\n---\nHi\n"
    source, problems = load(tmp_path, {"slow.md": slow, "fast.md": fast})
    assert problems == []
    started = time.monotonic()
    report = run_tests(Catalog(source.prompts()))
    assert time.monotonic() - started < 10  # the render limit (2 s) on a busy machine, not the loop's hours
    by_name = {p.prompt: p for p in report.prompts}
    assert by_name["fast"].passed
    problem = by_name["slow"].cases[0].problem or ""
    assert problem.startswith("the render failed: error -32603") and "longer than 2.0 s" in problem


def test_a_regex_on_the_largest_text_is_bounded() -> None:
    """Measured in this thread's CPU time (unbounded: hours of it): by the clock, a machine busy with other
    work (two test runs side by side) stretched the 0.5 s the regex is given to 3 s and more."""
    text = "a" * (4 * 1024 * 1024 - 1) + "!"
    started = time.thread_time()
    passed, why = evaluate(Assertion("regex", False, r"^(a|aa)*$", 0), "a" * 60 + "b")
    assert time.thread_time() - started < 3
    assert not passed and "took longer than" in why
    started = time.thread_time()
    quadratic, _ = evaluate(Assertion("regex", False, r"a+b", 0), text)  # from each of 4 M places, to the end
    assert time.thread_time() - started < 3
    assert not quadratic


def test_too_many_cases_and_assertions(tmp_path: Path) -> None:
    many = HEAD + "".join("  - {vars: {}, assert: [{type: contains, value: x}]}\n" for _ in range(201)) + "---\nx\n"
    wide = HEAD + "  - vars: {}\n    assert:\n" + "      - {type: contains, value: x}\n" * 51 + "---\nx\n"
    _, problems = load(tmp_path, {"many.md": many, "wide.md": wide})
    assert problems == ["many.md:4: tests has 201 cases; at most 200 are allowed",
                        "wide.md:6: test case 1: assert has 51 items; at most 50 are allowed"]


def test_thousands_of_mistakes_are_told_of_quickly(tmp_path: Path) -> None:
    keys = ", ".join(f"k{i}: x" for i in range(20_000))  # a 300 KB front matter of unknown vars
    started = time.thread_time()  # the work, which a busy machine's clock stretches several times over
    _, problems = load(tmp_path, {"p.md": HEAD + f"  - vars: {{{keys}}}\n    assert: [{{type: contains, value: x}}]"
                                              "\n---\nx\n"})
    assert time.thread_time() - started < 4
    assert len(problems) == 51 and problems[-1] == "p.md:4: … and 19950 more problems in tests"
    assert problems[0].startswith("p.md:5: test case 1: vars names 'k0'")
