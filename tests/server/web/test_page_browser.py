"""The web catalog and playground in a real browser: Debian's chromium driven by Playwright, against a real
``promptdeck serve --http`` process. The ``browser`` and ``pages`` fixtures are in tests/support/browser.py
(given to every test module by tests/conftest.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from promptdeck.server.app import PromptServer
from tests.support.browser import HOSTILE, Pages, catalog_ready, shown_names, sign_in
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES

if TYPE_CHECKING:
    from playwright.sync_api import Page

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture says so, as a skip (or a failure in CI)
    expect = None  # type: ignore[assignment]


@pytest.fixture(scope="module")
def examples() -> Iterator[str]:
    """The page URL of a server of the example library."""
    with http_server(str(EXAMPLES), "--no-watch") as endpoint:
        yield endpoint.removesuffix("mcp")


def example_catalog() -> list[Any]:
    server = PromptServer()
    server.add_folder(EXAMPLES)
    return list(server.catalog)


# -- the catalog -------------------------------------------------------------------------------------


def test_the_catalog_lists_every_prompt_and_search_narrows_it(pages: Pages, examples: str) -> None:
    page = pages.open(examples)
    catalog_ready(page)
    expected = example_catalog()
    assert sorted(shown_names(page)) == sorted(p.name for p in expected)
    expect(page.locator("#count")).to_have_text(f"{len(expected)} prompts")
    review = page.locator(".result", has=page.locator(".result-name", has_text="code-review"))
    assert review.locator(".result-title").inner_text() == "Code review"
    expect(page.locator("#usage-filters")).to_be_visible()  # each row then says how much it was used
    assert review.locator(".result-meta").inner_text().split() == \
        ["5", "arguments", "Not", "rendered", "in", "30", "days", "code", "review"]
    page.fill("#search", "commit")
    expect(page.locator("#results .result-name")).to_have_text(["git.commit"])
    expect(page.locator("#count")).to_have_text(f"1 of {len(expected)} prompts")
    # Tags, titles and descriptions are searched too, every word must match, and case does not matter.
    for query, names in (("MEETINGS", ["standup.transcribe"]), ("describe image", ["describe-image"]),
                         ("nothing-matches-this", [])):
        page.fill("#search", query)
        expect(page.locator("#results .result-name")).to_have_text(names)


def test_the_tag_filter_shows_the_prompts_with_that_tag(pages: Pages, examples: str) -> None:
    page = pages.open(examples)
    catalog_ready(page)
    expected = example_catalog()
    tags = sorted({tag for prompt in expected for tag in prompt.tags})
    options = page.locator("#tag option").all_inner_texts()
    assert options == ["All tags", *(f"{t} ({sum(t in p.tags for p in expected)})" for t in tags)]
    page.select_option("#tag", "code")
    with_code = sorted(p.name for p in expected if "code" in p.tags)
    expect(page.locator("#results .result-name")).to_have_text(with_code)
    page.fill("#search", "incident")  # search and tag together
    expect(page.locator("#results .result-name")).to_have_text(["project-analysis"])


def test_a_large_library_is_shown_a_capped_list_at_a_time(pages: Pages, tmp_path: Path) -> None:
    from tests.support.libraries import write_prompts

    names = write_prompts(tmp_path / "lib", 1200)
    with http_server(str(tmp_path / "lib"), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp"))
        expect(page.locator("#count")).to_have_text("1200 prompts", timeout=60_000)
        rows = page.locator("#results .result")
        expect(rows).to_have_count(100)
        page.click("#more")
        expect(rows).to_have_count(200)
        expect(rows.nth(100).locator("a")).to_be_focused()  # the first of the rows just shown
        assert rows.nth(100).locator("code").text_content() == sorted(names)[100]
        page.fill("#search", "number 1199")
        expect(page.locator("#results .result-name")).to_have_text([names[1199]])


# -- the playground ----------------------------------------------------------------------------------


def open_prompt(pages: Pages, base: str, name: str, **options: Any) -> Page:
    page = pages.open(f"{base}#/p/{name}", **options)
    page.wait_for_selector("#fields .field")
    return page


def test_the_form_follows_the_typed_arguments(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "code-review")
    assert page.inner_text("#prompt-title") == "Code review"
    code = page.get_by_label("Code or diff")
    assert code.evaluate("e => e.tagName") == "TEXTAREA" and code.get_attribute("aria-required") == "true"
    assert page.locator("label[for]", has_text="(required)").count() == 1
    language = page.get_by_label("language")
    assert language.evaluate("e => e.tagName") == "SELECT" and language.input_value() == "python"
    assert language.locator("option").count() == 14
    strictness = page.get_by_label("strictness")
    assert (strictness.get_attribute("type"), strictness.get_attribute("min"), strictness.get_attribute("max"),
            strictness.input_value()) == ("number", "1", "5", "3")
    switch = open_prompt(pages, examples, "standup.transcribe").get_by_label("timestamps")
    assert switch.get_attribute("type") == "checkbox" and switch.get_attribute("role") == "switch"
    assert not switch.is_checked()


def test_completion_suggests_values_with_the_filled_arguments_as_context(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "standup.transcribe")
    speakers = page.get_by_label("speakers")
    speakers.focus()
    listed = f"#{speakers.get_attribute('list')} option"
    expect(page.locator(listed)).to_have_count(2)
    assert page.eval_on_selector_all(listed, "os => os.map(o => o.value)") == ["Ana, Bo, Chen", "Dmitri, Eve"]
    speakers.type("D")
    expect(page.locator(listed)).to_have_count(1)
    expect(page.locator(listed)).to_have_attribute("value", "Dmitri, Eve")


def test_a_path_argument_is_completed_with_the_librarys_files(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "write-tests")
    source = page.get_by_label("source")
    source.fill("")
    source.type("_material/s")
    listed = f"#{source.get_attribute('list')} option"
    # Each keystroke may ask (the page waits 120 ms between them, a loaded machine types slower): an answer
    # for a shorter prefix can be shown first. Waited for, the answer to the whole of it.
    page.wait_for_function("""listed => {
        const values = [...document.querySelectorAll(listed)].map(o => o.value);
        return values[0] === "_material/service.py" && values.every(v => v.startsWith("_material/s"));
    }""", arg=listed)
    offered = page.eval_on_selector_all(listed, "os => os.map(o => o.value)")
    assert offered and all(value.startswith("_material/s") for value in offered), offered


def test_completion_requests_carry_the_other_arguments(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "summarize")
    sent: list[dict[str, Any]] = []
    page.on("request", lambda request: sent.append(json.loads(request.post_data or "{}"))
            if request.method == "POST" else None)
    page.get_by_label("text", exact=True).fill("A long text")
    bullets = page.get_by_label("bullets")
    bullets.focus()
    expect(page.locator(f"#{bullets.get_attribute('list')} option")).to_have_count(1)
    asked = [m for m in sent if m.get("method") == "completion/complete"][-1]["params"]
    assert asked["argument"] == {"name": "bullets", "value": "5"}
    assert asked["context"] == {"arguments": {"text": "A long text"}}
    assert asked["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_an_invalid_value_shows_the_servers_message_next_to_its_field(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "summarize")
    page.get_by_label("text", exact=True).fill("Some text")
    bullets = page.get_by_label("bullets")
    bullets.fill("11")
    page.click("#render")
    error = page.locator(".field", has=bullets).locator(".field-error")
    expect(error).to_have_text("prompt 'summarize': argument 'bullets' must be at most 10, got 11")
    expect(error).to_be_visible()
    expect(bullets).to_have_attribute("aria-invalid", "true")
    assert error.get_attribute("id") in (bullets.get_attribute("aria-describedby") or "").split()
    expect(bullets).to_be_focused()
    expect(page.locator("#form-error")).to_be_hidden()
    expect(page.locator("#output")).to_be_hidden()
    bullets.fill("3")
    page.click("#render")
    expect(page.locator(".message .text")).to_contain_text("in at most 3 bullet points")
    expect(error).to_be_hidden()
    assert bullets.get_attribute("aria-invalid") is None  # cleared as the render was asked for, before it


def test_a_missing_required_argument_is_shown_at_its_field(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "code-review")
    page.click("#render")
    error = page.locator(".field", has=page.get_by_label("Code or diff")).locator(".field-error")
    expect(error).to_be_visible()
    expect(error).to_have_text("prompt 'code-review' is missing required argument 'code'")


def test_a_multi_message_prompt_shows_each_message_under_its_role(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "code-review", permissions=["clipboard-read", "clipboard-write"])
    page.get_by_label("Code or diff").fill("def add(a, b):\n    return a - b")
    page.select_option("#" + str(page.get_by_label("focus").get_attribute("id")), "security")
    page.click("#render")
    page.wait_for_selector(".message")
    assert page.locator(".message h3").all_inner_texts() == ["1. User", "2. User", "3. User"]
    # Markdown in a message is shown as such: **SECURITY** is bold, the asterisks gone.
    assert "Focus on SECURITY" in page.locator(".message").nth(0).inner_text()
    assert page.locator(".message").nth(0).locator("strong").first.inner_text() == "SECURITY"
    resource = page.locator(".message").nth(1).locator("figure.resource")
    assert resource.locator("figcaption").inner_text() == "untitled:code-under-review text/x-python"
    assert resource.locator("pre").inner_text() == "def add(a, b):\n    return a - b"
    page.click("#copy-json")
    expect(page.locator("#status")).to_have_text("Conversation copied as JSON")
    copied = json.loads(page.evaluate("navigator.clipboard.readText()"))
    assert [m["role"] for m in copied] == ["user"] * 3 and copied[1]["content"]["type"] == "resource"
    page.click("#copy-text")
    expect(page.locator("#status")).to_have_text("Conversation copied")
    text = page.evaluate("navigator.clipboard.readText()")
    assert text.startswith("## user\n\nYou are a senior python engineer") and text.count("## user") == 3
    assert "[resource untitled:code-under-review]\ndef add(a, b):" in text
    page.locator(".message").nth(2).get_by_role("button", name="Copy message 3").click()
    expect(page.locator("#status")).to_have_text("Message 3 copied")
    assert page.evaluate("navigator.clipboard.readText()").startswith("## user\n\nAnswer in this format:")


def test_an_image_prompt_shows_the_image(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "describe-image")
    page.click("#render")
    image = page.locator(".message img")
    image.wait_for()
    assert (image.get_attribute("src") or "").startswith("data:image/png;base64,iVBOR")
    # Decoded by the browser (the CSP allows data: images): it has the file's width (PNG header, IHDR).
    width = int.from_bytes((EXAMPLES / "_material" / "diagram.png").read_bytes()[16:20], "big")
    expect(image).to_have_js_property("naturalWidth", width)
    assert page.locator(".message h3").all_inner_texts() == ["1. User", "2. User"]


def test_an_audio_prompt_shows_a_player(pages: Pages, examples: str) -> None:
    page = open_prompt(pages, examples, "standup.transcribe")
    page.get_by_label("timestamps").check()
    page.click("#render")
    audio = page.locator(".message audio")
    audio.wait_for()
    assert audio.get_attribute("controls") == "" and (audio.get_attribute("src") or "").startswith(
        "data:audio/wav;base64,")
    assert "[mm:ss]" in page.inner_text("#messages")


def test_answers_as_an_event_stream_are_read_too(pages: Pages, examples: str) -> None:
    """A server may answer a POST with SSE (notifications first, then the answer): the page reads both."""
    from playwright.sync_api import Route

    def as_events(route: Route) -> None:
        if json.loads(route.request.post_data or "{}").get("method") == "subscriptions/listen":
            route.continue_()  # a stream that stays open: left as it is
            return
        answer = route.fetch()
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "rendering"}})
        body = f"event: message\ndata: {note}\n\nid: 7\ndata: {answer.text()}\n\n"
        route.fulfill(status=answer.status, body=body, headers={"content-type": "text/event-stream"})

    page = pages.browser.new_context().new_page()
    page.route("**/mcp", as_events)
    page.goto(examples + "#/p/summarize")
    page.wait_for_selector("#fields .field")
    page.get_by_label("bullets").fill("11")
    page.click("#render")  # an error inside a stream is placed like any other
    expect(page.locator(".field-error:visible")).to_have_text(
        "prompt 'summarize': argument 'bullets' must be at most 10, got 11")
    page.get_by_label("bullets").fill("2")
    page.click("#render")
    expect(page.locator(".message .text")).to_contain_text("in at most 2 bullet points")
    page.unroute_all(behavior="ignoreErrors")  # a request still in flight (a completion) must not fail later
    page.context.close()


def test_odd_content_from_a_server_is_shown_safely(pages: Pages, examples: str) -> None:
    """Content a server might send that the page must not trust: a media type that is no image, a blob, an
    unknown type, a link to a data: URL. Each is named as text; nothing becomes an element it should not."""
    from playwright.sync_api import Route

    messages = [
        {"role": "user", "content": {"type": "image", "mimeType": "text/html", "data": "PHNjcmlwdD4="}},
        {"role": "assistant", "content": {"type": "resource", "resource": {
            "uri": "file:///x.bin", "mimeType": "application/octet-stream", "blob": "AAECAw=="}}},
        {"role": "user", "content": {"type": "hologram", "text": "<b>3d</b>"}},
        {"role": "user", "content": {"type": "resource_link", "uri": "data:text/html,<script>1</script>",
                                     "name": "data link"}},
    ]

    def fake_get(route: Route) -> None:
        sent = json.loads(route.request.post_data or "{}")
        if sent.get("method") != "prompts/get":
            route.continue_()
            return
        route.fulfill(status=200, content_type="application/json",
                      body=json.dumps({"jsonrpc": "2.0", "id": sent["id"], "result": {"messages": messages}}))

    page = pages.browser.new_context().new_page()
    page.route("**/mcp", fake_get)
    page.goto(examples + "#/p/describe-image")
    page.wait_for_selector("#fields .field")
    page.click("#render")
    page.wait_for_selector(".message")
    shown = page.locator(".message")
    assert shown.nth(0).inner_text().endswith("This image (text/html) cannot be shown.")
    assert page.locator("#messages img, #messages a, #messages b").count() == 0
    assert shown.nth(1).locator("h3").inner_text() == "2. Assistant"
    assert "Binary content, 4 bytes" in shown.nth(1).inner_text()
    assert "[hologram content]" in shown.nth(2).inner_text() and "<b>3d</b>" in shown.nth(2).inner_text()
    assert shown.nth(3).locator("code").inner_text() == "data:text/html,<script>1</script>"
    page.unroute_all(behavior="ignoreErrors")  # a request still in flight (a completion) must not fail later
    page.context.close()


def test_back_from_a_prompt_returns_to_its_row(pages: Pages, examples: str) -> None:
    page = pages.open(examples)
    catalog_ready(page)
    page.click("text=Explain code")
    page.wait_for_selector("#prompt:not([hidden]) #fields .field")
    page.go_back()
    # the usage is read again as the list comes back, and the rows rebuilt: the row keeps the focus
    expect(page.locator("#results a[href='#/p/explain-code']")).to_be_focused()


# -- hostile prompts ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A library whose prompt carries markup in every text a page shows, and links to unsafe schemes."""
    root = tmp_path_factory.mktemp("hostile")
    quoted = json.dumps(HOSTILE)
    (root / "evil.md").write_text(
        "---\n"
        f"title: {quoted}\n"
        f"description: {quoted}\n"
        f"tags: [{quoted}]\n"
        "arguments:\n"
        f"  - {{name: note, description: {quoted}}}\n"
        "---\n"
        f"{HOSTILE} and {{{{ note }}}}\n\n"
        'user: {resource_link: {uri: "javascript:window.__pwned=3", name: "click me"}}\n\n'
        'user: {resource_link: {uri: "https://example.com/guide", name: guide, title: "The guide"}}\n')
    with http_server(str(root), "--no-watch") as endpoint:
        yield endpoint.removesuffix("mcp")


