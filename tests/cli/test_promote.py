"""``promptdeck promote`` (cli/promote.py), on SQLite and a real PostgreSQL cluster: what it prints for a whole
label, named prompts and a label that holds SRC's versions already; each refusal one line, exit 1, nothing
changed; the move in ``history --label``; and ``label SRC DST`` (a label where a prompt goes) leading here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.govern import protect
from promptdeck.cli.promote import promote
from promptdeck.cli.store import history, label_command, publish
from tests.support.paths import REPO

pytestmark = pytest.mark.usefixtures("kept_logging")

TESTED = ("---\narguments:\n  - name: who\ntests:\n  - description: greets by name\n    vars: {who: Ada}\n"
          "    assert:\n      - {type: contains, value: Hello Ada}\n---\nHELLO {{ who }}!\n")


def run(command: object, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), prog_name="promptdeck")  # type: ignore[arg-type]


def staged(tmp_path: Path, url: str) -> None:
    """production: greet 1, old 1; staging: greet 2, new 1."""
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "greet.md").write_text("Hello\n")
    (folder / "old.md").write_text("Old\n")
    assert run(publish, str(folder), "--store", url, "--label", "production").exit_code == 0
    (folder / "greet.md").write_text("Hi\n")
    (folder / "old.md").unlink()
    (folder / "new.md").write_text("New\n")
    assert run(publish, str(folder), "--store", url, "--label", "staging").exit_code == 0


def test_promote_a_label_then_again_and_see_it_in_the_history(tmp_path: Path, store_url: str) -> None:
    staged(tmp_path, store_url)
    named = run(promote, "staging", "production", "greet", "--store", store_url, "--author", "ana")
    assert named.exit_code == 0, named.output
    assert named.stdout == ("label production now holds greet as staging holds (position 2): position 3, "
                            "1 file changed\n  greet.md v1 -> v2\n")
    done = run(promote, "staging", "production", "--store", store_url, "--author", "ana", "-m", "release 7")
    assert done.exit_code == 0, done.output
    assert done.stdout == ("label production now holds what staging holds (position 2): position 4, 2 files changed\n"
                           "  new.md added (v1)\n  old.md removed (was v1)\n")
    again = run(promote, "staging", "production", "--store", store_url)
    assert again.exit_code == 0
    assert again.stdout == "label production already holds what staging holds (position 2); nothing moved\n"
    audit = run(history, "--label", "production", "--store", store_url).stdout.splitlines()
    assert "ana  position 3 -> 4  promote staging (position 2)  release 7  [new.md +v1, old.md -v1]" in audit[0]
    assert "position 1 -> 3  promote greet from staging (position 2)  [greet.md v1->v2]" in audit[1]


@pytest.mark.parametrize(("args", "said"), [
    (("nightly", "production"), "no label 'nightly' in the store (labels: production, staging)"),
    (("staging", "staging"), "promote points one label at another's versions: 'staging' is both; nothing changed"),
    (("staging", "production", "greet", "old"), "label 'staging' has no prompt 'old'; nothing changed"),
])
def test_a_refused_promotion_is_one_line_and_changes_nothing(tmp_path: Path, store_url: str, args: tuple[str, ...],
                                                             said: str) -> None:
    staged(tmp_path, store_url)
    before = run(history, "--label", "production", "--store", store_url).stdout
    refused = run(promote, *args, "--store", store_url)
    assert refused.exit_code == 1 and refused.stderr == f"promptdeck: {said}\n"
    assert run(history, "--label", "production", "--store", store_url).stdout == before


def test_a_label_requiring_tests_refuses_a_promotion_naming_the_failing_test(tmp_path: Path, store_url: str) -> None:
    staged(tmp_path, store_url)
    folder = tmp_path / "lib"
    (folder / "greet.md").write_text(TESTED)
    assert run(publish, str(folder), "--store", store_url, "--label", "staging", "--skip-tests").exit_code == 0
    assert run(protect, "production", "--scope", "release", "--require-tests", "--store", store_url).exit_code == 0
    before = run(history, "--label", "production", "--store", store_url).stdout
    refused = run(promote, "staging", "production", "--store", store_url)
    assert refused.exit_code == 1 and "label 'production' requires passing tests" in refused.stderr
    assert "greets by name" in refused.stderr and refused.stderr.count("\n") == 1
    assert run(history, "--label", "production", "--store", store_url).stdout == before


def test_label_with_a_label_where_the_prompt_goes_names_the_promote_command(tmp_path: Path) -> None:
    url = str(tmp_path / "prompts.db")
    staged(tmp_path, url)
    # As a README reader runs it, so the hint is the command they can paste.
    done = subprocess.run([".venv/bin/promptdeck", "label", "staging", "production", "--store", url],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr == (f"promptdeck: no prompt 'staging' in the store; staging is a label: to point production at "
                           f"what staging holds, run .venv/bin/promptdeck promote staging production --store {url}\n")
    from_env = subprocess.run([".venv/bin/promptdeck", "label", "staging", "production"], capture_output=True,
                              text=True, cwd=REPO, timeout=60, check=False,
                              env={**os.environ, "PROMPTDECK_STORE": url})
    assert from_env.stderr.endswith("run .venv/bin/promptdeck promote staging production\n")
    # A prompt that is not there, and no label of that name either: no hint.
    unknown = run(label_command, "nothing", "production", "--store", url)
    assert unknown.exit_code == 1 and unknown.stderr == "promptdeck: no prompt 'nothing' in the store\n"
