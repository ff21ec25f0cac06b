"""The versions panel shows a protected label and the open prompt's rollouts, and says why a move of a protected
label is refused: a real browser (Debian's chromium driven by Playwright) against a real ``promptdeck serve
--http --store`` process over a SQLite store written by the real ``promptdeck publish``."""

from __future__ import annotations

from pathlib import Path

from tests.server.web.test_versions_browser import ALICE, V1, chips, open_greet, promptdeck, versioned
from tests.support.browser import Pages

V1_WARMER = V1.replace("Hello", "Hello there")  # version 2: version 1's arguments


def test_the_panel_shows_protection_and_rollouts_and_a_refused_move_says_the_scope(pages: Pages,
                                                                                    tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path, V1, V1_WARMER) as served:
        promptdeck("rollout", "production", "greet@1", "--percent", "25", "--store", served.store, "-m", "canary")
        promptdeck("protect", "production", "--scope", "release", "--store", served.store)
        page = open_greet(pages, served, ALICE)
        expect(page.locator("#label-protected")).to_have_text(
            "The label production is protected: moving it needs the scope release.")
        rollout = page.locator("#label-state .rollout")
        expect(rollout).to_have_count(1)
        expect(rollout).to_contain_text("Rollout 1: 25% of the renders get version 1, the rest version 2 "
                                        "(started by ")
        page.click("text=Promote version 1 to production")
        expect(page.locator("#versions-error")).to_contain_text("label production is protected: moving it needs "
                                                                "the scope release")
        assert chips(page, 2) == ["production"]  # nothing moved
        promptdeck("unprotect", "production", "--store", served.store)
        promptdeck("rollout", "production", "greet", "--abort", "--store", served.store)
        page.reload()
        expect(page.locator("#history .version")).to_have_count(2)
        expect(page.locator("#label-protected")).to_have_count(0)
        expect(page.locator("#label-state .rollout")).to_have_count(0)
