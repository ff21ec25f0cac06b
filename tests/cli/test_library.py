"""``check`` and ``render`` (cli/library.py), run in-process through click's runner: a clean library and one
with problems, name clashes between folders, and a render's messages or the error a client would get."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from promptdeck.cli.library import check, library_problems, render
from tests.support.libraries import prompt_folder

pytestmark = pytest.mark.usefixtures("kept_logging")

GREET = "---\ndescription: Greets\narguments:\n  - {name: who, required: true}\n---\nHello {{ who }}!\n"


def run(command: object, *args: str) -> Result:
    return CliRunner().invoke(command, list(args), prog_name=getattr(command, "name", None))  # type: ignore[arg-type]


def test_a_clean_library_checks_ok(tmp_path: Path) -> None:
    done = run(check, str(prompt_folder(tmp_path, {"greet.md": GREET, "other.md": "hi\n"})))
    assert (done.exit_code, done.stdout, done.stderr) == (0, "2 prompts ok\n", "")


def test_problems_are_listed_with_path_and_line_then_counted(tmp_path: Path) -> None:
    folder = prompt_folder(tmp_path, {"greet.md": GREET, "bad.md": "---\narguments: [{name: 1x}]\n---\nx\n",
                                "worse.md": "{% if %}\n"})
    done = run(check, str(folder))
    assert done.exit_code == 1
    problems = done.stdout.splitlines()
    assert [line.split(":", 1)[0] for line in problems] == ["bad.md", "worse.md"]
    assert problems[0].startswith("bad.md:2: ") and "1x" in problems[0]
    assert done.stderr == "1 prompt ok; 2 problems in 2 files\n"


def test_a_name_served_by_two_folders_is_a_problem_of_the_second(tmp_path: Path) -> None:
    first = prompt_folder(tmp_path / "one", {"greet.md": GREET})
    second = prompt_folder(tmp_path / "two", {"greet.md": "other\n"})
    problems, prompts, files = library_problems((str(first), str(second)))
    assert list(prompts) == ["greet"] and prompts["greet"].description == "Greets" and files == 1
    assert problems == [f"{second}/greet.md: prompt 'greet' is hidden by {first}/greet.md, which has the same name"]


def test_json_needs_graph(tmp_path: Path) -> None:
    done = run(check, "--json", str(tmp_path))
    assert done.exit_code == 2 and done.stderr == "promptdeck: --json goes with --graph\n"


def test_the_graph_as_json(tmp_path: Path) -> None:
    folder = prompt_folder(tmp_path, {"a.md": '{{ prompt("b") }}\n', "b.md": "b\n"})
    done = run(check, "--graph", "--json", str(folder))
    assert done.exit_code == 0, done.output
    graph = json.loads(done.stdout)
    assert graph["problems"] == [] and graph["prompts"]["a"]["file"] == "a.md"
    assert graph["prompts"]["b"]["usedBy"] == ["a"]


def test_render_prints_the_messages(tmp_path: Path) -> None:
    done = run(render, str(prompt_folder(tmp_path, {"greet.md": GREET})), "greet", "-a", "who=ann")
    assert done.exit_code == 0, done.output
    assert "── user " in done.stdout and "Hello ann!" in done.stdout and "(Greets)" in done.stdout


def test_render_json_for_an_old_revision(tmp_path: Path) -> None:
    done = run(render, str(prompt_folder(tmp_path, {"greet.md": GREET})), "greet", "-a", "who=bob", "--json",
               "--revision", "2024-11-05")
    assert json.loads(done.stdout) == {"description": "Greets", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Hello bob!"}}]}


def test_render_says_the_clients_error(tmp_path: Path) -> None:
    folder = str(prompt_folder(tmp_path, {"greet.md": GREET}))
    missing = run(render, folder, "greet")
    assert missing.exit_code == 1
    assert missing.stderr.startswith("promptdeck: error -32602: ") and "who" in missing.stderr
    unknown = run(render, folder, "nope")
    assert unknown.exit_code == 1 and "nope" in unknown.stderr


def test_render_of_a_broken_file_names_its_problems(tmp_path: Path) -> None:
    done = run(render, str(prompt_folder(tmp_path, {"broken.md": "{% if %}\n"})), "broken")
    assert done.exit_code == 1
    assert done.stderr.endswith("promptdeck: prompt 'broken' is not served: its file has 1 problem:\n"
                                "broken.md:1: template error: Expected an expression, got 'end of statement block'\n")


def test_render_of_a_file_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    prompt = tmp_path / "greet.md"
    prompt.write_text(GREET)
    done = run(render, str(prompt), "greet")
    assert done.exit_code == 2 and "is a file" in done.stderr
