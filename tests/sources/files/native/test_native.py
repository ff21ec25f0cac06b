"""Other tools' prompt files read natively (sources/native/, prompts/paths.prompt_format): per format, how
names, descriptions, arguments and bodies map to MCP, every problem with its line, hostile files, and
one mixed library served end to end to the official SDK client over stdio (list, get, complete)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from promptdeck.prompts.arguments import bind
from promptdeck.prompts.limits import MAX_OUTPUT_CHARS
from promptdeck.prompts.spec import Prompt, RenderContext
from promptdeck.protocol.content import Text
from promptdeck.protocol.errors import InternalError, InvalidParams
from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.paths import is_prompt_path, may_hold_prompts, prompt_format
from promptdeck.sources.files.source import MAX_PROMPT_FILE_BYTES, FileSource
from tests.support.files import Files, load, prompts, write


def problems(source: FileSource) -> dict[str, list[tuple[int | None, str]]]:
    return {rel: [(e.line, e.reason) for e in errors] for rel, errors in source.errors.items()}


def one_problem(root: Path, files: Files, rel: str, line: int | None, message: str) -> None:
    """``rel`` among ``files`` has one problem, saying ``message`` at ``line``; the rest is still served."""
    source = load(root, {**files, "ok.md": "fine\n"})
    [(got_line, got)] = problems(source)[rel]
    assert message in got and got_line == line
    assert set(prompts(source)) == {"ok"}


def text(prompt: Prompt, **raw: str) -> str:
    """The single user message's text for the argument values ``raw``."""
    messages = prompt.render(bind(prompt.arguments, raw, prompt.name), RenderContext(prompt.name))
    assert not isinstance(messages, list) or all(m.role == "user" for m in messages)
    assert isinstance(messages, list)
    if not messages:
        return ""
    [message] = messages
    assert isinstance(message.content, Text)
    return message.content.text


def arg_names(prompt: Prompt) -> list[str]:
    return [a.name for a in prompt.arguments]


# -- which paths are prompts ---------------------------------------------------------------------------


@pytest.mark.parametrize(("rel", "kind"), [
    ("a.md", "promptdeck"),
    ("docs/a.md", "promptdeck"),
    ("docs/x.prompt.md", "copilot"),
    (".claude/commands/a.md", "claude-command"),
    (".claude/commands/git/deep/a.md", "claude-command"),
    (".claude/skills/explain/SKILL.md", "claude-skill"),
    (".github/prompts/a.prompt.md", "copilot"),
    (".github/prompts/sub/a.prompt.md", "copilot"),
    (".cursor/commands/a.md", "cursor"),
    (".continue/prompts/a.md", "continue"),
    (".codex/prompts/a.md", "codex"),
    (".gemini/commands/a.toml", "gemini"),
    (".gemini/commands/git/a.toml", "gemini"),
    ("a.prompty", "prompty"), ("qa/a.prompty", "prompty"), (".x/a.prompty", None), ("_m/a.prompty", None),
    ("a.prompt", "dotprompt"), ("docs/a.prompt", "dotprompt"), (".x/a.prompt", None), ("_m/a.prompt", None),
    ("a.prompt.yml", "github-models"), ("docs/a.prompt.yaml", "github-models"), (".x/a.prompt.yml", None),
    ("_m/a.prompt.yml", None), ("a.yml", None), (".github/workflows/ci.yml", None),
    # not prompts: other hidden files, material, a skill's other files, other folders' files
    (".env", None), (".git/x.md", None), ("x/.claude/commands/a.md", None), ("_m/a.md", None),
    (".claude/a.md", None), (".claude/commands/_m/a.md", None), (".claude/commands/.h/a.md", None),
    (".claude/skills/x/notes.md", None), (".claude/skills/x/y/SKILL.md", None), (".claude/skills/_x/SKILL.md", None),
    (".github/prompts/a.md", None), (".github/workflows/ci.md", None), (".cursor/commands/x/a.md", None),
    (".gemini/commands/a.md", None), ("a.toml", None),
    # a library's own skills: SKILL.md is read as Claude Code reads one, a skill's other files are the skill's
    ("skills/pdf/SKILL.md", "claude-skill"), ("skills/pdf/notes.md", None), ("skills/pdf/refs/a.md", None),
    ("skills/pdf/inner/SKILL.md", None), ("skills/_pdf/SKILL.md", None), ("skills/a.md", "promptdeck"),
    ("x/skills/pdf/a.md", "promptdeck"), (".agents/skills/pdf/SKILL.md", None),
])
def test_prompt_format_by_path(rel: str, kind: str | None) -> None:
    assert prompt_format(rel) == kind
    assert is_prompt_path(rel) is (kind is not None)


def test_a_scan_enters_the_native_folders_only() -> None:
    assert all(may_hold_prompts(d) for d in (".claude", ".claude/commands", ".claude/commands/git", ".claude/skills",
                                             ".claude/skills/x", ".github", ".github/prompts", ".gemini/commands/a"))
    assert not any(may_hold_prompts(d) for d in (".git", ".github/workflows", ".claude/skills/x/y", ".venv",
                                                 ".claude/commands/.h", ".cursor/commands/x", "_material",
                                                 "skills/x/references", ".agents"))
    assert may_hold_prompts("skills") and may_hold_prompts("skills/x")


# -- Claude Code -------------------------------------------------------------------------------------


