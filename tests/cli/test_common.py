"""cli/common.py: what the commands share, and the rule that they share it only from there (issue 39)."""

from __future__ import annotations

import ast
import getpass
from pathlib import Path

import pytest

import promptdeck.cli
from promptdeck.cli.common import author_of, fail, open_store, parse_args, utc_time, valid_label

CLI = Path(promptdeck.cli.__file__).parent


def test_no_cli_module_imports_a_private_name_of_another() -> None:
    """What two commands use is public in cli/common.py, not a ``_name`` borrowed from one command's module."""
    borrowed = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                borrowed += [f"{path.name}: {node.module}.{alias.name}" for alias in node.names
                             if alias.name.startswith("_")]
    assert borrowed == []


def test_the_author_is_the_one_given_else_the_users_name(monkeypatch: pytest.MonkeyPatch) -> None:
    assert author_of("ada") == "ada"
    monkeypatch.setattr(getpass, "getuser", lambda: "grace")
    assert author_of(None) == author_of("") == "grace"

    def nobody() -> str:
        raise KeyError("no user name for this uid")

    monkeypatch.setattr(getpass, "getuser", nobody)
    assert author_of(None) == "unknown"


def test_times_are_shown_in_utc_to_the_second() -> None:
    assert utc_time(0) == "1970-01-01 00:00:00 UTC"
    assert utc_time(1_700_000_000.9) == "2023-11-14 22:13:20 UTC"


def test_a_label_is_checked_and_a_bad_one_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert valid_label("production") == "production"
    with pytest.raises(SystemExit) as exited:
        valid_label("no spaces")
    assert exited.value.code == 2
    assert "label 'no spaces' is not valid" in capsys.readouterr().err


def test_a_store_that_cannot_be_opened_fails_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'missing.db'}"
    with pytest.raises(SystemExit) as exited, open_store(url):
        pass
    assert exited.value.code == 1
    assert capsys.readouterr().err.startswith("promptdeck: ")
    with open_store(url, create=True) as store:
        assert store.reads.latest() == {}


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
