"""The prompt page's parts panel in a real browser (Debian's chromium driven by Playwright) against a real
``promptdeck serve --http`` process with two principals, and ``/api/graph`` it reads: what a prompt uses and
what uses it, cut to what the principal may see (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.browser import Pages, sign_in
from tests.support.graph import ALICE, BOB, endpoint, graph  # noqa: F401 (a fixture)

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]


def test_the_api_answers_with_the_principals_sight(endpoint: str) -> None:  # noqa: F811 (the fixture)
    status, alice = graph(endpoint, "rules", ALICE)
    assert status == 200
    assert alice == {"prompt": "rules", "uses": {"files": ["_partials/tone.md"], "prompts": [], "dynamic": False},
                     "parts": {"files": ["_partials/tone.md"], "prompts": []},
                     "usedBy": ["payroll", "review"], "affects": ["payroll", "review"]}
    status, bob = graph(endpoint, "rules", BOB)
    assert status == 200 and bob["usedBy"] == ["review"] and bob["affects"] == ["review"]
    assert "payroll" not in json.dumps(bob) and "_hr" not in json.dumps(bob)
    # a hidden prompt is answered as an unknown one is
    hidden, unknown = graph(endpoint, "payroll", BOB), graph(endpoint, "nowhere", BOB)
    assert hidden[0] == unknown[0] == 404
    assert hidden[1]["error"] == "no prompt 'payroll'" and unknown[1]["error"] == "no prompt 'nowhere'"
    status, secret = graph(endpoint, "payroll", ALICE)
    assert status == 200 and secret["uses"]["files"] == ["_hr/pay.md"] and secret["uses"]["prompts"] == ["rules"]
    assert graph(endpoint, "rules", "wrong-token-0123456789")[0] == 401
    assert graph(endpoint, "", ALICE)[0] == 400


def test_a_prompts_page_shows_what_it_uses_and_what_uses_it(pages: Pages, endpoint: str, tmp_path: Path) -> None:  # noqa: F811 (the fixture)
    base = endpoint.removesuffix("mcp")
    page = pages.open(f"{base}#/p/review")
    sign_in(page, BOB)
    parts = page.locator("#parts-list li")
    expect(parts).to_have_text(["Composes few-shot, rules", "Includes or reads _partials/lists.j2"])
    page.click("#parts-list a:text('rules')")  # a composed prompt links to its own page
    expect(page.locator("#prompt-name")).to_have_text("rules")
    # waits for the new page's list: the old one also had two items, so a count cannot tell them apart
    expect(parts).to_have_text(["Includes or reads _partials/tone.md", "Used by review"])
    page.locator("#prompt").screenshot(path=str(tmp_path / "parts.png"))  # looked at by eye

    page = pages.open(f"{base}#/p/rules")
    sign_in(page, ALICE)
    expect(page.locator("#parts-list li")).to_have_text(["Includes or reads _partials/tone.md",
                                                         "Used by payroll, review"])
    # a composed prompt shows only who composes it
    page.goto(f"{base}#/p/few-shot")
    expect(page.locator("#parts-list li")).to_have_count(1)
    page.goto(f"{base}#/p/payroll")
    expect(page.locator("#parts-list li")).to_have_text(["Composes rules", "Includes or reads _hr/pay.md"])
    assert pages.problems == [], pages.problems
