"""The page's routes in a real browser against a real ``promptdeck serve --http``: where the user went last wins,
even over a prompt still being looked for in a catalog whose pages have not all arrived."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.browser import Pages
from tests.support.http_server import http_server
from tests.support.libraries import write_prompts

if TYPE_CHECKING:
    from playwright.sync_api import Route

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]


def test_leaving_a_prompt_still_being_looked_for_keeps_the_user_where_they_went(pages: Pages, tmp_path: Path) -> None:
    names = sorted(write_prompts(tmp_path / "lib", 300))
    with http_server(str(tmp_path / "lib"), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp"))
        expect(page.locator("#count")).to_have_text("300 prompts")
        held: list[Route] = []
        flowing = [False]

        def later_pages(route: Route) -> None:
            # The listing's second and later pages wait until the test lets them through.
            if not flowing[0] and '"cursor"' in (route.request.post_data or ""):
                held.append(route)
            else:
                route.continue_()

        page.route("**/mcp", later_pages)
        page.reload()
        expect(page.locator("#count")).to_contain_text("(loading…)")
        page.evaluate(f"location.hash = '#/p/{names[-1]}'")  # in a page of the listing not read yet
        page.evaluate("location.hash = ''")  # the user goes back to the catalog before it is found
        expect(page.locator("#catalog")).to_be_visible()
        flowing[0] = True
        for route in held:
            route.continue_()
        expect(page.locator("#count")).to_have_text("300 prompts")
        # The prompt found at last is not opened over the catalog the user went to.
        expect(page.locator("#prompt")).to_be_hidden()
        expect(page.locator("#catalog")).to_be_visible()