COMMIT = """---
description: Commit with a message
argument-hint: "[message] [high|low]"
allowed-tools: Bash(git add:*), Bash(git commit:*)
model: claude-3-5-haiku-20241022
---
Commit $0 at $1 priority. All: $ARGUMENTS. Keep {{ this }} and {% that %}. Costs $100; $ARGUMENTS[12] is gone.
"""


def test_claude_command_positions_named_by_the_hint(tmp_path: Path) -> None:
    source = load(tmp_path, {".claude/commands/git/commit.md": COMMIT})
    assert problems(source) == {}
    prompt = prompts(source)["git.commit"]
    assert prompt.description == "Commit with a message"
    assert arg_names(prompt) == ["message", "arg1"]
    assert not any(a.required for a in prompt.arguments)
    assert prompt.arguments[1].examples == ("high", "low")  # offered by completion
    assert prompt.meta[META_FORMAT] == "claude-command"
    assert prompt.meta[META_MODEL] == {"argument-hint": "[message] [high|low]",
                                       "allowed-tools": "Bash(git add:*), Bash(git commit:*)",
                                       "model": "claude-3-5-haiku-20241022"}
    listing = prompt.listing()
    assert listing["_meta"][META_MODEL]["model"] == "claude-3-5-haiku-20241022"
    assert text(prompt, message="fix", arg1="high") == (
        "Commit fix at high priority. All: fix high. Keep {{ this }} and {% that %}. Costs $100;  is gone.\n")
    # Missing words are empty, as in Claude Code.
    assert text(prompt) == "Commit  at  priority. All: . Keep {{ this }} and {% that %}. Costs $100;  is gone.\n"


def test_claude_values_are_substituted_once(tmp_path: Path) -> None:
    """A value that looks like a placeholder (of this format or another) comes out as written."""
    source = load(tmp_path, {".claude/commands/c.md": COMMIT, ".claude/commands/raw.md": "Do: $ARGUMENTS\n"})
    tricky = "$1 $ARGUMENTS ${input:x} {{ y }} $0"
    assert text(prompts(source)["c"], message=tricky, arg1="$0").startswith(f"Commit {tricky} at $0 priority. "
                                                                            f"All: {tricky} $0.")
    assert text(prompts(source)["raw"], arguments=tricky) == f"Do: {tricky}\n"


def test_claude_command_without_placeholders_gets_the_arguments_appended(tmp_path: Path) -> None:
    source = load(tmp_path, {".claude/commands/review.md": "Review the code.\n\n"})
    prompt = prompts(source)["review"]
    assert arg_names(prompt) == ["arguments"]
    assert prompt.description == "Review the code."  # Claude Code shows the first line when none is given
    assert text(prompt) == "Review the code."
    assert text(prompt, arguments="the parser") == "Review the code.\n\nARGUMENTS: the parser"
    assert META_MODEL not in prompt.meta


def test_claude_skill_with_named_arguments(tmp_path: Path) -> None:
    skill = ("---\nname: explain-it\ndescription: Explain a topic\narguments: [topic, level-of-detail]\n"
             "disable-model-invocation: true\n---\nExplain $topic at $level-of-detail ($topics stays).\n")
    source = load(tmp_path, {".claude/skills/explain/SKILL.md": skill,
                             ".claude/skills/plain/SKILL.md": "Say $ARGUMENTS twice: $ARGUMENTS\n",
                             ".claude/skills/plain/reference.md": "not a prompt\n"})
    assert problems(source) == {}
    found = prompts(source)
    assert set(found) == {"explain-it", "plain"}
    prompt = found["explain-it"]
    assert arg_names(prompt) == ["topic", "level_of_detail"]  # MCP names: '-' becomes '_'
    assert prompt.meta[META_FORMAT] == "claude-skill"
    assert prompt.meta[META_MODEL] == {"arguments": ["topic", "level-of-detail"], "disable-model-invocation": True}
    assert text(prompt, topic="DNS", level_of_detail="deep") == "Explain DNS at deep ($topics stays).\n"
    assert text(found["plain"], arguments="hi") == "Say hi twice: hi\n"


def test_a_skill_read_as_a_prompt_is_named_by_its_folder_and_scoped_as_the_skill(tmp_path: Path) -> None:
    source = load(tmp_path, {
        "skills/pdf/SKILL.md": "---\ndescription: PDFs\nmetadata:\n  promptdeck-scopes: hr\n---\nDo $ARGUMENTS.\n",
        ".claude/skills/git/SKILL.md": "---\nname: git\ndescription: Git\nscopes: [eng]\n---\nGit.\n",
        "skills/pdf/references/guide.md": "not a prompt\n"})
    assert problems(source) == {}
    found = prompts(source)
    assert set(found) == {"pdf", "git"}
    assert found["pdf"].scopes == {"hr"} and found["pdf"].meta[META_FORMAT] == "claude-skill"
    assert found["pdf"].meta[META_MODEL] == {"metadata": {"promptdeck-scopes": "hr"}}
    assert found["git"].scopes == {"eng"}


