"""The versions panel shows a protected label and the open prompt's rollouts, and offers a move of a protected label
only to whoever may make it: a real browser (Debian's chromium driven by Playwright) against a real ``promptdeck
serve --http --store`` process over a SQLite store written by the real ``promptdeck publish``."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.browser import Pages
from tests.support.versions_page import ALICE, RITA, V1, expect_chips, open_greet, promptdeck, versioned

V1_WARMER = V1.replace("Hello", "Hello there")  # version 2: version 1's arguments


def test_the_panel_shows_protection_and_rollouts_and_offers_moves_only_to_who_may_make_them(
        pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path, V1, V1_WARMER) as served:
        promptdeck("rollout", "production", "greet@1", "--percent", "25", "--store", served.store, "-m", "canary",
                   "--author", "release")
        promptdeck("protect", "production", "--scope", "release", "--store", served.store)
        page = open_greet(pages, served, ALICE)  # may write, but does not hold release
        expect(page.locator("#label-protected")).to_have_text(
            "The label production is protected: moving it needs the scope release. You do not hold it, so you "
            "cannot move it here.")
        rollout = page.locator("#label-state .rollout")
        expect(rollout).to_have_count(1)
        # Issue 38, finding 15: the time was shown as "[object Object]".
        expect(rollout).to_have_text(re.compile(r"^Rollout 1: 25% of the renders get version 1, the rest version 2 "
                                                r"\(started by release, [^\[\]]*\d[^\[\]]*\)\.$"))
        expect(page.locator("#rollback-what")).to_be_visible()  # what a rollback would do is still said
        expect(page.locator(".promote, #rollback")).to_have_count(0)  # but no move is offered
        page.click("#edit-open")
        # the editor opens once its text is read: its suggestions are filled in then, not at the click
        expect(page.locator("#editor-base")).to_contain_text("Starting from version 2")
        expect(page.locator("#editor-labels option")).to_have_count(0)  # nor suggested for a save
        releaser = open_greet(pages, served, RITA)  # holds release: offered, and the move is made
        expect(releaser.locator("#label-protected")).to_have_text(
            "The label production is protected: moving it needs the scope release.")
        expect(releaser.locator("#rollback")).to_have_count(1)
        releaser.click("text=Promote version 1 to production")
        expect(releaser.locator("#history .version[data-version='1'] .chip")).to_have_text(["production"])
        expect_chips(releaser, 2, [])
        promptdeck("unprotect", "production", "--store", served.store)
        page.reload()
        expect(page.locator("#history .version")).to_have_count(2)
        expect(page.locator("#label-protected")).to_have_count(0)
        expect(page.locator("#label-state .rollout")).to_have_count(0)  # the move ended the rollout
        expect(page.locator("#history .version[data-version='2'] .promote")).to_have_count(1)  # alice may now
