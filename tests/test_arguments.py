"""Typed arguments: declarations, conversion of wire strings, binding with defaults."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.prompts.arguments import ARG_TYPES, SpecError, bind, make_argument, parse_arguments
from promptdeck.protocol.errors import InvalidParams


def test_each_type_converts_and_checks_its_rules() -> None:
    assert make_argument("n", type="integer", min=1, max=5).convert(" 3 ") == 3
    assert make_argument("x", type="number").convert("2.5") == 2.5
    assert make_argument("b", type="boolean").convert("Yes") is True
    assert make_argument("b", type="boolean").convert("off") is False
    assert make_argument("s", min=2, max=3).convert("abc") == "abc"
    assert make_argument("p", type="path").convert("docs/a.txt") == "docs/a.txt"
    cases = [
        (make_argument("n", type="integer", min=1, max=5), "9", "at most 5"),
        (make_argument("n", type="integer"), "two", "an integer"),
        (make_argument("x", type="number"), "inf", "finite"),
        (make_argument("b", type="boolean"), "maybe", "true or false"),
        (make_argument("s", min=2), "a", "at least 2 characters"),
        (make_argument("e", enum=["a", "b"]), "c", "one of a, b"),
        (make_argument("t", pattern=r"[A-Z]+-\d+"), "abc-1", "pattern"),
        (make_argument("p", type="path"), "../etc/passwd", "inside the library"),
        (make_argument("p", type="path"), "/etc/passwd", "inside the library"),
    ]
    for arg, raw, rule in cases:
        with pytest.raises(InvalidParams) as err:
            arg.convert(raw)
        assert err.value.code == -32602 and rule in err.value.message and repr(arg.name) in err.value.message


def test_declaration_mistakes_are_spec_errors() -> None:
    for kwargs, words in [
        ({"name": "1bad"}, "letters"),
        ({"name": "a", "type": "date"}, "type must be one of"),
        ({"name": "a", "pattern": "("}, "not a valid regular expression"),
        ({"name": "a", "min": 5, "max": 1}, "greater than max"),
        ({"name": "a", "enum": ["x"], "default": "y"}, "not one of the enum"),
        ({"name": "a", "type": "integer", "default": "ten"}, "default"),
        ({"name": "a", "required": True, "default": "x"}, "cannot have a default"),
    ]:
        with pytest.raises(SpecError) as err:
            make_argument(**kwargs)  # type: ignore[arg-type]
        assert words in str(err.value)
    with pytest.raises(SpecError, match="unknown key 'colour'"):
        parse_arguments([{"name": "a", "colour": "red"}])
    with pytest.raises(SpecError, match="declared twice"):
        parse_arguments([{"name": "a"}, {"name": "a"}])


def test_description_mirrors_type_choices_and_default() -> None:
    arg = make_argument("lang", description="Language", enum=["py", "go"], default="py")
    assert arg.wire_description == "Language (one of: py, go; default: py)"
    assert make_argument("n", type="integer", min=1, max=5).wire_description == "(integer 1..5)"
    assert make_argument("plain", description="Just text").wire_description == "Just text"
    long = make_argument("log", default="line one\nline two " + "x" * 80)
    assert long.wire_description is not None and "\n" not in long.wire_description
    assert long.wire_description.endswith("...)")


def test_json_schema_is_anchored_and_typed() -> None:
    schema = make_argument("t", type="integer", min=1, pattern=r"\d+", examples=[3]).json_schema()
    assert schema == {"type": "integer", "minimum": 1, "pattern": r"^(?:\d+)$", "examples": ["3"]}
    assert make_argument("p", type="path").json_schema() == {"type": "string", "format": "path"}


def test_bind_applies_defaults_and_names_what_is_wrong() -> None:
    args = parse_arguments([{"name": "code", "required": True},
                            {"name": "level", "type": "integer", "default": 2},
                            {"name": "note"}])
    assert bind(args, {"code": "x"}, "p") == {"code": "x", "level": 2}
    with pytest.raises(InvalidParams, match="missing required argument 'code'"):
        bind(args, {}, "p")
    with pytest.raises(InvalidParams, match="has no argument 'colour'") as err:
        bind(args, {"code": "x", "colour": "red"}, "p")
    assert err.value.data == {"prompt": "p", "unknown": ["colour"]}
    with pytest.raises(InvalidParams, match="prompt 'p': argument 'level' must be an integer"):
        bind(args, {"code": "x", "level": "high"}, "p")


@given(st.integers(min_value=-10**12, max_value=10**12))
def test_integers_round_trip(n: int) -> None:
    assert make_argument("n", type="integer").convert(str(n)) == n


@given(st.sampled_from(ARG_TYPES), st.text(max_size=30))
def test_any_string_converts_or_is_invalid_params(kind: str, raw: str) -> None:
    arg = make_argument("a", type=kind, min=0, max=20)  # type: ignore[arg-type]
    try:
        arg.convert(raw)
    except InvalidParams as exc:
        assert exc.code == -32602 and "'a'" in exc.message
