"""A git work tree and a store's label kept in step (cli/sync.py, docs/store.md#git): the scenarios of issue 40
on both databases, with real git repositories. A web edit then a publish from git is refused naming the
prompt; a second, small library published to the same label is refused, its deletions printed; a pull then
``git diff`` shows exactly the store's change. A refused publish changes nothing: no version, no move, no
event."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.store import diff, history, publish
from promptdeck.cli.sync import pull
from promptdeck.sources.store import webhooks
from promptdeck.sources.store.database import Store
from tests.support.git import git, prompt, repository

pytestmark = pytest.mark.usefixtures("kept_logging")

LIBRARY = {f"{name}.md": prompt(name, f"Hello from {name}.") for name in ("ask", "brief", "cite", "draft")}
SECRET = "whsec_" + "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="


def run(command: object, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), prog_name="promptdeck")  # type: ignore[arg-type]


def state(url: str) -> tuple[object, ...]:
    """Everything a refused publish must leave as it was: versions, positions, bases, events."""
    with Store(url) as opened:
        return tuple(opened.db.rows(f"SELECT count(*) FROM {table}")[0][0]
                     for table in ("files", "publishes", "positions", "label_bases", "events"))


@pytest.fixture
def published(tmp_path: Path, store_url: str) -> tuple[Path, str]:
    """A git repository of four prompts published to production, a webhook listening; (its folder, the URL)."""
    folder = repository(tmp_path / "repo", LIBRARY)
    with Store(store_url, create=True) as opened:
        webhooks.add(opened.db, "https://hooks.example/in", SECRET, [], scopes=[], allow=[], timeout=5, author="x")
    first = run(publish, str(folder), "--store", store_url, "--label", "production", "--skip-tests")
    assert first.exit_code == 0, first.output
    assert (folder / ".promptdeck-base").read_text().endswith("\nproduction 1\n")
    return folder, store_url


def test_a_publish_from_git_records_its_commit_branch_and_dirtiness(published: tuple[Path, str]) -> None:
    folder, url = published
    commit = git(folder, "rev-parse", "HEAD").strip()
    (folder / "ask.md").write_text(prompt("ask", "Changed, not committed."))
    assert run(publish, str(folder), "--store", url, "--skip-tests").exit_code == 0
    lines = run(history, "ask", "--store", url).stdout.splitlines()
    assert f"git {commit[:12]} main, dirty" in lines[0] and f"git {commit[:12]} main" in lines[1], lines
    assert "dirty" not in lines[1]
    with Store(url) as opened:
        (payload,) = opened.db.rows("SELECT payload FROM events WHERE kind = 'publish' ORDER BY id DESC LIMIT 1")[0]
    assert json.loads(payload)["git"] == {"commit": commit, "branch": "main", "dirty": True}


def test_a_web_edit_then_a_publish_from_git_is_refused_naming_the_prompt(published: tuple[Path, str]) -> None:
    folder, url = published
    with Store(url) as opened:  # the web editor's save, with the label
        opened.publish_file("ask.md", prompt("ask", "Edited on the web.").encode(), None, author="web",
                            message="web", label="production")
    (folder / "ask.md").write_text(prompt("ask", "Edited in git."))
    (folder / "brief.md").write_text(prompt("brief", "Also edited in git."))
    git(folder, "commit", "-q", "-am", "edits")
    before = state(url)
    refused = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert refused.exit_code == 3 and refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert "label 'production' moved since your base position 1 (now 2); changed on both sides: ask.md; " \
        "nothing published" in line and "brief.md" not in line and "diff --store URL --label production" in line
    assert state(url) == before  # nothing recorded, nothing moved, no event
    shown = run(diff, "--store", url, "--label", "production", str(folder))
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("=== ask.md: changed on both sides ===\n--- ask.md@base (position 1)\n"
                                   "+++ ask.md@store (position 2)\n")
    assert "+Edited on the web.\n" in shown.stdout and "+++ ask.md@folder\n" in shown.stdout
    assert "+Edited in git.\n" in shown.stdout and "brief" not in shown.stdout
    forced = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests", "--force")
    assert forced.exit_code == 0 and "label production points at it" in forced.stdout, forced.output


def test_the_store_change_a_folder_would_undo_is_refused_and_one_it_has_is_not(published: tuple[Path, str]) -> None:
    folder, url = published
    with Store(url) as opened:
        opened.publish_file("cite.md", prompt("cite", "Web.").encode(), None, author="web", message="",
                            label="production")
    refused = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert refused.exit_code == 3 and "changed in the store only (the publish would undo it): cite.md" \
        in refused.stderr, refused.output
    (folder / "cite.md").write_text(prompt("cite", "Web."))  # the folder has the store's change: no conflict
    agreed = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert agreed.exit_code == 0, agreed.output
    assert (folder / ".promptdeck-base").read_text().endswith("\nproduction 2\n")


def test_the_base_file_is_checked_and_base_given_wins(published: tuple[Path, str]) -> None:
    folder, url = published
    (folder / ".promptdeck-base").write_text("# ours\nproduction one\n")
    bad = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert bad.exit_code == 1 and f"{folder}/.promptdeck-base:2: expected 'LABEL POSITION'" in bad.stderr
    (folder / ".promptdeck-base").write_text("production 1\nproduction 2\n")
    twice = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert twice.exit_code == 1 and ".promptdeck-base:2: label 'production' is given twice" in twice.stderr
    (folder / ".promptdeck-base").unlink()
    (folder / ".promptdeck-base").symlink_to(folder / "ask.md")
    linked = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert linked.exit_code == 1 and ".promptdeck-base: cannot be read" in linked.stderr
    (folder / ".promptdeck-base").unlink()
    with Store(url) as opened:
        opened.publish_file("ask.md", prompt("ask", "Web.").encode(), None, author="web", message="",
                            label="production")
    (folder / "ask.md").write_text(prompt("ask", "Git."))
    # no base file: the store's base for the label (position 1) is the base
    assert run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests").exit_code == 3
    wrong = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests", "--base", "99")
    assert wrong.exit_code == 1 and "position 99 is not one of label 'production'" in wrong.stderr
    given = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests", "--base", "2")
    assert given.exit_code == 0, given.output


def test_a_second_small_library_is_refused_and_its_deletions_printed(published: tuple[Path, str],
                                                                      tmp_path: Path) -> None:
    _, url = published
    other = repository(tmp_path / "other", {"ask.md": LIBRARY["ask.md"]})
    before = state(url)
    refused = run(publish, str(other), "--store", url, "--label", "production", "--skip-tests")
    assert refused.exit_code == 3, refused.output
    assert refused.stdout.splitlines() == ["  would delete: brief.md", "  would delete: cite.md",
                                           "  would delete: draft.md"]
    assert re.search(r"would delete 3 of the 4 prompts of label 'production' \(brief.md, cite.md, draft.md\).*"
                     r"--delete", refused.stderr)
    assert state(url) == before
    done = run(publish, str(other), "--store", url, "--label", "production", "--skip-tests", "--delete")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == ["publish 2: 3 files changed; label production points at it (3 deleted)",
                                        "  deleted: brief.md", "  deleted: cite.md", "  deleted: draft.md"]


def test_deleting_half_or_fewer_is_published_each_deletion_printed(published: tuple[Path, str]) -> None:
    folder, url = published
    (folder / "draft.md").unlink()
    (folder / "cite.md").unlink()
    done = run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests")
    assert done.exit_code == 0 and done.stdout.splitlines()[1:] == ["  deleted: cite.md", "  deleted: draft.md"]


def test_pull_then_git_diff_shows_exactly_the_stores_change(published: tuple[Path, str], tmp_path: Path) -> None:
    folder, url = published
    (folder / "scratch.txt").write_text("mine, never published")
    with Store(url) as opened:  # elsewhere: a web edit, then a publish that adds one prompt and deletes another
        opened.publish_file("ask.md", prompt("ask", "Edited on the web.").encode(), None, author="web", message="",
                            label="production")
    elsewhere = tmp_path / "elsewhere"
    assert run(pull, str(elsewhere), "--store", url, "--label", "production").exit_code == 0
    (elsewhere / "cite.md").unlink()
    (elsewhere / "essay.md").write_text(prompt("essay", "New."))
    assert run(publish, str(elsewhere), "--store", url, "--label", "production", "--skip-tests").exit_code == 0
    pulled = run(pull, str(folder), "--store", url, "--label", "production")
    assert pulled.exit_code == 0, pulled.output
    assert pulled.stdout.splitlines() == [
        f"pulled label production (position 3) into {folder}: 2 written (1 new), 1 deleted, 2 unchanged",
        "  changed: ask.md", "  added: essay.md", "  deleted: cite.md"]
    assert git(folder, "diff", "--name-status").splitlines() == ["M\task.md", "D\tcite.md"]
    assert "+Edited on the web." in git(folder, "diff", "ask.md")
    assert git(folder, "status", "--porcelain").splitlines() == [" M ask.md", " D cite.md", "?? essay.md",
                                                                  "?? scratch.txt"]
    assert (folder / "scratch.txt").read_text() == "mine, never published"
    assert (folder / ".promptdeck-base").read_text().endswith("\nproduction 3\n")
    again = run(pull, str(folder), "--store", url, "--label", "production")
    assert "0 written (0 new), 0 deleted, 4 unchanged" in again.stdout
    # and the folder publishes cleanly now: its base is the label's position
    assert run(publish, str(folder), "--store", url, "--label", "production", "--skip-tests").exit_code == 0


def test_pull_never_overwrites_unpublished_work(published: tuple[Path, str]) -> None:
    folder, url = published
    with Store(url) as opened:
        opened.publish_file("ask.md", prompt("ask", "Web.").encode(), None, author="web", message="",
                            label="production")
    (folder / "ask.md").write_text(prompt("ask", "Not published anywhere."))
    refused = run(pull, str(folder), "--store", url, "--label", "production")
    assert refused.exit_code == 1 and "1 file in" in refused.stderr and "ask.md" in refused.stderr
    assert (folder / "ask.md").read_text() == prompt("ask", "Not published anywhere.")
    assert (folder / ".promptdeck-base").read_text().endswith("\nproduction 1\n")
    forced = run(pull, str(folder), "--store", url, "--label", "production", "--force")
    assert forced.exit_code == 0 and (folder / "ask.md").read_text() == prompt("ask", "Web.")


def test_a_pull_of_an_unknown_label_makes_no_folder(published: tuple[Path, str], tmp_path: Path) -> None:
    _, url = published
    refused = run(pull, str(tmp_path / "new"), "--store", url, "--label", "nightly")
    assert refused.exit_code == 1 and "no label 'nightly' in the store (labels: production)" in refused.stderr
    assert not (tmp_path / "new").exists()
