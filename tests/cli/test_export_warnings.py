"""How ``export --to`` reports what a format could not carry (cli/export_warnings.py): a warning a line naming
its file, and one that most files share said once with how many it concerns."""

from __future__ import annotations

import pytest

from promptdeck.cli.export_warnings import warn
from promptdeck.export.writers import Written


def written(path: str, *warnings: str) -> Written:
    return Written(prompt=path.rsplit(".", 1)[0], path=path, text="", warnings=list(warnings))


def test_each_warning_names_its_file_and_shared_ones_are_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    warn([written("a.md", "splits at spaces", "no enum"), written("b.md", "splits at spaces", "splits at spaces"),
          written("c.md", "splits at spaces"), written("d.md")])
    assert capsys.readouterr().err == ("a.md: warning: no enum\n"
                                       "warning: splits at spaces (in 3 of the 4 files)\n")


def test_a_warning_in_half_the_files_or_fewer_stays_on_each(capsys: pytest.CaptureFixture[str]) -> None:
    warn([written("a.md", "x"), written("b.md", "x"), written("c.md"), written("d.md")])
    assert capsys.readouterr().err == "a.md: warning: x\nb.md: warning: x\n"


def test_hostile_names_and_warnings_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    warn([written("evil\x1b[2J.md", "line\nforged")])
    assert capsys.readouterr().err == "evil\\u001b[2J.md: warning: line\\nforged\n"
