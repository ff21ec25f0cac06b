"""``promptdeck ui TARGET``: the web app's MCP endpoint in front of another MCP server, all real processes.

The remote is the official SDK's server (benchmarks/sdk_server.py) or ``promptdeck serve`` over stdio or
HTTP, in either era; the ui process is asked over HTTP in the 2026-07-28 era, as the page asks it.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.http_server import UI_TOKEN, free_port, http_server, stop, ui_server
from tests.support.modern import DEADLINE, HttpPeer, error_code, get_prompt, keep_editing, request
from tests.support.paths import TESTS
from tests.support.remote_ui import SDK_SERVER, command, library

ODD_SDK_SERVER = TESTS / "support" / "odd_sdk_server.py"


def serve_stdio(folder: Path, *options: str) -> str:
    return command("-m", "promptdeck", "serve", str(folder), *options)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return library(tmp_path / "prompts")


@pytest.fixture
def peer() -> Iterator[list[HttpPeer]]:
    made: list[HttpPeer] = []
    yield made
    for each in made:
        each.close()


def ask(url: str, peers: list[HttpPeer]) -> HttpPeer:
    """A peer of the ui's /mcp, with the page token ``ui_server`` gave it."""
    peers.append(HttpPeer(url))
    peers[-1].client.headers["authorization"] = f"Bearer {UI_TOKEN}"
    return peers[-1]


def names(peer: HttpPeer) -> list[str]:
    listed: list[str] = []
    cursor: str | None = None
    while True:
        answer = peer.call(request(len(listed) + 1, "prompts/list", {} if cursor is None else {"cursor": cursor}))
        listed += [prompt["name"] for prompt in answer["result"]["prompts"]]
        cursor = answer["result"].get("nextCursor")
        if cursor is None:
            return sorted(listed)


def text_of(answer: dict[str, Any]) -> str:
    return "".join(message["content"]["text"] for message in answer["result"]["messages"])


# -- promptdeck as the remote, every way the client reaches it -------------------------------------


@pytest.mark.parametrize("how", ["stdio", "stdio-legacy", "http", "http-legacy"])
def test_the_remote_promptdeck_is_listed_rendered_checked_and_completed(how: str, folder: Path,
                                                                        peer: list[HttpPeer]) -> None:
    era = ["--era", "legacy"] if how.endswith("legacy") else []
    if how.startswith("http"):
        with http_server(str(folder), "--no-watch") as remote, ui_server(remote, *era) as url:
            check_remote_promptdeck(ask(url, peer))
    else:
        with ui_server(serve_stdio(folder, "--no-watch"), *era) as url:
            check_remote_promptdeck(ask(url, peer))


