"""Screenshots of the web UI for the docs: ``python -m tests.support.screenshots docs/ui``.

Serves the example library with ``promptdeck serve --http`` and photographs, in Debian's chromium driven by
Playwright, the catalog, a filled form and a rendered multi-message prompt (and the catalog in the dark
scheme and at phone width). Then publishes the example library twice into a SQLite store (with a change to
``summarize`` in between), serves its label and photographs the versions panel (history and a diff) and the
editor showing a problem at its line; and the editor of a prompt with tests, one of which its text fails.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support.http_server import http_server, promptdeck_http
from tests.support.libraries import EXAMPLES

CODE = "def average(values):\n    return sum(values) / len(values)\n"
TOKEN = "screenshot-token-0123456789"


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
            expect(opened.locator("#count")).to_have_text("11 prompts")
            return opened

        def shot(opened: Page, name: str) -> None:
            path = out / name
            opened.screenshot(path=str(path))
            taken.append(path)

        def element(opened: Page, selector: str, name: str) -> None:
            taken.append(photograph(opened, selector, out / name))

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
        taken.extend(versions(browser, out))
        taken.extend(tests_shown(browser, out))
        browser.close()
    return taken


def photograph(opened: Page, selector: str, path: Path) -> Path:
    """The element with a margin of the page around it, and no focus ring."""
    opened.evaluate("document.activeElement.blur()")
    # In page coordinates (a full-page clip), not the viewport's.
    box = opened.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); return "
                                            "{x: r.x + scrollX, y: r.y + scrollY, width: r.width, "
                                            "height: r.height}; }")
    opened.screenshot(path=str(path), full_page=True, clip={
        "x": max(0, box["x"] - 12), "y": max(0, box["y"] - 12),
        "width": box["width"] + 24, "height": box["height"] + 24})
    return path


def publish(library: Path, store: str, message: str, author: str) -> None:
    subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(library), "--store", store,
                    "--label", "production", "-m", message, "--author", author], check=True,
                   stdout=subprocess.DEVNULL)


@contextmanager
def signed_in(browser: Browser, scratch: Path, store: str, prompt: str) -> Iterator[Page]:
    """``store``'s production label served over HTTP, and a page of ``prompt`` signed in with a token that may
    write (its token file kept in ``scratch``); the page's context is closed afterwards."""
    tokens = scratch / "tokens"
    tokens.write_text(f"alice:{TOKEN} store:write\n")
    with promptdeck_http("serve", "--http", "{host}:{port}", "--store", store, "--label", "production",
                         "--token-file", str(tokens)) as endpoint:
        context = browser.new_context(viewport={"width": 960, "height": 900})
        opened = context.new_page()
        opened.goto(endpoint.removesuffix("mcp") + f"#/p/{prompt}")
        opened.fill("#token", TOKEN)
        opened.press("#token", "Enter")
        try:
            yield opened
        finally:
            context.close()


def versions(browser: Browser, out: Path) -> list[Path]:
    """The versions panel of ``summarize`` served from a store label: its history and a diff, then the editor
    with a problem at its line."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        library = root / "prompts"
        shutil.copytree(EXAMPLES, library)
        store = f"sqlite:///{root / 'prompts.db'}"
        publish(library, store, "The example library", "carol")
        summarize = library / "summarize.md"
        text = summarize.read_text()
        summarize.write_text(text.replace("  - name: bullets\n", "  - name: audience\n"
                                          "    description: Who will read the summary\n"
                                          "  - name: bullets\n")
                             .replace("in at most {{ bullets }} bullet points", "for {{ audience }}, in at most "
                                      "{{ bullets }} bullet points"))
        publish(library, store, "Summaries for a chosen audience", "alice")
        with signed_in(browser, root, store, "summarize") as opened:
            expect(opened.locator("#history .version")).to_have_count(2)
            opened.click("#compare-show")
            expect(opened.locator("#diff-arguments table")).to_be_visible()
            taken = [photograph(opened, "#versions", out / "versions.png")]
            opened.click("#edit-open")
            area = opened.locator("#editor-text")
            expect(area).not_to_have_value("")
            area.fill(area.input_value().replace("{{ bullets }} bullet", "{{ bullets | bulets }} bullet"))
            expect(opened.locator("#editor-problems button.problem")).to_have_count(1)
            opened.fill("#editor-message", "Fewer words")
            taken.append(photograph(opened, "#editor", out / "editor.png"))
    return taken


GREET_TESTED = """---
description: Greets someone
arguments:
  - {name: who, required: true}
tests:
  - description: greets by name
    vars: {who: Ada}
    assert:
      - {type: contains, value: Hello Ada}
      - {type: max-length, value: 40}
  - description: needs a name
    vars: {}
    error: {code: -32602, message: missing}
---
Hello {{ who }}!
"""


def tests_shown(browser: Browser, out: Path) -> list[Path]:
    """A prompt with tests served from a store label: the editor's text failing one of them."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        library = root / "prompts"
        library.mkdir()
        (library / "greet.md").write_text(GREET_TESTED)
        store = f"sqlite:///{root / 'prompts.db'}"
        publish(library, store, "Greet, with tests", "carol")
        with signed_in(browser, root, store, "greet") as opened:
            expect(opened.locator("#tests .test-case")).to_have_count(2)
            opened.click("#edit-open")
            area = opened.locator("#editor-text")
            expect(area).not_to_have_value("")
            area.fill(area.input_value().replace("Hello {{ who }}", "Goodbye {{ who }}"))
            expect(opened.locator("#editor-tests .test-case.fail")).to_have_count(1)
            opened.fill("#editor-message", "Say goodbye")
            taken = [photograph(opened, "#editor", out / "tests.png")]
    return taken


if __name__ == "__main__":
    for written in take(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/ui")):
        print(written)
