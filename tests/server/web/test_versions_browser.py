"""The page's versions panel in a real browser (Debian's chromium driven by Playwright) against a real
``promptdeck serve --http --store … --label production`` process, over a SQLite store written by the real
``promptdeck publish``: history with its labels, diffs, promote and roll back, the editor, and who may write.
The browser fixtures are in tests/support/browser.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.browser import HOSTILE, Pages
from tests.support.http_server import http_server
from tests.support.versions_page import ALICE, BOB, V1, V2, chips, expect_chips, open_greet, promptdeck, versioned

if TYPE_CHECKING:
    pass


def test_history_shows_versions_with_labels_and_the_diff_of_two(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, BOB)
        versions = page.locator("#history .version")
        expect(versions).to_have_count(2)
        assert [v.get_attribute("data-version") for v in versions.all()] == ["2", "1"]  # newest first
        assert chips(page, 2) == ["production"] and chips(page, 1) == []
        assert versions.nth(0).locator(".version-message").inner_text() == "add a tone"
        assert versions.nth(1).locator(".version-message").inner_text() == "first version"
        assert "by carol" in versions.nth(1).inner_text()
        assert page.locator("#versions-path").inner_text() == "greet.md"
        # The newest two are picked to begin with; the diff shows the changed line on both sides.
        expect(page.locator("#compare-from")).to_have_value("1")
        expect(page.locator("#compare-to")).to_have_value("2")
        page.click("#compare-show")
        expect(page.locator("#diff-title")).to_have_text("Version 1 → Version 2")
        source = page.locator("#diff-source table.diff")
        changed = source.locator("tr[data-op='replace']")
        expect(changed).to_have_count(1)
        cells = changed.locator("td").all_inner_texts()
        assert cells[0] == "6" and cells[1].startswith("−") and cells[2] == "Hello {{ who }}!"
        assert cells[3] == "7" and cells[4].startswith("+") and cells[5] == "Hi {{ who }}, in a {{ tone }} way!"
        # Marked by more than colour: the sign column, and <del>/<ins> around the text.
        assert changed.locator("td.code.delete del").inner_text() == "Hello {{ who }}!"
        assert changed.locator("td.code.insert ins").inner_text() == "Hi {{ who }}, in a {{ tone }} way!"
        added = source.locator("tr[data-op='insert']")
        assert added.locator("td.code.insert").all_inner_texts() == ["  - {name: tone}"]
        assert added.locator("td.code.none").count() == 1  # nothing on the old side
        # The argument schema gained "tone": its lines are added on the right.
        schema = page.locator("#diff-arguments table.diff")
        expect(schema.locator("caption")).to_have_text("Argument schema")
        assert schema.locator("tr[data-op='insert'] td.code.insert").all_inner_texts() == [
            '    "tone": {', '      "type": "string"', "    },"]
        # Any two, in either order; the same version twice is said to be identical.
        page.select_option("#compare-from", "2")
        page.select_option("#compare-to", "1")
        page.click("#compare-show")
        expect(page.locator("#diff-title")).to_have_text("Version 2 → Version 1")
        expect(page.locator("#diff-source tr[data-op='replace'] td.code.delete")).to_have_text(
            "Hi {{ who }}, in a {{ tone }} way!")
        page.select_option("#compare-from", "1")
        page.click("#compare-show")
        expect(page.locator("#diff-same")).to_have_text("The two versions are identical.")
        expect(page.locator("#diff-arguments")).to_have_text("The argument schema is the same in both.")


def test_promote_an_older_version_then_roll_back(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE)
        expect(page.locator("#rollback-what")).to_contain_text("position 1, publish 1 by carol")
        expect(page.locator("#history .version[data-version='2'] .promote")).to_have_count(0)  # already there
        page.click("text=Promote version 1 to production")
        expect(page.locator("#versions-done")).to_have_text("production now points at version 1 of greet.")
        expect(page.locator("#history .version[data-version='1'] .chip")).to_have_text(["production"])
        expect_chips(page, 2, [])
        expect(page.locator("#label-state")).to_contain_text("label greet.md@1 by alice")
        expect(page.locator("#rollback-what")).to_contain_text("position 2, publish 2 by carol")
        # The served label followed: the playground now has version 1's form and renders its text.
        expect(page.get_by_label("tone")).to_have_count(0)
        page.get_by_label("who").fill("Ada")
        page.click("#render")
        expect(page.locator(".message .text")).to_have_text("Hello Ada!\nLine two.")
        # Rolling back undoes the label's last move: version 2 is served again.
        page.click("#rollback")
        expect(page.locator("#versions-done")).to_have_text("production rolled back to position 2 (publish 2).")
        expect(page.locator("#history .version[data-version='2'] .chip")).to_have_text(["production"])
        expect_chips(page, 1, [])
        expect(page.get_by_label("tone")).to_be_visible()
        page.get_by_label("who").fill("Ada")
        page.get_by_label("tone").fill("warm")
        page.click("#render")
        expect(page.locator(".message .text")).to_have_text("Hi Ada, in a warm way!\nLine two.")
        history = promptdeck("history", "greet", "--store", served.store)
        assert history.splitlines()[0].startswith("greet.md v2") and history.splitlines()[0].endswith("[production]")


def test_promote_to_another_label_leaves_the_served_one(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        promptdeck("label", "greet@2", "staging", "--store", served.store, "--author", "carol")
        page = open_greet(pages, served, ALICE)
        chooser = page.locator("#label-target")
        assert chooser.locator("option").all_inner_texts() == ["production (served here)", "staging"]
        chooser.select_option("staging")
        expect(page.locator("#label-state")).to_contain_text("The label staging is at position 3: label greet@2 by "
                                                             "carol")
        page.click("text=Promote version 1 to staging")
        expect(page.locator("#versions-done")).to_have_text("staging now points at version 1 of greet.")
        expect(page.locator("#history .version[data-version='1'] .chip")).to_have_text(["staging"])
        expect_chips(page, 2, ["production"])  # the served label did not move
        expect(page.locator("#label-target")).to_have_value("staging")  # the choice stays across the refresh
        page.click("#rollback")
        expect(page.locator("#versions-done")).to_have_text("staging rolled back to position 3 (label greet@2).")
        expect(page.locator("#history .version[data-version='2'] .chip")).to_have_text(["production", "staging"])
        history = promptdeck("history", "greet", "--store", served.store).splitlines()
        assert history[0].endswith("[production, staging]") and not history[1].endswith("]")


BROKEN_LINE = 8
BROKEN = V2.replace("Line two.", "Line two, {{ who }.")  # an unclosed expression on line 8
FIXED = V2.replace("Line two.", "Line two, {{ who }}.")


def test_the_editor_shows_problems_at_their_line_and_saves_a_new_version(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    assert BROKEN.splitlines()[BROKEN_LINE - 1] == "Line two, {{ who }."
    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE)
        page.click("#edit-open")
        text = page.locator("#editor-text")
        expect(text).to_have_value(V2)  # the newest version
        expect(page.locator("#editor-base")).to_contain_text("Starting from version 2")
        expect(text).to_be_focused()
        assert text.evaluate("e => getComputedStyle(e).fontFamily").startswith("ui-monospace")
        assert page.locator("#editor-gutter > div").all_inner_texts()[:8] == [str(n) for n in range(1, 9)]
        # The gutter follows the lines as they are typed (at least 8 rows are shown).
        text.fill("one\ntwo\nthree")
        expect(page.locator("#editor-gutter > div")).to_have_text(["1", "2", "3", "", "", "", "", ""])
        text.press("Enter")
        expect(page.locator("#editor-gutter > div")).to_have_text(["1", "2", "3", "4", "", "", "", ""])
        # Typing stops: the text is checked without asking, and the problem is shown at its line.
        text.fill(BROKEN)
        problem = page.locator("#editor-problems button.problem")
        expect(problem).to_have_count(1)
        expect(problem).to_contain_text(f"Line {BROKEN_LINE}:")
        assert problem.get_attribute("data-line") == str(BROKEN_LINE)
        assert page.locator("#editor-gutter > div.bad").all_inner_texts() == [str(BROKEN_LINE)]
        assert page.locator("#editor-bands > div").nth(BROKEN_LINE - 1).get_attribute("class") == "bad"
        assert text.get_attribute("aria-invalid") == "true"
        # Choosing the problem puts the cursor at the start of that line.
        problem.click()
        expect(text).to_be_focused()
        start = len("\n".join(BROKEN.splitlines()[:BROKEN_LINE - 1])) + 1
        assert text.evaluate("e => [e.selectionStart, e.selectionEnd]") == [start, start]
        # Saving it anyway is refused by the server (422), with the problems shown.
        page.fill("#editor-message", "try it broken")
        page.click("#editor-submit")
        expect(page.locator("#editor-error")).to_have_text("nothing saved: 1 problem in greet.md")
        expect(problem).to_contain_text(f"Line {BROKEN_LINE}:")
        assert "greet.md v3" not in promptdeck("history", "greet", "--store", served.store)
        # Fixed, checked, saved: a new version in the history, and in the store.
        text.fill(FIXED)
        page.click("#editor-check")
        expect(page.locator("#editor-state")).to_have_text("No problems found.")
        expect(problem).to_have_count(0)
        assert page.locator("#editor-gutter > div.bad").count() == 0
        page.fill("#editor-message", "greet by name twice")
        page.click("#editor-submit")
        expect(page.locator("#editor-state")).to_have_text("Saved version 3 of greet.md.")
        newest = page.locator("#history .version").first
        expect(newest).to_have_attribute("data-version", "3")
        expect(newest.locator(".version-message")).to_have_text("greet by name twice")
        expect(newest).to_contain_text("by alice")
        listed = promptdeck("history", "greet", "--store", served.store).splitlines()
        assert listed[0].startswith("greet.md v3") and "alice" in listed[0] and "greet by name twice" in listed[0]
        # The production label stayed on version 2 (no label was asked for).
        expect_chips(page, 2, ["production"])
        expect_chips(page, 3, [])


def test_a_check_answered_after_the_save_does_not_undo_what_the_save_said(pages: Pages, tmp_path: Path) -> None:
    """Typing stops, a check is asked, and the save goes out before its answer: the check's late answer put
    "No problems found." over "Saved version 3". Here the check's answer is held until the save is done."""
    from playwright.sync_api import Route, expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE)
        page.click("#edit-open")
        expect(page.locator("#editor-base")).to_contain_text("Starting from version 2")
        held: list[Route] = []
        page.route("**/api/store/check", lambda route: held.append(route))
        # Set once the page has read a check's answer and run what follows it (the task after its last await).
        page.evaluate("""() => {
            const fetched = window.fetch;
            window.fetch = async (...args) => {
                const answer = await fetched(...args);
                if (!String(args[0]).endsWith("/check")) return answer;
                const text = answer.text.bind(answer);
                answer.text = async () => {
                    const body = await text();
                    setTimeout(() => { window.__checked = true; });
                    return body;
                };
                return answer;
            };
        }""")
        with page.expect_request("**/api/store/check"):
            page.locator("#editor-text").fill(FIXED)  # checked once typing stops
        page.fill("#editor-message", "saved before the check answered")
        page.click("#editor-submit")
        expect(page.locator("#editor-state")).to_have_text("Saved version 3 of greet.md.")
        held[0].continue_()
        page.wait_for_function("window.__checked === true")
        expect(page.locator("#editor-state")).to_have_text("Saved version 3 of greet.md.")
        page.unroute_all(behavior="ignoreErrors")