def test_markup_in_a_prompt_is_shown_as_text_and_never_runs(pages: Pages, hostile: str) -> None:
    page = pages.open(hostile)
    catalog_ready(page)
    assert page.inner_text(".result-title") == HOSTILE
    assert page.inner_text(".result-description") == HOSTILE
    assert page.inner_text(".result .tag") == HOSTILE
    page.click(".result-link")
    page.wait_for_selector("#fields .field")
    page.get_by_label("note").fill(HOSTILE)
    page.click("#render")
    page.wait_for_selector(".message")
    assert page.inner_text("#prompt-description") == HOSTILE
    assert page.inner_text(".message .text") == f"{HOSTILE} and {HOSTILE}"
    assert page.locator("main script, main img, #messages a[href^='javascript']").count() == 0
    unsafe = page.locator(".message").nth(1)
    assert unsafe.locator("a").count() == 0 and unsafe.locator("code").inner_text() == "javascript:window.__pwned=3"
    safe = page.locator(".message").nth(2).locator("a")
    assert (safe.inner_text(), safe.get_attribute("href"), safe.get_attribute("rel")) == (
        "The guide", "https://example.com/guide", "noopener noreferrer")
    assert page.evaluate("window.__pwned") is None


def test_the_csp_blocks_markup_that_reaches_the_page_anyway(pages: Pages, hostile: str) -> None:
    page = pages.open(hostile)
    catalog_ready(page)
    # As if a bug had let prompt text through as HTML: inline handlers and scripts must still not run.
    page.evaluate("""markup => {
        document.body.insertAdjacentHTML('beforeend', markup);
        const script = document.createElement('script');
        script.textContent = 'window.__pwned = 4';
        document.body.append(script);
    }""", HOSTILE)
    expect(page.locator("body > img")).to_have_js_property("complete", True)
    assert page.evaluate("window.__pwned") is None
    # the onerror handler and the inline script, each said on the console (the handler's once it would run)
    blocked = pages.wait_for_problems(page, lambda found: sum("Content Security Policy" in p for p in found) >= 2)
    assert sum("Content Security Policy" in p for p in blocked) >= 2, blocked
    pages.problems.clear()