@pytest.mark.parametrize(("files", "rel", "line", "message"), [
    ({".claude/skills/s/SKILL.md": "---\nname: s\nmetadata:\n  promptdeck-scopes: [1]\n---\nx\n"},
     ".claude/skills/s/SKILL.md", 4, "metadata.promptdeck-scopes must be scope names"),
    ({".claude/commands/a.md": "---\nargument-hint: [a] [b]\n---\nx\n"}, ".claude/commands/a.md", 2,
     "front matter is not valid YAML"),
    ({".claude/commands/a.md": "---\n- a\n- b\n---\nx\n"}, ".claude/commands/a.md", 2, "must be a mapping"),
    ({".claude/commands/a.md": "---\ndescription: x\n"}, ".claude/commands/a.md", 1, "no closing '---'"),
    ({".claude/commands/a.md": "---\nmodel: m\ndescription: [1]\n---\nx\n"}, ".claude/commands/a.md", 3,
     "description must be text"),
    ({".claude/commands/a.md": "---\nargument-hint: [scope: full]\n---\nx\n"}, ".claude/commands/a.md", 2,
     "argument-hint must be text"),
    ({".claude/commands/a.md": "---\n\narguments: [a, 'b c']\n---\n$a\n"}, ".claude/commands/a.md", 3,
     "arguments must be a list of names"),
    ({".claude/commands/a.md": "---\narguments: [a-b, a_b]\n---\n$a-b\n"}, ".claude/commands/a.md", 2,
     "another argument has"),
    ({".claude/commands/my command.md": "x\n"}, ".claude/commands/my command.md", None,
     "prompt name 'my command' (from the path .claude/commands/my command.md) is not valid"),
    ({".claude/skills/s/SKILL.md": "---\nx: 1\nname: bad name\n---\nx\n"}, ".claude/skills/s/SKILL.md", 3,
     "prompt name 'bad name'"),
    ({".claude/commands/a.md": b"\xff\xfe"}, ".claude/commands/a.md", None, "not UTF-8"),
])
def test_claude_problems_name_file_and_line(tmp_path: Path, files: Files, rel: str, line: int | None,
                                            message: str) -> None:
    one_problem(tmp_path, files, rel, line, message)


# -- VS Code / Copilot prompt files ---------------------------------------------------------------------


FORM = """---
agent: 'agent'
model: GPT-4o
tools: ['githubRepo', 'search/codebase']
description: 'Generate a new React form component'
---
Make ${input:formName:MyForm} (${input:formName}) for ${file}:
${selection}
Left as written: ${env:HOME} ${input} {{ x }} $1 #tool:githubRepo
"""


def test_copilot_inputs_and_editor_variables_become_arguments(tmp_path: Path) -> None:
    source = load(tmp_path, {".github/prompts/react/form.prompt.md": FORM,
                             "docs/review.prompt.md": "---\nname: code-review\nmode: ask\n---\nReview.\n"})
    assert problems(source) == {}
    found = prompts(source)
    assert set(found) == {"react.form", "code-review"}
    prompt = found["react.form"]
    assert prompt.description == "Generate a new React form component"
    assert [(a.name, a.required, a.description) for a in prompt.arguments] == [
        ("formName", False, "MyForm (${input:formName})"),
        ("file", False, "path of the file open in the editor (${file})"),
        ("selection", False, "the text selected in the editor (${selection})")]
    assert prompt.meta[META_FORMAT] == "copilot"
    assert prompt.meta[META_MODEL] == {"agent": "agent", "model": "GPT-4o", "tools": ["githubRepo", "search/codebase"]}
    assert found["code-review"].meta[META_MODEL] == {"mode": "ask"}
    assert text(prompt, formName="Signup", file="src/a.tsx", selection="<form/>") == (
        "Make Signup (Signup) for src/a.tsx:\n<form/>\n"
        "Left as written: ${env:HOME} ${input} {{ x }} $1 #tool:githubRepo\n")
    assert text(prompt).startswith("Make  () for :\n\n")  # nothing given: empty, as every format here


def test_copilot_values_are_substituted_once(tmp_path: Path) -> None:
    source = load(tmp_path, {"a.prompt.md": "${input:a} ${selection}\n"})
    tricky = "${selection} ${input:a} $ARGUMENTS {{ a }}"
    assert text(prompts(source)["a"], a=tricky, selection="S") == f"{tricky} S\n"


# -- Codex, Cursor, Continue ----------------------------------------------------------------------------


def test_codex_positional_prompt(tmp_path: Path) -> None:
    body = ("---\ndescription: \"Review a PR\"\nargument-hint: [pr-number] [priority]\n---\n"
            "Review PR #$1 at $2 ($$1 stays, $10 is the first word then 0, all: $ARGUMENTS).\n")
    source = load(tmp_path, {".codex/prompts/review-pr.md": body, ".codex/prompts/plain.md": "Just text $.\n",
                             ".codex/prompts/all.md": "Fix #$ARGUMENTS now\n"})
    assert problems(source) == {}  # Codex reads `argument-hint: [a] [b]`, which is no YAML: so does this
    found = prompts(source)
    prompt = found["review-pr"]
    assert prompt.description == "Review a PR"
    assert [(a.name, a.description) for a in prompt.arguments] == [("pr_number", "pr-number ($1)"),
                                                                   ("priority", "priority ($2)")]
    assert prompt.meta[META_MODEL] == {"argument-hint": "[pr-number] [priority]"}
    assert text(prompt, pr_number="12", priority="$2") == ("Review PR #12 at $2 ($$1 stays, 120 is the first word "
                                                           "then 0, all: 12 $2).\n")
    assert found["plain"].arguments == () and text(found["plain"]) == "Just text $.\n"
    assert arg_names(found["all"]) == ["arguments"] and text(found["all"], arguments="1 2") == "Fix #1 2 now\n"


