"""``promptdeck export --to FORMAT``: a library written in other tools' prompt formats.

The shape of a prompt (which arguments stay placeholders) is tested on its own; the command is run as
a real process, from a folder and from a store; and Prompty and dotprompt files are read back with
those formats' own libraries, whose rendering must equal promptdeck's for the values given.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from promptdeck.export.shapes import shape_of
from promptdeck.export.skills import SKILL_FOLDERS
from promptdeck.export.writers import TARGETS, export
from promptdeck.prompts.arguments import Argument
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Message, user
from promptdeck.sources.files.source import FileSource
from tests.support.cli import pd
from tests.support.libraries import EXAMPLES

#: Where each target writes the prompt ``git.commit``.
GIT_COMMIT = {
    "claude-code": ".claude/commands/git/commit.md",
    "copilot": ".github/prompts/git.commit.prompt.md",
    "cursor": ".cursor/commands/git.commit.md",
    "codex": ".codex/prompts/git.commit.md",
    "gemini": ".gemini/commands/git/commit.toml",
    "prompty": "git.commit.prompty",
    "dotprompt": "git.commit.prompt",
    "promptfoo": "prompts/git.commit.json",
    "github-models": "git.commit.prompt.yml",
}


def examples() -> dict[str, Prompt]:
    source = FileSource(EXAMPLES)
    source.load()
    return {p.name: p for p in source.prompts()}


def render(prompt: Prompt, values: dict[str, Any]) -> list[Message]:
    return list(prompt.render(values, RenderContext(prompt.name)))  # type: ignore[arg-type]


def _python(name: str, fn: Any, *arguments: Argument) -> Prompt:
    return Prompt(name, lambda values, ctx: fn(**values), arguments=arguments)


# -- the command -------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_export_writes_every_example_prompt(target: str, tmp_path: Path) -> None:
    out = tmp_path / target
    done = pd("export", str(EXAMPLES), str(out), "--to", target)
    skills = target in SKILL_FOLDERS  # the example skill, changelog, goes to the tool's skill folder
    also = " and 1 skill" if skills else ""
    # ... once: as a skill, not also as a command (its SKILL.md is served as the prompt 'changelog' too)
    assert f"wrote {11 - skills} prompts{also} of library {EXAMPLES} as {target} to {out}" in done.stdout
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    project = target == "promptfoo"  # and its promptfooconfig.yaml (tests/export/test_promptfoo.py)
    assert len(written) == 11 + skills + project and GIT_COMMIT[target] in written, written
    assert not skills or not [path for path in written if "changelog" in path and "/skills/" not in path], written
    if not skills:
        assert f"warning: {target} has no skill folder; 1 skill not written" in done.stderr
    # One line per warning, naming its file.
    assert f"{GIT_COMMIT[target]}: warning: " in done.stderr
    text = (out / GIT_COMMIT[target]).read_text()
    if target == "gemini":
        parsed = tomllib.loads(text)
        assert "Write a git commit message" in parsed["prompt"]
    elif target == "promptfoo":
        assert json.loads(text)[0]["content"].startswith("Write a git commit message")
    elif target == "github-models":
        assert yaml.safe_load(text)["messages"][0]["content"].startswith("Write a git commit message")
    elif target != "cursor":
        front = yaml.safe_load(text.split("---\n")[1])
        assert isinstance(front, dict) and front
    assert {"claude-code": "$", "copilot": "${input:diff:", "codex": "$DIFF", "gemini": "Write",
            "prompty": "{{diff}}", "dotprompt": "{{diff}}", "cursor": "Write",
            "promptfoo": "{{ diff }}", "github-models": "{{diff}}"}[target] in text


REVIEW = """---
description: Review code
arguments:
  - {name: code, required: true}
  - {name: focus, description: what to look at}
  - {name: style}
