"""Reading prompt tests (prompts/testcases.py): the promptfoo vocabulary, and every mistake refused."""

from __future__ import annotations

from typing import Any

import pytest

from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.testcases import MAX_CASES, MAX_VALUE_CHARS, TYPES, parse_tests, pattern_problem

ARGS = (make_argument(name="who", required=True), make_argument(name="n", type="integer", default=1))


def problems(raw: Any) -> list[tuple[str, tuple[int | str, ...]]]:
    tests, found = parse_tests(raw, ARGS)
    assert (tests is None) == bool(found)
    return found


def test_a_case_in_promptfoos_words() -> None:
    tests, found = parse_tests([{"description": "greets", "vars": {"who": "Ada", "n": 3},
                                 "assert": [{"type": "contains", "value": "Ada"},
                                            {"type": "not-regex", "value": r"\bTODO\b"},
                                            {"type": "contains-any", "value": ["hi", "hello"]},
                                            {"type": "is-json"}, {"type": "max-length", "value": 100}]},
                                {"vars": {}, "error": -32602}], ARGS)
    assert found == [] and tests is not None
    first, second = tests.cases
    assert first.vars == {"who": "Ada", "n": "3"}  # as a client sends them: text
    assert [a.type for a in first.asserts] == ["contains", "not-regex", "contains-any", "is-json", "max-length"]
    assert first.asserts[1].negated and first.asserts[1].kind == "regex"
    assert first.label() == "'greets'" and second.label() == "case 2"
    assert second.error_code == -32602 and second.error_text is None
    assert tests.to_json()[1] == {"vars": {}, "error": {"code": -32602}}


def test_every_type_and_its_not_form_is_known() -> None:
    values = {"is-json": None, "max-length": 5, "regex": "a"}
    for kind in TYPES:
        value = values.get(kind, ["a"] if "-a" in kind else "a")
        for name in (kind, f"not-{kind}"):
            assert problems([{"assert": [{"type": name, "value": value}] if value is not None
                              else [{"type": name}], "vars": {"who": "x"}}]) == [], name


@pytest.mark.parametrize(("raw", "message", "where"), [
    ("nope", "tests must be a list", ()),
    ([{"vars": {"who": "a"}, "assert": [{"type": "contians", "value": "a"}]}],
     "unknown assertion type 'contians'; did you mean 'contains'?", (0, "assert", 0, "type")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "regex", "value": "(unclosed"}]}],
     "does not compile", (0, "assert", 0, "value")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "regex", "value": "(a+)+$"}]}],
     "backtracks catastrophically", (0, "assert", 0, "value")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "contains", "value": "x" * (MAX_VALUE_CHARS + 1)}]}],
     f"at most {MAX_VALUE_CHARS} are allowed", (0, "assert", 0, "value")),
    ([{"vars": {"whom": "a"}, "assert": [{"type": "contains", "value": "a"}]}],
     "vars names 'whom', which is not an argument of the prompt (it takes: n, who)", (0, "vars", "whom")),
    ([{"vars": {"who": ["a"]}, "assert": [{"type": "contains", "value": "a"}]}],
     "vars 'who' must be a text, number or boolean", (0, "vars", "who")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "max-length", "value": "ten"}]}],
     "max-length: value must be a number", (0, "assert", 0, "value")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "contains-all", "value": "a,b"}]}],
     "contains-all: value must be a list of texts", (0, "assert", 0, "value")),
    ([{"vars": {"who": "a"}, "assert": {"type": "contains"}}], "assert must be a list", (0, "assert")),
    ([{"vars": {"who": "a"}}], "has nothing to check", (0,)),
    ([{"vars": {"who": "a"}, "asert": []}], "unknown key 'asert'", (0, "asert")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "contains", "value": "a", "weight": 2}]}],
     "unknown key 'weight'", (0, "assert", 0, "weight")),
    ([{"error": "bad"}], "error must be a JSON-RPC error code", (0, "error")),
    ([{"vars": {"who": "a"}, "message": 0, "assert": [{"type": "contains", "value": "a"}]}],
     "message must be a message's number", (0, "message")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "is-json", "value": {"type": "object"}}]}],
     "is-json: takes no value", (0, "assert", 0, "value")),
    ([{"vars": {"who": "a"}, "assert": [{"type": "contains", "value": True}]}],
     "contains: value must be text", (0, "assert", 0, "value")),
    ([{"error": -32602, "assert": [{"type": "contains", "value": "a"}]}], "give assert or error, not both",
     (0, "assert")),
    ([[]] * (MAX_CASES + 1), f"at most {MAX_CASES} are allowed", ()),
])
def test_mistakes_are_named_and_placed(raw: Any, message: str, where: tuple[int | str, ...]) -> None:
    found = problems(raw)
    assert any(message in text and at == where for text, at in found), found


def test_every_mistake_of_a_file_at_once() -> None:
    found = problems([{"vars": {"whom": "a"}, "assert": [{"type": "x"}]},
                      {"vars": {"who": "a"}, "assert": [{"type": "regex", "value": "("}]}])
    assert [where for _, where in found] == [(0, "vars", "whom"), (0, "assert", 0, "type"), (1, "assert", 0, "value")]
    assert found[0][0].startswith("test case 1: ") and found[2][0].startswith("test case 2: assertion 1: regex: ")


def test_a_case_that_expects_an_error_may_name_an_unknown_argument() -> None:
    tests, found = parse_tests([{"vars": {"extra": "x"}, "error": {"code": -32602, "message": "no argument"}}], ARGS)
    assert found == [] and tests is not None and tests.cases[0].error_text == "no argument"


@pytest.mark.parametrize("pattern", [r"(a+)+b", r"(x+x+)+y", r"(\w+\s?)*$", r"(\w*,?)*$", r"^(a|aa)*$",
                                     r"^foo(a|aa)*$", r"\[(x|xx)*\]$", r"(a+)+$"])
def test_patterns_that_backtrack_catastrophically_are_refused(pattern: str) -> None:
    """The ``regex`` engine itself, with a timeout, on texts made of the pattern's characters (after its
    literal parts, when it has them) is the judge."""
    assert "backtracks catastrophically" in (pattern_problem(pattern) or "")


@pytest.mark.parametrize("pattern", [r"^Hello \w+!$", r"(ab)+", r"(a{1,3})+", r"\d{4}-\d{2}", r"(?:a|b)*c",
                                     r"(a++)+", r"\bTODO\b", r"[a-z]+@[a-z]+\.com",
                                     # nested, but this engine fails them at once: not slow where tests run
                                     r"(a+)+", r"(a*)*b"])
def test_ordinary_patterns_pass(pattern: str) -> None:
    assert pattern_problem(pattern) is None


def test_a_long_pattern_is_refused() -> None:
    assert "longer than" in (pattern_problem("a" * 1001) or "")
