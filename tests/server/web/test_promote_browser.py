"""The versions panel's **Promote a label**: choose the labels, confirm, see what moved, and see a refusal as the
server says it; offered only to whoever may move a label. A real browser (Debian's chromium driven by Playwright)
against a real ``promptdeck serve --http --store`` process over a SQLite store written by the real CLI."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import Pages
from tests.support.versions_page import ALICE, BOB, RITA, V1, V2, open_greet, promptdeck, versioned

#: bye.md, which staging holds and production does not
BYE = "---\ndescription: Says goodbye\n---\nGoodbye!\n"


def test_promote_staging_to_production_with_a_confirmation_and_its_result(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path, V2, V1) as served:  # production: greet 2; greet 1 beside it
        promptdeck("label", "greet@1", "staging", "--store", served.store)
        library = tmp_path / "library"
        (library / "bye.md").write_text(BYE)
        (library / "greet.md").write_text(V2.replace("Hi", "Hey"))  # greet 3
        promptdeck("publish", str(library), "--store", served.store, "--label", "staging")
        reader = open_greet(pages, served, BOB)
        expect(reader.locator("#versions-access")).to_be_visible()
        expect(reader.locator("#promote-label")).to_be_hidden()  # a reader is offered no promotion
        page = open_greet(pages, served, ALICE)
        expect(page.locator("#promote-label")).to_be_visible()
        expect(page.locator("#promote-target")).to_have_value("production")  # the served label, by default
        expect(page.locator("#promote-source")).to_have_value("staging")
        # Only the open prompt first: asked, cancelled (nothing sent), asked again and confirmed.
        page.check("#promote-only")
        page.click("#promote-ask")
        expect(page.locator("#promote-question")).to_have_text(
            "Point production's greet at the version staging holds? production's other prompts stay as they are.")
        page.click("#promote-no")
        expect(page.locator("#promote-confirm")).to_be_hidden()
        assert "promote" not in promptdeck("history", "--label", "production", "--store", served.store)
        page.click("#promote-ask")
        page.click("#promote-yes")
        expect(page.locator("#promote-done")).to_have_text(
            "production now holds greet as staging holds it: position 5, 1 file changed.")
        expect(page.locator("#promote-list li")).to_have_text(["greet.md: version 2 → 3"])
        expect(page.locator("#history .version[data-version='3'] .chip")).to_have_text(["production", "staging"])
        # Then all of staging, with a message: bye comes too.
        page.uncheck("#promote-only")
        page.fill("#promote-message", "release 2")
        page.click("#promote-ask")
        expect(page.locator("#promote-question")).to_contain_text("Point production at what staging holds?")
        page.click("#promote-yes")
        expect(page.locator("#promote-list li")).to_have_text(["bye.md: added (version 1)"])
        audit = promptdeck("history", "--label", "production", "--store", served.store)
        assert "alice  position 5 -> 6  promote staging (position 4)  release 2  [bye.md +v1]" in audit
        # Once more: nothing left to move, and it says so.
        page.click("#promote-ask")
        page.click("#promote-yes")
        expect(page.locator("#promote-done")).to_have_text(
            "production already holds what staging holds; nothing moved.")


def test_a_refused_promotion_is_shown_as_the_server_says_it(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    tested = V1.replace("---\nHello", "tests:\n  - description: greets by name\n    vars: {who: Ada}\n    assert:\n"
                                      "      - {type: contains, value: Hello Ada}\n---\nHello")
    with versioned(tmp_path, tested, V2) as served:  # production: greet 2 (no tests); greet 1 passes its test
        library = tmp_path / "library"
        (library / "greet.md").write_text(tested.replace("Hello {{ who }}", "Bye {{ who }}"))  # greet 3 fails
        promptdeck("publish", str(library), "--store", served.store, "--label", "staging", "--skip-tests")
        promptdeck("protect", "production", "--scope", "release", "--require-tests", "--store", served.store)
        page = open_greet(pages, served, ALICE)  # may write, but not move production: offered staging alone
        expect(page.locator("#promote-target option")).to_have_text(["staging"])
        page = open_greet(pages, served, RITA)
        page.click("#promote-ask")
        page.click("#promote-yes")
        expect(page.locator("#promote-error")).to_contain_text("label production requires passing tests")
        expect(page.locator("#promote-list li")).to_contain_text(["greets by name"])
        assert "promote" not in promptdeck("history", "--label", "production", "--store", served.store)
        page.select_option("#promote-source", "production")
        page.select_option("#promote-target", "production")
        page.click("#promote-ask")
        expect(page.locator("#promote-error")).to_have_text(
            "Choose two different labels: a label already holds what it holds.")
        expect(page.locator("#promote-confirm")).to_be_hidden()


def test_the_labels_chosen_stay_chosen_when_the_panel_is_read_again(pages: Pages, tmp_path: Path) -> None:
    """The panel is read again whenever the library changes (a label moved elsewhere, say): the labels chosen
    stay as chosen. Two the same were set back to another source, so "Promote…" then asked about a move the
    user never chose instead of saying the two are the same."""
    from playwright.sync_api import expect

    from tests.support.versions_page import expect_chips

    with versioned(tmp_path, V2, V1) as served:  # production: greet 2
        promptdeck("label", "greet@2", "staging", "--store", served.store)
        page = open_greet(pages, served, RITA)
        expect(page.locator("#promote-source")).to_have_value("staging")
        page.select_option("#promote-source", "production")
        page.select_option("#promote-target", "production")
        promptdeck("label", "greet@1", "production", "--store", served.store, "--author", "carol")
        expect_chips(page, 1, ["production"])  # the move was seen: the panel was read again
        expect(page.locator("#promote-source")).to_have_value("production")
        expect(page.locator("#promote-target")).to_have_value("production")
        page.click("#promote-ask")
        expect(page.locator("#promote-error")).to_have_text(
            "Choose two different labels: a label already holds what it holds.")
        expect(page.locator("#promote-confirm")).to_be_hidden()