def test_codex_named_placeholders_are_required(tmp_path: Path) -> None:
    source = load(tmp_path, {".codex/prompts/pair.md": "Pair $USER with $BRANCH_2; $$USER, $1, $ARGUMENTS, $user "
                                                       "stay. $USER again.\n"})
    prompt = prompts(source)["pair"]
    assert [(a.name, a.required) for a in prompt.arguments] == [("USER", True), ("BRANCH_2", True)]
    assert text(prompt, USER="$BRANCH_2", BRANCH_2="main") == (
        "Pair $BRANCH_2 with main; $$USER, $1, $ARGUMENTS, $user stay. $BRANCH_2 again.\n")
    with pytest.raises(InvalidParams, match="missing required argument 'BRANCH_2'"):
        text(prompt, USER="al")


def test_cursor_command_is_the_file_as_written(tmp_path: Path) -> None:
    source = load(tmp_path, {".cursor/commands/tidy.md": "---\nx: [unclosed\n---\nTidy {{ y }} $1\n\n"})
    assert problems(source) == {}  # Cursor reads no front matter: nothing here is YAML to refuse
    prompt = prompts(source)["tidy"]
    assert prompt.description == "x: [unclosed" and prompt.meta == {META_FORMAT: "cursor"}
    assert text(prompt) == "---\nx: [unclosed\n---\nTidy {{ y }} $1"
    assert text(prompt, arguments="only the tests") == "---\nx: [unclosed\n---\nTidy {{ y }} $1\n\nonly the tests"


def test_continue_invokable_prompts_only(tmp_path: Path) -> None:
    source = load(tmp_path, {
        ".continue/prompts/explain.md": "---\nname: Explain invokable\ndescription: Explains\ninvokable: true\n"
                                        "---\nExplain {{{ input }}} now; {{ other }} stays.\n",
        ".continue/prompts/plain.md": "---\nname: Plain\ninvokable: true\n---\nDo it.\n",
        ".continue/prompts/rule.md": "---\nname: A rule\n---\nNot a slash command.\n",
        ".continue/prompts/bad.md": "---\nname: x\ninvokable: sometimes\n---\nx\n"})
    assert problems(source) == {".continue/prompts/bad.md": [(3, "invokable must be true or false")]}
    found = prompts(source)
    assert set(found) == {"explain", "plain"}
    assert found["explain"].title == "Explain invokable" and found["explain"].description == "Explains"
    assert found["explain"].meta[META_MODEL] == {"invokable": True}
    assert text(found["explain"], input="{{ other }}") == "Explain {{ other }} now; {{ other }} stays."
    assert text(found["plain"], input="quickly") == "Do it.\n\nquickly"
    # A prompt that stops being invokable is gone from the list, without a problem.
    path = tmp_path / ".continue/prompts/plain.md"
    path.write_text("---\nname: Plain\n---\nDo it.\n")
    source.update([str(path)])
    assert "plain" not in prompts(source) and ".continue/prompts/plain.md" not in problems(source)


# -- Gemini CLI ----------------------------------------------------------------------------------------


def test_gemini_commands(tmp_path: Path) -> None:
    source = load(tmp_path, {
        ".gemini/commands/git/commit.toml": 'description = "Commit"\nmodel = "gemini-2.5-pro"\nprompt = """\n'
                                            'Write a commit for: {{args}}\n!{git diff --staged} {{ x }} $1\n"""\n',
        ".gemini/commands/plan.toml": "prompt = 'Plan the work.'\n"})
    assert problems(source) == {}
    found = prompts(source)
    prompt = found["git.commit"]  # Gemini's /git:commit
    assert prompt.description == "Commit" and arg_names(prompt) == ["args"]
    assert prompt.meta == {META_FORMAT: "gemini", META_MODEL: {"model": "gemini-2.5-pro"}}
    assert text(prompt, args="fix {{args}} $1") == ("Write a commit for: fix {{args}} $1\n"
                                                   "!{git diff --staged} {{ x }} $1\n")
    # Without {{args}}, Gemini adds the command as typed after a blank line.
    assert text(found["plan"]) == "Plan the work."
    assert text(found["plan"], args="the release") == "Plan the work.\n\n/plan the release"


def test_gemini_name_that_is_no_mcp_name(tmp_path: Path) -> None:
    source = load(tmp_path, {".gemini/commands/my cmd/x.toml": "prompt = 'x'\n"})
    assert "prompt name 'my cmd.x'" in problems(source)[".gemini/commands/my cmd/x.toml"][0][1]


# -- Prompty --------------------------------------------------------------------------------------------


BASIC = """---
name: Basic Prompt
description: Answers questions
model:
    api: chat
    parameters: {max_tokens: 128, temperature: 0.2}
inputs:
    question: {type: string, description: what to ask, required: true}
    tone: {type: string, enumValues: [plain, warm], default: plain}
    count: {type: integer, default: 2}
sample:
    question: Who is famous?
---
system:
You help people. Be {{tone}}; give {{count}} answers.
{% if context %}Context: {{context}}{% endif %}

user:
{{question}}

assistant:
Let me look that up.
"""