def test_a_save_can_point_a_label_at_the_new_version(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE)
        page.click("#edit-open")
        page.locator("#editor-text").fill(FIXED)
        page.fill("#editor-message", "for staging")
        page.fill("#editor-label", "staging")
        page.click("#editor-submit")
        expect(page.locator("#editor-state")).to_have_text("Saved version 3 of greet.md; staging points at it.")
        expect(page.locator("#history .version[data-version='3'] .chip")).to_have_text(["staging"])
        expect_chips(page, 2, ["production"])


def test_a_save_over_a_newer_version_is_refused_and_said(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE)
        page.click("#edit-open")
        expect(page.locator("#editor-base")).to_contain_text("Starting from version 2")
        # Meanwhile someone publishes version 3 from the command line.
        (tmp_path / "library" / "greet.md").write_text(V2 + "Line three.\n")
        promptdeck("publish", str(tmp_path / "library"), "--store", served.store, "-m", "elsewhere")
        page.locator("#editor-text").fill(FIXED)
        page.fill("#editor-message", "mine")
        page.click("#editor-submit")
        expect(page.locator("#editor-error")).to_contain_text("greet.md has a newer version 3")
        expect(page.locator("#editor-error")).to_contain_text("nothing was saved")
        history = promptdeck("history", "greet", "--store", served.store).splitlines()
        assert len(history) == 3 and "elsewhere" in history[0]


