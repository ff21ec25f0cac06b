"""The fast front-matter reader must agree with PyYAML whenever it answers at all."""

from __future__ import annotations

from string import ascii_lowercase
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from promptdeck.protocol.errors import LineError
from promptdeck.sources.files.frontmatter import (
    YamlRefused,
    fast_load,
    key_line,
    load_yaml_file,
    read_json_front_matter,
    safe_yaml,
)

# Scalars chosen to hit YAML 1.1's corners: booleans, nulls, octal-looking and sexagesimal numbers,
# dates, floats without a dot, indicators, quotes and colons.
TRICKY = ["yes", "No", "ON", "off", "true", "False", "null", "~", "Null", "0", "012", "7", "-3", "+4", "1.5",
          "1e5", ".5", "1_000", "0x1F", "1:30", "2024-01-01", "2024-01-01 10:00:00", ".inf", "-.Inf", ".NaN",
          "a: b", "a:b", "x #y", "#z", "- item", "[x]", "{y}", "a, b", "it's", 'say "hi"', "&anchor", "*ref",
          "!tag", "|", ">", "%", "@", "`", "?", "<<", "=", "plain words", "C#", "under_score", "Ünïcode",
          "trailing:", "", " ", "'quoted'", '"dq"', "back\\slash", "tab\there",
          # what Python's str methods take for spaces or line breaks and YAML does not (or the reverse), and what
          # PyYAML refuses outright
          "\xa0x", "a\xa0", "\u3000", "x\u2028y", "x\x85y", "\ufeffx", "a\x01", "a\x7f", "~x", "<b>", "a::b", "Q&A"]
scalar_text = st.one_of(st.sampled_from(TRICKY), st.text(alphabet="ab1:-# '\"[]{},.", max_size=8))
key = st.one_of(st.sampled_from(["name", "title", "description", "arguments", "enum", "yes", "on", "a-b",
                                 "required", "x_1", "default", "min"]),
                # What ``[a-z][a-z_]{0,5}`` matches, built from its parts: st.from_regex drew it several times slower,
                # and keys are most of this module's draws.
                st.builds(str.__add__, st.sampled_from(ascii_lowercase), st.text(ascii_lowercase + "_", max_size=5)))


def render_scalar(value: str, style: int) -> str:
    if style == 1:
        return "'" + value.replace("'", "''") + "'"
    if style == 2 and '"' not in value and "\\" not in value:
        return '"' + value + '"'
    return value


@st.composite
def flow(draw: st.DrawFn, depth: int = 0) -> str:
    items = draw(st.lists(st.tuples(scalar_text, st.integers(0, 2)), max_size=4))
    parts = [render_scalar(v, s) for v, s in items]
    if depth == 0 and draw(st.booleans()):
        parts.append(draw(flow(depth=1)))
    if draw(st.booleans()):
        return "[" + ", ".join(parts) + "]"
    keys = draw(st.lists(key, min_size=len(parts), max_size=len(parts)))
    return "{" + ", ".join(f"{k}: {p}" for k, p in zip(keys, parts, strict=True)) + "}"


@st.composite
def value(draw: st.DrawFn) -> str:
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return render_scalar(draw(scalar_text), draw(st.integers(0, 2)))
    return draw(flow())


