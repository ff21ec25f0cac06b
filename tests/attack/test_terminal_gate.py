"""Text the CLI did not write reaches the terminal only through the gate (issue 38, finding 3).

A hostile MCP server (the official SDK's, ``tests/support/hostile_terminal_server.py``) puts escape
sequences, a CR, a BiDi override and a newline followed by a forged line into every name, title,
description, completion value, rendered text and error message; a store:write principal puts the same
into a save's message. The real ``promptdeck`` commands must print none of it raw: no ESC, CR, BEL, C1
control or BiDi control reaches the terminal, and a field never starts a line of its own. A rendered body
keeps its own lines.

``test_no_cli_module_writes_round_the_gate`` lists the ways a cli/ module could write to a terminal and
fails on any of them outside ``cli/terminal.py``, so a new command cannot go round the gate.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck.cli.terminal import shown
from tests.support.hostile_terminal_server import FORGED, PAYLOAD
from tests.support.paths import REPO

CLI = REPO / "src" / "promptdeck" / "cli"
SERVER = f"{sys.executable} {REPO / 'tests' / 'support' / 'hostile_terminal_server.py'}"
RAW = ("\x1b", "\r", "\x07", "\x9b", "\u202e", "\u202c")


def promptdeck(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def assert_gated(done: subprocess.CompletedProcess[str], *, body_lines: bool = False) -> None:
    for stream in (done.stdout, done.stderr):
        assert not [c for c in RAW if c in stream], stream
        assert "Traceback" not in stream
        if not body_lines:  # a field's newline is escaped: the forged line never starts a line
            assert not [line for line in stream.splitlines() if line.startswith(FORGED)], stream


# -- every way to write to a terminal goes through cli/terminal.py --------------------------------------

#: Calls that write to a terminal (or make text prompt_toolkit writes) other than the gate's own.
WRITERS = {"print", "echo", "secho", "style", "echo_via_pager", "print_formatted_text", "FormattedText", "write",
           "writelines"}


def _writes(tree: ast.Module) -> list[str]:
    found = []
    imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "terminal" and node.level == 1 for alias in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print_formatted_text" and node.args \
                and isinstance(node.args[0], ast.Call) and ast.unparse(node.args[0].func) == "formatted":
            continue  # the picker prints the gate's own prompt_toolkit text
        if isinstance(func, ast.Name) and func.id in WRITERS and func.id not in imported:
            found.append(f"{func.id}() at line {node.lineno}")
        elif isinstance(func, ast.Attribute) and func.attr in WRITERS:
            found.append(f"{ast.unparse(func)}() at line {node.lineno}")
    return found


def test_no_cli_module_writes_round_the_gate() -> None:
    modules = sorted(path for path in CLI.glob("*.py") if path.name != "terminal.py")
    assert len(modules) > 15  # the listing found the modules
    bypass = {path.name: found for path in modules if (found := _writes(ast.parse(path.read_text())))}
    assert bypass == {}, ("write to the terminal through cli/terminal.py (echo, write, formatted); a file is "
                          "written below cli/, by library code")


def test_the_check_sees_a_writer_round_the_gate() -> None:
    sneaky = ast.parse("import click, sys\nclick.echo(x)\nsys.stdout.write(y)\nprint(z)\n"
                       "print_formatted_text(FormattedText(p))\n")
    assert _writes(sneaky) == ["click.echo() at line 2", "sys.stdout.write() at line 3", "print() at line 4",
                               "print_formatted_text() at line 5", "FormattedText() at line 5"]
    gated = ast.parse("from .terminal import echo, write\necho(x)\nwrite(sys.stderr, y)\n")
    assert _writes(gated) == []


def test_the_gate_escapes_controls_and_keeps_a_body_readable() -> None:
    assert shown(PAYLOAD) == ("\\u001b]0;pwned\\u0007\\u001b[2J\\rhidden\\u009b31m\\u202eevil\\u202c\\n" + FORGED)
    assert shown("a\tb\nc\x1bd", lines=True) == "a\tb\nc\\u001bd"
    assert shown("naïve 👍 \u200d ok") == "naïve 👍 \u200d ok"  # letters, emoji and joiners are text
    assert shown("\ud800") == "\\ud800"  # a lone surrogate cannot even be encoded for the terminal


# -- the commands, against a hostile server -----------------------------------------------------------

def test_ls_shows_hostile_names_and_titles_escaped() -> None:
    done = promptdeck("ls", SERVER)
    assert done.returncode == 0, done.stderr
    assert_gated(done)
    assert "evil\\u001b]0;pwned" in done.stdout


def test_get_keeps_the_body_lines_and_escapes_the_rest() -> None:
    done = promptdeck("get", SERVER, "evil")
    assert done.returncode == 0, done.stderr
    assert_gated(done, body_lines=True)
    lines = done.stdout.splitlines()
    assert "first line" in lines and any(line.startswith("second line \\u001b]0;pwned") for line in lines)
    description = [line for line in lines if line.startswith("(Described")]
    assert description and description[0].endswith("\\n" + FORGED + ")")


def test_get_json_stays_json() -> None:
    import json

    done = promptdeck("get", SERVER, "evil", "--json")
    assert done.returncode == 0, done.stderr
    assert_gated(done)
    assert json.loads(done.stdout)["description"] == f"Described {PAYLOAD}"


def test_complete_prints_one_value_a_line() -> None:
    done = promptdeck("complete", SERVER, "evil", "topic", "o")
    assert done.returncode == 0, done.stderr
    assert_gated(done)
    assert done.stdout.splitlines() == [shown(f"one {PAYLOAD}"), "two"]


def test_an_error_quoting_the_server_is_one_line() -> None:
    done = promptdeck("get", SERVER, "refuse")
    assert done.returncode == 1
    assert_gated(done)
    assert len(done.stderr.splitlines()) == 1 and "no such thing \\u001b]0;pwned" in done.stderr


# -- the store's history ------------------------------------------------------------------------------

@pytest.fixture
def store(tmp_path: Path) -> str:
    url, library = f"sqlite:///{tmp_path / 'store.db'}", tmp_path / "lib"
    library.mkdir()
    (library / "greet.md").write_text("Hello.\n")
    done = promptdeck("publish", str(library), "--store", url, "--label", "production", "--author", "eve",
                      "-m", f"tidy {PAYLOAD}")
    assert done.returncode == 0, done.stderr
    return url


@pytest.mark.parametrize("how", [("--label", "production"), ("greet",), ()])
def test_history_lines_are_not_forged(store: str, how: tuple[str, ...]) -> None:
    done = promptdeck("history", *how, "--store", store)
    assert done.returncode == 0, done.stderr
    assert_gated(done)
    assert "eve" in done.stdout and "tidy \\u001b]0;pwned" in done.stdout


# -- the picker, on a real terminal (tmux) ------------------------------------------------------------

def test_the_picker_shows_a_hostile_server_escaped(tmp_path: Path) -> None:
    from tests.support.terminal import Terminal

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    terminal = Terminal(tmp_path)
    try:
        terminal.start(SERVER)
        terminal.wait_for("hostile\\u001b]0;pwned")  # the server's name, on the first line
        terminal.type("/evil")
        terminal.wait_for("Evil \\u001b]0;pwned")  # the toolbar's title of the match
        terminal.keys("Enter")
        terminal.answer("A topic \\u001b]0;pwned", "Enter")  # the argument's description; topic left empty
        terminal.answer("copy to the clipboard (c) or print", "p")
        assert terminal.exit_code() == 0
        screen = terminal.screen()
        assert "second line \\u001b]0;pwned" in screen and "first line" in screen
        title = terminal.tmux("display-message", "-p", "-t", "pick", "#{pane_title}").stdout
        assert "pwned" not in title  # no OSC reached the terminal
    finally:
        terminal.close()


def test_watch_prints_a_hostile_name_on_its_own_line() -> None:
    import signal
    import threading

    server = f"{sys.executable} -m tests.support.hostile_watch_server"
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"}
    watching = subprocess.Popen([sys.executable, "-m", "promptdeck", "watch", server, "--era", "legacy"], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = threading.Timer(120, watching.kill)  # a watch that never prints the change fails, not hangs
    deadline.start()
    try:
        assert watching.stdout is not None
        change = watching.stdout.readline()
        watching.send_signal(signal.SIGTERM)
        rest, errors = watching.communicate(timeout=60)
    finally:
        deadline.cancel()
    done = subprocess.CompletedProcess(watching.args, watching.returncode, change + rest, errors)
    assert_gated(done)
    assert change.endswith(f" 2 prompts: +{shown('evil' + PAYLOAD)}\n"), (change, errors)