def check_remote_promptdeck(ui: HttpPeer) -> None:
    assert names(ui) == ["farewell", "greet"]
    listed = {p["name"]: p for p in ui.call(request(1, "prompts/list"))["result"]["prompts"]}
    greet = listed["greet"]
    assert greet["title"] == "Greet someone"
    assert [(a["name"], a["required"]) for a in greet["arguments"]] == [("who", True), ("style", False)]
    # The remote's typed schema, for the page's form: an enum is a select.
    assert greet["_meta"]["promptdeck.dev/arguments"]["properties"]["style"]["enum"] == ["warm", "formal"]
    answer = ui.call(get_prompt(2, "greet", {"who": "Ada", "style": "formal"}))
    assert text_of(answer) == "Hello Ada, in a formal way."
    # The remote's own -32602 (only it knows the argument's choices), its message and data unchanged.
    bad = ui.call(get_prompt(3, "greet", {"who": "Ada", "style": "rude"}))
    assert error_code(bad) == -32602, bad
    assert "'style' must be one of warm, formal" in bad["error"]["message"]
    assert bad["error"]["data"] == {"argument": "style"}
    missing = ui.call(get_prompt(4, "greet", {}))
    assert error_code(missing) == -32602 and "'who'" in missing["error"]["message"], missing
    completed = ui.call(request(5, "completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                          "argument": {"name": "style", "value": "f"}}))
    assert completed["result"]["completion"]["values"] == ["formal"]


# -- the official SDK's server as the remote -------------------------------------------------------


def test_the_official_sdk_server_is_listed_and_rendered(folder: Path, peer: list[HttpPeer]) -> None:
    with ui_server(command(str(SDK_SERVER), str(folder))) as url:
        ui = ask(url, peer)
        assert names(ui) == ["farewell", "greet"]
        answer = ui.call(get_prompt(1, "greet", {"who": "Grace", "style": "warm"}))
        assert text_of(answer) == "Hello Grace, in a warm way.\n"  # the SDK keeps the file's last line end
        missing = ui.call(get_prompt(2, "greet", {}))
        assert error_code(missing) == -32602 and "'who'" in missing["error"]["message"], missing


# -- changes and failures --------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_a_file_added_to_the_remote_library_reaches_the_listing(era: str, folder: Path,
                                                                peer: list[HttpPeer]) -> None:
    with ui_server(serve_stdio(folder), "--era", era) as url:
        ui = ask(url, peer)
        assert names(ui) == ["farewell", "greet"]

        def arrived() -> bool:
            give_up = time.monotonic() + 1
            while time.monotonic() < give_up:
                if "added-0" in names(ui):
                    return True
                time.sleep(0.1)
            return False

        keep_editing(folder, arrived)  # a file written before the remote's watcher started goes unseen
        assert text_of(ui.call(get_prompt(9, "added-0"))) == "Added prompt number 0."


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_remote_that_goes_away_is_a_clear_error_until_it_is_back(era: str, folder: Path, tmp_path: Path,
                                                                   peer: list[HttpPeer]) -> None:
    log = tmp_path / "ui.log"
    port = free_port()
    with contextlib.ExitStack() as outlives_the_remote:
        with http_server(str(folder), "--no-watch", port=port) as remote:
            url = outlives_the_remote.enter_context(ui_server(remote, "--era", "modern" if era.startswith("2026") else
                                                              "legacy", log=log))
            ui = ask(url, peer)
            assert text_of(ui.call(get_prompt(1, "farewell"))) == "Goodbye for now."
        # The remote is stopped; the ui is not.
        gone = ui.call(get_prompt(2, "farewell"))
        assert error_code(gone) == -32603, gone
        assert gone["error"]["message"] == f"the server at {remote} is not reachable"
        assert names(ui) == ["farewell", "greet"]  # the last listing is still served
        assert httpx.get(url.removesuffix("mcp") + "healthz", timeout=DEADLINE).status_code == 200
        # The remote comes back where it was, with a prompt more: the ui connects again and lists it.
        (folder / "welcome.md").write_text("Welcome back.\n")
        with http_server(str(folder), "--no-watch", port=port):
            deadline = time.monotonic() + DEADLINE * 3  # the pause between attempts grows to 30 s at most
            while names(ui) != ["farewell", "greet", "welcome"]:
                assert time.monotonic() < deadline, f"the ui did not reconnect: {log.read_text()}"
                time.sleep(0.2)
            assert text_of(ui.call(get_prompt(3, "welcome"))) == "Welcome back."
    logged = log.read_text()
    assert f"the server at {remote} is not reachable" in logged
    assert f"the server at {remote} is back: 3 prompts" in logged


def test_a_target_that_cannot_be_reached_is_one_line_and_exit_1(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "ui", command("-c", "raise SystemExit(3)"),
                           "--no-open", "--timeout", "5"], capture_output=True, text=True, timeout=DEADLINE * 2)
    assert done.returncode == 1, done
    assert done.stderr.startswith("promptdeck: cannot use the server at "), done.stderr


def test_only_a_graphical_browser_is_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    import webbrowser

    from promptdeck.cli.client import _open_browser

    chosen: list[webbrowser.BaseBrowser] = []
    monkeypatch.setattr(webbrowser, "get", lambda: chosen[-1])
    # What webbrowser picks with no display: a browser in this terminal, which would take it over.
    for terminal in (webbrowser.GenericBrowser("lynx"), webbrowser.Elinks("elinks")):
        chosen.append(terminal)
        assert _open_browser("http://127.0.0.1:1/") is False
    opened: list[str] = []

    class Graphical(webbrowser.BackgroundBrowser):  # started in the background, as a desktop's browser is
        def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
            opened.append(url)
            return True

    chosen.append(Graphical("firefox"))
    assert _open_browser("http://127.0.0.1:1/") is True
    assert opened == ["http://127.0.0.1:1/"]

    def none() -> webbrowser.BaseBrowser:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", none)
    assert _open_browser("http://127.0.0.1:1/") is False


