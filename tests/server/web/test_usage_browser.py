"""The page's usage in a real browser (Debian's chromium driven by Playwright) against a real ``promptdeck serve
--http``, over a folder (counts in memory) and over a SQLite store (counts its writer wrote), after renders made
over real HTTP by several clients: a prompt's usage panel (its totals by version and by client, a chart of its
renders over time, the "since" choice), the catalog sorted by use and filtered to the prompts not rendered in N
days, a principal shown nothing of a prompt it may not see, and a client whose name is markup shown as text
(issue 41). The browser fixtures are in tests/support/browser.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.browser import Pages, catalog_ready, shown_names, sign_in
from tests.support.http_server import http_server
from tests.support.store_api import ALICE, BOB, CAROL, make_store, post, serving
from tests.support.usage import (
    ALICE_AUTH,
    ALICE_TOKEN,
    BOB_AUTH,
    BOB_TOKEN,
    folder_server,
    render_as,
    totals,
    wait_for_usage,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]

#: A client whose name is markup that runs script if a page ever puts it into its HTML
HOSTILE_CLIENT = '<img src=x onerror="window.__pwned=1">'
READER_TOKEN, HR_TOKEN = "reader-token-0123456789", "hr-token-0123456789"


def catalog(pages: Pages, base: str, token: str) -> Page:
    page = pages.open(base + "/")
    sign_in(page, token)
    catalog_ready(page)
    expect(page.locator("#usage-filters")).to_be_visible()  # the usage was read
    return page


def table(page: Page, caption: str) -> list[list[str]]:
    rows = page.locator(f"#usage-body table:has(caption:text-is('{caption}')) tbody tr")
    return [row.locator("td").all_inner_texts() for row in rows.all()]


def test_a_folder_servers_usage_panel_and_catalog(pages: Pages, tmp_path: Path) -> None:
    with folder_server(tmp_path) as base:
        for _ in range(3):
            render_as(base, BOB_AUTH, "greet", "billing", {"who": "Ann"})
        render_as(base, ALICE_AUTH, "greet", "support", {"who": "Bo"})
        render_as(base, BOB_AUTH, "greet", HOSTILE_CLIENT, {"who": "Cy"})
        for _ in range(6):
            render_as(base, ALICE_AUTH, "payroll", "hr-app")

        page = catalog(pages, base, ALICE_TOKEN)
        assert shown_names(page) == ["greet", "payroll", "quiet"]  # as listed
        results = page.locator("#results .result")
        expect(results.nth(0).locator(".used")).to_have_text("5 renders in 30 days")
        expect(results.nth(2).locator(".chip.idle")).to_have_text("Not rendered in 30 days")
        page.select_option("#sort", "use")  # most rendered first, the never rendered last
        expect(page.locator("#results .result-name")).to_have_text(["payroll", "greet", "quiet"])
        page.select_option("#idle", "7")
        expect(page.locator("#results .result-name")).to_have_text(["quiet"])
        expect(page.locator("#count")).to_have_text("1 of 3 prompts")
        page.select_option("#idle", "")
        expect(page.locator("#results .result-name")).to_have_text(["payroll", "greet", "quiet"])
        page.locator("#catalog").screenshot(path=str(tmp_path / "catalog.png"))  # looked at by eye

        page.click("#results a:has-text('greet')")
        expect(page.locator("#usage-summary")).to_contain_text("5 renders in the last 7 days; last rendered")
        assert table(page, "By version") == [["Unversioned (a folder's file)", "—", "5"]]
        assert table(page, "By client") == [["billing", "3"], ["support", "1"], [HOSTILE_CLIENT, "1"]] or \
            table(page, "By client") == [["billing", "3"], [HOSTILE_CLIENT, "1"], ["support", "1"]]
        assert page.evaluate("window.__pwned") is None  # the name shown as text, never run
        assert page.locator("#usage-body img").count() == 0
        bars = page.locator("#usage-body svg.usage-bars .bar")
        expect(bars).to_have_count(7)  # a bar a day
        assert "5 renders" in (bars.nth(6).locator("title").text_content() or "")  # today's
        page.select_option("#usage-since", "24h")  # a bar an hour
        expect(bars).to_have_count(24)
        assert "5 renders" in (bars.nth(23).locator("title").text_content() or "")
        expect(page.locator("#usage-summary")).to_contain_text("5 renders in the last 24 hours")
        page.locator("#usage-since").focus()  # the choice is a plain select: the keyboard moves it
        page.keyboard.press("End")
        expect(bars).to_have_count(30)
        page.mouse.move(0, 0)  # no bar under the pointer, highlighted
        page.locator("#usage").screenshot(path=str(tmp_path / "usage.png"))  # looked at by eye

        # A page render counts as the page's own client, and the panel reads it again
        page.fill("#fields [name=who]", "Di")
        page.click("#render")
        expect(page.locator("#usage-summary")).to_contain_text("6 renders in the last 30 days")
        assert ["promptdeck-web", "1"] in table(page, "By client")

        # bob may not see payroll: not in his catalog, its page not opened, its usage nowhere
        page = catalog(pages, base, BOB_TOKEN)
        assert shown_names(page) == ["greet", "quiet"]
        page.select_option("#sort", "use")
        expect(page.locator("#results .result-name")).to_have_text(["greet", "quiet"])
        page.goto(f"{base}/#/p/payroll")
        expect(page.locator("#banner")).to_contain_text("No prompt named payroll")
        assert page.locator("#usage").is_hidden() and page.locator("#prompt").is_hidden()
        assert "payroll" not in page.locator("#catalog").inner_text()
        assert pages.problems == [], pages.problems


def version_of(answer: dict[str, Any]) -> int:
    version: int = answer["result"]["_meta"]["promptdeck.dev/version"]
    return version


def test_a_store_servers_usage_panel_and_catalog(pages: Pages, tmp_path: Path) -> None:
    with serving(tmp_path, make_store(tmp_path)) as (base, _):
        for client in ("billing", "billing", HOSTILE_CLIENT):
            assert version_of(render_as(base, BOB, "greet", client, {"who": "Ann"})) == 1
        # production moves to greet's version 2: renders until the server serves it count against either
        assert post(base, "/label", ALICE, {"prompt": "greet", "version": 2, "label": "production"}).status_code == 200
        by_version, deadline = {1: 3, 2: 0}, time.monotonic() + 60
        while by_version[2] < 2 and time.monotonic() < deadline:
            by_version[version_of(render_as(base, BOB, "greet", "billing", {"who": "Bo"}))] += 1
        assert by_version[2] == 2, by_version
        greet = by_version[1] + by_version[2]
        for _ in range(greet + 1):  # the most rendered
            render_as(base, CAROL, "note", "notes-app")
        used = {"greet": greet, "note": greet + 1}
        shown = wait_for_usage(base, CAROL, lambda s: totals(s) == used, route="/api/usage")
        assert totals(shown) == used

        page = catalog(pages, base, HR_TOKEN)
        assert shown_names(page) == ["greet", "note", "salaries"]
        page.select_option("#sort", "use")
        expect(page.locator("#results .result-name")).to_have_text(["note", "greet", "salaries"])
        page.select_option("#idle", "30")  # never rendered: salaries
        expect(page.locator("#results .result-name")).to_have_text(["salaries"])

        page.goto(f"{base}/#/p/greet")
        expect(page.locator("#usage-summary")).to_contain_text(f"{greet} renders in the last 7 days")
        assert sorted(table(page, "By version")) == [["Version 1", "production", str(by_version[1])],
                                                     ["Version 2", "production", "2"]]
        assert table(page, "By client") == [["billing", str(greet - 1)], [HOSTILE_CLIENT, "1"]]
        # today's bar stacks both versions, each in its colour, named in the legend
        today = page.locator("#usage-body svg.usage-bars .bar").nth(6)
        assert today.locator("rect.series-0").count() == today.locator("rect.series-1").count() == 1
        expect(page.locator("#usage-body .usage-legend li")).to_have_text(["Version 2", "Version 1"])
        assert page.evaluate("window.__pwned") is None
        page.locator("#usage").screenshot(path=str(tmp_path / "store-usage.png"))  # looked at by eye

        # bob holds no hr: salaries is not his to see, nor its usage
        page = catalog(pages, base, READER_TOKEN)
        page.select_option("#idle", "30")
        expect(page.locator("#count")).to_have_text("0 of 2 prompts")
        page.select_option("#idle", "")
        page.select_option("#sort", "use")
        expect(page.locator("#results .result-name")).to_have_text(["note", "greet"])
        assert "salaries" not in page.locator("main").inner_text()
        assert pages.problems == [], pages.problems


def test_rows_shown_stay_when_the_usage_is_read_again(pages: Pages, tmp_path: Path) -> None:
    """Back from a prompt the usage is read again; its answer, arriving late, once put the list back to its first
    page, so the row the user came back to (and the focus on it) was gone."""
    from tests.support.libraries import write_prompts

    names = sorted(write_prompts(tmp_path / "lib", 300))
    with http_server(str(tmp_path / "lib"), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp"))
        expect(page.locator("#count")).to_have_text("300 prompts", timeout=60_000)
        expect(page.locator("#usage-filters")).to_be_visible()  # the first usage answer is in
        rows = page.locator("#results .result")
        page.click("#more")
        expect(rows).to_have_count(200)
        rows.nth(150).locator("a").click()
        expect(page.locator("#prompt-title")).to_be_visible()
        page.evaluate("document.querySelector('#results .result').dataset.before = 'yes'")
        page.go_back()
        # The rows are built again once the usage read on coming back is in.
        expect(page.locator("#results .result[data-before]")).to_have_count(0)
        expect(rows).to_have_count(200)
        expect(rows.nth(150).locator("a")).to_be_focused()
        assert rows.nth(150).locator("code").text_content() == names[150]
