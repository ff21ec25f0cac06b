"""Parts in the store: a publish that changes a partial or a composed prompt records a new version of every
prompt using it (transitively), and ``diff`` of such a prompt shows which part changed and how, on SQLite
and on a real PostgreSQL cluster, through the real command line (issue 31)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import pd
from tests.support.libraries import composed_library
from tests.support.modern import StdioPeer, initialize, legacy


def test_a_changed_part_versions_its_users_and_diff_shows_it(store_url: str, tmp_path: Path) -> None:  # noqa: F811
    folder = composed_library(tmp_path / "lib")
    (folder / "solo.md").write_text("Stands alone.\n")
    first = pd("publish", str(folder), "--store", store_url, "--label", "production")
    assert first.stdout.startswith("publish 1: 6 files changed")

    # tone.md is included by rules, which review composes: both get a version, solo does not
    (folder / "_partials/tone.md").write_text("Be {{ tone }}; one sentence.\n")
    second = pd("publish", str(folder), "--store", store_url, "-m", "terser")
    assert second.stdout.splitlines() == [
        "publish 2: 3 files changed",
        "  _partials/tone.md",
        "  review.md (its parts changed: _partials/tone.md)",
        "  rules.md (its parts changed: _partials/tone.md)",
    ]
    history = pd("history", "review", "--store", store_url).stdout.splitlines()
    assert history[0].startswith("review.md v2  review  publish 2") and "terser" in history[0]
    assert pd("history", "solo", "--store", store_url).stdout.count("\n") == 1

    diff = pd("diff", "review", "1", "2", "--store", store_url).stdout
    assert diff == ("part _partials/tone.md: version 1 → 2\n"
                    "--- _partials/tone.md@1\n+++ _partials/tone.md@2\n@@ -1 +1 @@\n"
                    "-Be {{ tone }}, and keep it short.\n+Be {{ tone }}; one sentence.\n")

    # a composed prompt's own change: its composer gets a version, and its diff shows the prompt file changed
    (folder / "few-shot.md").write_text((folder / "few-shot.md").read_text().replace("x=1", "y=2"))
    third = pd("publish", str(folder), "--store", store_url)
    assert third.stdout.splitlines() == ["publish 3: 2 files changed", "  few-shot.md",
                                         "  review.md (its parts changed: few-shot.md)"]
    diff = pd("diff", "review", "2", "--store", store_url).stdout
    assert diff.startswith("part few-shot.md: version 1 → 2\n--- few-shot.md@1\n+++ few-shot.md@2\n")
    assert "-Review this {{ language }}: x=1\n+Review this {{ language }}: y=2\n" in diff
    # the rendered prompt's own diff from 1 to 3 names both parts
    whole = pd("diff", "review", "1", "3", "--store", store_url).stdout
    assert "part _partials/tone.md: version 1 → 2\n" in whole and "part few-shot.md: version 1 → 2\n" in whole

    # a part no longer used, and one newly used, show as such
    (folder / "_partials/new.md").write_text("New part.\n")
    (folder / "rules.md").write_text((folder / "rules.md").read_text().replace("_partials/tone.md", "_partials/new.md"))
    pd("publish", str(folder), "--store", store_url)
    diff = pd("diff", "rules", "2", "--store", store_url).stdout
    assert "part _partials/new.md: version used from 1\n--- _partials/new.md@0\n+++ _partials/new.md@1\n" in diff
    assert "part _partials/tone.md: version no longer used after 2\n" in diff

    # unchanged: nothing recorded, as before
    assert pd("publish", str(folder), "--store", store_url).stdout.startswith("nothing changed")


def test_only_prompt_files_changed_still_versions_the_composers(store_url: str, tmp_path: Path) -> None:  # noqa: F811
    """Only prompt files changed: publish checks only them, and loads the folder for the graph only because
    another prompt file names the changed prompt."""
    folder = composed_library(tmp_path / "lib")
    pd("publish", str(folder), "--store", store_url)
    (folder / "rules.md").write_text((folder / "rules.md").read_text().replace("House rules.", "Our rules."))
    done = pd("publish", str(folder), "--store", store_url, "--label", "production")
    assert done.stdout.splitlines() == ["publish 2: 2 files changed; label production points at it",
                                        "  review.md (its parts changed: rules.md)", "  rules.md"]
    with StdioPeer(None, "--store", store_url, "--label", "production") as peer:
        assert "result" in peer.call(initialize(1))
        listed = peer.call(legacy(2, "prompts/list"))["result"]["prompts"]
        review = next(p for p in listed if p["name"] == "review")
        assert review["_meta"]["promptdeck.dev/version"] == 2
        got = peer.call(legacy(3, "prompts/get", {"name": "review", "arguments": {"code": "x"}}))["result"]
        assert got["messages"][0]["content"]["text"].startswith("Our rules.")
