"""Typed arguments (prompts/arguments.py): declarations, conversion of wire strings, descriptions, binding."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptdeck.prompts import arguments as arguments_module
from promptdeck.prompts.arguments import (
    ARG_TYPES,
    MISSING,
    ArgType,
    Argument,
    SpecError,
    bind,
    make_argument,
    parse_arguments,
)
from promptdeck.protocol.errors import InvalidParams


def refused(arg: Argument, raw: object) -> InvalidParams:
    with pytest.raises(InvalidParams) as err:
        arg.convert(raw)
    assert err.value.code == -32602
    assert err.value.data == {"argument": arg.name}
    assert err.value.message.startswith(f"argument {arg.name!r} ")
    return err.value


# -- declarations -------------------------------------------------------------------------------------


def test_defaults_of_a_plain_declaration() -> None:
    arg = make_argument("topic")
    assert (arg.name, arg.type, arg.required, arg.default, arg.enum, arg.pattern) == (
        "topic", "string", False, MISSING, None, None)
    assert arg.wire_description is None and arg.examples == ()
    assert repr(MISSING) == "MISSING"


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "1bad"}, "argument name '1bad' must be letters, digits and _ (not starting with a digit)"),
    ({"name": "has-dash"}, "argument name 'has-dash' must be letters, digits and _"),
    ({"name": ""}, "argument name '' must be letters"),
    ({"name": "trailing\n"}, "argument name 'trailing\\n' must be letters"),
    ({"name": 5}, "argument name 5 must be letters"),
    ({"name": "a", "type": "date"}, "argument 'a': type must be one of string, integer, number, boolean, path, "
                                    "got 'date'"),
    ({"name": "a", "description": 3}, "argument 'a': description must be text"),
    ({"name": "a", "title": ["x"]}, "argument 'a': title must be text"),
    ({"name": "a", "required": "yes"}, "argument 'a': required must be true or false"),
    ({"name": "a", "pattern": 5}, "argument 'a': pattern must be text"),
    ({"name": "a", "pattern": "("}, "argument 'a': pattern '(' is not a valid regular expression"),
    ({"name": "a", "min": "1"}, "argument 'a': min must be a number"),
    ({"name": "a", "max": True}, "argument 'a': max must be a number"),
    ({"name": "a", "min": 5, "max": 1}, "argument 'a': min 5 is greater than max 1"),
    ({"name": "a", "examples": "x"}, "argument 'a': examples must be a list"),
    ({"name": "a", "enum": []}, "argument 'a': enum must be a non-empty list"),
    ({"name": "a", "enum": "abc"}, "argument 'a': enum must be a non-empty list"),
    ({"name": "a", "enum": [["x"]]}, "argument 'a': enum value ['x'] must be a scalar"),
    ({"name": "a", "type": "integer", "enum": [1, "two"]}, "enum value 'two': argument 'a' must be an integer"),
    ({"name": "a", "enum": ["x"], "default": "y"}, "argument 'a': default 'y' is not one of the enum values"),
    ({"name": "a", "type": "integer", "default": "ten"}, "default 'ten': argument 'a' must be an integer"),
    ({"name": "a", "type": "integer", "min": 1, "default": 0}, "default 0: argument 'a' must be at least 1"),
    ({"name": "a", "type": "boolean", "default": "maybe"}, "default 'maybe': argument 'a' must be true or false"),
    ({"name": "a", "pattern": "[a-z]+", "default": "ABC"}, "default 'ABC': argument 'a' must match the pattern"),
    ({"name": "a", "default": {"k": 1}}, "argument 'a': default {'k': 1} must be a scalar"),
    ({"name": "a", "required": True, "default": "x"}, "argument 'a': a required argument cannot have a default"),
])
def test_declaration_mistakes_are_spec_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        make_argument(**kwargs)
    assert message in str(err.value)


def test_a_spec_error_is_a_value_error() -> None:
    assert issubclass(SpecError, ValueError)


def test_defaults_and_enums_are_converted_to_the_declared_type() -> None:
    assert make_argument("n", type="integer", default=3).default == 3
    assert make_argument("n", type="integer", default="3").default == 3
    assert make_argument("x", type="number", default=1).default == 1.0
    assert make_argument("b", type="boolean", default=False).default is False
    assert make_argument("b", type="boolean", default="yes").default is True
    assert make_argument("s", default=5).default == "5"
    assert make_argument("n", type="integer", enum=[1, "2", 3]).enum == (1, 2, 3)
    assert make_argument("s", enum=[1, True, 2.5]).enum == ("1", "true", "2.5")


def test_a_default_none_means_no_default_and_a_default_makes_it_optional() -> None:
    assert make_argument("a", default=None).default is MISSING
    assert make_argument("a", required=True, default=None).required
    assert make_argument("a", required=True).required
    assert not make_argument("a", required=False).required


# -- conversion of wire strings -----------------------------------------------------------------------


def test_string() -> None:
    arg = make_argument("s")
    assert arg.convert("") == ""
    assert arg.convert("  spaced  ") == "  spaced  "
    assert arg.convert("line\nbreak") == "line\nbreak"


def test_string_length_bounds() -> None:
    arg = make_argument("s", min=2, max=3)
    assert arg.convert("ab") == "ab" and arg.convert("abc") == "abc"
    assert "must be at least 2 characters long" in refused(arg, "a").message
    assert "must be at most 3 characters long" in refused(arg, "abcd").message


def test_integer() -> None:
    arg = make_argument("n", type="integer")
    assert arg.convert("42") == 42
    assert arg.convert(" -7 ") == -7
    assert arg.convert("+3") == 3
    assert isinstance(arg.convert("1"), int)
    for raw in ("two", "1.5", "", "0x10", "1e3", "   "):
        assert "must be an integer, got" in refused(arg, raw).message


def test_integer_bounds_are_inclusive() -> None:
    arg = make_argument("n", type="integer", min=1, max=5)
    assert [arg.convert(str(n)) for n in range(1, 6)] == [1, 2, 3, 4, 5]
    assert refused(arg, "0").message == "argument 'n' must be at least 1, got 0"
    assert refused(arg, "6").message == "argument 'n' must be at most 5, got 6"


def test_number() -> None:
    arg = make_argument("x", type="number", min=-1, max=1)
    assert arg.convert("0.25") == 0.25
    assert arg.convert("1") == 1.0 and isinstance(arg.convert("1"), float)
    assert arg.convert("-1e0") == -1.0
    assert refused(arg, "1.5").message == "argument 'x' must be at most 1, got 1.5"
    assert refused(arg, "-2").message == "argument 'x' must be at least -1, got -2"
    assert "must be a number, got 'abc'" in refused(arg, "abc").message
    for raw in ("nan", "inf", "-Infinity", "1e999"):
        assert "must be a finite number" in refused(arg, raw).message


def test_number_with_fractional_bounds() -> None:
    arg = make_argument("t", type="number", min=0.5, max=2.5)
    assert arg.convert("0.5") == 0.5
    assert refused(arg, "0.25").message == "argument 't' must be at least 0.5, got 0.25"


@pytest.mark.parametrize("raw", ["true", "TRUE", "Yes", "1", "on", " ON "])
def test_boolean_true(raw: str) -> None:
    assert make_argument("b", type="boolean").convert(raw) is True


@pytest.mark.parametrize("raw", ["false", "False", "no", "NO", "0", "off", "\toff\n"])
def test_boolean_false(raw: str) -> None:
    assert make_argument("b", type="boolean").convert(raw) is False


@pytest.mark.parametrize("raw", ["", "maybe", "2", "t", "y", "nope"])
def test_boolean_refuses_anything_else(raw: str) -> None:
    assert "must be true or false, got" in refused(make_argument("b", type="boolean"), raw).message


def test_path_accepts_relative_paths_inside_the_library() -> None:
    arg = make_argument("p", type="path")
    assert arg.convert("docs/a.txt") == "docs/a.txt"
    assert arg.convert("a..b/c.txt") == "a..b/c.txt"  # '..' inside a name is not a parent step


@pytest.mark.parametrize("raw", ["", "/etc/passwd", "\\windows\\x", "../secret", "a/../../b", "a\\..\\b", "a\x00b"])
def test_path_refuses_escapes(raw: str) -> None:
    assert "must be a relative path inside the library" in refused(make_argument("p", type="path"), raw).message


def test_path_length_bounds() -> None:
    arg = make_argument("p", type="path", max=5)
    assert arg.convert("a.txt") == "a.txt"
    assert "must be at most 5 characters long" in refused(arg, "ab.txt").message


def test_enum() -> None:
    arg = make_argument("e", enum=["a", "b"])
    assert arg.convert("b") == "b"
    assert refused(arg, "c").message == "argument 'e' must be one of a, b; got 'c'"
    numbers = make_argument("n", type="integer", enum=[1, 2, 3])
    assert numbers.convert("2") == 2
    assert "must be one of 1, 2, 3" in refused(numbers, "4").message


def test_pattern_must_match_the_whole_value() -> None:
    arg = make_argument("t", pattern=r"[A-Z]+-\d+")
    assert arg.convert("ABC-12") == "ABC-12"
    for raw in ("xABC-12", "ABC-12x", "abc-1", ""):
        assert r"must match the pattern '[A-Z]+-\\d+'" in refused(arg, raw).message


def test_non_strings_on_the_wire_are_refused() -> None:
    arg = make_argument("n", type="integer")
    assert refused(arg, 5).message == "argument 'n' must be a string on the wire, got int"
    assert "got NoneType" in refused(arg, None).message
    assert "got list" in refused(make_argument("s"), ["x"]).message


def test_overlong_values_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arguments_module, "MAX_VALUE_LENGTH", 10)
    arg = make_argument("s")
    assert arg.convert("x" * 10) == "x" * 10
    assert refused(arg, "x" * 11).message == "argument 's' is longer than 10 characters"


def test_long_values_are_shortened_in_messages() -> None:
    message = refused(make_argument("n", type="integer"), "y" * 500).message
    assert len(message) < 120 and message.endswith("...'")


# -- what clients see ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, description", [
    ({"description": "Just text"}, "Just text"),
    ({}, None),
    ({"description": "Language", "enum": ["py", "go"], "default": "py"}, "Language (one of: py, go; default: py)"),
    ({"type": "integer", "min": 1, "max": 5}, "(integer 1..5)"),
    ({"type": "integer", "min": 1}, "(integer 1..)"),
    ({"type": "number", "max": 2.5}, "(number ..2.5)"),
    ({"type": "number", "min": 1.0}, "(number 1..)"),
    ({"type": "integer", "description": "Level", "default": 2}, "Level (integer; default: 2)"),
    ({"type": "boolean", "default": True}, "(boolean; default: true)"),
    ({"type": "boolean", "description": "Flag"}, "Flag (boolean)"),
    ({"type": "path", "description": "File"}, "File (a file path in the library)"),
    ({"type": "path", "max": 9}, "(a file path in the library)"),
    ({"min": 1, "max": 9, "description": "Text"}, "Text"),
    ({"default": "x", "description": "D"}, "D (default: x)"),
    ({"type": "integer", "enum": [1, 2]}, "(one of: 1, 2)"),
])
def test_wire_description_mirrors_type_choices_and_default(kwargs: dict[str, Any], description: str | None) -> None:
    assert make_argument("a", **kwargs).wire_description == description


def test_long_and_multi_line_defaults_are_shortened_to_one_line() -> None:
    arg = make_argument("log", default="line one\nline two " + "x" * 80)
    assert arg.wire_description is not None
    assert "\n" not in arg.wire_description
    assert arg.wire_description.startswith("(default: line one line two ")
    assert arg.wire_description.endswith("...)")
    assert len(arg.wire_description) == len("(default: )") + 40


def test_json_schema() -> None:
    schema = make_argument("t", type="integer", min=1, pattern=r"\d+", examples=[3]).json_schema()
    assert schema == {"type": "integer", "minimum": 1, "pattern": r"^(?:\d+)$", "examples": ["3"]}
    assert make_argument("p", type="path").json_schema() == {"type": "string", "format": "path"}
    assert make_argument("s", description="S", min=2, max=8.0).json_schema() == {
        "type": "string", "description": "S", "minLength": 2, "maxLength": 8}
    assert make_argument("x", type="number", min=0.5, default=1).json_schema() == {
        "type": "number", "default": 1.0, "minimum": 0.5}
    assert make_argument("b", type="boolean", default="off").json_schema() == {"type": "boolean", "default": False}
    assert make_argument("e", enum=["a", "b"], default="a").json_schema() == {
        "type": "string", "enum": ["a", "b"], "default": "a"}


def test_json_schema_does_not_publish_the_mirrored_hints_in_the_description() -> None:
    arg = make_argument("n", type="integer", description="Count", default=2)
    assert arg.json_schema()["description"] == "Count"
    assert arg.wire_description == "Count (integer; default: 2)"


def test_examples_are_strings() -> None:
    assert make_argument("a", examples=[1, True, 2.0, "x"]).examples == ("1", "true", "2", "x")


# -- front matter lists -------------------------------------------------------------------------------


def test_parse_arguments() -> None:
    assert parse_arguments(None) == ()
    args = parse_arguments([{"name": "code", "required": True}, {"name": "n", "type": "integer", "default": 2}])
    assert [(a.name, a.required, a.default) for a in args] == [("code", True, MISSING), ("n", False, 2)]


@pytest.mark.parametrize("raw, message", [
    ("code", "arguments must be a list"),
    ({"name": "a"}, "arguments must be a list"),
    (["a"], "each argument needs at least a name, got 'a'"),
    ([{"description": "x"}], "each argument needs at least a name"),
    ([{"name": "a", "colour": "red"}], "argument 'a': unknown key 'colour' (known: default, description, enum, "
                                       "examples, max, min, name, pattern, required, title, type)"),
    ([{"name": "a"}, {"name": "b"}, {"name": "a"}], "argument 'a' is declared twice"),
    ([{"name": "a", "type": "date"}], "type must be one of"),
])
def test_parse_arguments_mistakes(raw: object, message: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_arguments(raw)
    assert message in str(err.value)


def test_equal_lists_share_one_parsed_tuple() -> None:
    first = parse_arguments([{"name": "shared_a"}, {"name": "shared_b", "default": 1}])
    again = parse_arguments([{"name": "shared_a"}, {"name": "shared_b", "default": 1}])
    assert first is again
    # A different YAML spelling is parsed on its own, to the same value.
    spelled = parse_arguments([{"name": "shared_a"}, {"name": "shared_b", "default": "1"}])
    assert spelled == first and spelled[1].default == "1"
    assert parse_arguments([{"name": "shared_a"}, {"name": "shared_b", "type": "integer", "default": 1}]) != first


def test_lists_that_differ_share_the_arguments_they_declare_alike() -> None:
    """Files of a large library often differ in one argument (a description naming the file): the others are
    one ``Argument`` each, not a copy per file."""
    tone = {"name": "tone_alike", "enum": ["calm", "loud"], "default": "calm"}
    first = parse_arguments([{"name": "topic", "description": "for file 1"}, dict(tone)])
    second = parse_arguments([{"name": "topic", "description": "for file 2"}, dict(tone)])
    assert first is not second and first[1] is second[1]
    assert first[0].description == "for file 1" and second[0].description == "for file 2"
    # a different spelling is its own declaration, as for whole lists
    spelled = parse_arguments([{"name": "topic"}, {**tone, "enum": ["calm", "loud"], "default": "calm", "min": None}])
    assert spelled[1] is not first[1] and spelled[1] == first[1]
    with pytest.raises(SpecError, match="declared twice"):  # still checked per list
        parse_arguments([dict(tone), dict(tone)])


@pytest.mark.parametrize("value", [1, 1.0, True, "1", "true", None, [1], {"a": 1}, {1: 1}, b"1",
                                   datetime.date(2024, 1, 1), "2024-01-01", -0.0, 0.0, 0, False, 10**30])
def test_a_declaration_is_known_by_its_value_and_types(value: object) -> None:
    """Two declarations share one parsed value only when equal and of the same types: a YAML date and the
    same text quoted are different declarations (the date is refused, the text is not)."""
    others = [other for other in (1, 1.0, True, "1", "true", None, [1], {"a": 1}, {1: 1}, b"1",
                                  datetime.date(2024, 1, 1), "2024-01-01", -0.0, 0.0, 0, False, 10**30)
              if not (type(other) is type(value) and repr(other) == repr(value))]
    key = arguments_module._declaration([{"name": "x", "default": value}])
    assert all(arguments_module._declaration([{"name": "x", "default": other}]) != key for other in others)
    assert arguments_module._declaration([{"name": "x", "default": value}]) == key
    with pytest.raises(SpecError, match="must be a scalar"):
        parse_arguments([{"name": "when", "default": datetime.date(2024, 1, 1)}])
    assert parse_arguments([{"name": "when", "default": "2024-01-01"}])[0].default == "2024-01-01"


# -- binding a client's arguments ---------------------------------------------------------------------


ARGS = parse_arguments([
    {"name": "code", "required": True},
    {"name": "level", "type": "integer", "default": 2},
    {"name": "note"},
    {"name": "lang", "enum": ["py", "go"], "default": "py"},
])


def test_bind_converts_and_applies_defaults() -> None:
    assert bind(ARGS, {"code": "x"}, "p") == {"code": "x", "level": 2, "lang": "py"}
    assert bind(ARGS, {"code": "x", "level": "5", "note": "n", "lang": "go"}, "p") == {
        "code": "x", "level": 5, "note": "n", "lang": "go"}


def test_bind_without_arguments() -> None:
    assert bind((), None, "p") == {}
    assert bind((), {}, "p") == {}
    assert bind(parse_arguments([{"name": "opt"}]), None, "p") == {}


def test_bind_names_every_missing_required_argument() -> None:
    args = parse_arguments([{"name": "a", "required": True}, {"name": "b"}, {"name": "c", "required": True}])
    with pytest.raises(InvalidParams) as err:
        bind(args, {"b": "x"}, "pr")
    assert err.value.code == -32602
    assert err.value.message == "prompt 'pr' is missing required argument 'a', 'c'"
    assert err.value.data == {"prompt": "pr", "missing": ["a", "c"]}
    with pytest.raises(InvalidParams, match="missing required argument 'code'"):
        bind(ARGS, None, "p")


def test_bind_refuses_unknown_arguments() -> None:
    with pytest.raises(InvalidParams) as err:
        bind(ARGS, {"code": "x", "zeta": "1", "colour": "red"}, "p")
    assert err.value.code == -32602
    assert err.value.message == "prompt 'p' has no argument 'colour', 'zeta' (it takes: code, lang, level, note)"
    assert err.value.data == {"prompt": "p", "unknown": ["colour", "zeta"]}
    with pytest.raises(InvalidParams, match=r"has no argument 'x' \(it takes: none\)"):
        bind((), {"x": "1"}, "empty")


def test_bind_names_the_prompt_and_the_rule_for_a_bad_value() -> None:
    with pytest.raises(InvalidParams) as err:
        bind(ARGS, {"code": "x", "level": "high"}, "p")
    assert err.value.code == -32602
    assert err.value.message == "prompt 'p': argument 'level' must be an integer, got 'high'"
    assert str(err.value) == err.value.message
    assert err.value.data == {"argument": "level"}
    with pytest.raises(InvalidParams, match="argument 'lang' must be one of py, go"):
        bind(ARGS, {"code": "x", "lang": "rust"}, "p")


def test_bind_refuses_non_string_values() -> None:
    with pytest.raises(InvalidParams, match="argument 'code' must be a string on the wire, got int"):
        bind(ARGS, {"code": 5}, "p")


# -- properties ---------------------------------------------------------------------------------------


@given(st.integers(min_value=-10**30, max_value=10**30))
def test_integers_round_trip(n: int) -> None:
    assert make_argument("n", type="integer").convert(str(n)) == n


@given(st.integers(-1000, 1000), st.integers(0, 500), st.data())
def test_integers_in_range_convert_and_outside_are_refused(lo: int, width: int, data: st.DataObject) -> None:
    hi = lo + width
    arg = make_argument("n", type="integer", min=lo, max=hi)
    inside = data.draw(st.integers(lo, hi))
    assert arg.convert(str(inside)) == inside
    outside = data.draw(st.integers(hi + 1, hi + 10**6) | st.integers(lo - 10**6, lo - 1))
    message = refused(arg, str(outside)).message
    assert ("at least" in message) == (outside < lo) and ("at most" in message) == (outside > hi)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_finite_floats_round_trip(x: float) -> None:
    assert make_argument("x", type="number").convert(repr(x)) == x


@given(st.text(max_size=12))
def test_booleans_accept_exactly_the_documented_words(raw: str) -> None:
    word = raw.strip().lower()
    arg = make_argument("b", type="boolean")
    if word in {"true", "yes", "1", "on"}:
        assert arg.convert(raw) is True
    elif word in {"false", "no", "0", "off"}:
        assert arg.convert(raw) is False
    else:
        refused(arg, raw)


ARG_SHAPES: list[dict[str, Any]] = [
    {},
    {"min": 0, "max": 20},
    {"pattern": r"[a-z0-9./]+"},
]


@given(st.sampled_from(ARG_TYPES), st.sampled_from(ARG_SHAPES), st.text(max_size=30))
def test_any_string_converts_or_is_invalid_params(kind: ArgType, shape: dict[str, Any], raw: str) -> None:
    if kind == "boolean" and shape:
        shape = {}
    arg = make_argument("a", type=kind, **shape)
    try:
        value = arg.convert(raw)
    except InvalidParams as exc:
        assert exc.code == -32602 and "'a'" in exc.message
        return
    if kind == "number":
        assert math.isfinite(value)
    expected: type = {"string": str, "path": str, "integer": int, "number": float, "boolean": bool}[kind]
    assert type(value) is expected
    if "pattern" in shape:
        assert arg.pattern is not None and arg.pattern.fullmatch(raw)


@given(st.lists(st.text(alphabet="abcxyz", min_size=1, max_size=4), min_size=1, max_size=5, unique=True),
       st.text(alphabet="abcxyz", max_size=4))
def test_enum_accepts_exactly_its_values(choices: list[str], raw: str) -> None:
    arg = make_argument("e", enum=choices)
    if raw in choices:
        assert arg.convert(raw) == raw
    else:
        refused(arg, raw)


@given(st.dictionaries(st.sampled_from(["code", "level", "note", "lang", "other"]),
                       st.text(max_size=5) | st.integers(), max_size=5))
def test_bind_either_returns_converted_values_or_raises_invalid_params(given_args: dict[str, Any]) -> None:
    try:
        values = bind(ARGS, given_args, "p")
    except InvalidParams as exc:
        assert exc.code == -32602 and "'p'" in exc.message
        return
    assert set(values) <= {"code", "level", "note", "lang"}
    assert "code" in values and isinstance(values["level"], int) and values["lang"] in ("py", "go")