---
Review {{ code }} for {{ style }}.{% if focus is defined %} Focus on {{ focus }}.{% endif %}
"""


def test_gemini_leaves_out_an_optional_argument_it_has_no_place_for(tmp_path: Path) -> None:
    """Gemini takes one text: of the others, an optional one without a default is left out, as the renderer
    leaves out what depends on it (or is empty text, where the template uses it unguarded), never filled
    with made-up sample words; and each warning is a line of its own, naming the file."""
    from promptdeck.prompts.arguments import bind

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/review.md").write_text(REVIEW)
    done = pd("export", str(tmp_path / "lib"), str(tmp_path / "out"), "--to", "gemini")
    assert done.stdout == f"wrote 1 prompt of library {tmp_path / 'lib'} as gemini to {tmp_path / 'out'} (1 with " \
                          "warnings)\n"
    command = (tmp_path / "out/.gemini/commands/review.toml").read_text()
    assert "sample" not in command and "Focus" not in command
    assert tomllib.loads(command)["prompt"] == "Review {{args}} for ."
    assert done.stderr.splitlines() == [
        ".gemini/commands/review.toml: warning: argument 'focus' is left out: Gemini CLI commands take one text, "
        "{{args}}",
        ".gemini/commands/review.toml: warning: argument 'style' is fixed to empty text: Gemini CLI commands take "
        "one text, {{args}}"]
    # read back, it renders what promptdeck renders with focus left out and style empty
    back = FileSource(tmp_path / "out")
    back.load()
    [theirs] = back.prompts()
    [ours] = examples_of(tmp_path / "lib")
    assert _raw_texts(render(theirs, bind(theirs.arguments, {"args": "x.py"}, "review"))) == \
        _raw_texts(render(ours, {"code": "x.py", "style": ""}))


def examples_of(folder: Path) -> list[Prompt]:
    source = FileSource(folder)
    source.load()
    return source.prompts()


def test_long_values_in_warnings_are_cut_short() -> None:
    text = Argument(name="text", required=True)
    log = Argument(name="log", default="x" * 500)
    prompt = _python("p", lambda text, log="": [user(f"{text} {log.upper()}")], text, log)
    (written,) = export([prompt], "gemini")
    [fixed] = [w for w in written.warnings if "'log'" in w]
    assert len(fixed) < 140 and "xxx…'" in fixed


def test_export_refuses_a_folder_that_is_not_empty_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    refused = pd("export", str(EXAMPLES), str(out), "--to", "copilot", check=False)
    assert refused.returncode == 1 and "is not an empty folder" in refused.stderr and "--force" in refused.stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    pd("export", str(EXAMPLES), str(out), "--to", "copilot", "--force")
    assert (out / "keep.txt").read_text() == "mine" and (out / GIT_COMMIT["copilot"]).is_file()


def test_a_library_with_a_problem_is_not_exported(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    shutil.copytree(EXAMPLES, library)
    (library / "broken.md").write_text("---\narguments: [{name: 1x}]\n---\nHi\n")
    refused = pd("export", str(library), str(tmp_path / "out"), "--to", "gemini", check=False)
    assert refused.returncode == 1 and "broken.md:" in refused.stderr and "fix them first" in refused.stderr
    assert not (tmp_path / "out").exists()


def test_wrong_invocations_say_what_is_wrong(tmp_path: Path) -> None:
    no_target = pd("export", str(EXAMPLES), str(tmp_path / "o"), check=False)
    assert no_target.returncode == 2 and "needs --to FORMAT" in no_target.stderr
    both = pd("export", str(EXAMPLES), str(tmp_path / "o"), "--store", str(tmp_path / "s.db"), "--to", "cursor",
              check=False)
    assert both.returncode == 2 and "not both" in both.stderr
    unknown = pd("export", str(EXAMPLES), str(tmp_path / "o"), "--to", "word", check=False)
    assert unknown.returncode == 2 and "claude-code" in unknown.stderr


def test_a_store_label_exports_as_its_folder_does(tmp_path: Path) -> None:
    store = tmp_path / "prompts.db"
    pd("publish", str(EXAMPLES), "--store", str(store), "--label", "production", "-m", "first")
    pd("export", str(tmp_path / "from-store"), "--store", str(store), "--label", "production", "--to", "codex")
    pd("export", str(EXAMPLES), str(tmp_path / "from-folder"), "--to", "codex")
    def files(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
    assert files(tmp_path / "from-store") == files(tmp_path / "from-folder")


# -- read back by the formats' own libraries ---------------------------------------------------------


def _values(prompt: Prompt, fixed: dict[str, Any], holes: list[Argument]) -> dict[str, Any]:
    values = dict(fixed)
    for arg in holes:
        # Markup and template syntax in a value must come out as it went in.
        text = f'value of {arg.name} <a &amp; b> &"q" {{{{x}}}} {{% y %}}'
        values[arg.name] = {"integer": 4, "number": 2.5, "boolean": True}.get(arg.type, text)
        if arg.enum is not None:
            values[arg.name] = arg.enum[-1]
    return values


def _texts(messages: list[Message]) -> list[tuple[str, str]]:
    from promptdeck.export.shapes import _split

    parts, _ = _split(messages, {})
    return [(role, "".join(p for p in ps if isinstance(p, str)).strip()) for role, ps in parts]


def test_prompty_reads_back_what_promptdeck_renders(tmp_path: Path) -> None:
    prompty = pytest.importorskip("prompty")
    prompts = examples()
    for written in export(prompts.values(), "prompty"):
        prompt = prompts[written.prompt]
        shape = shape_of(prompt)
        path = tmp_path / written.path
        path.write_text(written.text)
        values = _values(prompt, shape.fixed, shape.holes)
        theirs = prompty.prepare(prompty.load(str(path)), {a.name: values[a.name] for a in shape.holes})
        got = [(str(m.role), "".join(p.value for p in m.parts).strip()) for m in theirs]
        if any("would start a new message" in w for w in written.warnings):
            continue
        assert got == _texts(render(prompt, values)), written.prompt


def test_dotprompt_reads_back_what_promptdeck_renders(tmp_path: Path) -> None:
    dotpromptz = pytest.importorskip("dotpromptz")
    prompts = examples()
    engine = dotpromptz.Dotprompt()
    for written in export(prompts.values(), "dotprompt"):
        prompt = prompts[written.prompt]
        shape = shape_of(prompt)
        values = _values(prompt, shape.fixed, shape.holes)
        rendered = engine.render(written.text, dotpromptz.DataArgument(input={a.name: values[a.name]
                                                                              for a in shape.holes}))
        if asyncio.iscoroutine(rendered):
            rendered = asyncio.run(rendered)
        got = [({"model": "assistant"}.get(m.role.value, m.role.value), "".join(p.text for p in m.content).strip())
               for m in rendered.messages]
        ours = _texts(render(prompt, values))
        if len(ours) == 1:
            got = [("user", "\n\n".join(text for _, text in got))]
        assert got == ours, written.prompt


def test_text_a_format_would_take_for_a_placeholder_is_reported() -> None:
    prompt = Prompt("sh", lambda values, ctx: [user("Run `echo $1 $HOME`, !{ls}, {{args}} and ${input:x}.")])
    warned = {target: " ".join(export([prompt], target)[0].warnings) for target in TARGETS}
    assert "'$1', which Claude Code would fill in" in warned["claude-code"]
    assert "'$HOME', which Codex would fill in" in warned["codex"]  # named: then $1 stays as written
    assert "'!{ls}', '{{args}}', which Gemini CLI would fill in" in warned["gemini"]
    assert "'${input:x}', which VS Code would fill in" in warned["copilot"]
    assert "fill in" not in warned["prompty"]  # its text is wrapped in {% raw %}


# -- round trips through promptdeck's own readers of those formats ---------------------------------


def _raw_texts(messages: list[Message]) -> list[str]:
    from promptdeck.export.shapes import _split

    parts, _ = _split(messages, {})
    return ["".join(p for p in ps if isinstance(p, str)) for _, ps in parts]


def _argument_name(target: str, hole: str, holes: list[Argument]) -> str:
    """What promptdeck's reader of ``target`` calls the argument that fills ``hole``."""
    if target == "claude-code" and len(holes) == 1 or target == "cursor":
        return "arguments"  # $ARGUMENTS; the text typed after a Cursor command
    return {"codex": hole.upper(), "gemini": "args"}.get(target, hole)