@st.composite
def block(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for k in draw(st.lists(key, min_size=1, max_size=4)):
        kind = draw(st.integers(0, 3 if depth < 2 else 1))
        if kind <= 1:
            lines.append(f"{pad}{k}: {draw(value())}".rstrip())
        elif kind == 2:
            lines.append(f"{pad}{k}:")
            lines.extend(draw(block(indent + draw(st.integers(1, 4)), depth + 1)))
        else:
            lines.append(f"{pad}{k}:")
            item_indent = indent + draw(st.integers(0, 2))
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    lines.append(f"{' ' * item_indent}- {draw(value())}".rstrip())
                else:
                    inner = draw(block(item_indent + 2, depth + 1))
                    lines.append(" " * item_indent + "- " + inner[0].lstrip(" "))
                    lines.extend(inner[1:])
    return lines


def agree(text: str) -> Any:
    fast = fast_load(text)
    if fast is None:
        return None
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        raise AssertionError(f"read text PyYAML refuses: {text!r}") from None
    assert fast == expected, text
    # bool is an int to ==; the types must match too.
    assert repr(fast) == repr(yaml.safe_load(text)), text
    return fast


@settings(max_examples=600, deadline=None)
@given(block(0, 0))
def test_fast_reader_agrees_with_pyyaml(lines: list[str]) -> None:
    agree("\n".join(lines) + "\n")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab:-#'\"[]{}, \n\t|>1.\xa0\x01\u2028", max_size=60))
def test_fast_reader_on_noise_agrees_or_declines(text: str) -> None:
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        # Text PyYAML refuses must never be read as something by the fast path.
        assert fast_load(text) is None, text
        return
    fast = fast_load(text)
    if fast is not None:
        assert repr(fast) == repr(expected), text


def test_typical_front_matter_takes_the_fast_path() -> None:
    text = (
        "description: Draft a note about a topic.\n"
        "tags: [writing, notes]\n"
        "arguments:\n"
        "  - name: topic\n"
        "    required: true\n"
        "  - {name: tone, enum: [neutral, 'friendly', \"formal\"], default: neutral}\n"
        "  - name: words\n"
        "    type: integer\n"
        "    min: 10\n"
        "    max: 500\n"
    )
    assert agree(text) == {
        "description": "Draft a note about a topic.",
        "tags": ["writing", "notes"],
        "arguments": [
            {"name": "topic", "required": True},
            {"name": "tone", "enum": ["neutral", "friendly", "formal"], "default": "neutral"},
            {"name": "words", "type": "integer", "min": 10, "max": 500},
        ],
    }


@pytest.mark.parametrize("text", [
    "a: b\x01\n", "a: x\x7f\n", "\x0c\na: b\n", "a: b\u2028c\n",  # PyYAML refuses these
    "a: [\xa0x]\n", "a: {\xa0k: v}\n", "a: [x\u3000]\n",  # spaces to Python, text to YAML
])
def test_text_python_and_yaml_read_differently_agrees_or_declines(text: str) -> None:
    agree(text)


def test_a_line_read_before_gives_fresh_values() -> None:
    text = "tags: [a, b]\nmodel: {name: m, tools: [x]}\nname: n\n"
    first = agree(text)
    first["tags"].append("c")
    first["model"]["tools"].append("y")
    assert agree(text) == {"tags": ["a", "b"], "model": {"name": "m", "tools": ["x"]}, "name": "n"}


@pytest.mark.parametrize("blocks", [0, 10, 20, 31])
def test_nesting_counts_block_and_flow_levels_together(blocks: int) -> None:
    """Block levels and the flow levels in a line's value add up, as PyYAML's depth check counts them: what it
    refuses is never read here (it was, for a deep flow value below a few block levels)."""
    for flow in range(1, 40):
        for value in ["[" * flow + "x" + "]" * flow, "{a: " * flow + "x" + "}" * flow]:
            text = "".join(" " * i + f"k{i}:\n" for i in range(blocks)) + " " * blocks + f"k: {value}\n"
            try:
                safe_yaml(text)
            except YamlRefused:
                assert fast_load(text) is None, (blocks, flow)
            else:
                assert flow > 2 or agree(text) is not None, (blocks, flow)


def test_uncertain_shapes_are_left_to_pyyaml() -> None:
    for text in ["when: 2024-01-01\n", "n: 012\n", "t: 1:30\n", "d: >-\n  folded\n", "a: x # note\n",
                 "a: &x 1\nb: *x\n", "k: 1e5\n", "? complex\n: key\n", "a: 'unterminated\n"]:
        assert fast_load(text) is None, text


# -- a skill's front matter as JSON, as written ------------------------------------------------------------


def test_json_front_matter_keeps_types_and_dates_as_written() -> None:
    text = ("name: x\nn: 3\nf: 2.5\nneg: -1\nbig: 18446744073709551615\nb: no\nnil:\nday: 2025-01-31\n"
            "stamp: 2001-12-14t21:59:43.10-05:00\nlist: [a, 2]\nmap: {k: [1, {x: null}]}\n'1': quoted key\n")
    assert read_json_front_matter(text) == {
        "name": "x", "n": 3, "f": 2.5, "neg": -1, "big": 2 ** 64 - 1, "b": False, "nil": None, "day": "2025-01-31",
        "stamp": "2001-12-14t21:59:43.10-05:00", "list": ["a", 2], "map": {"k": [1, {"x": None}]},
        "1": "quoted key"}
    assert read_json_front_matter("  \n") == {}


@pytest.mark.parametrize(("text", "line", "message"), [
    ("a: 1\nb: 2\na: 3\n", 4, "key 'a' is given twice"),
    ("a:\n  1: x\n", 3, "key 1 is not text"),
    ("a: .nan\n", 2, "is not a number JSON can carry"),
    ("a: -.inf\n", 2, "is not a number JSON can carry"),
    ("a: 18446744073709551616\n", 2, "outside 64 bits"),
    ("a: !!binary aGk=\n", 2, "a binary value has no JSON form"),
    ("a: !!set {x}\n", 2, "a set value has no JSON form"),
    ("a: !!omap [x: 1]\n", 2, "a omap value has no JSON form"),
    ("b: {x: 1}\na:\n  <<: {x: 1}\n", 4, "merge keys"),
    ("a: &x 1\nb: *x\n", 3, "aliases"),
    ("a: !custom 1\n", 2, "could not determine a constructor"),
    ("a: [\n", 3, "not valid YAML"),
    ("- a\n", 2, "must be a mapping"),
])
def test_json_front_matter_refuses_what_json_cannot_carry_as_written(text: str, line: int, message: str) -> None:
    with pytest.raises(LineError) as caught:
        read_json_front_matter(text)
    assert caught.value.line == line and message in str(caught.value), (caught.value.line, str(caught.value))


def test_key_line_finds_top_level_and_nested_keys() -> None:
    front = "name: x\nmetadata:\n  author: me\n  promptdeck-scopes: hr\nother: 1\npromptdeck-scopes: no\n"
    assert key_line(front, "name") == 2 and key_line(front, "other") == 6
    assert key_line(front, "metadata.promptdeck-scopes") == 5
    assert key_line(front, "metadata.missing") == 3  # the mapping's own line
    assert key_line(front, "missing") is None and key_line(front, None) is None
    assert key_line("metadata: {promptdeck-scopes: hr}\n", "metadata.promptdeck-scopes") == 2


@pytest.mark.parametrize(("text", "line", "message"), [
    ("a: 1\nb: c: d\n", 2, "tests file is not valid YAML"),
    ("a: &x [1]\nb: *x\n", 2, "tests file: YAML aliases (*x) are not allowed"),
    ("a:\n  b: 1\nc: " + "[" * 40 + "]" * 40 + "\n", 3, "nested deeper than"),
])
def test_a_whole_yaml_file_is_refused_at_its_own_lines(text: str, line: int, message: str) -> None:
    """A file of YAML counts its lines from its first; a front matter from the line after its fence."""
    with pytest.raises(LineError) as refused:
        load_yaml_file(text, "tests file")
    assert refused.value.line == line and message in str(refused.value)
    assert load_yaml_file("a: [1, 2]\n", "tests file") == {"a": [1, 2]}
