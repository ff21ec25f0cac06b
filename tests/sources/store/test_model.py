"""The store's values and the rules on them (sources/store/model.py): a prompt's listing as publish records it,
which files a publish must parse again, which stored paths may become files, where a skill's files lie, label
names, and the errors the store raises."""

from __future__ import annotations

import hashlib
import json
import logging

import pytest

from promptdeck.prompts.arguments import Argument
from promptdeck.prompts.spec import Prompt
from promptdeck.sources.store.model import (
    Entry,
    Latest,
    StoreConflict,
    StoreMissing,
    TestsFailed,
    first_line,
    in_skill,
    is_label,
    is_safe_path,
    listing_of,
    no_version,
    skill_folders,
    skill_marker,
    skill_of,
    to_check,
    unshadowed,
)
from promptdeck.sources.store.schema import LISTING_FORMAT, LISTING_HEAD


def latest(data: bytes | None, version: int = 1, listed: bool = True) -> Latest:
    return Latest(version, None if data is None else hashlib.sha256(data).hexdigest(), listed, None)


def entry(path: str) -> Entry:
    return Entry(path, 1, None, None, None)


# -- listing_of ----------------------------------------------------------------------------------------------


def test_a_listing_is_the_prompts_entry_in_a_versioned_envelope_the_reads_recognise_by_its_head() -> None:
    prompt = Prompt("review", lambda **_: [], description="Review «code»",
                    arguments=(Argument(name="lang", required=True),), scopes=frozenset({"ops", "hr"}))
    listed = listing_of(prompt)
    assert listed.name == "review" and listed.scopes == "hr ops"  # sorted, so equal sets record equal text
    # The store's SQL finds listings of this format by their first bytes (reads.py, governance.py).
    assert listed.listing.startswith(LISTING_HEAD)
    assert json.loads(listed.listing) == {"v": LISTING_FORMAT, "d": prompt.listing()}


def test_a_prompt_for_everyone_records_no_scopes() -> None:
    assert listing_of(Prompt("open", lambda **_: [])).scopes == ""


# -- TestsFailed, no_version, first_line ---------------------------------------------------------------------


def test_a_failed_gate_names_the_label_and_the_first_five_failures_and_counts_the_rest() -> None:
    failures = [("a", "", [f"a: case {n} failed" for n in range(4)]), ("b", "hr", ["b: case 0 failed",
                                                                                   "b: case 1 failed", "b: x"])]
    refused = TestsFailed("production", failures, "7 cases fail")
    assert isinstance(refused, StoreConflict)
    assert str(refused) == ("label 'production' requires passing tests, and 7 cases fail: a: case 0 failed; "
                            "a: case 1 failed; a: case 2 failed; a: case 3 failed; b: case 0 failed; … and 2 more; "
                            "nothing changed")
    assert (refused.label, refused.failures, refused.summary) == ("production", failures, "7 cases fail")
    few = TestsFailed("prod", [("a", "", ["a: case 0 failed"])], "1 case fails")
    assert str(few).endswith("1 case fails: a: case 0 failed; nothing changed")


def test_a_missing_version_names_the_prompt_and_the_version() -> None:
    missing = no_version("greet", 7)
    assert isinstance(missing, StoreMissing) and str(missing) == "prompt 'greet' has no version 7"
    assert str(no_version("greet", None)) == "prompt 'greet' has no version None"


def test_first_line_of_a_long_driver_message_or_the_type_when_blank() -> None:
    assert first_line(ValueError("  connection refused\n  DETAIL: ...\n")) == "connection refused"
    assert first_line(ValueError(" \n ")) == "ValueError" and first_line(KeyError()) == "KeyError"


# -- is_label ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["production", "v1.2", "A_b-c", "_x", "9", "a" * 64])
def test_label_names_that_are_accepted(name: str) -> None:
    assert is_label(name)


@pytest.mark.parametrize("name", ["", "-x", ".x", "a" * 65, "a b", "a/b", "a\n", "prod\x00", "ä", "a;drop"])
def test_label_names_that_are_refused(name: str) -> None:
    assert not is_label(name)


# -- is_safe_path --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    "a.md", "team/review.md", "docs/notes.txt", "x" * 1024, "skills/_x/y.md", "review.tests.yaml",
    ".claude/commands/x.md", ".claude/commands/x.tests.yaml",  # another tool's prompt, and its tests beside it
    ".agents/skills/pdf/forms.md", ".claude/skills/git/SKILL.md",  # a skill's files in a tool's skill folder
])
def test_paths_a_library_may_hold(path: str) -> None:
    assert is_safe_path(path)


@pytest.mark.parametrize("path", [
    "", "x" * 1025, "/etc/passwd", "a/", "a//b", "a\\b", "a\x00b", ".", "..", "a/.", "a/..", "../a.md",
    "a/../b.md", "a/./b", ".env", "a/.git/config", ".claude/x.txt", ".claude/commands/.x.md",
    ".cursor/rules/x.tests.yaml",  # a tests file beside no prompt file that folder may hold
    ".claude/commands/.tests.yaml", ".agents/skills/pdf/.hidden/x.md", "skills/pdf/.x",
    # a tool's folder or a skill folder is no way round the rules on '..'
    ".claude/commands/../x.md", ".claude/commands/a/../../../etc/passwd.md", ".claude/commands/./x.md",
    ".agents/skills/pdf/../../../x.md", ".claude/skills/git/../../commands/x.md", ".agents/skills/../x/y",
    ".claude/commands/a/../x.tests.yaml", ".github/prompts/../x.prompt.md",
])
def test_paths_that_must_never_become_files(path: str) -> None:
    assert not is_safe_path(path)


