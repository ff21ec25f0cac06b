"""The store commands (cli/store.py), run in-process on an embedded (sqlite) store: publish, label, history,
diff, rollback, export and store upgrade, and each refusal one line naming what is at fault, exit 1 (2 for a
usage mistake), nothing changed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.store import diff, export, history, label_command, publish, rollback, store

pytestmark = pytest.mark.usefixtures("kept_logging")

V1 = "---\ndescription: Greets\narguments:\n  - {name: who}\n---\nHello {{ who }}!\n"
V2 = V1.replace("Hello", "Hi")
WHEN = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


def run(command: object, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), prog_name="promptdeck")  # type: ignore[arg-type]


@pytest.fixture
def published(tmp_path: Path) -> tuple[Path, str]:
    """A library published twice (v1 labelled production, then v2); (its folder, the store's URL)."""
    folder, url = tmp_path / "lib", str(tmp_path / "s.db")
    folder.mkdir()
    (folder / "greet.md").write_text(V1)
    first = run(publish, str(folder), "--store", url, "--label", "production", "-m", "first", "--author", "ann")
    assert (first.exit_code, first.stdout) == (0, "publish 1: 1 file changed; label production points at it\n"
                                                  "  greet.md\n"), first.output
    (folder / "greet.md").write_text(V2)
    second = run(publish, str(folder), "--store", url, "-m", "second", "--author", "bob")
    assert second.stdout == "publish 2: 1 file changed\n  greet.md\n", second.output
    return folder, url


def test_history_diff_label_and_rollback(published: tuple[Path, str]) -> None:
    _, url = published
    lines = run(history, "greet", "--store", url).stdout.splitlines()
    assert re.fullmatch(rf"greet.md v2  greet  publish 2  {WHEN}  bob  second", lines[0]), lines
    assert re.fullmatch(rf"greet.md v1  greet  publish 1  {WHEN}  ann  first  \[production\]", lines[1]), lines
    changed = run(diff, "greet", "1", "2", "--store", url)
    assert changed.stdout.startswith("--- greet.md@1\n+++ greet.md@2\n") and "-Hello {{ who }}!\n+Hi {{ who }}!\n" \
        in changed.stdout
    moved = run(label_command, "greet@2", "production", "--store", url, "--author", "ann", "-m", "go")
    assert moved.stdout == "label production: greet is at version 2\n"
    back = run(rollback, "production", "--store", url, "--author", "ann", "-m", "back")
    assert back.exit_code == 0 and back.stdout.startswith("label production is back at position 1 (publish 1, ")
    moves = run(history, "--label", "production", "--store", url).stdout.splitlines()
    assert [line.split("  ", 2)[2] for line in moves] == [
        "position 2 -> 3  rollback to position 1  back  [greet.md v2->v1]",
        "position 1 -> 2  label greet@2  go  [greet.md v1->v2]",
        "-> position 1  publish 1  first  [greet.md +v1]"]


def test_publishing_nothing_new_changes_nothing(published: tuple[Path, str]) -> None:
    folder, url = published
    assert run(publish, str(folder), "--store", url).stdout == "nothing changed in 1 files\n"


def test_a_library_with_a_problem_publishes_nothing(published: tuple[Path, str]) -> None:
    folder, url = published
    (folder / "greet.md").write_text("{{ who }}\n")
    done = run(publish, str(folder), "--store", url)
    assert done.exit_code == 1
    assert done.stdout == "greet.md:1: template uses 'who', which is not an argument (arguments: none)\n"
    assert done.stderr == "promptdeck: nothing published: 1 problem in 1 file\n"
    assert "v3" not in run(history, "greet", "--store", url).stdout


@pytest.mark.parametrize(("args", "code", "says"), [
    (["label", "nope", "production"], 1, "no prompt 'nope' in the store"),
    (["label", "greet", "bad label!"], 2,
     "label 'bad label!' is not valid: use 1-64 letters, digits, '_', '-' and '.'"),
    (["diff", "greet", "1", "9"], 1, "prompt 'greet' has no version 9"),
    (["rollback", "staging"], 1, "staging"),
])
def test_refusals_are_one_line_naming_the_fault(published: tuple[Path, str], args: list[str], code: int,
                                                says: str) -> None:
    _, url = published
    command = {"label": label_command, "diff": diff, "rollback": rollback}[args[0]]
    done = run(command, *args[1:], "--store", url)
    assert done.exit_code == code
    assert done.stderr.startswith("promptdeck: ") and says in done.stderr and done.stderr.count("\n") == 1


def test_export_writes_a_labels_library(published: tuple[Path, str], tmp_path: Path) -> None:
    _, url = published
    done = run(export, "--store", url, "--label", "production", str(tmp_path / "out"))
    assert done.stdout == "wrote 1 files of label production to " + str(tmp_path / "out") + "\n", done.output
    assert (tmp_path / "out" / "greet.md").read_text() == V1


def test_store_upgrade_of_a_current_store(published: tuple[Path, str]) -> None:
    _, url = published
    done = run(store, "upgrade", url)
    assert done.exit_code == 0 and re.fullmatch(r"the store is at schema \d+ already\n", done.stdout)
