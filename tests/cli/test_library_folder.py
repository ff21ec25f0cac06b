"""The FOLDER argument (cli/library_folder.py): a folder passes; a file is refused with the command to run on
the folder it is in."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from promptdeck.cli.library_folder import LIBRARY_FOLDER


@click.command()
@click.argument("folder", type=LIBRARY_FOLDER)
def check(folder: str) -> None:
    click.echo(f"reading {folder}")


def test_a_folder_passes(tmp_path: Path) -> None:
    done = CliRunner().invoke(check, [str(tmp_path)])
    assert done.exit_code == 0 and done.output == f"reading {tmp_path}\n"


def test_a_file_gets_the_command_for_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [".venv/bin/promptdeck"])
    prompt = tmp_path / "review.md"
    prompt.write_text("hello\n")
    done = CliRunner().invoke(check, [str(prompt)], prog_name="check")
    assert done.exit_code == 2
    assert f"{str(prompt)!r} is a file: check reads a library's folder" in done.output
    assert f"the folder it is in: .venv/bin/promptdeck check {tmp_path}" in done.output
