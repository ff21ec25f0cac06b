"""``promptdeck test``: run the tests prompts carry (docs/prompt-files.md, "Tests") on a folder or a label."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from ..protocol.errors import McpError, PromptdeckError
from .common import fail
from .folder_format import FORMAT_OPTION
from .program import command_line
from .terminal import echo

if TYPE_CHECKING:
    from ..prompts.testing import Report


@click.command("test")
@click.argument("args", nargs=-1, metavar="[LIBRARY] [NAME]...")
@click.option("--store", "url", default=None, metavar="URL",
              help="Test a label of this store (sqlite:///path.db, a path ending in .db, or postgresql://…) "
              "instead of a LIBRARY folder; every argument is then a NAME.")
@click.option("--label", default=None, metavar="LABEL", help="With --store: the label whose prompts to test.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON (for CI).")
@FORMAT_OPTION
def test(args: tuple[str, ...], url: str | None, label: str | None, as_json: bool, folder_format: str | None) -> None:
    """Run the tests of the prompts of LIBRARY (or of --store URL --label LABEL), or of the NAMEd ones only:
    one line per failing case, a summary, exit 1 if any case failed."""
    from ..prompts.testing import run_tests

    if (url is None) != (label is None):
        fail("--store and --label go together", 2)
    if url is None and not args:
        fail("test takes LIBRARY [NAME]..., or NAME... with --store URL --label LABEL", 2)
    problems: list[str]
    try:
        if url is not None:
            assert label is not None
            report, problems = _label_report(url, label, args)
        else:
            from .library import library_problems

            problems, prompts, _ = library_problems((args[0],), folder_format)
            if problems:
                for problem in problems:
                    echo(problem, err=True)
                fail(f"{len(problems)} problem{'s' * (len(problems) != 1)} in {args[0]}; fix them first "
                     f"({command_line('check', args[0])})")
            report = run_tests(prompts.values(), args[1:] or None)
    except McpError as exc:  # a NAME that is not there
        fail(exc.message, 2)
    except PromptdeckError as exc:
        fail(str(exc))
    show(report, as_json, problems)
    sys.exit(0 if report.passed and not problems else 1)


def _label_report(url: str, label: str, names: tuple[str, ...]) -> tuple[Report, list[str]]:
    from ..sources.store.database import Store
    from ..sources.store.model import is_label
    from ..sources.store.testing import run_label_tests

    if not is_label(label):
        fail(f"label {label!r} is not valid: use 1-64 letters, digits, '_', '-' and '.'", 2)
    with Store(url) as opened:
        return run_label_tests(opened.reads, label, names or None)


def show(report: Report, as_json: bool, problems: Sequence[str] = ()) -> None:
    """Print ``report``: as JSON, or a line per failing case and the summary (on stderr when any failed)."""
    if as_json:
        echo(json.dumps({**report.to_json(), "problems": list(problems)}, indent=2, ensure_ascii=False))
        return
    for problem in problems:
        echo(problem, err=True)
    for line in report.failures():
        echo(f"FAIL {line}")
    echo(report.summary(), err=not report.passed)