def test_a_reader_without_the_write_scope_sees_no_write_controls(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, BOB)
        expect(page.locator("#versions-access")).to_contain_text("need the scope store:write")
        expect(page.locator(".promote, #rollback")).to_have_count(0)
        # What a rollback would do is still said.
        expect(page.locator("#rollback-what")).to_contain_text("position 1")
        # Bob may check an edit, but not save it.
        page.click("#edit-open")
        page.locator("#editor-text").fill(BROKEN)
        page.click("#editor-check")
        expect(page.locator("#editor-problems button.problem")).to_contain_text(f"Line {BROKEN_LINE}:")
        expect(page.locator("#editor-save")).to_be_hidden()
        expect(page.locator("#editor-submit")).to_be_hidden()
        # The server refuses him too, whatever the page shows: a hand-made request gets 403 naming the scope.
        refused = page.evaluate("""async () => {
            const answer = await fetch("api/store/label", {method: "POST", headers: {
                "Content-Type": "application/json",
                "Authorization": "Bearer " + sessionStorage.getItem("promptdeck.token")},
                body: JSON.stringify({prompt: "greet", version: 1, label: "production"})});
            return [answer.status, await answer.json()];
        }""")
        assert refused[0] == 403 and refused[1]["scope"] == "store:write"
        assert "store:write" in refused[1]["error"]
        history = promptdeck("history", "greet", "--store", served.store).splitlines()
        assert history[0].endswith("[production]") and history[0].startswith("greet.md v2")


