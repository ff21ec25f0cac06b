"""The README and the pages under docs/: every relative link reaches a file that exists, and every
``#fragment`` a heading of that page, so that moving or renaming a page or a section cannot leave a
dead link behind. The README stays a front door: short, and free of the project's internal references."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text without fenced code blocks or inline code, where brackets are code, not links."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(page: Path) -> set[str]:
    """The fragments GitHub gives the page's headings: lower case, punctuation dropped, spaces made ``-``."""
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose_headings(page.read_text()), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def prose_headings(text: str) -> str:
    """Headings may hold inline code (kept, backticks and all); only fenced blocks are dropped."""
    return re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.S | re.M)


def relative_links(page: Path) -> list[str]:
    return [target for target in LINK.findall(prose(page.read_text()))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto: are not checked here


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    links = relative_links(page)
    for target in links:
        path, _, fragment = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        assert destination.exists(), f"{page.name}: {target} does not exist"
        if fragment:
            assert destination.suffix == ".md", f"{page.name}: {target}: a fragment of a file that is not a page"
            assert fragment in anchors(destination), f"{page.name}: {target}: no such heading"


def test_the_link_check_sees_links() -> None:
    readme = relative_links(REPO / "README.md")
    assert "docs/http.md#a-client-over-http" in readme and "docs/development.md" in readme
    assert "ui/catalog.png" in relative_links(REPO / "docs" / "web.md")  # images too
    assert "in-front-of-any-mcp-server-promptdeck-ui" in anchors(REPO / "docs" / "web.md")


def test_the_readme_is_a_front_door() -> None:
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert not re.search(r"\bissue\b|\bchecklist\b|CHECKLIST", text, re.I)
    for command in ("make serve", "make test"):
        assert f"\n{command} " in text, command  # the two set-up commands, each at the start of a line