def test_prompty_inputs_roles_and_model(tmp_path: Path) -> None:
    source = load(tmp_path, {"qa/basic.prompty": BASIC})
    assert problems(source) == {}
    prompt = prompts(source)["qa.basic"]
    assert prompt.title == "Basic Prompt" and prompt.description == "Answers questions"
    assert [(a.name, a.type, a.required) for a in prompt.arguments] == [
        ("question", "string", True), ("tone", "string", False), ("count", "integer", False),
        ("context", "string", False)]  # used by the template, declared nowhere: Prompty leaves it empty
    assert prompt.arguments[0].examples == ("Who is famous?",) and prompt.arguments[1].enum == ("plain", "warm")
    assert prompt.meta[META_FORMAT] == "prompty"
    assert prompt.meta[META_MODEL] == {"model": {"api": "chat", "parameters": {"max_tokens": 128, "temperature": 0.2}},
                                       "sample": {"question": "Who is famous?"},
                                       "roles": ["system", "user", "assistant"]}
    messages = prompt.render(bind(prompt.arguments, {"question": "Why {{ tone }}?"}, prompt.name),
                             RenderContext(prompt.name))
    assert isinstance(messages, list)
    assert [(m.role, m.content.text) for m in messages if isinstance(m.content, Text)] == [
        ("user", "You help people. Be plain; give 2 answers."),  # MCP has no system role
        ("user", "Why {{ tone }}?"),  # a value is never rendered again
        ("assistant", "Let me look that up.")]
    with pytest.raises(InvalidParams, match="must be one of plain, warm"):
        bind(prompt.arguments, {"question": "q", "tone": "angry"}, prompt.name)


def test_prompty_inputs_as_a_list(tmp_path: Path) -> None:
    body = ("---\ninputs:\n  - {name: city, kind: string, required: true, description: where}\n"
            "  - {name: days, kind: number, default: 3}\n  - {name: tags, kind: array}\n---\n"
            "Plan {{days}} days in {{city}} ({{tags}}).\n")
    prompt = prompts(load(tmp_path, {"trip.prompty": body}))["trip"]
    assert [(a.name, a.type, a.required) for a in prompt.arguments] == [
        ("city", "string", True), ("days", "number", False), ("tags", "string", False)]
    assert text(prompt, city="Oslo") == "Plan 3.0 days in Oslo ()."


def test_prompty_templates_run_in_the_sandbox_with_its_bounds(tmp_path: Path) -> None:
    source = load(tmp_path, {"big.prompty": "---\ninputs: {q: {type: string}}\n---\n"
                                           "{% for i in range(100000) %}{{ q }}{% endfor %}\n",
                             "escape.prompty": "{{ q.__class__.__mro__ }}\n"})
    with pytest.raises(InternalError) as refused:
        text(prompts(source)["big"], q="x" * 100)
    assert "longer than" in str(refused.value.detail)
    with pytest.raises(InternalError) as unsafe:
        text(prompts(source)["escape"], q="x")
    assert "unsafe" in str(unsafe.value.detail)


# -- problems of every format, each at its line, the rest served ------------------------------------------


COPILOT, GEMINI, PROMPTY = ".github/prompts/p.prompt.md", ".gemini/commands/c.toml", "p.prompty"


@pytest.mark.parametrize(("rel", "body", "line", "message"), [
    (COPILOT, "---\ntools: githubRepo\n---\nx\n", 2, "tools must be a list of tool names"),
    (COPILOT, "---\ndescription: x\nmodel: [a]\n---\nx\n", 3, "model must be text"),
    (COPILOT, "---\nname: two words\n---\nx\n", 2, "prompt name 'two words'"),
    (COPILOT, "---\ndescription: x\n---\nfine\n\n${input:9lives}\n", 6, "an input's name is letters"),
    (COPILOT, "line one\n${input:form-name} ${input:form_name}\n", 2, "would both be the argument 'form_name'"),
    (COPILOT, "${input:file} ${file}\n", 1, "would both be the argument 'file'"),
    (COPILOT, "---\n[a, b]\n---\nx\n", 2, "must be a mapping"),
    (GEMINI, "description = 'x'\nprompt = [1,\nb\n", 3, "not valid TOML"),
    (GEMINI, "prompt = 'x'\nprompt = 'y'\n", 2, "not valid TOML"),
    (GEMINI, "prompt = \"\"\"unclosed\n", 1, "not valid TOML"),
    (GEMINI, "description = 'only'\n", None, "needs a prompt"),
    (GEMINI, "\n\nprompt = 3\n", 3, "prompt must be text"),
    (GEMINI, "prompt = 'x'\n  description = [1]\n", 2, "description must be text"),
    (PROMPTY, "---\ntemplate: mustache\n---\nHi {{x}}\n", 2, "template format 'mustache' is not read"),
    (PROMPTY, "---\nmodel: m\ninputs: [1, 2]\n---\nx\n", 3, "each input needs a name"),
    (PROMPTY, "---\ninputs:\n  a: {type: string, colour: red}\n---\nx\n", 2, "unknown key 'colour'"),
    (PROMPTY, "---\ninputs:\n  a: {type: integer, default: many}\n---\nx\n", 2, "input 'a'"),
    (PROMPTY, "---\ndescription: x\n---\nsystem:\nfine\nuser:\nbroken {% if %}\n", 7, "template error"),
])
def test_problems_name_file_and_line(tmp_path: Path, rel: str, body: str, line: int | None, message: str) -> None:
    one_problem(tmp_path, {rel: body}, rel, line, message)


# -- every format alike: clashes, limits, hostile files, reload ---------------------------------------------


def test_one_name_from_two_formats_is_an_error_naming_both(tmp_path: Path) -> None:
    source = load(tmp_path, {"review.md": "mine\n", ".claude/commands/review.md": "theirs\n"})
    assert text(prompts(source)["review"], arguments="") == "theirs"  # the first path in order wins
    [(line, message)] = problems(source)["review.md"]
    assert message == "prompt name 'review' is already used by .claude/commands/review.md"