# -- who may see what --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("guarded")
    (root / "open.md").write_text("---\ndescription: Everyone sees this\n---\nHello\n")
    (root / "payroll.md").write_text("---\ndescription: Salaries\nscopes: [hr]\n---\nSecret\n")
    tokens = root.parent / "tokens"
    tokens.write_text("alice:alice-token-0123456789 hr\nbob:bob-token-0123456789\n")
    with http_server(str(root), "--no-watch", "--token-file", str(tokens)) as endpoint:
        yield endpoint.removesuffix("mcp")


def test_the_page_asks_for_a_token_and_refuses_a_wrong_one(pages: Pages, guarded: str) -> None:
    page = pages.open(guarded)
    page.wait_for_selector("#login:not([hidden])")
    expect(page.locator("#token")).to_be_focused()
    expect(page.locator("#catalog")).to_be_hidden()
    expect(page.locator("#login-error")).to_be_hidden()
    sign_in(page, "not-the-token-0123456789")
    expect(page.locator("#login-error")).to_be_visible()
    expect(page.locator("#login-error")).to_have_text("The token was refused: the bearer token is not valid")
    sign_in(page, "alice-token-0123456789")
    catalog_ready(page)
    assert sorted(shown_names(page)) == ["open", "payroll"]
    # Kept for the tab: a reload does not ask again; "Forget token" does.
    page.reload()
    catalog_ready(page)
    page.click("#forget-token")
    page.wait_for_selector("#login:not([hidden])")
    assert page.evaluate("sessionStorage.length") == 0


