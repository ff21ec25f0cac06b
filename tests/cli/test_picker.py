"""`promptdeck pick TARGET`: driven as a real command in a real terminal (tmux), against real servers.

Each test starts `promptdeck pick` in a detached tmux session on its own socket, types into it with
`tmux send-keys` and reads the screen with `tmux capture-pane` until what it expects shows up (with
generous deadlines: nothing here asserts how long anything takes). The pure parts (ranking, the
clipboard) are tested directly at the end.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdeck.extras import install_command
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES
from tests.support.paths import TESTS
from tests.support.terminal import DEADLINE, Terminal

SERVE = [sys.executable, "-m", "promptdeck", "serve"]

CODE_REVIEW = """\
---
title: Code review
description: Review code for bugs, style and speed
arguments:
  - {name: language, title: Language, description: The language of the code, enum: [python, perl, php, rust, go],
     required: true}
  - {name: focus, description: What to look at first, enum: [security, style, speed]}
  - {name: code, description: The code to review, required: true}
---
Review this {{ language }} code{% if focus is defined %}, looking at {{ focus }} first{% endif %}:

{{ code }}
"""

EXPLAIN_CODE = """\
---
title: Explain code
description: Explain a piece of code
arguments:
  - {name: code, required: true}
---
Explain {{ code }}
"""

SUMMARIZE = """\
---
title: Summarize text
---
Summarize the text above.
"""

#: A Python server whose completer for `host` answers from the `region` already chosen (the context).
CONTEXT_SERVER = """\
from typing import Literal

from promptdeck import PromptServer

server = PromptServer("context-server")


@server.prompt(title="Deploy")
def deploy(region: Literal["eu", "us"], host: str) -> str:
    \"\"\"Deploy a host.\"\"\"
    return f"Deploy {host} in {region}."


@server.completer("deploy", "host")
def hosts(value, context):
    return [h for h in (f"{context.get('region', 'nowhere')}-web-{i}" for i in (1, 2)) if h.startswith(value)]


server.serve()
"""

#: A minimal legacy stdio server that logs every request; with --no-complete it has no completion.
RAW_SERVER = """\
import json
import sys

log = open(sys.argv[1], "a")
completes = "--no-complete" not in sys.argv
languages = ["python", "perl", "php", "rust", "go"]
for line in sys.stdin:
    message = json.loads(line)
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        continue
    log.write(json.dumps({"method": method, "params": params}) + "\\n")
    log.flush()
    answer = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        capabilities = {"prompts": {}, **({"completions": {}} if completes else {})}
        answer["result"] = {"protocolVersion": "2025-06-18", "capabilities": capabilities,
                            "serverInfo": {"name": "raw-server", "version": "1"}}
    elif method == "prompts/list":
        answer["result"] = {"prompts": [{"name": "lang-note", "title": "Language note",
                                         "arguments": [{"name": "language", "required": True}]}]}
    elif method == "prompts/get":
        language = params.get("arguments", {}).get("language", "?")
        text = {"type": "text", "text": f"Notes on {language}."}
        answer["result"] = {"messages": [{"role": "user", "content": text}]}
    elif method == "completion/complete" and completes:
        values = [v for v in languages if v.startswith(params["argument"]["value"])]
        answer["result"] = {"completion": {"values": values, "total": len(values), "hasMore": False}}
    else:
        answer["error"] = {"code": -32601, "message": f"method not found: {method}"}
    sys.stdout.write(json.dumps(answer) + "\\n")
    sys.stdout.flush()