#: The targets promptdeck also reads (docs/native-formats.md): all of them.
READ_BACK = ("claude-code", "copilot", "cursor", "codex", "gemini", "prompty", "dotprompt", "github-models")


@pytest.mark.parametrize("target", READ_BACK)
def test_a_round_trip_keeps_every_rendering_the_format_can_express(target: str, tmp_path: Path) -> None:
    from promptdeck.prompts.arguments import bind

    prompts = examples()
    pd("export", str(EXAMPLES), str(tmp_path), "--to", target)
    back = FileSource(tmp_path)
    problems = back.load()
    assert not problems and not back.errors, (problems, back.errors)
    read = {p.name: p for p in back.prompts()}
    # a skill goes to the skill folder only; of those, Claude Code's is read back as a prompt too
    as_skills = {n for n, p in prompts.items() if p.source.endswith("/SKILL.md")} if target in SKILL_FOLDERS else set()
    assert set(read) - as_skills == set(prompts) - as_skills
    written = {w.prompt: w for w in export(prompts.values(), target)}
    clashing = {w.prompt for w in written.values()
                if any("would fill in" in x or "would start a new message" in x for x in w.warnings)}
    # project-analysis quotes a SQL log line with $1 in it; debug.workflow a config with a user: line
    assert len(clashing) <= 1, clashing
    for name, prompt in prompts.items():
        if name not in read and name in as_skills:
            continue
        if name in clashing:
            continue  # reported as lost: the format would fill in part of the prompt's own text
        kept = [a for a in prompt.arguments if a.name in written[name].kept]
        # One word each where the format splits what is typed at spaces; otherwise text with spaces and syntax.
        words = target == "claude-code" and len(kept) > 1
        for variant in range(2):
            values = dict(written[name].fixed)
            given: dict[str, str] = {}
            for arg in kept:
                value: Any = {"integer": 3 + variant, "number": 1.5, "boolean": True}.get(arg.type)
                if value is None:
                    value = arg.enum[variant % len(arg.enum)] if arg.enum else (
                        f"w{variant}-{arg.name}" if words else f"{arg.name} {variant}: $1 {{{{x}}}} ${{input:y}}")
                values[arg.name] = value
                given[_argument_name(target, arg.name, kept)] = str(value)
            mine = render(prompt, values)
            theirs_prompt = read[name]
            theirs = render(theirs_prompt, bind(theirs_prompt.arguments, given, name))
            if target in ("prompty", "dotprompt", "github-models"):  # the formats with roles: message by message
                assert _texts(theirs) == _texts(mine), (target, name, variant)
                continue
            assert [m.role for m in theirs] == ["user"], name
            assert _texts(theirs)[0][1] == "\n\n".join(_raw_texts(mine)).strip(), (target, name, variant)