def test_a_scoped_prompt_stays_invisible_without_its_scope(pages: Pages, guarded: str) -> None:
    page = pages.open(guarded)
    sign_in(page, "bob-token-0123456789")
    catalog_ready(page)
    assert shown_names(page) == ["open"]
    page.fill("#search", "salaries")
    expect(page.locator("#results .result")).to_have_count(0)
    page.goto(guarded + "#/p/payroll")
    expect(page.locator("#banner")).to_be_visible()
    expect(page.locator("#banner")).to_have_text("No prompt named payroll here (or not one you may see).")
    expect(page.locator("#prompt")).to_be_hidden()


def test_a_token_without_the_required_scope_is_refused_plainly(pages: Pages, tmp_path: Path) -> None:
    from tests.support.issuer import Issuer

    (tmp_path / "hello.md").write_text("---\ndescription: For everyone\n---\nHello!\n")
    issuer = Issuer()
    try:
        with http_server(str(tmp_path), "--no-watch", "--oauth-issuer", issuer.url,
                         "--require-scope", "prompts") as endpoint:
            page = pages.open(endpoint.removesuffix("mcp"))
            page.wait_for_selector("#login:not([hidden])")
            sign_in(page, issuer.token(aud=endpoint, scope="profile"))
            expect(page.locator("#banner")).to_be_visible()
            expect(page.locator("#banner")).to_have_text(re.compile(r"^Refused \(403\): "))
            expect(page.locator("#catalog")).to_be_hidden()
            expect(page.locator("#forget-token")).to_be_visible()
            page.click("#forget-token")
            sign_in(page, issuer.token(aud=endpoint, scope="prompts"))
            expect(page.locator("#results .result-name")).to_have_text(["hello"])
            expect(page.locator("#banner")).to_be_hidden()
    finally:
        issuer.close()


