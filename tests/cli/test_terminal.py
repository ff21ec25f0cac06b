"""The terminal gate (cli/terminal.py): a field is one line with every control, separator and BiDi control
escaped as JSON escapes them; a body keeps its newlines and tabs; our own styling passes as it is."""

from __future__ import annotations

import io
import json

import click
import pytest

from promptdeck.cli.terminal import CLEAR_LINE, Shown, echo, formatted, shown, styled, write


@pytest.mark.parametrize(("raw", "field"), [
    ("plain text", "plain text"),
    ("two\nlines", "two\\nlines"),
    ("cr\rtab\t", "cr\\rtab\\t"),
    ("\x1b[31mred", "\\u001b[31mred"),
    ("\x1b]8;;https://evil\x07link", "\\u001b]8;;https://evil\\u0007link"),
    ("csi\x9b", "csi\\u009b"),
    ("del\x7f", "del\\u007f"),
    ("rtl\u202eoverride", "rtl\\u202eoverride"),
    ("iso\u2066late", "iso\\u2066late"),
    ("line\u2028sep", "line\\u2028sep"),
    ("lone\ud800", "lone\\ud800"),
    ("caf\u00e9 \u2603", "caf\u00e9 \u2603"),  # printable text beyond ASCII stays
])
def test_a_field_is_one_safe_line(raw: str, field: str) -> None:
    assert shown(raw) == field


def test_the_escapes_are_json_ones() -> None:
    raw = "a\x1b\u202e\n\tb"
    assert json.loads(f'"{shown(raw)}"') == raw


def test_a_body_keeps_newlines_and_tabs_only() -> None:
    assert shown("line 1\n\tline 2\r\n\x1b[2J", lines=True) == "line 1\n\tline 2\\r\n\\u001b[2J"


def test_what_has_been_through_the_gate_is_not_escaped_again() -> None:
    once = Shown(shown("a\nb"))
    assert shown(once) is once
    assert shown(CLEAR_LINE) == "\r\033[K"  # our own sequence


def test_styled_escapes_first_and_styles_after() -> None:
    text = styled("x\x1b[0m", bold=True)
    assert isinstance(text, Shown)
    assert text == click.style("x\\u001b[0m", bold=True)


def test_the_writers_pass_everything_through_the_gate(capsys: pytest.CaptureFixture[str]) -> None:
    echo("hostile \x1b]0;title\x07", err=True)
    echo(Shown("\x1b[1mours\x1b[0m"), color=True)
    captured = capsys.readouterr()
    assert captured.err == "hostile \\u001b]0;title\\u0007\n"
    assert captured.out == "\x1b[1mours\x1b[0m\n"
    stream = io.StringIO()
    write(stream, "a\rb")
    assert stream.getvalue() == "a\\rb"


def test_formatted_text_for_the_picker() -> None:
    assert list(formatted([("bold", "x\x1by"), ("", "z\n")])) == [("bold", "x\\u001by"), ("", "z\n")]
