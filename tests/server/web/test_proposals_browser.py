"""The page's open proposals: listed under the prompts with their diff and reviews, approved by a reviewer, and
refused (with the server's words) to the proposal's author; a real browser (Debian's chromium driven by
Playwright) against a real ``promptdeck serve --http --store`` over a store written by the real CLI."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.store.database import Store
from tests.support.browser import Pages, sign_in
from tests.support.versions_page import ALICE, BOB, RITA, V1, V2, expect_chips, open_greet, promptdeck, versioned


def test_open_proposals_are_reviewed_on_the_page(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path, V1, V1.replace("Hello", "Hello there")) as served:
        promptdeck("label", "greet@1", "production", "--store", served.store)
        promptdeck("protect", "production", "--scope", "release", "--require-approvals", "1", "--store",
                   served.store)
        library = tmp_path / "library"  # holds version 2's text: proposed by rita
        promptdeck("publish", str(library), "--store", served.store, "--label", "production", "--propose",
                   "--author", "rita", "-m", "warmer")
        page = pages.open(served.base)
        sign_in(page, RITA)
        item = page.locator("#proposal-list .proposal[data-proposal='1']")
        expect(item).to_contain_text("Proposal 1 for production by rita")
        expect(item.locator(".approvals")).to_have_text("0 of 1 approvals")
        item.locator("button.review").click()
        expect(item.locator("table.diff ins")).to_contain_text(["Hello there {{ who }}!"])
        expect(item.locator(".proposal-tests")).to_contain_text("none of what the merge would serve has tests")
        item.locator("button.approve").click()  # rita wrote it: refused, in the server's words
        expect(item.locator(".error")).to_have_text(
            "rita wrote proposal 1: its authors cannot approve it; another reviewer must")
        reader = pages.open(served.base)
        sign_in(reader, BOB)  # may read greet, may not approve (no write scope)
        expect(reader.locator("#proposal-list .proposal")).to_have_count(1)
        reader.locator("#proposal-list button.review").click()  # may see it, may not run its tests
        expect(reader.locator("#proposal-list .proposal-tests")).to_contain_text(
            "not run: running tests needs the scope store:write")
        writer = pages.open(served.base)
        sign_in(writer, ALICE)  # may write, lacks release, the review scope
        writer.locator("#proposal-list button.review").click()
        writer.locator("#proposal-list .proposal-comment").fill("looks fine")
        writer.locator("#proposal-list button.comment").click()
        # The list is read again after the comment: the new item comes closed.
        expect(writer.locator("#proposal-list .proposal-details")).to_be_hidden()
        writer.locator("#proposal-list button.review").click()
        expect(writer.locator("#proposal-list .proposal-reviews li[data-kind='comment']")).to_contain_text(
            "alice comment: looks fine")
        writer.locator("#proposal-list button.approve").click()
        expect(writer.locator("#proposal-list .error")).to_contain_text("needs the scope release")
    with Store(served.store) as store:  # the refused approvals left nothing behind
        assert [(r.kind, r.principal) for r in store.proposals.reviews(1)] == [("open", "rita"), ("comment", "alice")]


def test_a_save_on_the_page_can_propose_its_version_rather_than_move_the_label(pages: Pages, tmp_path: Path) -> None:
    """The editor's "propose" box: the save records the version and opens a proposal of it for the label, which
    stays where it was until a merge; the proposal is then listed for review."""
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE)
        page.click("#edit-open")
        page.locator("#editor-text").fill(V2.replace("Line two.", "Line two, {{ who }}."))
        page.fill("#editor-message", "name them twice")
        page.fill("#editor-label", "production")
        page.check("#editor-propose")
        page.click("#editor-submit")
        expect(page.locator("#editor-state")).to_have_text(
            "Saved version 3 of greet.md; proposal 1 proposes it for production.")
        # The label did not move. The state line is written before the history is read again: version 3
        # must be in the history first, or its lack of chips says nothing.
        expect_chips(page, 3, [])
        expect_chips(page, 2, ["production"])
        page.reload()
        expect(page.locator("#proposal-list .proposal[data-proposal='1']")).to_contain_text(
            "Proposal 1 for production by alice")
    with Store(served.store) as store:
        assert store.proposals.get(1).files == {"greet.md": 3}
        assert store.reads.position("production").files["greet.md"] == 2  # type: ignore[union-attr]


def test_a_review_being_written_stays_open_when_the_library_changes(pages: Pages, tmp_path: Path) -> None:
    """The list is read again on every change to the library (a label moved by someone else, say): a review
    open there stays open, with the comment typed so far and the focus. It was closed, the comment lost."""
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:  # production: greet 2
        library = tmp_path / "library"
        (library / "greet.md").write_text(V2 + "Line three.\n")
        promptdeck("publish", str(library), "--store", served.store, "--label", "production", "--propose",
                   "--author", "rita", "-m", "one more line")
        page = pages.open(served.base)
        sign_in(page, ALICE)
        item = page.locator("#proposal-list .proposal[data-proposal='1']")
        item.locator("button.review").click()
        comment = item.locator(".proposal-comment")
        comment.fill("half a thought")
        # Meanwhile: another proposal, then production moves (the page hears of that one).
        promptdeck("label", "greet@2", "staging", "--store", served.store)
        (library / "greet.md").write_text(V2 + "Line four.\n")
        promptdeck("publish", str(library), "--store", served.store, "--label", "staging", "--propose", "-m", "four")
        promptdeck("label", "greet@1", "production", "--store", served.store)
        expect(page.locator("#proposal-list .proposal[data-proposal='2']")).to_have_count(1)  # read again
        expect(item.locator(".proposal-details")).to_be_visible()
        expect(comment).to_have_value("half a thought")
        expect(comment).to_be_focused()
        item.locator("button.comment").click()
        expect(item.locator(".proposal-details")).to_be_hidden()  # an action here reads the list afresh
    with Store(served.store) as store:
        assert [(r.kind, r.principal, r.message) for r in store.proposals.reviews(1)][-1] == \
            ("comment", "alice", "half a thought")