def test_model_settings_are_carried_over(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    (library / ".claude" / "commands").mkdir(parents=True)
    (library / ".claude" / "commands" / "fix.md").write_text(
        "---\ndescription: Fix it\nmodel: sonnet\nallowed-tools: [Bash, Read]\ncustom: 1\n---\nFix $ARGUMENTS now.\n")
    (library / "plan.md").write_text("---\nmodel: {name: gpt-4o, temperature: 0.2}\n---\nMake a plan.\n")
    pd("export", str(library), str(tmp_path / "out"), "--to", "claude-code")
    fix = yaml.safe_load((tmp_path / "out/.claude/commands/fix.md").read_text().split("---\n")[1])
    # From Claude Code to Claude Code: every setting it had.
    assert fix == {"description": "Fix it", "argument-hint": "[arguments]", "model": "sonnet",
                   "allowed-tools": ["Bash", "Read"], "custom": 1}
    plan = yaml.safe_load((tmp_path / "out/.claude/commands/plan.md").read_text().split("---\n")[1])
    assert plan == {"model": "gpt-4o"}  # promptdeck's model block gives its name


def test_claude_code_warnings_are_one_a_line_and_the_formats_own_said_once(tmp_path: Path) -> None:
    """They were one run-on line per file, and each repeated what Claude Code does to every command."""
    done = pd("export", str(EXAMPLES), str(tmp_path / "out"), "--to", "claude-code")
    lines = done.stderr.splitlines()
    split = "Claude Code splits what is typed at spaces: each argument holds one word"
    assert [line for line in lines if split in line] == [f"warning: {split} (in 8 of the 10 files)"]
    for line in lines:
        assert line.startswith((".claude/commands/", "warning: ")) and "; " not in line, line
    assert ".claude/commands/summarize.md: warning: argument 'bullets' loses its default 5: it must be given" in lines
