"""The client commands (`promptdeck ls/get/complete/watch TARGET`) run as real processes against real servers."""

from __future__ import annotations

import json
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from promptdeck.extras import install_command
from tests.support.http_server import http_server
from tests.support.libraries import EXAMPLES, copy_examples

SERVE = shlex.join([sys.executable, "-m", "promptdeck", "serve"])


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True, timeout=90)


def stdio(folder: Path, *options: str) -> str:
    """The TARGET of a stdio promptdeck server on ``folder``: one quoted command line."""
    return f"{SERVE} {shlex.quote(str(folder))} {shlex.join(options)}".strip()


def only_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server(str(EXAMPLES)) as url:
        yield url


# -- ls ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_ls_prints_a_table_of_every_prompt(era: str) -> None:
    done = cli("ls", stdio(EXAMPLES), "--era", era)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TITLE", "ARGUMENTS", "(*", "required)"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert len(rows) == 11
    assert "Code review" in rows["code-review"] and "code*, language" in rows["code-review"]


def test_ls_json_walks_every_page_over_http(http_url: str) -> None:
    done = cli("ls", http_url, "--json")
    assert done.returncode == 0, done.stderr
    names = [prompt["name"] for prompt in json.loads(done.stdout)]
    assert names == sorted(names) and len(names) == 11


def test_ls_walks_small_pages(tmp_path: Path) -> None:
    from tests.support.libraries import write_prompts

    names = write_prompts(tmp_path / "lib", 120)
    done = cli("ls", stdio(tmp_path / "lib", "--page-size", "7"), "--json")
    assert done.returncode == 0, done.stderr
    assert [prompt["name"] for prompt in json.loads(done.stdout)] == names


# -- get --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_get_renders_messages_readably(era: str) -> None:
    done = cli("get", stdio(EXAMPLES), "explain-code", "-a", "code=print(42)", "--era", era)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("── user ──")
    assert "print(42)" in done.stdout


def test_get_json_is_the_raw_result_of_the_era(http_url: str) -> None:
    modern = json.loads(cli("get", http_url, "summarize", "-a", "text=abc", "--json").stdout)
    legacy = json.loads(cli("get", http_url, "summarize", "-a", "text=abc", "--json", "--era", "legacy").stdout)
    assert modern["resultType"] == "complete" and "resultType" not in legacy
    assert modern["messages"] == legacy["messages"]
    assert any("abc" in message["content"].get("text", "") for message in legacy["messages"])


def test_server_errors_are_one_line_and_exit_1() -> None:
    done = cli("get", stdio(EXAMPLES), "code-review")
    assert done.returncode == 1 and done.stdout == ""
    expected = "promptdeck: error -32602: prompt 'code-review' is missing required argument 'code'"
    assert only_line(done.stderr) == expected
    unknown = cli("get", stdio(EXAMPLES), "no-such-prompt")
    assert unknown.returncode == 1 and "error -32602" in only_line(unknown.stderr)
    mistyped = cli("get", stdio(EXAMPLES), "sumarize")
    assert only_line(mistyped.stderr) == "promptdeck: error -32602: unknown prompt 'sumarize'; did you mean " \
                                         "'summarize'?"


@pytest.mark.parametrize(("target", "message"), [
    ("http://127.0.0.1:9/mcp", "cannot reach http://127.0.0.1:9/mcp"),
    (f"{sys.executable} -c 'import sys; sys.stderr.write(\"boom\"); sys.exit(3)'", "exited with code 3: boom"),
])
def test_unusable_targets_are_one_clear_line(target: str, message: str) -> None:
    done = cli("ls", target, "--timeout", "20")
    assert done.returncode == 1
    assert message in only_line(done.stderr)


WHAT = "TARGET is a command that starts a stdio MCP server, or an http(s) URL"
#: the command as these tests run it: a hint names it so (tests/cli/test_first_hour.py runs .venv/bin/promptdeck)
PROG = f"{shlex.quote(sys.executable)} -m promptdeck"