@pytest.mark.parametrize("stop_with", [signal.SIGINT, signal.SIGTERM])
def test_ui_ends_on_ctrl_c_or_sigterm_and_stops_the_stdio_server_it_started(stop_with: int, folder: Path) -> None:
    port = free_port()
    ui = subprocess.Popen([sys.executable, "-m", "promptdeck", "ui", serve_stdio(folder, "--no-watch"), "--no-open",
                           "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        give_up = time.monotonic() + DEADLINE
        while True:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            assert ui.poll() is None and time.monotonic() < give_up, "promptdeck ui did not start"
            time.sleep(0.05)
        # Per thread: the stdio server is started by the thread of the ui's remote source.
        children = [pid for task in Path(f"/proc/{ui.pid}/task").iterdir()
                    for pid in (task / "children").read_text().split()]
        assert len(children) == 1, children  # the stdio server of TARGET
        ui.send_signal(stop_with)
        assert ui.wait(DEADLINE) == 0
        assert not Path(f"/proc/{children[0]}").exists(), "the stdio server outlived promptdeck ui"
    finally:
        if ui.poll() is None:
            stop(ui)
        assert ui.stderr is not None
        ui.stderr.close()


def test_what_a_remote_gets_wrong_stays_its_own(tmp_path: Path, peer: list[HttpPeer]) -> None:
    log = tmp_path / "ui.log"
    with ui_server(command(str(ODD_SDK_SERVER)), log=log) as url:
        ui = ask(url, peer)
        assert names(ui) == ["asks", "broken", "fine", "garbled", "search"]  # "bad name" cannot be served here
        broken = ui.call(get_prompt(1, "broken"))
        assert error_code(broken) == -32603, broken
        assert broken["error"]["message"].startswith(f"the server at {command(str(ODD_SDK_SERVER))} answered "
                                                     "with error "), broken
        garbled = ui.call(get_prompt(2, "garbled"))  # an image whose data is not base64: refused as it is decoded
        assert error_code(garbled) == -32603, garbled
        assert "answered outside the protocol" in garbled["error"]["message"], garbled
        assert "Invalid base64 encoded string - at `$.messages[0].content.data`" in garbled["error"]["message"]
        asks = ui.call(get_prompt(3, "asks"))
        assert error_code(asks) == -32603, asks
        assert asks["error"]["message"].endswith("answered outside the protocol: prompts/get 'asks': the server "
                                                 "still wants input after 8 rounds"), asks
        assert text_of(ui.call(get_prompt(4, "fine"))) == "All is well."
        # The remote's suggestions are its own choice (here by substring): passed on, not filtered again.
        topic = {"ref": {"type": "ref/prompt", "name": "search"}, "argument": {"name": "topic", "value": "learn"}}
        suggested = ui.call(request(5, "completion/complete", topic))
        assert suggested["result"]["completion"] == {"values": ["Machine learning", "learning rate"], "total": 7,
                                                     "hasMore": True}, suggested
        refused = ui.call(request(6, "completion/complete", {**topic, "argument": {"name": "topic", "value": "?"}}))
        assert refused["error"] == {"code": -32602, "message": "topic: type a word first",
                                    "data": {"argument": "topic"}}, refused
    logged = log.read_text()
    assert "lists a prompt named 'bad name', which promptdeck cannot serve" in logged
    assert "prompts/get 'garbled': the server at" in logged and "Invalid base64 encoded string" in logged


def test_the_ui_asks_for_its_own_token(tmp_path: Path) -> None:
    """127.0.0.1 is every local user's: the ui's /mcp answers only with the token of this run."""
    with ui_server(command(str(SDK_SERVER), str(library(tmp_path / "prompts")))) as url:
        message = request(1, "prompts/list")
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                   "mcp-protocol-version": "2026-07-28", "mcp-method": "prompts/list"}
        assert httpx.post(url, json=message, headers=headers, timeout=DEADLINE).status_code == 401
        wrong = {**headers, "authorization": "Bearer not-the-token-0123456789"}
        assert httpx.post(url, json=message, headers=wrong, timeout=DEADLINE).status_code == 401
        right = {**headers, "authorization": f"Bearer {UI_TOKEN}"}
        assert httpx.post(url, json=message, headers=right, timeout=DEADLINE).status_code == 200