"""


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        if os.environ.get("CI"):
            pytest.fail("tmux is not installed in CI (.ci/run installs it with apt)")
        pytest.skip("tmux is not installed")
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "prompts"
    root.mkdir()
    (root / "code-review.md").write_text(CODE_REVIEW)
    (root / "explain-code.md").write_text(EXPLAIN_CODE)
    (root / "summarize.md").write_text(SUMMARIZE)
    return root


def stdio(folder: Path) -> str:
    return shlex.join([*SERVE, str(folder)])


def raw_server(tmp_path: Path, *options: str) -> tuple[str, Path]:
    script = tmp_path / "raw_server.py"
    script.write_text(RAW_SERVER)
    log = tmp_path / "requests.jsonl"
    return shlex.join([sys.executable, str(script), str(log), *options]), log


def completion_prefixes(log: Path) -> list[str]:
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    return [r["params"]["argument"]["value"] for r in requests if r["method"] == "completion/complete"]


def fake_clipboard(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose only clipboard program is a `wl-copy` that writes to a file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    copied = tmp_path / "clipboard"
    tool = bin_dir / "wl-copy"
    tool.write_text(f"#!/bin/sh\ncat > {shlex.quote(str(copied))}\n")
    tool.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}, copied


def menu_lines(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines()]


# -- the whole walk --------------------------------------------------------------------------------


def test_palette_form_with_server_completion_then_print(terminal: Terminal, library: Path) -> None:
    terminal.start(stdio(library))
    terminal.wait_for("promptdeck  3 prompts")
    terminal.type("/cod")
    # Both matches offered, the name-prefix one first; the toolbar describes the highlighted one.
    screen = terminal.wait_for("explain-code", "Code review — Review code for bugs, style and speed",
                               "arguments: language*, focus, code*")
    assert screen.index("code-review") < screen.index("explain-code")
    assert "summarize" not in screen
    terminal.keys("Enter")
    # The form: name, title, required marker, description, and the server's values before any typing.
    screen = terminal.wait_for("language* (Language):", "The language of the code", "the server suggests 5")
    assert {"python", "perl", "php", "rust", "go"} <= set(menu_lines(screen))
    terminal.type("p")
    screen = terminal.wait_for("the server suggests 3")
    assert {"python", "perl", "php"} <= set(menu_lines(screen)) and "rust" not in menu_lines(screen)
    terminal.keys("Tab")
    terminal.answer("language* (Language): python", "Enter")
    terminal.answer("optional: Enter on empty input skips", "Enter")  # focus: skipped
    terminal.wait_for("code*:", "The code to review")
    terminal.type("x = 1")
    terminal.keys("Enter")
    screen = terminal.wait_for("── user", "Review this python code:", "copy to the clipboard (c) or print")
    assert "looking at" not in screen
    terminal.keys("p")
    assert terminal.exit_code() == 0
    # shown once as the preview, once more as the printed result
    assert terminal.screen().count("Review this python code:") == 2


def test_completion_sends_earlier_answers_as_context_and_copy_uses_wl_copy(terminal: Terminal,
                                                                             tmp_path: Path) -> None:
    script = tmp_path / "context_server.py"
    script.write_text(CONTEXT_SERVER)
    env, copied = fake_clipboard(tmp_path)
    terminal.start(shlex.join([sys.executable, str(script)]), env=env)
    terminal.wait_for("context-server  1 prompts")
    terminal.type("/dep")
    terminal.wait_for("deploy", "Deploy — Deploy a host.")
    terminal.keys("Enter")
    terminal.wait_for("region*:", "the server suggests 2")
    terminal.type("eu")
    terminal.keys("Enter")
    screen = terminal.wait_for("host*:", "eu-web-2")
    assert "eu-web-1" in menu_lines(screen) and "nowhere-web-1" not in screen
    terminal.keys("Tab", "Tab")
    terminal.answer("host*: eu-web-2", "Enter")
    terminal.wait_for("Deploy eu-web-2 in eu.", "copy to the clipboard")
    terminal.keys("c")
    assert terminal.exit_code() == 0
    assert "copied 22 characters (wl-copy)" in terminal.screen()
    assert copied.read_text() == "Deploy eu-web-2 in eu."


def test_typing_fast_asks_the_server_once_per_pause(terminal: Terminal, tmp_path: Path) -> None:
    target, log = raw_server(tmp_path)
    terminal.start(target)
    terminal.wait_for("raw-server  1 prompts")
    terminal.type("/lang")
    terminal.keys("Enter")
    terminal.wait_for("language*:", "the server suggests 5")
    terminal.type("pyth")  # four keys at once
    terminal.wait_for("the server suggests 1")
    terminal.keys("Tab")
    terminal.answer("language*: python", "Enter")
    terminal.wait_for("Notes on python.", "copy to the clipboard")
    terminal.keys("Escape")
    assert terminal.exit_code() == 1
    assert completion_prefixes(log) == ["", "pyth"]


def test_a_server_without_completion_gets_no_menu(terminal: Terminal, tmp_path: Path) -> None:
    target, log = raw_server(tmp_path, "--no-complete")
    terminal.start(target)
    terminal.wait_for("raw-server  1 prompts")
    terminal.type("/lang")
    terminal.keys("Enter")
    terminal.wait_for("language*:")
    terminal.type("ru")
    terminal.keys("Enter")
    screen = terminal.wait_for("Notes on ru.", "copy to the clipboard")
    assert "suggests" not in screen
    terminal.keys("p")
    assert terminal.exit_code() == 0
    assert len(completion_prefixes(log)) <= 1  # asked once at most, then never again


def test_over_http_binary_content_is_summarized_and_copied_by_osc52(terminal: Terminal, tmp_path: Path) -> None:
    with http_server(str(EXAMPLES)) as url:
        # No clipboard program on PATH: the copy goes to the terminal (here tmux's paste buffer).
        terminal.start(url, env={"PATH": str(tmp_path / "empty")})
        terminal.wait_for("11 prompts")
        terminal.type("/image")
        for shown in ("describe-image", "image (Image file):", "purpose:", "question:"):  # all optional: skipped
            terminal.answer(shown, "Enter")
        terminal.wait_for("[image image/png,", "copy to the clipboard")
        terminal.keys("c")
        assert terminal.exit_code() == 0
        assert "(OSC 52" in terminal.screen()
        buffer = terminal.tmux("show-buffer").stdout
        assert buffer.startswith("── user ──") and "[image image/png," in buffer


def test_output_redirected_prints_by_default_and_the_ui_stays_on_the_terminal(terminal: Terminal, library: Path,
                                                                              tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    terminal.start(stdio(library), stdout=out)
    terminal.wait_for("3 prompts")
    terminal.type("/summarize")
    terminal.keys("Enter")  # no arguments: straight to the result
    terminal.wait_for("Summarize the text above.", "to stdout (p)? [p]")
    terminal.keys("Enter")
    assert terminal.exit_code() == 0
    printed = out.read_text()
    assert "Summarize the text above." in printed and "\033" not in printed
    assert printed.startswith("── user ──")


def test_a_rejected_argument_is_shown_and_asked_again(terminal: Terminal, library: Path) -> None:
    terminal.start(stdio(library))
    terminal.wait_for("3 prompts")
    terminal.type("/code-review")
    terminal.keys("Enter")
    terminal.wait_for("language* (Language):")
    terminal.type("cobol")
    terminal.keys("Enter")
    terminal.answer("focus:", "Enter")
    terminal.wait_for("code*:")
    terminal.type("x")
    terminal.keys("Enter")
    terminal.wait_for("error -32602:", "got 'cobol'")
    # asked again, with the earlier answers as the defaults
    terminal.wait_until(lambda screen: screen.count("language* (Language): cobol") == 2, "the form again")
    terminal.keys("C-c")
    assert terminal.exit_code() == 130


# -- leaving ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "code"), [("C-c", 130), ("Escape", 1)])
def test_ctrl_c_and_esc_leave_cleanly(terminal: Terminal, library: Path, key: str, code: int) -> None:
    terminal.start(stdio(library))
    terminal.wait_for("3 prompts")
    terminal.type("/exp")
    terminal.keys("Enter")
    terminal.wait_for("code*:")
    terminal.keys(key)
    assert terminal.exit_code() == code
    assert "Traceback" not in terminal.screen()


def test_a_completion_answered_as_ctrl_c_cancels_the_form_lets_the_picker_leave() -> None:
    """What hung the picker on a loaded machine (1 run in ~12 of the test above): Ctrl-C ends the form, whose
    cancel of the completion task came in the same loop pass as the server's answer. asyncio.wait_for (3.11)
    returned the answer instead, the task went back to waiting for typing, and prompt_toolkit waited for the
    task forever. The pass is made here on purpose: the answer lands, then the cancel, before the task runs."""
    from promptdeck.cli.picker import _ServerValues, _Support

    async def race() -> None:
        answer: asyncio.Future[object] = asyncio.get_running_loop().create_future()

        class Server:  # answers when the test says so
            timeout = 30.0

            async def complete(self, *_: object) -> object:
                return await answer

        values = _ServerValues(Server(), "explain-code", "code", {}, _Support())  # type: ignore[arg-type]
        asking = asyncio.ensure_future(values._ask(""))
        for _ in range(3):
            await asyncio.sleep(0)
        assert not asking.done()
        answer.set_result(object())
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking

    asyncio.run(race())


def test_a_server_slower_to_start_than_the_era_probe_is_waited_for_and_ctrl_c_leaves(terminal: Terminal) -> None:
    """What failed on a loaded machine: a server that starts in more than 5 s (the era probe's old limit) got
    an initialize after the unanswered probe, which the official SDK's server refuses once it has read the
    probe (-32022), so the palette never came up (issue 38). Ctrl-C then leaves its form with 130."""
    sdk = [sys.executable, str(TESTS / "client" / "servers" / "sdk_server.py"), "mcpserver", "stdio"]
    slow = [sys.executable, str(TESTS / "client" / "servers" / "slow_start.py"), "6.5", "--", *sdk]
    terminal.start(shlex.join(slow), "--timeout", str(DEADLINE))
    terminal.wait_for("5 prompts")
    terminal.type("/greet")
    terminal.keys("Enter")
    terminal.wait_for("name*:")
    terminal.keys("C-c")
    assert terminal.exit_code() == 130
    assert "Traceback" not in terminal.screen() and "-32022" not in terminal.screen()


def test_a_server_that_fails_to_start_is_one_clear_line(terminal: Terminal) -> None:
    terminal.start("no-such-command-here --flag")
    assert terminal.exit_code() == 2  # said before anything starts: a TARGET that is no server (cli/targets.py)
    screen = " ".join(line.strip() for line in terminal.screen().splitlines() if line.strip())
    assert screen == "promptdeck: no command 'no-such-command-here' is found on PATH: TARGET is a command that " \
                     "starts a stdio MCP server, or an http(s) URL"


def test_without_a_terminal_it_says_so() -> None:
    done = subprocess.run([sys.executable, "-m", "promptdeck", "pick", stdio(EXAMPLES)], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 2
    assert done.stderr == "promptdeck: pick needs a terminal (stdin, and stdout or stderr)\n"


def test_without_prompt_toolkit_it_says_what_to_install() -> None:
    code = ("import sys; sys.modules['prompt_toolkit'] = None\n"
            "from promptdeck.cli.main import main; main(['pick', 'x'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr == f"promptdeck: pick (prompt_toolkit) needs the pick extra: {install_command('pick')}\n"


# -- the pure parts --------------------------------------------------------------------------------


def test_rank_orders_exact_prefix_word_substring_then_fuzzy() -> None:
    from promptdeck.cli.picker import rank
    from promptdeck.client.types import PromptInfo

    prompts = [PromptInfo(name=n, title=t) for n, t in [
        ("explain-code", "Explain code"), ("code", None), ("code-review", "Code review"),
        ("decode", None), ("co-ordinate", None), ("summarize", "Summarize text"), ("git.commit", "Commit message")]]
    assert [p.name for p in rank(prompts, "/code")] == ["code", "code-review", "explain-code", "decode", "co-ordinate"]
    assert [p.name for p in rank(prompts, "/commit")] == ["git.commit"]
    assert [p.name for p in rank(prompts, "/TEXT")] == ["summarize"]
    assert len(rank(prompts, "/")) == len(prompts)
    assert rank(prompts, "/zzz") == []
    # A name prefix read word by word beats the letters found inside another name ("des-cr-ibe").
    described = [*prompts, PromptInfo(name="describe-image", title=None)]
    assert [p.name for p in rank(described, "/cr")] == ["code-review", "describe-image", "co-ordinate"]
    assert [p.name for p in rank(described, "/coderev")] == ["code-review"]
    assert [p.name for p in rank(described, "/gc")][:1] == ["git.commit"]


def test_clipboard_text_is_the_lone_text_or_readable_messages() -> None:
    from promptdeck.cli.picker import clipboard_text
    from promptdeck.client.types import ImageContent, PromptMessage, RenderedPrompt, TextContent

    one = RenderedPrompt(messages=(PromptMessage(role="user", content=TextContent(text="Hi.")),))
    assert clipboard_text(one) == "Hi."
    two = RenderedPrompt(messages=(PromptMessage(role="user", content=TextContent(text="Hi.")),
                                   PromptMessage(role="assistant", content=ImageContent(data=b"\x00\x00\x00",
                                                                                        mime_type="image/png"))))
    text = clipboard_text(two)
    assert "── assistant" in text and "[image image/png, 3 bytes]" in text and "\033" not in text


def test_copy_uses_the_first_program_that_works_else_osc52(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from promptdeck.cli.picker import copy_to_clipboard, osc52

    copied = tmp_path / "copied"
    (tmp_path / "broken").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "works").write_text(f"#!/bin/sh\n/bin/cat > {shlex.quote(str(copied))}\n")
    for tool in ("broken", "works"):
        (tmp_path / tool).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    terminal = io.StringIO()
    assert copy_to_clipboard("héllo", terminal, [("absent",), ("broken",), ("works", "-x")]) == "works"
    assert copied.read_text() == "héllo" and terminal.getvalue() == ""
    assert copy_to_clipboard("héllo", terminal, [("absent",), ("broken",)]).startswith("OSC 52")
    assert terminal.getvalue() == osc52("héllo") == "\033]52;c;aMOpbGxv\a"