def test_an_oversized_file_is_refused_and_the_rest_served(tmp_path: Path) -> None:
    source = load(tmp_path, {".claude/commands/big.md": "x" * (MAX_PROMPT_FILE_BYTES + 1), "ok.md": "ok\n"})
    [(_, message)] = problems(source)[".claude/commands/big.md"]
    assert "larger than" in message and set(prompts(source)) == {"ok"}


def test_huge_values_hit_the_output_bound(tmp_path: Path) -> None:
    body = "$ARGUMENTS " * 8 + "\n"
    source = load(tmp_path, {".claude/commands/many.md": body})
    prompt = prompts(source)["many"]
    value = "v" * 900_000  # within the bound of one value; eight of them are past the output's
    assert 8 * len(value) > MAX_OUTPUT_CHARS
    with pytest.raises(InternalError) as refused:
        text(prompt, arguments=value)
    assert "longer than" in str(refused.value.detail)
    with pytest.raises(InvalidParams, match="longer than"):  # one value is bounded before any render
        text(prompt, arguments="v" * 1_000_001)


def test_a_symlinked_claude_folder_out_of_the_library_is_confined(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"commands/secret.md": "SECRET $ARGUMENTS\n"})
    root = tmp_path / "lib"
    write(root, {"ok.md": "ok\n"})
    os.symlink(outside, root / ".claude")
    source = FileSource(root)
    source.load()
    assert set(prompts(source)) == {"ok"}
    source.update([str(root / ".claude/commands/secret.md")])  # as the watcher would hand it over
    assert set(prompts(source)) == {"ok"}
    [(_, message)] = problems(source)[".claude/commands/secret.md"]
    assert "leads out of the library" in message


def test_deeply_nested_command_folders(tmp_path: Path) -> None:
    deep = "/".join(f"d{i}" for i in range(25))
    source = load(tmp_path, {f".claude/commands/{deep}/x.md": "deep $ARGUMENTS\n"})
    name = deep.replace("/", ".") + ".x"
    assert text(prompts(source)[name], arguments="ok") == "deep ok\n"
    deeper = "/".join(f"d{i}" for i in range(80))  # the name passes 128 characters: an error, not a crash
    source = load(tmp_path, {f".claude/commands/{deeper}/x.md": "x\n"})
    assert "is not valid" in problems(source)[f".claude/commands/{deeper}/x.md"][0][1]


def test_a_broken_reload_keeps_the_last_good_version(tmp_path: Path) -> None:
    source = load(tmp_path, {".claude/commands/c.md": "---\ndescription: good\n---\nHi $ARGUMENTS\n"})
    path = tmp_path / ".claude/commands/c.md"
    path.write_text("---\ndescription: [broken\n---\nHi\n")
    source.update([str(path)])
    assert prompts(source)["c"].description == "good"
    assert problems(source)[".claude/commands/c.md"][0][0] == 2
    path.unlink()
    source.update([str(path)])
    assert "c" not in prompts(source)


def test_other_hidden_folders_stay_ignored(tmp_path: Path) -> None:
    source = load(tmp_path, {".git/x.md": "x\n", ".venv/y.md": "y\n", ".claude/settings.md": "z\n",
                             ".claude/commands/ok.md": "ok\n"})
    assert set(prompts(source)) == {"ok"} and problems(source) == {}
    source.update([str(tmp_path / ".git/x.md"), str(tmp_path / ".claude/settings.md")])  # as the watcher hands them
    assert set(prompts(source)) == {"ok"} and problems(source) == {}


def test_promptdeck_model_block_goes_to_meta(tmp_path: Path) -> None:
    source = load(tmp_path, {"a.md": "---\nmodel: {name: gpt-4o, temperature: 0.2, tools: [search]}\n---\nHi\n",
                             "b.md": "---\nmodel: gpt-4o\n---\nHi\n"})
    assert prompts(source)["a"].listing()["_meta"][META_MODEL] == {"name": "gpt-4o", "temperature": 0.2,
                                                                   "tools": ["search"]}
    assert problems(source)["b.md"] == [(2, "model must be a mapping of settings for the model (model, "
                                            "temperature, tools, ...)")]


# -- served end to end: the official SDK client over stdio, from a folder and from a store --------------


MIXED: Files = {
    "summarize.md": "---\ndescription: Summarize\narguments:\n  - {name: text, required: true}\n"
                    "  - {name: tone, enum: [plain, formal], default: plain}\n---\n{{ tone }}: {{ text }}\n",
    ".claude/commands/git/commit.md": COMMIT,
    ".claude/skills/explain/SKILL.md":
        "---\nname: explain\ndescription: Explain\narguments: topic\n---\nExplain $topic.\n",
    ".github/prompts/react/form.prompt.md": FORM,
    ".codex/prompts/pair.md": "Pair $USER with $BRANCH.\n",
    ".cursor/commands/tidy.md": "Tidy up.\n",
    ".gemini/commands/ops/deploy.toml": "description = 'Deploy'\nprompt = 'Deploy {{args}} now.'\n",
    "qa/basic.prompty": BASIC,
    ".continue/prompts/explain-more.md": "---\nname: Explain more\ninvokable: true\n---\nMore on {{{ input }}}.\n",
}


def _params(*serve: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "promptdeck", "serve", *serve],
                                 env=dict(os.environ))


