"""The versions panel as its browser tests reach it: greet.md published twice into a SQLite store with the real
``promptdeck publish``, served with three principals by a real ``promptdeck serve --http``, and opened in a page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.browser import Pages, sign_in
from tests.support.cli import pd
from tests.support.git import repository
from tests.support.http_server import http_server

if TYPE_CHECKING:
    from playwright.sync_api import Page

ALICE = "secret-a-0123456789"  # holds store:write
BOB = "secret-b-0123456789"  # reads only
RITA = "secret-r-0123456789"  # holds store:write and release (a protected label's scope in the governance test)
V1 = "---\ndescription: Greets someone\narguments:\n  - {name: who}\n---\nHello {{ who }}!\nLine two.\n"
V2 = ("---\ndescription: Greets someone\narguments:\n  - {name: who}\n  - {name: tone}\n---\n"
      "Hi {{ who }}, in a {{ tone }} way!\nLine two.\n")


def promptdeck(*arguments: str) -> str:
    """The real CLI, as a user runs it; its output (a failure shows its stderr)."""
    return pd(*arguments).stdout


@dataclass
class Served:
    base: str  # the page's URL
    store: str  # the store's URL, for the CLI


@contextmanager
def versioned(root: Path, first: str = V1, second: str = V2, message: str = "add a tone",
              author: str = "carol", from_git: bool = False) -> Iterator[Served]:
    """greet.md published twice into a fresh SQLite store, label production on the second; served with
    tokens for alice (store:write), bob (none) and rita (store:write release). ``from_git``: the library is a
    git repository, its first version committed on ``main``, its second published uncommitted."""
    library = root / "library"
    library.mkdir()
    store = f"sqlite:///{root / 'prompts.db'}"
    for text, why in ((first, "first version"), (second, message)):
        (library / "greet.md").write_text(text)
        if from_git and why == "first version":
            repository(library, {})
        promptdeck("publish", str(library), "--store", store, "--label", "production", "-m", why, "--author", author)
    tokens = root / "tokens"
    tokens.write_text(f"alice:{ALICE} store:write\nbob:{BOB}\nrita:{RITA} store:write release\n")
    with http_server("", "--store", store, "--label", "production", "--token-file", str(tokens)) as endpoint:
        yield Served(endpoint.removesuffix("mcp"), store)


def open_greet(pages: Pages, served: Served, token: str, **options: Any) -> Page:
    from playwright.sync_api import expect

    page = pages.open(f"{served.base}#/p/greet", **options)
    sign_in(page, token)
    expect(page.locator("#history .version")).not_to_have_count(0)
    return page


def chips(page: Page, version: int) -> list[str]:
    return page.locator(f"#history .version[data-version='{version}'] .chip").all_inner_texts()


def expect_chips(page: Page, version: int, labels: list[str]) -> None:
    """Waits until version ``version`` of the history shows exactly ``labels`` (none: ``[]``). The history is
    read again after every write and every change to the library, so a list read at once may be the old one."""
    from playwright.sync_api import expect

    expect(page.locator(f"#history .version[data-version='{version}']")).to_have_count(1)
    expect(page.locator(f"#history .version[data-version='{version}'] .chip")).to_have_text(labels)