def test_markup_in_versions_stays_text(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    first = f"---\ndescription: Greets\n---\nSafe line.\n{HOSTILE} one\n"
    second = f"---\ndescription: Greets\n---\nSafe line.\n{HOSTILE} two\n"
    with versioned(tmp_path, first, second, message=HOSTILE, author=HOSTILE) as served:
        page = open_greet(pages, served, ALICE)
        expect(page.locator("#history .version").first.locator(".version-message")).to_have_text(HOSTILE)
        expect(page.locator("#history .version").first).to_contain_text(f"by {HOSTILE}")
        expect(page.locator("#label-state")).to_contain_text(f"by {HOSTILE}")
        page.click("#compare-show")
        row = page.locator("#diff-source tr[data-op='replace']")
        expect(row.locator("td.code.delete")).to_have_text(f"{HOSTILE} one")
        expect(row.locator("td.code.insert")).to_have_text(f"{HOSTILE} two")
        page.click("#edit-open")
        expect(page.locator("#editor-text")).to_have_value(second)
        page.locator("#editor-text").fill(second + "{{ oops }\n")
        expect(page.locator("#editor-problems button.problem")).to_have_count(1)
        assert page.locator("main script, main img").count() == 0
        assert page.evaluate("window.__pwned") is None
    # The pages fixture then asserts no console errors: a CSP violation would be one.


def test_a_deleted_version_is_marked_and_cannot_be_promoted(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        library = tmp_path / "library"
        (library / "greet.md").unlink()
        (library / "other.md").write_text("---\ndescription: Keeps the library from being empty\n---\nHi\n")
        promptdeck("publish", str(library), "--store", served.store, "-m", "retire greet", "--delete")
        (library / "greet.md").write_text(V1)
        promptdeck("publish", str(library), "--store", served.store, "-m", "greet is back")
        page = open_greet(pages, served, ALICE)
        expect(page.locator("#history .version")).to_have_count(4)
        deleted = page.locator("#history .version[data-version='3']")
        expect(deleted.locator(".chip")).to_have_text(["deleted"])
        expect(deleted.locator(".version-message")).to_have_text("retire greet")
        expect(deleted.locator(".promote")).to_have_count(0)
        expect(page.locator("#history .version[data-version='4'] .promote")).to_have_count(1)
        expect(page.locator("#compare-from option[value='3']")).to_have_text("Version 3 (deleted)")


def test_keyboard_only_history_then_two_versions_then_the_diff(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = pages.open(f"{served.base}#/p/greet")
        expect(page.locator("#token")).to_be_focused()
        page.keyboard.type(ALICE)
        page.keyboard.press("Enter")
        expect(page.locator("#history .version")).to_have_count(2)
        expect(page.locator("#prompt-title")).to_be_focused()
        reached = []
        for _ in range(40):  # through the form, the panel's buttons and the history, to the version menus
            page.keyboard.press("Tab")
            reached.append(page.evaluate("document.activeElement.id || document.activeElement.textContent"))
            if reached[-1] == "compare-from":
                break
        assert reached[-1] == "compare-from", reached
        assert "Promote version 1 to production" in reached  # the history's own control is on the way
        page.keyboard.press("ArrowUp")  # from version 2
        page.keyboard.press("Tab")
        page.keyboard.press("ArrowDown")  # to version 1
        expect(page.locator("#compare-from")).to_have_value("2")
        expect(page.locator("#compare-to")).to_have_value("1")
        page.keyboard.press("Tab")
        expect(page.locator("#compare-show")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#diff-title")).to_have_text("Version 2 → Version 1")
        expect(page.locator("#diff-title")).to_be_focused()  # the diff is where the reader is taken


def test_versions_fit_a_phone_in_the_dark(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with versioned(tmp_path) as served:
        page = open_greet(pages, served, ALICE, viewport={"width": 360, "height": 740}, is_mobile=True,
                          color_scheme="dark")
        page.click("#compare-show")
        expect(page.locator("#diff-source table.diff")).to_be_visible()
        page.click("#edit-open")
        page.locator("#editor-text").fill(BROKEN)
        expect(page.locator("#editor-problems button.problem")).to_have_count(1)
        expect(page.locator("#usage")).to_be_visible()  # a panel that comes late: measured with it in
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        background = page.locator("#diff-source td.code.insert").first.evaluate(
            "e => getComputedStyle(e).backgroundColor")
        assert background == "rgb(24, 61, 38)"  # the dark scheme's own colour for an added line


def test_a_server_without_a_store_shows_no_versions(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    (tmp_path / "greet.md").write_text(V1)
    with http_server(str(tmp_path), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp") + "#/p/greet")
        page.wait_for_selector("#fields .field")
        page.get_by_label("who").fill("Ada")
        page.wait_for_selector("#versions[data-store='none']", state="attached")
        expect(page.locator("#versions")).to_be_hidden()


def test_a_version_published_from_git_shows_its_commit_branch_and_dirtiness(pages: Pages, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from tests.support.git import git
    from tests.support.store_api import get

    with versioned(tmp_path, from_git=True) as served:
        commit = git(tmp_path / "library", "rev-parse", "HEAD").strip()
        versions = get(served.base.rstrip("/"), "/history", {"Authorization": f"Bearer {BOB}"},
                       prompt="greet").json()["versions"]
        assert [v["git"] for v in versions] == [{"commit": commit, "branch": "main", "dirty": True},
                                                {"commit": commit, "branch": "main", "dirty": False}]
        page = open_greet(pages, served, BOB)
        shown = page.locator("#history .version .git")
        expect(shown).to_have_text([f"from git {commit[:12]} on main, with uncommitted changes",
                                    f"from git {commit[:12]} on main"])
