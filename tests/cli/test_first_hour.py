"""The first hour of a new user, who followed the README (issue 38, finding 16): what the command says back
names the command as they typed it (``.venv/bin/promptdeck``), a file's problems come in one run, and a
mistake gets the file's problem or a "did you mean" rather than a dead end. Real processes throughout."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from promptdeck.extras import install_command
from tests.support.libraries import EXAMPLES

#: the console script pip installed next to the Python running the tests: ``.venv/bin/promptdeck``
SCRIPT = Path(sys.executable).with_name("promptdeck")
VENV = SCRIPT.parent.parent


def typed(*args: str, cwd: Path = VENV) -> subprocess.CompletedProcess[str]:
    """``bin/promptdeck ARGS`` run from the venv's folder: a relative path, as ``.venv/bin/promptdeck`` is."""
    return subprocess.run([f"{SCRIPT.parent.name}/{SCRIPT.name}", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=90, check=False)


def module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", *args], capture_output=True, text=True,
                          timeout=90, check=False)


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder


STANDUP = """---
title: Standup update
descripton: Turn rough notes into a standup update
arguments:
  - {name: notes, type: strng, required: true}
  - {name: tone, enum: [plain, cheerful], default: plain}
---
Write a {{ tone }} update from {{ nots }}:

{{ notes }}
"""


# -- hints name the command as it was typed ---------------------------------------------------------


def test_the_folder_hint_names_the_command_as_typed(tmp_path: Path) -> None:
    done = typed("ls", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.rstrip().endswith(f'bin/promptdeck ls "bin/promptdeck serve {shlex.quote(str(tmp_path))}"')
    by_module = module("ls", str(tmp_path))
    prog = f"{shlex.quote(sys.executable)} -m promptdeck"
    assert by_module.stderr.rstrip().endswith(f'{prog} ls "{prog} serve {shlex.quote(str(tmp_path))}"')


def test_the_hint_works_when_pasted(tmp_path: Path) -> None:
    """What the folder hint says to type, typed: it lists the folder's prompt."""
    library = write(tmp_path / "my prompts", "hello.md", "Say hello\n")
    hint = typed("ls", str(library)).stderr.rstrip().split("give the command that serves it: ")[1]
    done = subprocess.run(shlex.split(hint), cwd=VENV, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout


def test_usage_lines_name_the_command_as_typed() -> None:
    done = typed("check")
    assert done.returncode == 2
    assert "Usage: bin/promptdeck check [OPTIONS] FOLDERS..." in done.stderr
    assert "Try 'bin/promptdeck check --help' for help." in done.stderr


def test_a_missing_extra_names_a_pip_install_that_exists(tmp_path: Path) -> None:
    """Not ``pip install 'promptdeck[pick]'`` (promptdeck is not on PyPI): the pip of the running Python,
    installing the clone with the extra."""
    code = "import sys; sys.modules['prompt_toolkit'] = None; sys.argv[0] = 'promptdeck'; " \
           "from promptdeck.cli.entry import main; main()"
    done = subprocess.run([sys.executable, "-c", code, "pick", "x"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1
    command = done.stderr.strip().split("needs the pick extra: ")[1]
    assert command == install_command("pick")
    assert "promptdeck[" not in command and command.endswith("install -e '.[pick]'")
    words = shlex.split(command.split(" && ")[-1])
    assert Path(words[0]).samefile(Path(sys.executable).with_name("pip"))


def test_outside_the_clone_the_extra_command_goes_there_first(tmp_path: Path) -> None:
    code = ("import os, sys; os.chdir(sys.argv[1]); from promptdeck.extras import install_command; "
            "print(install_command('http'))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60,
                          check=True)
    clone = Path(__file__).resolve().parents[2]
    assert done.stdout.startswith(f"cd {shlex.quote(str(clone))} && ")


# -- check: every independent problem of a file in one run ---------------------------------------------


def test_check_reports_a_files_three_problems_in_one_run(tmp_path: Path) -> None:
    """An unknown key, a bad argument type and an unknown template variable: each at its line, at once
    (they took three runs)."""
    library = write(tmp_path / "lib", "standup.md", STANDUP)
    done = module("check", str(library))
    assert done.returncode == 1
    found = [(line.split(":")[1], line.split(": ", 1)[1]) for line in done.stdout.splitlines()]
    assert [(at, problem[:40]) for at, problem in found] == [
        ("3", "unknown front matter key 'descripton'; d"), ("5", "argument 'notes': type must be one of st"),
        ("8", "template uses 'nots', which is not an ar")]
    assert "3 problems in 1 file" in done.stderr


def test_a_broken_argument_list_does_not_make_every_variable_unknown(tmp_path: Path) -> None:
    """The template is checked against the names declared, so a variable naming a broken argument is not a
    second problem."""
    library = write(tmp_path / "lib", "p.md", "---\narguments:\n  - {name: n, type: nope}\n---\n{{ n }}\n")
    done = module("check", str(library))
    assert done.stdout.splitlines() == [
        "p.md:3: argument 'n': type must be one of string, integer, number, boolean, path, got 'nope'"]


def test_check_on_a_file_says_it_reads_a_folder_and_which() -> None:
    done = typed("check", str(EXAMPLES / "summarize.md"))
    assert done.returncode == 2
    assert "Directory" not in done.stderr
    assert (f"{str(EXAMPLES / 'summarize.md')!r} is a file: check reads a library's folder, where a prompt's name "
            f"and what it composes are found; the folder it is in: bin/promptdeck check {EXAMPLES}") \
        in " ".join(done.stderr.split())


# -- render and complete: the cause, not a dead end ----------------------------------------------------


def test_render_of_a_broken_file_gives_the_files_problems(tmp_path: Path) -> None:
    library = write(tmp_path / "lib", "standup.md", STANDUP)
    done = module("render", str(library), "standup", "-a", "notes=x")
    assert done.returncode == 1
    assert "unknown prompt" not in done.stderr
    assert "promptdeck: prompt 'standup' is not served: its file has 3 problems:\n" \
           "standup.md:3: unknown front matter key 'descripton'" in done.stderr
    assert "standup.md:8: template uses 'nots'" in done.stderr


def test_complete_suggests_the_argument_meant() -> None:
    serve = f"{shlex.quote(sys.executable)} -m promptdeck serve {shlex.quote(str(EXAMPLES))}"
    done = module("complete", serve, "code-review", "langauge")
    assert done.returncode == 1
    assert "prompt 'code-review' has no argument 'langauge'; did you mean 'language'?" in done.stderr
    far = module("complete", serve, "code-review", "zzz")
    assert "has no argument 'zzz' (it takes: " in far.stderr


def test_typed_runs_the_script_as_a_readme_user_does() -> None:
    """The helper above runs the console script by a relative path, as the README's ``.venv/bin/promptdeck``."""
    assert SCRIPT.is_file() and os.access(SCRIPT, os.X_OK)
    assert typed("--version").stdout.startswith("promptdeck, version ")


def test_shell_completion_keeps_its_variable() -> None:
    """click names the variable from the program name; one made of a path would be no variable at all."""
    done = subprocess.run([f"{SCRIPT.parent.name}/{SCRIPT.name}"], cwd=VENV, capture_output=True, text=True,
                          timeout=90, check=False, env={**os.environ, "_PROMPTDECK_COMPLETE": "bash_source"})
    assert done.returncode == 0 and "complete -o nosort -F" in done.stdout, done.stderr
