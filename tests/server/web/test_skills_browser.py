"""The web page's skills in a real browser: listed under the prompts, a skill's page with its front matter,
files and SKILL.md, a file opened in place, nothing a skill holds run as HTML, and no list at all from a
server that serves no skills. Debian's chromium driven by Playwright against ``promptdeck serve --http``."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.browser import Pages, catalog_ready
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]

HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'


def test_the_example_skill_is_listed_and_opens_with_its_files(pages: Pages) -> None:
    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp"))
        catalog_ready(page)
        expect(page.locator("#skills-count")).to_have_text("1 skill")
        skill = page.locator("#skills .result")
        expect(skill).to_contain_text("changelog")
        expect(skill).to_contain_text("2 files")
        skill.locator("a").click()
        expect(page.locator("#skill-title")).to_have_text("changelog")
        expect(page.locator("#skill-uri")).to_have_text("skill://changelog/SKILL.md")
        expect(page.locator("#skill-front")).to_contain_text("Apache-2.0")
        expect(page.locator("#skill-files tr")).to_have_count(2)
        expect(page.locator("#skill-body h4")).to_have_text("Changelog")  # headings sit below the page's own
        assert "promptdeck skill " in (page.locator("#skill-fetch").text_content() or "")  # in a closed <details>
        page.get_by_role("button", name="references/style.md").click()
        expect(page.locator("#skill-file-title")).to_have_text("references/style.md")
        expect(page.locator("#skill-file-body pre")).to_contain_text("Changelog: house style")
        page.go_back()
        catalog_ready(page)


def test_a_hostile_skill_is_shown_as_text(pages: Pages, tmp_path: Path) -> None:
    folder = tmp_path / "lib" / "skills" / "evil"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: evil\ndescription: '{HOSTILE}'\n---\n# Hi\n\n{HOSTILE}\n")
    (folder / "notes.html").write_text(HOSTILE)
    with http_server(str(tmp_path / "lib"), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp") + "#/s/" + "skill%3A%2F%2Fevil%2FSKILL.md")
        expect(page.locator("#skill-title")).to_have_text("evil")
        expect(page.locator("#skill-description")).to_have_text(HOSTILE)
        page.get_by_role("button", name="notes.html").click()
        expect(page.locator("#skill-file-body pre")).to_have_text(HOSTILE)
        expect(page.locator("#skill-body")).to_contain_text("<script>")
        assert page.evaluate("window.__pwned") is None


def test_no_skills_list_without_skills(pages: Pages, tmp_path: Path) -> None:
    library = tmp_path / "lib"
    shutil.copytree(EXAMPLES, library)
    with http_server(str(library), "--no-watch", "--no-skills") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp"))
        catalog_ready(page)
        expect(page.locator("#skills-list")).to_have_attribute("data-loaded", "true")  # skills/list answered
        expect(page.locator("#skills-list")).to_be_hidden()
        page.goto(endpoint.removesuffix("mcp") + "#/s/skill%3A%2F%2Fchangelog%2FSKILL.md")
        expect(page.locator("#banner")).to_contain_text("No skill skill://changelog/SKILL.md here")


def test_with_a_store_a_skill_file_shows_its_versions(pages: Pages, tmp_path: Path) -> None:
    import subprocess
    import sys

    library = tmp_path / "lib"
    shutil.copytree(EXAMPLES, library)
    url = f"sqlite:///{tmp_path}/prompts.db"

    def publish(message: str) -> None:
        subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(library), "--store", url, "--label",
                        "production", "-m", message], check=True, capture_output=True, timeout=120)

    publish("first")
    style = library / "skills" / "changelog" / "references" / "style.md"
    style.write_text(style.read_text() + "\nOne more rule.\n")
    publish("a rule more")
    with http_server("", "--store", url, "--label", "production", "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp") + "#/s/" + "skill%3A%2F%2Fchangelog%2FSKILL.md")
        expect(page.locator("#skill-title")).to_have_text("changelog")
        expect(page.locator("#skill-versions li")).to_have_count(1)
        expect(page.locator("#skill-versions")).to_contain_text("v1")
        page.get_by_role("button", name="references/style.md").click()
        expect(page.locator("#skill-file-versions li")).to_have_count(2)
        expect(page.locator("#skill-file-versions li").first).to_contain_text("v2")
        expect(page.locator("#skill-file-versions li").first).to_contain_text("production")
        expect(page.locator("#skill-file-versions li").first).to_contain_text("a rule more")
        expect(page.locator("#skill-file-body pre")).to_contain_text("One more rule.")
