"""Screenshots of the web UI for the docs: ``python -m tests.support.screenshots docs/ui``.

Serves the example library with ``promptdeck serve --http`` and photographs, in Debian's chromium driven by
Playwright, the catalog, a filled form and a rendered multi-message prompt (and the catalog in the dark
scheme and at phone width).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

from playwright.sync_api import Page, expect, sync_playwright

from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES

CODE = "def average(values):\n    return sum(values) / len(values)\n"


def take(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    taken: list[Path] = []
    with http_server(str(EXAMPLES), "--no-watch") as endpoint, sync_playwright() as playwright:
        base = endpoint.removesuffix("mcp")
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])

        def page(scheme: Literal["light", "dark"] = "light", width: int = 960, height: int = 720) -> Page:
            context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
            opened = context.new_page()
            opened.goto(base)
            expect(opened.locator("#count")).to_have_text("10 prompts")
            return opened

        def shot(opened: Page, name: str) -> None:
            path = out / name
            opened.screenshot(path=str(path))
            taken.append(path)

        def element(opened: Page, selector: str, name: str) -> None:
            """The element with a margin of the page around it, and no focus ring."""
            opened.evaluate("document.activeElement.blur()")
            # In page coordinates (a full-page clip), not the viewport's.
            box = opened.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); return "
                                                    "{x: r.x + scrollX, y: r.y + scrollY, width: r.width, "
                                                    "height: r.height}; }")
            path = out / name
            opened.screenshot(path=str(path), full_page=True, clip={
                "x": max(0, box["x"] - 12), "y": max(0, box["y"] - 12),
                "width": box["width"] + 24, "height": box["height"] + 24})
            taken.append(path)

        catalog = page()
        catalog.fill("#search", "code")
        expect(catalog.locator("#results .result")).to_have_count(4)
        catalog.locator("#search").blur()
        shot(catalog, "catalog.png")
        dark = page("dark", 420, 760)
        shot(dark, "catalog-dark-phone.png")

        form = page()
        form.click("text=Code review")
        form.get_by_label("Code or diff").fill(CODE)
        form.select_option("#" + str(form.get_by_label("focus").get_attribute("id")), "bugs")
        form.get_by_label("strictness").fill("4")
        form.get_by_label("context").fill("Average of a list of measurements; the list may be empty.")
        element(form, "#prompt", "form.png")
        form.click("#render")
        form.wait_for_selector(".message")
        element(form, "#output", "messages.png")
        browser.close()
    return taken


if __name__ == "__main__":
    for written in take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/ui")):
        print(written)
