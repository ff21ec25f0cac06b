"""What the readers share (sources/files/native/_common.py): substitution plans, the Markdown split,
names, ``_meta`` values, scopes and positional arguments, each problem with its line."""

from __future__ import annotations

import datetime
import re

import pytest

from promptdeck.prompts.limits import MAX_OUTPUT_CHARS
from promptdeck.prompts.sandbox import RenderLimitError
from promptdeck.protocol.errors import LineError
from promptdeck.sources.files.native._common import (
    Markdown,
    Plan,
    check_name,
    first_line,
    json_safe,
    pop_scopes,
    positional_arguments,
)

_DOLLAR = re.compile(r"\$(\w+)")


def test_a_plan_substitutes_once_and_leaves_what_is_no_placeholder() -> None:
    plan = Plan("a $x b $skip c $y", _DOLLAR, lambda m: None if m.group(1) == "skip" else m.group(1))
    assert plan.keys == ["x", "y"]
    assert plan.render({"x": "$y", "y": "{{ z }}"}) == "a $y b $skip c {{ z }}"
    assert plan.render({}) == "a  b $skip c "


def test_a_plan_refuses_text_past_the_output_bound_before_joining() -> None:
    plan = Plan("$x$x", _DOLLAR, lambda m: m.group(1))
    with pytest.raises(RenderLimitError):
        plan.render({"x": "v" * (MAX_OUTPUT_CHARS // 2 + 1)})


def test_markdown_splits_front_matter_and_finds_lines() -> None:
    doc = Markdown("---\na: 1\ndescription: d\n---\nline one\nline two\n")
    assert doc.meta == {"a": 1, "description": "d"} and doc.body_line == 5
    assert doc.line("description") == 3 and doc.text("description") == "d"
    assert doc.body_line_of(doc.body.index("two")) == 6
    with pytest.raises(LineError) as caught:
        doc.text("a")
    assert caught.value.line == 2


def test_a_malformed_front_matter_is_an_error_at_its_line() -> None:
    with pytest.raises(LineError) as caught:
        Markdown("---\nok: 1\nbad: [\n---\nbody\n")
    assert caught.value.line is not None and caught.value.line >= 3


def test_names_descriptions_and_json_values() -> None:
    assert check_name("a.b-c", None, "x") == "a.b-c"
    with pytest.raises(LineError, match=r"from the path p") as caught:
        check_name("a b", 7, "from the path p")
    assert caught.value.line == 7
    assert first_line("\n---\n  first  \nsecond") == "first" and first_line(" \n") is None
    assert json_safe({1: datetime.date(2026, 1, 2), "t": (1, None), "o": object}) == \
        {"1": "2026-01-02", "t": [1, None], "o": str(object)}


def test_scopes_are_a_list_or_one_line_of_names() -> None:
    assert pop_scopes({"scopes": "a b"}, lambda key: None) == frozenset({"a", "b"})
    settings = {"scopes": ["a"], "model": "m"}
    assert pop_scopes(settings, lambda key: None) == frozenset({"a"}) and settings == {"model": "m"}
    with pytest.raises(LineError) as caught:
        pop_scopes({"scopes": [1]}, lambda key: 4)
    assert caught.value.line == 4


def test_positional_arguments_are_named_by_names_then_hints_then_numbers() -> None:
    found = positional_arguments(3, ["pr-number"], "[ignored] [high|low]", 2, first=1)
    assert [a.name for a in found] == ["pr_number", "arg2", "arg3"]
    assert list(found[1].examples) == ["high", "low"]
    with pytest.raises(LineError) as caught:
        positional_arguments(2, ["a", "a"], None, 9, first=0)
    assert caught.value.line == 9