# -- keyboard, small screens, dark scheme ------------------------------------------------------------


def test_keyboard_only_search_then_open_then_back(pages: Pages, examples: str) -> None:
    page = pages.open(examples)
    catalog_ready(page)
    page.keyboard.press("/")
    expect(page.locator("#search")).to_be_focused()
    page.keyboard.type("summ")
    expect(page.locator("#results .result-name")).to_have_text(["summarize"])
    expect(page.locator("#usage-filters")).to_be_visible()
    page.keyboard.press("Tab")  # the tag filter
    page.keyboard.press("Tab")  # the order
    page.keyboard.press("Tab")  # the usage filter
    page.keyboard.press("Tab")
    expect(page.locator("#results .result-link")).to_have_text(["Summarizesummarize"])
    expect(page.locator("#results .result-link")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_selector("#prompt:not([hidden]) #fields .field")
    expect(page.locator("#prompt-title")).to_be_focused()
    page.keyboard.press("Tab")  # through the form in order, then render with Enter on the button
    expect(page.locator("#fields [name=text]")).to_be_focused()
    page.keyboard.type("Keyboard text")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator("#render")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_selector(".message")
    page.keyboard.press("/")  # from a prompt, "/" goes back to searching
    page.wait_for_selector("#catalog:not([hidden])")
    expect(page.locator("#search")).to_be_focused()


def test_readable_at_phone_width(pages: Pages, examples: str) -> None:
    for hash_ in ("", "#/p/code-review"):
        page = pages.open(examples + hash_, viewport={"width": 360, "height": 740}, is_mobile=True)
        page.wait_for_selector(".result" if not hash_ else "#fields .field")
        # measured once what arrives later is in: the rows' usage, the skills; the prompt's usage panel
        if hash_:
            expect(page.locator("#usage")).to_be_visible()
        else:
            expect(page.locator("#usage-filters")).to_be_visible()
            expect(page.locator("#skills-list")).to_have_attribute("data-loaded", "true")
        assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_light_and_dark_schemes(pages: Pages, examples: str) -> None:
    colours = []
    for scheme in ("light", "dark"):
        page = pages.open(examples, color_scheme=scheme)
        catalog_ready(page)
        colours.append(page.evaluate("[getComputedStyle(document.body).backgroundColor, "
                                     "getComputedStyle(document.body).color]"))
    assert colours[0] != colours[1]
    assert colours[0][0] == "rgb(251, 251, 252)" and colours[1][0] == "rgb(20, 22, 27)"


# -- live updates ----------------------------------------------------------------------------------------


def test_the_page_follows_the_library_without_a_reload(pages: Pages, tmp_path: Path) -> None:
    library = tmp_path / "lib"
    library.mkdir()
    (library / "greet.md").write_text("---\ndescription: Greets\narguments: [{name: who}]\n---\nHello {{ who }}.\n")
    (library / "bye.md").write_text("Goodbye.\n")
    with http_server(str(library)) as endpoint:
        page = pages.open(endpoint.removesuffix("mcp"))
        expect(page.locator("#count")).to_have_text("2 prompts")
        expect(page.locator("body")).to_have_attribute("data-following", "yes")
        page.fill("#search", "open")  # a search typed before the change stays typed after it
        expect(page.locator("#count")).to_have_text("0 of 2 prompts")
        (library / "added.md").write_text("---\ndescription: Added while the page was open\n---\nNew.\n")
        expect(page.locator("#count")).to_have_text("1 of 3 prompts")
        expect(page.locator("#search")).to_have_value("open")
        expect(page.locator("#results .result-name")).to_have_text(["added"])
        # The open prompt: its arguments change (the form is built again), then it goes away (said so).
        page.fill("#search", "")
        page.locator("#results a", has_text="greet").click()
        expect(page.locator("#fields label")).to_have_count(1)
        (library / "greet.md").write_text("---\ndescription: Greets\narguments: [{name: who}, {name: how}]\n---\n"
                                          "Hello {{ who }} {{ how }}.\n")
        expect(page.locator("#banner")).to_contain_text("The prompt greet changed")
        expect(page.locator("#fields label")).to_have_count(2)
        (library / "greet.md").unlink()
        expect(page.locator("#banner")).to_contain_text("The prompt greet was removed")


# -- use it from ---------------------------------------------------------------------------------------


def test_use_it_from_shows_commands_that_work_as_shown(pages: Pages, examples: str) -> None:
    """The panel's promptdeck CLI line, taken from the page and run, renders what the page renders."""
    import shlex
    import subprocess
    import sys

    page = pages.open(examples + "#/p/summarize")
    page.wait_for_selector("#fields .field")
    page.get_by_label("text", exact=True).fill("The cat's \"mat\" & $HOME")
    page.get_by_label("bullets").fill("2")
    page.click("#use-it summary")
    blocks = page.locator("#snippets .snippet")
    expect(blocks).to_have_count(5)
    labels = page.locator("#snippets h3").all_text_contents()
    assert labels == ["promptdeck CLI", "Python", "Claude Code", "VS Code", "Cursor"]
    cli = blocks.nth(0).locator("pre").inner_text()
    endpoint = examples + "mcp"
    assert cli.startswith(f".venv/bin/promptdeck get {endpoint} summarize -a ")  # as the docs write it
    words = shlex.split(cli)
    done = subprocess.run([sys.executable, "-m", "promptdeck", *words[1:]], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "The cat's \"mat\" & $HOME" in done.stdout and "at most 2 bullet points" in done.stdout
    python = blocks.nth(1).locator("pre").inner_text()
    compile(python, "snippet.py", "exec")  # valid Python, with the values as string literals
    assert 'client.get_prompt("summarize", text="The cat\'s \\"mat\\" & $HOME", bullets="2")' in python
    # a value of several words cannot be typed after a Claude Code command (tests/server/web/test_useit_browser.py)
    assert blocks.nth(2).locator("pre").inner_text() == "/mcp__promptdeck__summarize"
    assert json.loads(blocks.nth(4).locator("pre").inner_text()) == {"mcpServers": {"promptdeck": {"url": endpoint}}}


def test_markdown_in_messages_is_shown_as_markdown_and_never_as_html(pages: Pages, tmp_path: Path) -> None:
    library = tmp_path / "lib"
    library.mkdir()
    (library / "md.md").write_text(
        "# Plan\n\nDo **this**, then *that*:\n\n1. `one`\n2. two\n\n```sh\necho <b>hi</b>\n```\n\n"
        "[docs](https://example.com/a) [bad](javascript:alert(1)) [rel](/etc/passwd) "
        "![img](https://example.com/x.png) <script>window.__pwned=1</script> <b>bold?</b>\n")
    with http_server(str(library), "--no-watch") as endpoint:
        page = pages.open(endpoint.removesuffix("mcp") + "#/p/md")
        page.wait_for_selector("#render")
        page.click("#render")
        body = page.locator(".message .markdown")
        expect(body.locator("h4")).to_have_text("Plan")  # below the message's own h3
        assert body.locator("strong").inner_text() == "this" and body.locator("em").inner_text() == "that"
        assert body.locator("ol li").all_inner_texts() == ["one", "two"]
        assert body.locator("pre.code").inner_text() == "echo <b>hi</b>\n"
        links = body.locator("a")
        assert links.count() == 1 and links.get_attribute("href") == "https://example.com/a"
        assert links.get_attribute("rel") == "noopener noreferrer"
        text = body.inner_text()
        assert "<script>window.__pwned=1</script>" in text and "<b>bold?</b>" in text
        assert "[image: img https://example.com/x.png]" in text
        assert body.locator("script, img, b, iframe").count() == 0
        assert page.evaluate("window.__pwned") is None