def test_a_target_that_is_no_server_says_what_target_is(tmp_path: Path) -> None:
    """A folder gave "Permission denied", a URL without http:// "No such file or directory": now one line
    saying what TARGET is and what to type, before anything is started; exit 2, a usage mistake."""
    folder = tmp_path / "my prompts"
    folder.mkdir()
    (folder / "a.md").write_text("Hi\n")
    for command, target, expected in [
        ("ls", str(folder), f"promptdeck: {str(folder)!r} is a folder: {WHAT}; for its prompts, give the command "
                            f"that serves it: {PROG} ls \"{PROG} serve {shlex.quote(str(folder))}\""),
        ("get", str(folder), f"{PROG} get \"{PROG} serve"),
        ("ls", "localhost:8000/mcp", f"'localhost:8000/mcp' is no command: {WHAT}; did you mean "
                                     "http://localhost:8000/mcp?"),
        ("ls", "no-such-command-here --flag", f"no command 'no-such-command-here' is found on PATH: {WHAT}"),
        ("ls", str(folder / "a.md"), "is a file that is not a program"),
    ]:
        done = cli(command, target, *(["a"] if command == "get" else []))
        assert done.returncode == 2 and done.stdout == "", done
        assert expected in only_line(done.stderr)


def test_an_http_target_without_the_http_extra_is_one_line(tmp_path: Path) -> None:
    import os

    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass _Gone:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'aiohttp':\n"
        "            raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, _Gone())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "promptdeck", "ls", "http://127.0.0.1:9/mcp"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"promptdeck: reading an HTTP server needs the http extra: {install_command('http')}"]


def test_usage_errors_exit_2() -> None:
    assert cli("get", stdio(EXAMPLES), "summarize", "-a", "novalue").returncode == 2
    token_on_stdio = cli("ls", stdio(EXAMPLES), "--token", "abc")
    assert token_on_stdio.returncode == 2 and "--token and -H go with an http(s) TARGET" in token_on_stdio.stderr
    assert cli("ls", "http://127.0.0.1:9/mcp", "-H", "no colon").returncode == 2


def test_token_and_headers_reach_the_server(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:s3cret-token-0123456789\n")
    with http_server(str(EXAMPLES), "--token-file", str(tokens)) as url:
        refused = cli("ls", url)
        assert refused.returncode == 1 and "HTTP 401" in only_line(refused.stderr)
        assert cli("ls", url, "--token", "s3cret-token-0123456789").returncode == 0
        header = cli("ls", url, "-H", "Authorization: Bearer s3cret-token-0123456789", "--era", "legacy")
        assert header.returncode == 0, header.stderr


# -- complete ----------------------------------------------------------------------------------------


def test_complete_prints_one_value_a_line(http_url: str) -> None:
    for target in (stdio(EXAMPLES), http_url):
        done = cli("complete", target, "code-review", "focus", "s")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["style", "security"]


# -- watch ------------------------------------------------------------------------------------------


class Lines:
    """A process's output read on a thread, so that waiting for a line can give up."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)

    def until(self, needle: str, deadline: float = 30) -> str:
        seen = ""
        end = time.monotonic() + deadline
        while needle not in seen:
            try:
                seen += self.lines.get(timeout=max(end - time.monotonic(), 0))
            except queue.Empty:
                raise AssertionError(f"no {needle!r} within {deadline} s in {seen!r}") from None
        return seen


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_watch_prints_changes_and_stops_on_ctrl_c(tmp_path: Path, era: str) -> None:
    library = copy_examples(tmp_path / "lib")
    with subprocess.Popen([sys.executable, "-m", "promptdeck", "watch", stdio(library), "--era", era],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          preexec_fn=_interruptible_as_in_a_terminal) as process:
        _watch_and_interrupt(process, library)


def _interruptible_as_in_a_terminal() -> None:
    """In the child: Ctrl-C as a terminal delivers it. A suite started in the background of a script
    (`nohup make test &`) inherits SIGINT ignored, and Python then leaves it ignored, so the Ctrl-C this
    test sends would never arrive."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _watch_and_interrupt(process: subprocess.Popen[str], library: Path) -> None:
    try:
        assert process.stderr is not None and process.stdout is not None
        out = Lines(process.stdout)
        assert "watching for changes" in Lines(process.stderr).until("watching")
        (library / "fresh.md").write_text("---\ndescription: new\n---\nHello.\n")
        assert "12 prompts: +fresh" in out.until("+fresh")
        (library / "summarize.md").unlink()
        assert "11 prompts: -summarize" in out.until("-summarize")
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0  # Ctrl-C is how watch ends (tests/cli/test_exit_codes.py)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