async def _check_mixed(session: ClientSession, expect_more: frozenset[str] = frozenset()) -> None:
    listed = {p.name: p for p in (await session.list_prompts()).prompts}
    assert set(listed) == {"summarize", "git.commit", "explain", "react.form", "pair", "tidy",
                           "explain-more", "ops.deploy", "qa.basic"} | expect_more
    assert listed["explain-more"].title == "Explain more"
    got = await session.get_prompt("pair", {"USER": "al", "BRANCH": "main"})
    assert got.messages[0].content.text == "Pair al with main.\n"
    got = await session.get_prompt("qa.basic", {"question": "Why?", "tone": "warm"})
    assert [m.content.text for m in got.messages] == ["You help people. Be warm; give 2 answers.", "Why?",
                                                     "Let me look that up."]
    done = await session.complete(_ref("qa.basic"), {"name": "tone", "value": "w"})
    assert done.completion.values == ["warm"]
    got = await session.get_prompt("ops.deploy", {"args": "staging"})
    assert got.messages[0].content.text == "Deploy staging now."
    got = await session.get_prompt("tidy", {"arguments": "now"})
    assert got.messages[0].content.text == "Tidy up.\n\nnow"
    commit = listed["git.commit"]
    assert [(a.name, a.required) for a in commit.arguments or []] == [("message", False), ("arg1", False)]
    assert commit.meta is not None and commit.meta[META_MODEL]["model"] == "claude-3-5-haiku-20241022"
    got = await session.get_prompt("git.commit", {"message": "$1 {{ x }}", "arg1": "high"})
    assert got.messages[0].content.text.startswith("Commit $1 {{ x }} at high priority. All: $1 {{ x }} high.")
    got = await session.get_prompt("explain", {"topic": "DNS"})
    assert got.messages[0].content.text == "Explain DNS.\n"
    got = await session.get_prompt("react.form", {"formName": "${file}", "file": "a.tsx"})
    assert got.messages[0].content.text.startswith("Make ${file} (${file}) for a.tsx:\n\nLeft as written")
    done = await session.complete(_ref("react.form"), {"name": "formName", "value": ""})
    assert done.completion.values == []
    done = await session.complete(_ref("git.commit"), {"name": "arg1", "value": "h"})
    assert done.completion.values == ["high"]
    done = await session.complete(_ref("summarize"), {"name": "tone", "value": "f"})
    assert done.completion.values == ["formal"]


def _ref(name: str) -> Any:
    import mcp_types as types

    return types.PromptReference(type="ref/prompt", name=name)


@pytest.mark.slow
def test_a_mixed_folder_served_to_the_sdk_client(tmp_path: Path) -> None:
    import mcp_types as types

    root = tmp_path / "lib"
    write(root, MIXED)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            changed.set()

    async def run() -> None:
        async with stdio_client(_params(str(root))) as (read, write_), \
                ClientSession(read, write_, message_handler=on_message) as session:
            await session.initialize()
            await _check_mixed(session)
            await anyio.sleep(0.3)  # let the watcher settle before the edit
            write(root, {".claude/commands/fresh.md": "Fresh $ARGUMENTS\n"})
            with anyio.fail_after(10):
                await changed.wait()
            await _check_mixed(session, frozenset({"fresh"}))
            got = await session.get_prompt("fresh", {"arguments": "x"})
            assert got.messages[0].content.text == "Fresh x\n"

    anyio.run(run)


@pytest.mark.slow
def test_a_mixed_folder_published_to_a_store_and_served(tmp_path: Path) -> None:
    import subprocess

    root = tmp_path / "lib"
    write(root, {**MIXED, ".git/config": "[core]\n", ".claude/settings.json": "{}\n"})
    url = f"sqlite:///{tmp_path}/s.db"
    done = subprocess.run([sys.executable, "-m", "promptdeck", "publish", str(root), "--store", url, "--label",
                           "production"], capture_output=True, text=True, check=True)
    assert ".claude/commands/git/commit.md" in done.stdout and ".claude/skills/explain/SKILL.md" in done.stdout
    assert ".git/config" not in done.stdout and "settings.json" not in done.stdout

    beside = tmp_path / "beside"
    write(beside, {"extra.md": "Extra\n"})

    async def run() -> None:
        # Alone, the label is served from its listing; beside a folder, its files are loaded and parsed.
        async with stdio_client(_params("--store", url)) as (read, write_), ClientSession(read, write_) as session:
            await session.initialize()
            await _check_mixed(session)
        async with stdio_client(_params(str(beside), "--store", url)) as (read, write_), \
                ClientSession(read, write_) as session:
            await session.initialize()
            await _check_mixed(session, frozenset({"extra"}))

    anyio.run(run)


def test_scopes_in_a_native_file_restrict_it_as_in_promptdeck_files(tmp_path: Path) -> None:
    """Access control: every format with a front matter (or TOML table) may name ``scopes``, which its own
    tool ignores; the catalog then shows the prompt only to principals holding one."""
    from promptdeck.prompts.catalog import Catalog

    source = load(tmp_path, {
        ".claude/commands/pay.md": "---\nscopes: [hr:payroll]\nmodel: opus\n---\nPay $ARGUMENTS\n",
        ".github/prompts/hire.prompt.md": "---\nscopes: hr\n---\nHire\n",
        ".gemini/commands/fire.toml": "scopes = ['hr']\nprompt = 'Fire'\n",
        ".codex/prompts/bonus.md": "---\nscopes: hr finance\n---\nBonus\n",
        ".claude/commands/bad.md": "---\nmodel: x\nscopes: [[nested]]\n---\nx\n",
        "open.md": "Open\n"})
    assert problems(source) == {".claude/commands/bad.md": [(3, "scopes must be a list of scope names")]}
    found = prompts(source)
    assert found["pay"].scopes == {"hr:payroll"} and found["pay"].meta[META_MODEL] == {"model": "opus"}
    assert found["bonus"].scopes == {"hr", "finance"} and found["fire"].scopes == {"hr"}
    catalog = Catalog(source.prompts())
    assert catalog.view(frozenset()).names == ["open"]
    assert catalog.view(frozenset({"finance"})).names == ["bonus", "open"]
    assert catalog.view(frozenset({"hr"})).names == ["bonus", "fire", "hire", "open", "pay"]


