"""How ``promptdeck ui`` signs its page in (issue 28, item 9), with real processes and Debian's chromium.

``ui`` opens the browser through Python's ``webbrowser`` as on a desktop: ``$BROWSER`` names a stand-in
called ``chromium`` (so it is driven as chromium is, in the background), which records its command line
from ``/proc`` (what ``ps`` shows every local user) and exits. The test then plays both the browser, by
opening that address in the real chromium, and another local user, who read it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.browser import Pages, catalog_ready
from tests.support.http_server import free_port, http_server, promptdeck_http, stop
from tests.support.remote_ui import SDK_SERVER, command, library

LIST = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json",
           "mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/list"}
BROWSER = """#!/bin/sh
# The browser's command line, as ps reads it.
tr '\\0' '\\n' < /proc/$$/cmdline > "{record}.part" && mv "{record}.part" "{record}"
"""


@dataclass
class Ui:
    base: str
    #: what the opened browser's command line held (one argument a line)
    argv: list[str]
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def opened(self) -> str:
        return next(argument for argument in self.argv if argument.startswith(self.base))


def listing(base: str, token: str) -> int:
    return httpx.post(f"{base}mcp", json=LIST, headers={**HEADERS, "authorization": f"Bearer {token}"},
                      timeout=30).status_code


def exchange(base: str, code: str, origin: str | None = None, **headers: str) -> httpx.Response:
    """What another local user can send: any header, forged Origin included."""
    sent = {"content-type": "application/json", **headers}
    if origin is not None:
        sent["origin"] = origin
    return httpx.post(f"{base}signin", json={"code": code}, headers=sent, timeout=30)


@pytest.fixture
def ui(tmp_path: Path) -> Iterator[Ui]:
    """``promptdeck ui`` as a person starts it (no token given, a browser found), once its browser opened."""
    folder = tmp_path / "bin"
    folder.mkdir()
    record = tmp_path / "argv"
    browser = folder / "chromium"
    browser.write_text(BROWSER.format(record=record))
    browser.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if key != "PROMPTDECK_UI_TOKEN"}
    env |= {"BROWSER": str(browser), "DISPLAY": ":99"}  # webbrowser looks for graphical browsers with a display
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "promptdeck", "ui", command(str(SDK_SERVER),
                                 str(library(tmp_path / "prompts"))), "--port", str(port)],
                                stdout=subprocess.DEVNULL, stderr=sink, env=env)
    try:
        deadline = time.monotonic() + 30
        while not record.exists():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield Ui(f"http://127.0.0.1:{port}/", record.read_text().splitlines(), proc, log)
    finally:
        stop(proc)


def test_the_browser_command_line_gives_another_user_nothing_to_sign_in_with(ui: Ui, pages: Pages) -> None:
    from playwright.sync_api import expect

    fragment = ui.opened.removeprefix(ui.base)
    seen = fragment.split("=", 1)[1]
    # Another user, who read ps: what the browser was given is no token...
    assert listing(ui.base, seen) == 401, f"the browser's command line holds a token: {fragment}"
    assert not fragment.startswith("#token="), fragment
    # ...and the person's browser, opening it, is signed in with a token it got itself, which never
    # appears in the address.
    page = pages.open(ui.opened)
    catalog_ready(page)
    assert page.evaluate("location.hash") == "#/"
    expect(page).not_to_have_url(re.compile(re.escape(seen)))
    token = page.evaluate("sessionStorage.getItem('promptdeck.token')")
    assert token and token != seen and listing(ui.base, token) == 200
    # The code, used once, is worth nothing again, whatever the other user forges.
    replayed = exchange(ui.base, seen, origin=ui.base.rstrip("/"), **{"sec-fetch-site": "same-origin"})
    assert replayed.status_code == 403 and replayed.json() == {"error": "this sign-in code was already used"}
    # A replay means the code was seen by someone else: the token it gave is revoked, and the log says so.
    assert listing(ui.base, token) == 401
    page.reload()
    expect(page.locator("#login")).to_be_visible()
    assert "sign-in code was used twice" in ui.log.read_text()


def test_a_code_another_user_exchanges_first_signs_nobody_in(ui: Ui, pages: Pages) -> None:
    from playwright.sync_api import expect

    code = ui.opened.removeprefix(ui.base).split("=", 1)[1]
    stolen = exchange(ui.base, code, origin=ui.base.rstrip("/"))
    assert stolen.status_code == 200, stolen.text
    assert listing(ui.base, stolen.json()["token"]) == 200
    # The browser comes second: refused, and the thief's token goes with it.
    page = pages.open(ui.opened)
    expect(page.locator("#login-error")).to_contain_text("already used")
    assert page.evaluate("sessionStorage.getItem('promptdeck.token')") is None
    assert listing(ui.base, stolen.json()["token"]) == 401


def test_only_the_pages_own_json_post_exchanges_a_code(ui: Ui) -> None:
    code = ui.opened.removeprefix(ui.base).split("=", 1)[1]
    own = ui.base.rstrip("/")
    assert exchange(ui.base, code).status_code == 403  # no Origin: not a page's fetch
    assert exchange(ui.base, code, origin=f"http://localhost:{free_port()}").status_code == 403  # another site
    assert exchange(ui.base, code, origin=own, **{"sec-fetch-site": "cross-site"}).status_code == 403
    form = httpx.post(f"{ui.base}signin", content=f"code={code}", timeout=30,
                      headers={"origin": own, "content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415  # what a cross-site form could send
    assert exchange(ui.base, "a" * 43, origin=own).status_code == 403  # a code never made
    # None of those used the code up.
    answer = exchange(ui.base, code, origin=own)
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"


ATTACKER = "attacker-token-0123456789"
VICTIM = "victim-token-0123456789"


def test_a_token_placed_in_the_address_by_another_site_never_signs_the_tab_in(pages: Pages, tmp_path: Path) -> None:
    """Any site can open the page with a fragment of its choosing: a token there (here, one that the server
    knows, the attacker's own) must not sign the victim's tab in, nor replace the token it holds."""
    from playwright.sync_api import expect

    tokens = tmp_path / "tokens"
    tokens.write_text(f"attacker:{ATTACKER}\nvictim:{VICTIM}\n")
    with http_server(str(library(tmp_path / "prompts")), "--token-file", str(tokens)) as endpoint:
        base = endpoint.removesuffix("mcp")
        page = pages.open(f"{base}#token={ATTACKER}")
        expect(page.locator("#login")).to_be_visible()
        assert page.evaluate("sessionStorage.getItem('promptdeck.token')") is None
        assert page.evaluate("location.hash") == "#/"
        expect(page).not_to_have_url(re.compile(ATTACKER))
        # Signed in as themselves, the victim follows a link with the attacker's token: still the victim.
        page.fill("#token", VICTIM)
        page.click("#login button[type=submit]")
        catalog_ready(page)
        # The link followed (only the fragment changes: the same document), then the page loaded from it. A
        # reload inside the evaluate raced it and the next reads: they could read the old document, or fail
        # as its context went away. page.reload returns once the new document has loaded.
        page.evaluate(f"location.href = {base + '#token=' + ATTACKER!r}")
        expect(page).to_have_url(re.compile(ATTACKER))
        page.reload()
        catalog_ready(page)
        assert page.evaluate("sessionStorage.getItem('promptdeck.token')") == VICTIM
        # A code the site made up is refused by this server (serve --http makes none at all).
        page = pages.open(f"{base}#code={'a' * 43}")
        expect(page.locator("#login-error")).to_contain_text("refused")
        assert page.evaluate("sessionStorage.getItem('promptdeck.token')") is None
        expect(page).to_have_url(re.compile(r"#/$"))


def test_without_a_browser_the_terminal_says_how_to_sign_in(tmp_path: Path) -> None:
    """The printed address stays usable where no browser can be opened (over SSH, say): it names the page,
    and the token to type into its form is on this user's terminal, not on any command line."""
    log = tmp_path / "ui.log"
    target = command(str(SDK_SERVER), str(library(tmp_path / "prompts")))
    with promptdeck_http("ui", target, "--no-open", "--port", "{port}", log=log) as endpoint:
        base = endpoint.removesuffix("mcp")
        said = log.read_text()
        found = re.search(rf"open {re.escape(base)} and sign in with the token (\S+)$", said, re.MULTILINE)
        assert found is not None and "#" not in said, said
        assert listing(base, found.group(1)) == 200
    with promptdeck_http("ui", target, "--no-open", "--port", "{port}", log=log,
                         env={"PROMPTDECK_UI_TOKEN": ATTACKER}) as endpoint:
        said = log.read_text()
        assert "sign in with the token in $PROMPTDECK_UI_TOKEN" in said and ATTACKER not in said, said
        assert listing(endpoint.removesuffix("mcp"), ATTACKER) == 200