@pytest.mark.parametrize("value", [None, 3, b"a.md", ["a.md"]])
def test_a_path_that_is_not_text_is_not_safe(value: object) -> None:
    assert not is_safe_path(value)


# -- skills --------------------------------------------------------------------------------------------------


def test_in_skill_is_below_a_skills_folder_with_nothing_hidden_below_it() -> None:
    assert in_skill("skills/pdf/SKILL.md") and in_skill(".claude/skills/git/scripts/run.sh")
    assert not in_skill("skills/pdf")  # the folder itself is no file of it
    assert not in_skill("skills/pdf/.cache/x") and not in_skill("skills/.pdf/SKILL.md")
    assert not in_skill("team/skills/pdf/SKILL.md") and not in_skill("review.md")


def test_the_skill_marker_is_set_for_paths_in_any_skill_folder() -> None:
    assert skill_marker("skills/pdf/SKILL.md") == 1 and skill_marker(".gemini/skills/x/y") == 1
    assert skill_marker("skillset/a.md") is None and skill_marker("skills") is None
    assert skill_marker("a/skills/x/y") is None


def test_skill_folders_run_from_the_skill_folder_down_to_the_files_folder() -> None:
    assert skill_folders("skills/pdf/forms/fill.md") == ["skills/pdf", "skills/pdf/forms"]
    assert skill_folders(".claude/skills/git/SKILL.md") == [".claude/skills/git"]
    assert skill_folders("skills/pdf") == [] and skill_folders("review.md") == []
    assert skill_folders("skills/pdf/.x/y.md") == []


def test_a_file_belongs_to_the_innermost_skill_that_has_a_skill_md() -> None:
    both = {"skills/pdf/SKILL.md", "skills/pdf/forms/SKILL.md"}
    assert skill_of("skills/pdf/forms/fill.md", both) == "pdf/forms"
    assert skill_of("skills/pdf/forms/fill.md", {"skills/pdf/SKILL.md"}) == "pdf"
    assert skill_of("skills/pdf/intro.md", both) == "pdf"
    assert skill_of(".claude/skills/git/SKILL.md", {".claude/skills/git/SKILL.md"}) == "git"
    assert skill_of("skills/pdf/intro.md", set()) is None  # no SKILL.md: no skill
    assert skill_of("skills/pdf/intro.md", {".claude/skills/pdf/SKILL.md"}) is None  # another folder's
    assert skill_of("review.md", both) is None


# -- to_check ------------------------------------------------------------------------------------------------

GREET, NOTES = b"Hello\n", b"material"


def test_a_publish_of_what_the_store_holds_checks_nothing() -> None:
    files = {"greet.md": GREET, "docs/notes.txt": NOTES}
    assert to_check(files, {"greet.md": latest(GREET), "docs/notes.txt": latest(NOTES, listed=False)}) == set()
    assert to_check({}, {}) == set()


def test_new_and_changed_prompts_and_ones_without_a_listing_are_checked_alone() -> None:
    held = {"greet.md": latest(GREET), "old.md": latest(GREET, listed=False), "docs/notes.txt": latest(NOTES)}
    files = {"greet.md": b"Hi\n", "old.md": GREET, "new.md": GREET, "docs/notes.txt": NOTES}
    assert to_check(files, held) == {"greet.md", "old.md", "new.md"}


@pytest.mark.parametrize("files", [
    {"greet.md": GREET, "docs/notes.txt": b"changed"},  # material a prompt may embed
    {"greet.md": GREET, "docs/notes.txt": NOTES, "docs/new.txt": b"x"},  # new material
    {"greet.md": GREET, "docs/notes.txt": NOTES, "skills/pdf/SKILL.md": b"x"},  # a skill, checked whole
    {"greet.md": GREET},  # a file gone
])
def test_a_change_that_may_touch_any_prompt_checks_everything(files: dict[str, bytes]) -> None:
    assert to_check(files, {"greet.md": latest(GREET), "docs/notes.txt": latest(NOTES)}) is None


def test_a_file_deleted_before_is_not_a_file_gone_and_may_come_back_as_a_prompt() -> None:
    held = {"greet.md": latest(GREET), "gone.md": latest(None, version=2, listed=False)}
    assert to_check({"greet.md": GREET}, held) == set()
    assert to_check({"greet.md": GREET, "gone.md": GREET}, held) == {"gone.md"}


# -- unshadowed ----------------------------------------------------------------------------------------------


def test_files_in_folders_are_kept_when_no_file_takes_a_folders_name() -> None:
    entries = {path: entry(path) for path in ("a.md", "team/b.md", "team/deep/c.md", "teams.md")}
    assert unshadowed(entries, "production") is entries


def test_a_file_below_another_file_is_left_out_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    entries = {path: entry(path) for path in ("team", "team/deep/c.md", "team/b.md", "team.md", "other/x.md")}
    with caplog.at_level(logging.ERROR, "promptdeck.store"):
        kept = unshadowed(entries, "production")
    assert set(kept) == {"team", "team.md", "other/x.md"}
    assert sorted(r.getMessage() for r in caplog.records) == [
        "the stored file 'team/b.md' of label production lies below the file 'team'; left out",
        "the stored file 'team/deep/c.md' of label production lies below the file 'team'; left out"]


def test_the_outermost_file_wins_whatever_the_order() -> None:
    paths = ["a/b/c", "a/b", "a"]
    for order in (paths, paths[::-1]):
        assert set(unshadowed({path: entry(path) for path in order}, "l")) == {"a"}