# -- dotprompt, read by Google's dotpromptz --------------------------------------------------------------

BRIEF_PROMPT = """---
description: A short brief
model: googleai/gemini-2.5-flash
config: {temperature: 0.2}
input:
  schema:
    topic: string, the topic
    count?: integer, how many lines
    tone?(enum): [calm, loud]
  default:
    count: 3
---
{{role "system"}}
Be brief.
{{role "user"}}
Tell me about {{topic}} in {{count}} lines{{#if tone}}, {{tone}}{{/if}}.
{{media url="data:image/png;base64,iVBORw0KGgo="}}
{{role "model"}}
Ready.
"""


def test_dotprompt_inputs_roles_media_and_settings(tmp_path: Path) -> None:
    from promptdeck.protocol.content import Image

    source = load(tmp_path, {"docs/brief.prompt": BRIEF_PROMPT})
    prompt = prompts(source)["docs.brief"]
    args = {a.name: a for a in prompt.arguments}
    assert (args["topic"].required, args["topic"].description) == (True, "the topic")
    assert (args["count"].type, args["count"].default, args["count"].required) == ("integer", 3, False)
    assert args["tone"].enum == ("calm", "loud")
    assert prompt.meta[META_FORMAT] == "dotprompt"
    assert prompt.meta[META_MODEL] == {"model": "googleai/gemini-2.5-flash", "config": {"temperature": 0.2}}
    values = bind(prompt.arguments, {"topic": "cats & <dogs> {{x}}", "tone": "loud"}, prompt.name)
    messages = prompt.render(values, RenderContext(prompt.name))
    assert isinstance(messages, list)
    # system is sent as the user's (MCP has no system role), model as the assistant's; media its own message
    assert [(m.role, type(m.content).__name__) for m in messages] == [
        ("user", "Text"), ("user", "Text"), ("user", "Image"), ("assistant", "Text")]
    assert messages[1].content == Text("Tell me about cats & <dogs> {{x}} in 3 lines, loud.")
    assert isinstance(messages[2].content, Image) and messages[2].content.mime_type == "image/png"
    with pytest.raises(InvalidParams, match="'tone' must be one of calm, loud"):
        bind(prompt.arguments, {"topic": "x", "tone": "shouty"}, prompt.name)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("---\ninput: {schema: {x: string}}\n---\n{{#if x}}never closed\n", 4, "template error: unclosed block"),
    ("---\ninput: [1\n---\nhi\n", 2, ""),
    ("---\ninput: {schema: {x: strin}}\n---\nhi\n", 2, "input.schema"),
    ("---\ninput: {schema: {x: string}, default: 3}\n---\nhi\n", 2, "dotprompt refuses the file"),
])
def test_dotprompt_problems_name_their_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    one_problem(tmp_path, {"bad.prompt": text}, "bad.prompt", line, message)


def test_dotprompt_output_is_bounded_before_it_is_rendered(tmp_path: Path) -> None:
    from promptdeck.prompts.sandbox import RenderLimitError

    source = load(tmp_path, {"each.prompt": "---\ninput: {schema: {t: string}}\n---\n"
                                            "{{#each t}}" + "x" * 200 + "{{/each}}\n"})
    prompt = prompts(source)["each"]
    huge = bind(prompt.arguments, {"t": "y" * 100_000}, prompt.name)
    with pytest.raises(RenderLimitError, match="could exceed"):
        prompt.render(huge, RenderContext(prompt.name))


def test_a_bom_and_windows_line_ends_are_read_as_in_promptdeck_files(tmp_path: Path) -> None:
    """A BOM made a Gemini command "not valid TOML" and CRLF reached clients from Claude commands; promptdeck's
    own files drop the one and read the other as a line end, and so do the other formats now."""
    source = load(tmp_path, {
        ".gemini/commands/deploy.toml": "\ufeffdescription = 'Deploy'\r\n"
                                        "prompt = '''\r\nDeploy {{args}}\r\nnow.'''\r\n",
        ".claude/commands/review.md": "\ufeff---\r\ndescription: Review\r\nargument-hint: \"[file]\"\r\n---\r\n"
                                      "Review $ARGUMENTS\r\ncarefully.\r\n",
        ".claude/commands/bad.md": "---\r\ndescription: x\r\narguments: [1]\r\n---\r\nx\r\n",
        "own.md": "\ufeff---\r\ndescription: Own\r\n---\r\nOwn\r\ntext.\r\n",
    })
    assert problems(source) == {".claude/commands/bad.md": [(3, "arguments must be a list of names (letters, "
                                                               "digits, '_' and '-')")]}  # its line as written
    found = prompts(source)
    assert found["deploy"].description == "Deploy" and text(found["deploy"], args="prod") == "Deploy prod\nnow."
    assert found["review"].description == "Review"
    assert text(found["review"], arguments="a.py") == "Review a.py\ncarefully.\n"
    assert text(found["own"]) == "Own\ntext."
