"""The "Use it from…" panel in a real browser (Debian's chromium through Playwright, against a real
``promptdeck serve --http``): its Claude Code line is what Claude Code would read back as the form's values,
and no snippet line is cut at the panel's edge. Issue 38, finding 16."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import Pages
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES

if TYPE_CHECKING:
    from playwright.sync_api import Page

LONG = ("The quarterly report says revenue grew while costs in the northern region stayed flat for the third "
        "quarter in a row")


@pytest.fixture(scope="module")
def examples() -> Iterator[str]:
    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        yield endpoint.removesuffix("mcp")


def opened(pages: Pages, base: str, name: str, values: dict[str, str]) -> Page:
    page = pages.open(base + f"#/p/{name}", viewport={"width": 800, "height": 900})
    page.wait_for_selector("#fields .field")
    for label, value in values.items():
        page.get_by_label(label, exact=True).fill(value)
    page.click("#use-it summary")
    page.wait_for_selector("#snippets .snippet")
    return page


def claude_code(page: Page) -> tuple[str, str]:
    block = page.locator("#snippets .snippet").nth(2)
    assert block.locator("h3").inner_text() == "Claude Code"
    return block.locator("pre").inner_text(), block.locator("p").inner_text()


def as_claude_code_reads_it(line: str, order: list[str]) -> dict[str, str]:
    """Claude Code's rule for an MCP prompt's command: the words after it, split at whitespace, quotes kept
    as they are, fill the arguments in order (anthropics/claude-code issues 14210 and 70284)."""
    return dict(zip(order, line.split()[1:], strict=False))


def test_one_word_values_are_given_in_argument_order(pages: Pages, examples: str) -> None:
    page = opened(pages, examples, "summarize", {"bullets": "2", "text": "cats"})  # filled out of order
    line, note = claude_code(page)
    assert line == "/mcp__promptdeck__summarize cats 2"
    assert as_claude_code_reads_it(line, ["text", "bullets"]) == {"text": "cats", "bullets": "2"}
    assert "one word per argument in order" in note


def test_a_value_of_several_words_is_not_split_into_the_wrong_arguments(pages: Pages, examples: str) -> None:
    """It was written unquoted, so Claude Code gave 'The' to text and 'quarterly' to bullets; quoting would not
    help, as Claude Code keeps quotes as they are. The line is the command alone, and the note says why."""
    page = opened(pages, examples, "summarize", {"text": LONG, "bullets": "2"})
    line, note = claude_code(page)
    assert line == "/mcp__promptdeck__summarize"
    assert "does not honour quotes, so text (several words) cannot be typed after it" in note
    cli = page.locator("#snippets .snippet pre").first.inner_text()
    assert f"'text={LONG}'" in cli  # the CLI line carries it, quoted for a shell


def test_an_empty_value_before_a_given_one_is_said_too(pages: Pages, examples: str) -> None:
    """Claude Code takes arguments by position: with the first left empty, the second would land in it."""
    page = opened(pages, examples, "summarize", {"bullets": "2"})
    line, note = claude_code(page)
    assert line == "/mcp__promptdeck__summarize"
    assert "text (empty, before a later one)" in note


def test_long_lines_wrap_inside_the_panel(pages: Pages, examples: str, tmp_path: Path) -> None:
    """Every snippet is whole inside the panel, as a screenshot shows it: wrapped, not cut at its edge."""
    page = opened(pages, examples, "summarize", {"text": LONG, "bullets": "2"})
    panel = page.locator("#use-it")
    panel.screenshot(path=str(tmp_path / "use-it.png"))
    edge = panel.bounding_box()
    assert edge is not None
    blocks = page.locator("#snippets pre")
    assert blocks.count() == 5
    for index in range(blocks.count()):
        block = blocks.nth(index)
        box = block.bounding_box()
        assert box is not None and box["x"] + box["width"] <= edge["x"] + edge["width"]
        scroll, client = block.evaluate("pre => [pre.scrollWidth, pre.clientWidth]")
        assert scroll <= client, (index, block.inner_text()[:80])
    assert (tmp_path / "use-it.png").stat().st_size > 0
