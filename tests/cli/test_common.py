"""What every command shares (cli/common.py): how it fails, and how it reads ``-a NAME=VALUE``."""

from __future__ import annotations

import pytest

from promptdeck.cli.common import fail, parse_args


def test_fail_says_why_on_stderr_through_the_gate_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        fail("no prompt named 'x\x1b'", 3)
    assert stopped.value.code == 3
    assert capsys.readouterr().err == "promptdeck: no prompt named 'x\\u001b'\n"


def test_pairs_are_split_at_the_first_equals() -> None:
    assert parse_args(("a=1", "b=x=y", "c=", "a=2")) == {"a": "2", "b": "x=y", "c": ""}


@pytest.mark.parametrize("pair", ["novalue", "=value"])
def test_a_pair_without_a_name_or_equals_is_a_usage_error(pair: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_args(("ok=1", pair))
    assert stopped.value.code == 2
    assert capsys.readouterr().err == f"promptdeck: -a takes name=value, got {pair!r}\n"
