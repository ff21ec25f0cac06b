"""The command line (cli.py), run as a real process: `promptdeck check` and `promptdeck render`."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptdeck.sources.files.source import FileSource
from tests.support.cli import cli
from tests.support.files import write
from tests.support.paths import REPO

EXAMPLES = REPO / "examples" / "prompts"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


# -- check --------------------------------------------------------------------------------------------


def test_check_passes_the_examples() -> None:
    source = FileSource(EXAMPLES)
    source.load(compile_all=True)
    count, skills = len(source.prompts()), len(source.skills())
    assert count >= 10 and skills >= 1 and source.errors == {}
    done = cli("check", str(EXAMPLES))
    assert done.returncode == 0, done.stderr
    # No warnings either: the examples are what a new library is copied from.
    assert done.stdout.splitlines() == [f"{count} prompts, {skills} skill{'s' * (skills != 1)} ok"]
    assert done.stderr == ""


def test_check_reports_every_problem_as_path_line_message(tmp_path: Path) -> None:
    write(tmp_path, {
        "good.md": "fine\n",
        "also/good.md": "---\narguments:\n  - {name: x}\n---\n{{ x }}\n",
        "bad.md": "---\ntitle: t\ncolour: red\n---\nx\n",
        "sub/worse.md": "one\nassistant:\n{% for %}\nuser: {image: missing.png}\n",
        "args.md": "---\narguments:\n  - name: a\n  - name: b\n    type: date\n---\n{{ a }}\n",
        "latin1.md": b"caf\xe9!",
        "dup.md": "---\nname: good\n---\nsame name\n",
    })
    done = cli("check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "args.md:4: argument 'b': type must be one of string, integer, number, boolean, path, got 'date'",
        "bad.md:3: unknown front matter key 'colour' (known: name, title, description, icons, tags, scopes, arguments, "
        "model, tests)",
        "good.md: prompt name 'good' is already used by dup.md",
        "latin1.md: not UTF-8 text (invalid continuation byte at byte 3)",
        "sub/worse.md:3: template error: Expected an expression, got 'end of statement block'",
        "sub/worse.md:4: file 'missing.png' does not exist in the library",
    ]
    assert done.stderr == "2 prompts ok; 6 problems in 5 files\n"


def test_check_of_a_clean_tmp_library(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "x", "pic.png": PNG, "b.md": "user: {image: pic.png}\n"})
    done = cli("check", str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "2 prompts ok\n", "")


def test_check_of_one_prompt_uses_the_singular(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "x"})
    assert cli("check", str(tmp_path)).stdout == "1 prompt ok\n"


def test_check_of_one_problem_uses_the_singular(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "{{ nobody }}"})
    done = cli("check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout == "a.md:1: template uses 'nobody', which is not an argument (arguments: none)\n"
    assert done.stderr == "0 prompts ok; 1 problem in 1 file\n"


SKILL = "---\nname: {name}\ndescription: Does {name}\n---\nSteps.\n"


def test_check_counts_skills_beside_prompts(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "x", ".claude/skills/git/SKILL.md": SKILL.format(name="git"),
                     "skills/pdf/SKILL.md": SKILL.format(name="pdf"), "skills/pdf/refs/guide.md": "no prompt"})
    done = cli("check", str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "3 prompts, 2 skills ok\n", "")


def test_check_reports_skill_problems_at_file_and_line_once_each(tmp_path: Path) -> None:
    write(tmp_path, {
        "skills/pdf/SKILL.md": SKILL.format(name="pdf"),
        "skills/git/SKILL.md": SKILL.format(name="gitflow"),
        ".claude/skills/yaml/SKILL.md": "---\nname: yaml\ndescription: [\n---\n",
        ".agents/skills/big/SKILL.md": SKILL.format(name="big"),
    })
    with open(tmp_path / ".agents/skills/big/huge.bin", "wb") as sparse:
        sparse.truncate(100 * 2 ** 20)
    os.symlink("/etc/hostname", tmp_path / "skills/pdf/host")
    done = cli("check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        ".agents/skills/big/huge.bin: is larger than 10485760 bytes (the limit for one file of a skill)",
        ".claude/skills/yaml/SKILL.md:4: front matter is not valid YAML: did not find expected node content",
        "skills/git/SKILL.md:2: name 'gitflow' does not match the skill's folder 'git'",
        "skills/pdf/host: is a link that leads out of the skill",
    ]
    assert done.stderr == "2 prompts, 0 skills ok; 4 problems in 4 files\n"


def test_check_of_a_served_skill_folder(tmp_path: Path) -> None:
    write(tmp_path, {".agents/skills/a/SKILL.md": SKILL.format(name="a"), ".agents/skills/b/SKILL.md": "x"})
    done = cli("check", str(tmp_path / ".agents" / "skills"))
    assert done.stdout == "b/SKILL.md:1: SKILL.md has no front matter: it must begin with a '---' line, then name " \
                          "and description, then '---'\n"
    assert done.stderr == "0 prompts, 1 skill ok; 1 problem in 1 file\n"


def test_check_of_several_folders_counts_a_skill_path_once(tmp_path: Path) -> None:
    write(tmp_path / "one", {"skills/a/SKILL.md": SKILL.format(name="a")})
    write(tmp_path / "two", {"skills/a/SKILL.md": SKILL.format(name="a"), "skills/b/SKILL.md": SKILL.format(name="b")})
    done = cli("check", str(tmp_path / "one"), str(tmp_path / "two"))
    assert done.returncode == 1
    assert f"{tmp_path / 'two'}/skills/a: skill a is hidden by {tmp_path / 'one'}/skills/a, which has the same " \
           "path" in done.stdout


def test_check_of_a_missing_folder(tmp_path: Path) -> None:
    done = cli("check", str(tmp_path / "nowhere"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("promptdeck: prompt library ") and "is not a folder" in done.stderr


# -- render -------------------------------------------------------------------------------------------


def test_render_prints_messages_with_role_headers() -> None:
    done = cli("render", str(EXAMPLES), "summarize", "-a", "text=The quarterly report", "--arg", "bullets=3")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("── user ─") and len(lines[0]) == 72
    assert "in at most 3 bullet points" in done.stdout and "The quarterly report" in done.stdout
    assert lines[-1] == "(Summarize a text, or the conversation so far, in a few bullet points.)"


def test_render_describes_non_text_content(tmp_path: Path) -> None:
    write(tmp_path, {"p.md": "user: {image: pic.png}\nassistant: {resource: notes.txt}\n"
                             "user: {resource_link: {uri: 'https://x', name: x, title: The X}}\n",
                     "pic.png": PNG, "notes.txt": "note body"})
    done = cli("render", str(tmp_path), "p")
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if not line.startswith("──")] == [
        f"[image image/png, {len(PNG)} bytes]",
        "[resource promptdeck:///notes.txt (text/plain)]",
        "note body",
        "[link The X: https://x]",
    ]


def test_render_json_is_the_prompts_get_result() -> None:
    done = cli("render", str(EXAMPLES), "describe-image", "--json", "--revision", "2024-11-05")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {"description", "messages"}
    image = result["messages"][0]
    assert image["role"] == "user" and image["content"]["type"] == "image"
    assert base64.b64decode(image["content"]["data"]) == (EXAMPLES / "_material" / "diagram.png").read_bytes()
    assert all(m["content"]["type"] in ("text", "image") for m in result["messages"])


@pytest.mark.parametrize("revision, link", [
    ("2025-03-26", {"type": "text", "text": "debugging-checklist.md: promptdeck:///_material/debugging-checklist.md"}),
    ("2025-06-18", {"type": "resource_link", "uri": "promptdeck:///_material/debugging-checklist.md",
                    "name": "debugging-checklist.md", "mimeType": "text/markdown"}),
])
def test_render_json_shapes_content_for_the_revision(revision: str, link: dict[str, str]) -> None:
    done = cli("render", str(EXAMPLES), "debug.workflow", "-a", "error=KeyError: 'x'", "--json",
               "--revision", revision)
    assert done.returncode == 0, done.stderr
    messages = json.loads(done.stdout)["messages"]
    assert "KeyError: 'x'" in messages[0]["content"]["text"]
    [linked] = [m["content"] for m in messages if "debugging-checklist" in json.dumps(m)]
    size = linked.pop("size", None)
    assert linked == link
    assert size == (None if revision == "2025-03-26"
                    else (EXAMPLES / "_material" / "debugging-checklist.md").stat().st_size)


def test_render_an_unknown_prompt_is_the_clients_error() -> None:
    done = cli("render", str(EXAMPLES), "nope")
    assert done.returncode == 1 and done.stdout == ""
    assert "promptdeck: error -32602: unknown prompt 'nope'" in done.stderr


def test_render_a_mistyped_prompt_says_did_you_mean() -> None:
    done = cli("render", str(EXAMPLES), "git-commit")
    assert done.returncode == 1
    assert done.stderr == "promptdeck: error -32602: unknown prompt 'git-commit'; did you mean 'git.commit'?\n"


def test_render_a_missing_required_argument_names_it() -> None:
    done = cli("render", str(EXAMPLES), "code-review")
    assert done.returncode == 1 and done.stdout == ""
    assert "error -32602: prompt 'code-review' is missing required argument 'code'" in done.stderr


def test_render_a_bad_argument_names_the_rule() -> None:
    done = cli("render", str(EXAMPLES), "code-review", "-a", "code=x", "-a", "strictness=9", "-a", "extra=1")
    assert done.returncode == 1
    assert "error -32602: prompt 'code-review' has no argument 'extra'" in done.stderr
    done = cli("render", str(EXAMPLES), "code-review", "-a", "code=x", "-a", "strictness=9")
    assert done.returncode == 1
    assert "error -32602: prompt 'code-review': argument 'strictness' must be at most 5, got 9" in done.stderr


def test_render_a_path_argument_naming_a_missing_file() -> None:
    done = cli("render", str(EXAMPLES), "describe-image", "-a", "image=_material/nothing.png")
    assert done.returncode == 1
    assert "error -32602: prompt 'describe-image': argument 'image': file '_material/nothing.png' does not exist" \
        in done.stderr


def test_render_audio_for_2024_11_05_is_an_internal_error() -> None:
    done = cli("render", str(EXAMPLES), "standup.transcribe", "--revision", "2024-11-05")
    assert done.returncode == 1 and done.stdout == ""
    assert "promptdeck: error -32603: Internal error" in done.stderr
    assert "audio content cannot be sent to a 2024-11-05 client" in done.stderr  # the log says why


def test_render_usage_errors_exit_2(tmp_path: Path) -> None:
    done = cli("render", str(EXAMPLES), "code-review", "-a", "novalue")
    assert done.returncode == 2 and "-a takes name=value, got 'novalue'" in done.stderr
    done = cli("render", str(EXAMPLES), "code-review", "--revision", "1999-01-01")
    assert done.returncode == 2 and "--revision" in done.stderr
    done = cli("render", str(tmp_path / "nowhere"), "x")
    assert done.returncode == 1 and "is not a folder" in done.stderr


def test_render_of_a_library_with_broken_files_still_renders_the_good_ones(tmp_path: Path) -> None:
    write(tmp_path, {"ok.md": "all good\n", "bad.md": "{% if %}"})
    done = cli("render", str(tmp_path), "ok")
    assert done.returncode == 0 and "all good" in done.stdout
    assert "bad.md:1: template error" in done.stderr  # logged, not fatal


def test_check_takes_several_folders_as_serve_does(tmp_path: Path) -> None:
    write(tmp_path, {"team/a.md": "x", "team/shared.md": "team's\n", "mine/shared.md": "mine\n",
                     "mine/bad.md": "---\ncolour: red\n---\nx\n"})
    done = cli("check", str(tmp_path / "team"), str(tmp_path / "mine"))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{tmp_path / 'mine'}/bad.md:2: unknown front matter key 'colour' (known: name, title, description, icons, "
        "tags, scopes, arguments, model, tests)",
        f"{tmp_path / 'mine'}/shared.md: prompt 'shared' is hidden by {tmp_path / 'team'}/shared.md, which has "
        "the same name",
    ]
    assert done.stderr == "2 prompts ok; 2 problems in 2 files\n"
    assert cli("check", str(tmp_path / "team")).returncode == 0


def test_make_serve_writes_only_json_rpc_to_stdout() -> None:
    """`make serve` is what a client may launch: its stdout must carry nothing but the protocol.
    (Run in the folder: `make -C` announces the directory on stdout, before any Makefile is read.)"""
    import shutil

    repo = REPO
    make = shutil.which("make")
    assert make is not None, "make is part of the documented set-up"
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    # As a client launches it: not from inside another make (which would make this one announce its folder).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run([make, "serve"], cwd=repo, input=json.dumps(hello) + "\n", capture_output=True,
                          text=True, timeout=600, env=env)
    lines = done.stdout.splitlines()
    assert lines and all(json.loads(line)["jsonrpc"] == "2.0" for line in lines), done.stdout[:500]
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "promptdeck"


def test_check_reports_every_mistake_of_a_file_in_one_run(tmp_path: Path) -> None:
    """A file stopped at its first front-matter problem; now each independent one is named at its line,
    with "did you mean" for a key that is close to a known one."""
    (tmp_path / "bad.md").write_text(
        "---\ndescripton: Review code\ntitle: 5\ntags: nope\narguments:\n  - name: code\n    requird: true\n"
        "  - name: lang\n    type: colour\n  - name: code\n---\nReview {{ code }} in {{ lang }}.\n")
    done = cli("check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "bad.md:2: unknown front matter key 'descripton'; did you mean 'description'? (known: name, title, "
        "description, icons, tags, scopes, arguments, model, tests)",
        "bad.md:3: title must be text",
        "bad.md:4: tags must be a list of words",
        "bad.md:6: argument 'code': unknown key 'requird'; did you mean 'required'? (known: default, description, "
        "enum, examples, max, min, name, pattern, required, title, type)",
        "bad.md:8: argument 'lang': type must be one of string, integer, number, boolean, path, got 'colour'",
        "bad.md:10: argument 'code' is declared twice",
    ]
    assert done.stderr == "0 prompts ok; 6 problems in 1 file\n"


def test_check_names_template_problems_beside_front_matter_ones(tmp_path: Path) -> None:
    (tmp_path / "two.md").write_text("---\ntags: 3\n---\nHello {{ who }}.\n")
    done = cli("check", str(tmp_path))
    assert done.stdout.splitlines() == ["two.md:2: tags must be a list of words",
                                        "two.md:4: template uses 'who', which is not an argument (arguments: none)"]


@pytest.mark.parametrize("options", [["--text-resources"], ["--text-resources", "--tools"]])
def test_serve_text_resources_sends_text_blocks(options: list[str]) -> None:
    """``--text-resources`` on the fast stdio path and through click (``--tools`` is not on the fast path)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "project-analysis"}},
    ]
    done = subprocess.run([sys.executable, "-m", "promptdeck", "serve", "--no-watch", *options, str(EXAMPLES)],
                          input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    result = [json.loads(line) for line in done.stdout.splitlines()][1]["result"]
    kinds = [message["content"]["type"] for message in result["messages"]]
    assert "resource" not in kinds and "resource_link" not in kinds, kinds
    assert result["_meta"]["promptdeck.dev/textResources"] == 4


def test_check_reports_composition_problems_at_their_lines(tmp_path: Path) -> None:
    """Issue 31: includes that would fail, an unknown prompt or argument, a cycle and a wider prompt composing a
    narrower one are problems at the composing line; a check that passes means the composed render works."""
    write(tmp_path, {
        "_p/tone.md": "Be {{ tone }}.",
        "_p/bad.md": "fine\n{% endif %}",
        "rules.md": "---\narguments:\n  - {name: tone, required: true}\n---\n{% include \"_p/tone.md\" %}\n",
        "uses.md": "{{ prompt(\"rules\", tone=\"kind\") }}\n{{ prompt(\"rulez\") }}\n"
                   "{{ prompt(\"rules\", tone=1, x=2) }}\n",
        "broken.md": "a\n{% include \"_p/bad.md\" %}\n",
        "a.md": "{{ prompt(\"b\") }}\n", "b.md": "{{ prompt(\"a\") }}\n",
        "hr.md": "---\nscopes: [hr]\n---\nsalaries\n", "open.md": "user: {prompt: hr}\n",
    })
    done = cli("check", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "b.md:1: prompt cycle: a → b → a",
        "broken.md:2: include '_p/bad.md': partial '_p/bad.md' line 2: Encountered unknown tag 'endif'.",
        "open.md:1: prompt 'open', seen by everyone, composes 'hr', restricted to hr: it would show 'hr' to "
        "principals who may not see it; restrict 'open' as narrowly, or compose another prompt",
        "uses.md:2: prompt('rulez'): no prompt 'rulez' in the library; did you mean 'rules'?",
        "uses.md:3: prompt('rules'): 'rules' has no argument 'x' (it takes: tone)",
    ]
    assert done.stderr == "6 prompts ok; 5 problems in 4 files\n"
    fixed = cli("check", str(write(tmp_path, {"uses.md": "{{ prompt(\"rules\", tone=\"kind\") }}\n",
                                              "broken.md": "a\n", "b.md": "b\n", "open.md": "open\n"})))
    assert fixed.returncode == 0 and fixed.stdout == "7 prompts ok\n"
    shown = cli("render", str(tmp_path), "uses")
    assert shown.returncode == 0 and shown.stdout.startswith("── user") and "Be kind." in shown.stdout


def test_publish_refuses_a_composition_problem_and_keeps_the_good_version(tmp_path: Path) -> None:
    library = write(tmp_path / "lib", {"rules.md": "rules\n", "p.md": "{{ prompt(\"rules\") }}\n"})
    url = f"sqlite:///{tmp_path}/store.db"
    assert cli("publish", str(library), "--store", url).returncode == 0
    write(library, {"p.md": "{{ prompt(\"rulez\") }}\n"})
    refused = cli("publish", str(library), "--store", url)
    assert refused.returncode == 1
    assert "p.md:1: prompt('rulez'): no prompt 'rulez' in the library; did you mean 'rules'?" in refused.stdout
    history = cli("history", "p", "--store", url)
    assert history.returncode == 0 and len(history.stdout.splitlines()) == 1  # the good version only
