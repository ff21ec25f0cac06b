"""A prompt's tests on the page, in a real browser (Debian's chromium driven by Playwright) against a real
``promptdeck serve --http --store … --label production``: the served version's tests and results, the
editor's text tested as it is checked, and a save whose tests fail refused until the author says to save anyway."""

from __future__ import annotations

from pathlib import Path

from tests.support.browser import Pages
from tests.support.versions_page import ALICE, BOB, open_greet, promptdeck, versioned

TESTED = """---
description: Greets someone
arguments:
  - {name: who, required: true}
tests:
  - description: greets by name
    vars: {who: Ada}
    assert:
      - {type: contains, value: Hello Ada}
      - {type: not-contains, value: "<img src=x onerror=alert(1)>"}
  - vars: {}
    error: {code: -32602, message: missing}
---
Hello {{ who }}!
"""


def test_the_served_versions_tests_and_the_editors(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path, TESTED, TESTED.replace("!", "!!")) as served:
        page = open_greet(pages, served, ALICE)
        panel = page.locator("#tests")
        expect(panel.locator(".tests-summary")).to_contain_text("2 of 2 test cases pass")
        cases = panel.locator(".test-case")
        expect(cases).to_have_count(2)
        expect(cases.nth(0).locator(".chip")).to_have_text("pass")
        expect(cases.nth(0)).to_contain_text("greets by name")
        expect(cases.nth(0)).to_contain_text('who="Ada"')
        expect(cases.nth(1)).to_contain_text("expects error -32602 with “missing”")
        expect(page.locator("img")).to_have_count(0)  # an assertion's value is text, never markup

        # The editor tests its text as it is checked: a change that breaks the first case shows it failing.
        page.click("#edit-open")
        text = page.locator("#editor-text")
        text.fill(TESTED.replace("Hello {{ who }}", "Goodbye {{ who }}"))
        page.click("#editor-check")
        results = page.locator("#editor-tests")
        expect(results.locator(".tests-summary")).to_have_text(
            "1 of 2 test cases pass; 1 fails (from front matter)")
        failing = results.locator(".test-case.fail")
        expect(failing.locator(".asserts li.fail")).to_contain_text(
            "expected the text to contain 'Hello Ada'; it was 'Goodbye Ada!'")
        expect(page.locator("#editor-state")).to_have_text("No problems found. 1 of 2 test cases pass; 1 fails.")
        page.screenshot(path=str(tmp_path / "tests-editor.png"), full_page=True)  # looked at while writing this

        # Saving it is refused with the failures; "save anyway" saves it, and its message says so.
        page.fill("#editor-message", "say goodbye")
        page.click("#editor-submit")
        expect(page.locator("#editor-error")).to_have_text("nothing saved: 1 test case of greet.md failed")
        expect(page.locator("#editor-skip")).to_be_visible()
        page.check("#editor-skip-tests")
        page.click("#editor-submit")
        expect(page.locator("#editor-state")).to_have_text("Saved version 3 of greet.md.")
        assert "say goodbye [tests skipped: saved with skip_tests]" in \
            promptdeck("history", "greet", "--store", served.store).splitlines()[0]


def test_a_reader_sees_the_tests_may_not_run_them_and_may_not_save(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path, TESTED, TESTED) as served:
        page = open_greet(pages, served, BOB)
        # A reader sees the cases, but running them needs the write scope (issue 38: a reader's runs held the
        # store's slots), and the page says so rather than show results.
        not_run = "Not run: running tests needs the scope store:write"
        expect(page.locator("#tests .tests-summary")).to_contain_text(not_run)
        expect(page.locator("#tests ol.tests")).to_contain_text("greets by name")
        page.click("#edit-open")
        page.click("#editor-check")
        expect(page.locator("#editor-tests .tests-summary")).to_contain_text(not_run)
        expect(page.locator("#editor-save")).to_be_hidden()
