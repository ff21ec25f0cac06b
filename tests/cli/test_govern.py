"""The governance commands (cli/govern.py) on an embedded store: protect and unprotect a label, start, promote
and abort a rollout, and each mistake refused in one line naming it (exit 2 for usage, 1 for the store's)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.govern import protect, rollout, unprotect
from promptdeck.cli.store import publish

pytestmark = pytest.mark.usefixtures("kept_logging")


def run(command: object, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), prog_name="promptdeck")  # type: ignore[arg-type]


@pytest.fixture
def url(tmp_path: Path) -> str:
    """A store whose label production points at greet v1, with a v2 published beside it."""
    folder, store = tmp_path / "lib", str(tmp_path / "s.db")
    folder.mkdir()
    for text, label in (("Hello\n", ["--label", "production"]), ("Hi\n", [])):
        (folder / "greet.md").write_text(text)
        assert run(publish, str(folder), "--store", store, *label).exit_code == 0
    return store


def test_protect_and_unprotect(url: str) -> None:
    first = run(protect, "production", "--store", url, "--scope", "admin:prompts", "--require-tests")
    assert first.stdout == ("label production is protected: moving it through /api/store needs the scope "
                            "admin:prompts; every move of it, from here too, needs the prompt tests to pass\n")
    again = run(protect, "production", "--store", url, "--scope", "other")
    assert again.stdout.endswith("needs the scope other (it needed admin:prompts)\n")
    assert run(unprotect, "production", "--store", url).stdout == \
        "label production is no longer protected (it needed other)\n"
    twice = run(unprotect, "production", "--store", url)
    assert (twice.exit_code, twice.stderr) == (1, "promptdeck: label 'production' is not protected\n")


def test_a_rollout_started_promoted_and_aborted(url: str) -> None:
    started = run(rollout, "production", "greet@2", "--percent", "25", "--store", url)
    assert started.stdout == ("label production: 25% of the renders of greet get version 2, the rest version 1 "
                              "(rollout 1)\n"), started.output
    assert run(rollout, "production", "greet", "--promote", "--store", url).stdout == \
        "label production: greet is at version 2 (rollout 1 promoted)\n"
    run(rollout, "production", "greet@1", "--percent", "12.5", "--store", url)
    assert run(rollout, "production", "greet", "--abort", "--store", url).stdout == \
        "label production: greet is served at version 2 alone (rollout 2 aborted)\n"


@pytest.mark.parametrize(("command", "args", "code", "says"), [
    (protect, ["nolabel", "--scope", "x"], 1, "no label 'nolabel' in the store (labels: production)"),
    (protect, ["production", "--scope", "has space"], 2,
     "scope 'has space' is not valid: 1-128 printable characters without spaces"),
    (protect, ["bad label", "--scope", "x"], 2, "label 'bad label' is not valid"),
    (rollout, ["production", "greet", "--promote", "--abort"], 2, "give --promote or --abort, not both"),
    (rollout, ["production", "greet@2", "--promote"], 2, "--promote takes NAME alone (no @VERSION, no --percent)"),
    (rollout, ["production", "greet"], 2, "rollout takes NAME@VERSION --percent P, or NAME --promote or --abort"),
    (rollout, ["production", "greet@two", "--percent", "5"], 2, "'greet@two': the version after @ is a number"),
    (rollout, ["production", "greet@2", "--percent", "101"], 2,
     "--percent '101': a number from 0 to 100, with at most two decimals"),
    (rollout, ["production", "greet@2", "--percent", "1.005"], 2, "at most two decimals"),
    (rollout, ["production", "greet@9", "--percent", "5"], 1, "9"),
])
def test_mistakes_are_refused_naming_them(url: str, command: object, args: list[str], code: int, says: str) -> None:
    done = run(command, *args, "--store", url)
    assert done.exit_code == code, done.output
    assert done.stderr.startswith("promptdeck: ") and says in done.stderr and done.stderr.count("\n") == 1
