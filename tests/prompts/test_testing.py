"""Running prompt tests (prompts/testing.py) on prompts read from real files: what each assertion means, and
the report that names prompt, case and assertion."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.testcases import Assertion
from promptdeck.prompts.testing import evaluate, message_text, run_tests
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files.source import FileSource

PROMPT = """---
arguments:
  - {name: who, required: true}
  - {name: mood, enum: [calm, loud], default: calm}
tests:
  - description: greets
    vars: {who: Ada}
    assert:
      - {type: contains, value: Hello Ada}
      - {type: starts-with, value: You are kind.}
      - {type: not-contains, value: TODO}
  - vars: {who: Ada}
    message: 2
    assert:
      - {type: equals, value: Hello Ada (calm)}
  - vars: {who: Ada, mood: angry}
    error: {code: -32602, message: mood}
  - description: fails on purpose
    vars: {who: Bob}
    assert:
      - {type: contains, value: Hello Bob}
      - {type: icontains, value: GOODBYE}
      - {type: max-length, value: 10}
---
assistant:
You are kind.
user:
Hello {{ who }} ({{ mood }})
"""


def catalog(tmp_path: Path, files: dict[str, str]) -> Catalog:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    source = FileSource(tmp_path)
    assert source.load(compile_all=True) == []
    return Catalog(source.prompts())


def check(kind: str, value: object, text: str, negated: bool = False) -> bool:
    return evaluate(Assertion(kind, negated, value, 0), text)[0]


def test_a_report_names_prompt_case_and_assertion(tmp_path: Path) -> None:
    report = run_tests(catalog(tmp_path, {"greet.md": PROMPT, "plain.md": "no tests here"}))
    assert [p.prompt for p in report.prompts] == ["greet"]  # a prompt without tests is not in it
    assert [c.passed for c in report.prompts[0].cases] == [True, True, True, False]
    assert report.failures() == [
        "prompt 'greet', 'fails on purpose': assertion 2 (icontains 'GOODBYE'): expected the text to contain "
        "'GOODBYE' (any case); it was 'You are kind.\\n\\nHello Bob (calm)'; assertion 3 (max-length 10): expected "
        "the text to be at most 10 characters long (it has 31); it was 'You are kind.\\n\\nHello Bob (calm)'"]
    assert report.summary() == "3 of 4 test cases passed in 1 prompt; 1 failed"
    assert not report.passed
    as_json = report.to_json()
    assert as_json["failed"] == 1 and as_json["prompts"][0]["cases"][3]["asserts"][0]["passed"] is True
    assert as_json["prompts"][0]["cases"][3]["message"] == report.failures()[0]


def test_named_prompts_only_and_an_unknown_name_is_invalid_params(tmp_path: Path) -> None:
    found = catalog(tmp_path, {"greet.md": PROMPT, "other.md": PROMPT.replace("Hello", "Hi")})
    assert [p.prompt for p in run_tests(found, ["other"], lookup=found.require).prompts] == ["other"]
    with pytest.raises(InvalidParams, match="unknown prompt 'gret'; did you mean 'greet'"):
        run_tests(found, ["gret"], lookup=found.require)
    with pytest.raises(InvalidParams, match="unknown prompt 'nope'"):
        run_tests(list(found), ["nope"])


def test_expected_errors_must_match_code_and_text(tmp_path: Path) -> None:
    text = PROMPT.split("tests:")[0] + """tests:
  - {vars: {who: Ada}, error: -32602}
  - {vars: {}, error: {code: -32603}}
  - {vars: {}, error: {code: -32602, message: nothing like it}}
---
Hello {{ who }}
"""
    cases = run_tests(catalog(tmp_path, {"e.md": text})).prompts[0].cases
    assert [c.problem for c in cases] == [
        "expected error -32602, but the prompt rendered",
        "expected error -32603, got error -32602: prompt 'e' is missing required argument 'who'",
        "expected error -32602 with 'nothing like it' in its message, got \"prompt 'e' is missing required "
        "argument 'who'\""]


def test_a_render_that_fails_fails_its_case_and_a_message_past_the_end_too(tmp_path: Path) -> None:
    text = """---
arguments: [{name: z, type: integer, default: 0}]
tests:
  - {vars: {}, assert: [{type: contains, value: x}]}
  - {vars: {z: 1}, message: 3, assert: [{type: contains, value: x}]}
---
{{ 1 // z }}
"""
    found = catalog(tmp_path, {"bad.md": text})
    first, second = run_tests(found).prompts[0].cases
    assert first.problem == "the render failed: error -32603: Internal error (prompt 'bad': ZeroDivisionError: " \
                            "integer division or modulo by zero)"
    # as a server answers a client: what the log keeps is not said
    assert run_tests(found, details=False).prompts[0].cases[0].problem == \
        "the render failed: error -32603: Internal error"
    assert second.problem == "message 3 asked for; the prompt rendered 1"


def test_the_semantics_of_each_assertion() -> None:
    text = 'Hello World {"a": 1}'
    assert check("equals", text, text) and not check("equals", "Hello", text)
    assert check("contains", "World", text) and not check("contains", "world", text)
    assert check("icontains", "wORLD", text)
    assert check("contains-any", ["nope", "World"], text) and not check("contains-any", ["x", "y"], text)
    assert check("contains-all", ["Hello", "World"], text) and not check("contains-all", ["Hello", "x"], text)
    assert check("icontains-all", ["hello", "WORLD"], text) and check("icontains-any", ["HELLO", "zz"], text)
    assert check("starts-with", "Hello", text) and not check("starts-with", "World", text)
    assert check("regex", r"W\w+d", text) and not check("regex", r"^World", text)
    assert check("is-json", None, '{"a": [1, 2]}') and not check("is-json", None, text)
    assert check("max-length", len(text), text) and not check("max-length", len(text) - 1, text)
    assert check("contains", 42, "the answer is 42")  # a number is compared as its text, as promptfoo does
    # every not- form is the opposite
    assert check("contains", "x", text, negated=True) and not check("contains", "World", text, negated=True)
    assert check("is-json", None, text, negated=True) and check("equals", "x", text, negated=True)


def test_a_not_form_says_not_in_its_message() -> None:
    passed, why = evaluate(Assertion("contains", True, "World", 0), "Hello World")
    assert not passed and why == "expected the text not to contain 'World'; it was 'Hello World'"


def test_a_regex_that_backtracks_is_stopped() -> None:
    # Not refused by the static check (alternatives that overlap): the timeout stops it. Measured in this
    # thread's CPU time (unstopped, the search computes for hours): by the clock, a machine busy with other
    # work (two test runs side by side) stretched the stopped search past 3 s.
    started = time.thread_time()
    passed, why = evaluate(Assertion("regex", False, r"^(a|aa)*$", 0), "a" * 40 + "b")
    assert time.thread_time() - started < 3
    assert not passed and "took longer than 0.5 s" in why


def test_message_text_joins_messages_or_picks_one(tmp_path: Path) -> None:
    prompt = catalog(tmp_path, {"greet.md": PROMPT}).require("greet").parsed()
    from promptdeck.prompts.testing import render_for_test

    messages = render_for_test(prompt, {"who": "Ada"})
    assert message_text(messages) == "You are kind.\n\nHello Ada (calm)"
    assert message_text(messages, 1) == "You are kind."


def test_the_run_has_a_time_limit(tmp_path: Path) -> None:
    report = run_tests(catalog(tmp_path, {"greet.md": PROMPT}), seconds=0)
    assert {c.problem for c in report.prompts[0].cases} == {"not run: the test run took longer than its time limit"}
    assert report.failed_cases == 4
