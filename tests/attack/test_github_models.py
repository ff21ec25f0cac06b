"""Hostile GitHub Models prompt files (``*.prompt.yml``, issue 43): huge, deeply nested, alias bombs, YAML
tags that would build objects, wrong types everywhere, names that are unsafe as paths or as prompt names.

Each is one ``check`` problem naming its file and line while the rest of the library is served; the bombs
run in a real ``promptdeck check`` process held to 1 GiB of address space (as in test_bombs.py), and a hostile
file never replaces a good version already served. Well-formed parts come from GitHub's documented example
(tests/support/github_models.py).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck.prompts.testcases import MAX_CASES
from promptdeck.sources.files.source import MAX_PROMPT_FILE_BYTES
from tests.support.cli import pd
from tests.support.files import load, prompts, write
from tests.support.github_models import SUMMARIZER

LIMIT_BYTES = 1024**3
OK = "messages: [{role: user, content: 'Hi {{who}}'}]\n"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def _laughs(levels: int = 9) -> str:
    """The billion laughs: each alias repeats the list before it nine times."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n" + OK


#: file -> (text, line, words of the problem)
BOMBS = {
    "laughs.prompt.yml": (_laughs(), 2, "YAML aliases (*a0) are not allowed"),
    # libyaml's own bound or ours, whichever meets it first
    "deep.prompt.yml": ("x: " + "[" * 100_000 + "]" * 100_000 + "\n" + OK, 1, "nest"),
    "deep-maps.prompt.yml": ("x: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n" + OK, 1, "nested deeper than 32"),
    "tagged.prompt.yml": ("x: !!python/object/apply:os.system ['touch pwned']\n" + OK, 1, "not valid YAML"),
    "huge.prompt.yml": ("# " + "x" * MAX_PROMPT_FILE_BYTES + "\n" + OK, None, "larger than"),
}


def test_check_reports_each_bomb_at_its_file_and_line_in_a_bounded_process(tmp_path: Path) -> None:
    write(tmp_path, {rel: text for rel, (text, _, _) in BOMBS.items()})
    write(tmp_path, {"fine.prompt.yml": SUMMARIZER, "hello.md": "Hello.\n"})
    done = subprocess.run([sys.executable, "-m", "promptdeck", "check", str(tmp_path)], capture_output=True,
                          timeout=120, preexec_fn=_limited, cwd=tmp_path)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 1, (out, err)
    assert "Traceback" not in err and "MemoryError" not in out + err
    for rel, (_, line, words) in BOMBS.items():
        [report] = [row for row in out.splitlines() if row.startswith(f"{rel}:")]
        where = f"{rel}:{line}: " if line is not None else f"{rel}: "
        assert report.startswith(where) and words in report, report
    assert not (tmp_path / "pwned").exists()
    assert err.startswith(f"2 prompts ok; {len(BOMBS)} problems in {len(BOMBS)} files"), err


@pytest.mark.parametrize(("body", "line", "words"), [
    ("messages: hello\n", 1, "messages must be a list"),
    ("messages: {role: user, content: hi}\n", 1, "messages must be a list"),
    ("messages:\n  - role: 5\n    content: hi\n", 2, "role must be one of"),
    ("messages:\n  - role: user\n    content: {a: 1}\n", 3, "content must be text"),
    ("messages:\n  - role: user\n    content: null\n", 3, "content must be text"),
    ("description: 7\n" + OK, 1, "description must be text"),
    ("model: [gpt]\n" + OK, 1, "model must be text"),
    ("modelParameters:\n  topP: true\n" + OK, 2, "modelParameters.topP must be a number"),
    ("jsonSchema: {a: 1}\n" + OK, 1, "jsonSchema must be a JSON text"),
    (OK + "testData: [1, 2]\n", 2, "testData must be a list of mappings"),
    (OK + "evaluators: {a: 1}\n", 2, "evaluators must be a list"),
    (OK + "evaluators:\n  - name: e\n    uses: [x]\n", 4, "uses must be text"),
    (OK + "evaluators:\n  - name: e\n    llm: yes\n", 4, "llm must be a mapping"),
    (OK + "evaluators:\n  - name: e\n    string: {contains: x}\n    uses: github/similarity\n", 3, "needs one of"),
    ("'just text'\n", 1, "is a mapping"),
    ("42\n", 1, "is a mapping"),
])
def test_wrong_types_are_one_problem_at_their_line_and_the_rest_is_served(tmp_path: Path, body: str, line: int,
                                                                          words: str) -> None:
    source = load(tmp_path, {"bad.prompt.yml": body, "good.prompt.yml": SUMMARIZER})
    [error] = source.errors["bad.prompt.yml"]
    assert (error.line, words in error.reason) == (line, True), (error.line, error.reason)
    assert set(prompts(source)) == {"good"}


@pytest.mark.parametrize(("rel", "served"), [
    ("a b.prompt.yml", False),      # a blank: no prompt name
    ("-x.prompt.yml", False),       # no prompt name starts with '-'
    ("caf\u00e9.prompt.yml", False),  # letters outside ASCII
    ("x" * 129 + ".prompt.yml", False),  # longer than 128
    (".prompt.yml", None),          # hidden: not a prompt at all
    ("..prompt.yml", None),
    ("_material/x.prompt.yml", None),
    ("sub/.h/x.prompt.yml", None),
])
def test_names_unsafe_as_prompt_names_or_paths_are_refused_or_ignored(tmp_path: Path, rel: str,
                                                                      served: bool | None) -> None:
    source = load(tmp_path, {rel: OK, "good.prompt.yml": OK})
    assert set(prompts(source)) == {"good"}
    if served is None:
        assert not source.errors
    else:
        [error] = source.errors[rel]
        assert "is not valid" in error.reason


def test_a_link_out_of_the_library_is_confined(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secret.prompt.yml": "messages: [{role: user, content: secret}]\n"})
    root = write(tmp_path / "lib", {"good.prompt.yml": OK})
    os.symlink(outside / "secret.prompt.yml", root / "leak.prompt.yml")
    source = load(root, {})
    assert set(prompts(source)) == {"good"}


def test_a_hostile_edit_never_replaces_the_good_version_served(tmp_path: Path) -> None:
    source = load(tmp_path, {"s.prompt.yml": SUMMARIZER})
    path = tmp_path / "s.prompt.yml"
    for hostile, _, _ in BOMBS.values():
        path.write_text(hostile)
        source.update([str(path)])
        assert prompts(source)["s"].title == "Text Summarizer"
        assert source.errors["s.prompt.yml"]


def test_a_flood_of_test_rows_is_bounded(tmp_path: Path) -> None:
    """50,000 rows fit in the 1 MiB a file may have: the tests take the first 200, and check says so."""
    rows = "".join(f"  - {{who: w{i}}}\n" for i in range(50_000))
    body = OK + "testData:\n" + rows
    assert len(body.encode()) < MAX_PROMPT_FILE_BYTES
    source = load(tmp_path, {"flood.prompt.yml": body})
    prompt = prompts(source)["flood"]
    assert prompt.tests is not None and len(prompt.tests.cases) == MAX_CASES
    done = pd("check", str(tmp_path))
    assert f"flood.prompt.yml: warning: testData rows {MAX_CASES + 1} to 50000 are not tests" in done.stdout
