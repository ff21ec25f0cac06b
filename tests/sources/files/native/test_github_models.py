"""GitHub Models prompt files read in place (sources/files/native/github_models.py): GitHub's own documented
examples (tests/support/github_models.py says where each comes from), ``{{name}}`` placeholders, roles,
model settings, testData as promptdeck tests, evaluators kept and named, and every problem at its line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from promptdeck.prompts.limits import MAX_OUTPUT_CHARS
from promptdeck.prompts.testcases import MAX_CASES
from promptdeck.prompts.testing import run_tests
from promptdeck.protocol.content import Text
from promptdeck.protocol.errors import InternalError, InvalidParams, LineError
from promptdeck.sources.files.native import META_FORMAT, META_MODEL
from promptdeck.sources.files.native.github_models import cases_of, read, warnings
from promptdeck.sources.files.paths import prompt_format
from tests.support.files import load, prompts, write
from tests.support.github_models import EVAL_HELP, SUMMARIZER, WITH_SIMILARITY
from tests.support.native import build, messages, problem, text


def test_githubs_documented_example_reads_as_a_prompt_with_its_roles_and_settings() -> None:
    """The example of GitHub's "Storing prompts in GitHub repositories" page, as published."""
    prompt = read("summarize.prompt.yml", SUMMARIZER)
    assert (prompt.name, prompt.title, prompt.description) == ("summarize", "Text Summarizer",
                                                               "Summarizes input text concisely")
    [argument] = prompt.arguments
    assert argument.name == "input" and argument.required  # GitHub Models has no optional variables
    got = messages(prompt, input="A fox.")
    assert [m.role for m in got] == ["user", "user"]  # MCP has no system role: sent as the user's, in its place
    assert [m.content.text for m in got if isinstance(m.content, Text)] == [
        "You are a text summarizer. Your only job is to summarize text given to you.",
        'Summarize the given text, beginning with "Summary -":\n<text>\nA fox.\n</text>\n']
    model = prompt.meta[META_MODEL]
    assert prompt.meta[META_FORMAT] == "github-models"
    assert model["model"] == "openai/gpt-4o-mini" and model["modelParameters"] == {"temperature": 0.5}
    assert model["roles"] == ["system", "user"]
    assert model["evaluators"] == [{"name": "Output should start with 'Summary -'",
                                    "string": {"startsWith": "Summary -"}}]
    assert model["testData"][0]["expected"] == "Summary - A fox jumped over a lazy, unresponsive dog."


def test_test_data_becomes_tests_that_pass_on_the_render() -> None:
    """Each testData row is a case with its values; it checks what a render can: the values are in the text.
    The evaluators judge the model's answer, so a startsWith 'Summary -' is not run on the prompt (it fails
    there: the prompt starts with the system text)."""
    prompt = read("summarize.prompt.yml", SUMMARIZER)
    assert prompt.tests is not None
    [case] = prompt.tests.cases
    assert dict(case.vars) == {"input": "The quick brown fox jumped over the lazy dog.\nThe dog was too tired "
                                        "to react.\n"}
    assert [a.kind for a in case.asserts] == ["contains"]
    report = run_tests([prompt])
    assert report.passed and report.cases == 1, report.failures()
    help_prompt = read("eval.prompt.yml", EVAL_HELP)  # gh models eval's own help example
    assert help_prompt.tests is not None and run_tests([help_prompt]).passed
    assert text(help_prompt, input="hi") == "Respond to: hi"


def test_every_evaluator_and_every_row_that_is_no_test_is_named_in_a_warning() -> None:
    prompt = read("summarize.prompt.yml", WITH_SIMILARITY)
    said = warnings(prompt)
    assert said == [
        "evaluator \"Output should start with 'Summary -'\" (string startsWith 'Summary -') judges the model's "
        "answer, not the rendered prompt: kept for gh models eval, not run by promptdeck's tests",
        "evaluator 'Similarity' (uses github/similarity) judges the model's answer, not the rendered prompt: "
        "kept for gh models eval, not run by promptdeck's tests"]
    rows = SUMMARIZER.split("testData:\n")[0] + "testData:\n  - expected: only\n  - input: ''\n  - input: ok\n"
    prompt = read("s.prompt.yml", rows)
    assert warnings(prompt) == ["testData row 1 is not a test: it gives no value for 'input'",
                                "testData row 2 is not a test: its values are empty"]
    assert prompt.tests is not None and [dict(c.vars) for c in prompt.tests.cases] == [{"input": "ok"}]
    assert warnings(read("x.prompt.yml", "messages: [{role: user, content: hi}]\n")) == []


def test_placeholders_are_gh_models_own_and_values_are_never_read_again() -> None:
    body = ("messages:\n  - role: user\n    content: '{{a}} {{ b }} {{c-d}} {{a}} {% x %} ${e}'\n"
            "  - role: assistant\n    content: 'Sure, {{f}}.'\n")
    prompt = read("p.prompt.yml", body)
    assert [a.name for a in prompt.arguments] == ["a", "f"]
    got = messages(prompt, a="{{f}}", f="$1")
    assert [(m.role, m.content.text) for m in got if isinstance(m.content, Text)] == [
        ("user", "{{f}} {{ b }} {{c-d}} {{f}} {% x %} ${e}"), ("assistant", "Sure, $1.")]
    assert prompt.meta[META_MODEL] == {"roles": ["user", "assistant"]}
    with pytest.raises(InvalidParams, match="missing required argument 'a'"):
        messages(prompt, f="x")


def test_names_come_from_the_path_and_both_endings_are_read(tmp_path: Path) -> None:
    assert prompt_format("docs/a.prompt.yml") == prompt_format("a.prompt.yaml") == "github-models"
    assert prompt_format(".x/a.prompt.yml") is None and prompt_format("_m/a.prompt.yml") is None
    assert prompt_format("a.yml") is None
    body = "name: {n}\nmessages: [{{role: user, content: hi}}]\n"
    source = load(tmp_path, {"docs/sum.prompt.yml": body.format(n="Sum it"),
                             "b.prompt.yaml": body.format(n="b")})
    found = prompts(source)
    assert set(found) == {"docs.sum", "b"}
    assert found["docs.sum"].title == "Sum it"
    assert found["b"].title is None  # a name that is the prompt's own is no title: what export writes


def test_scopes_restrict_it_as_in_every_format() -> None:
    prompt = read("s.prompt.yml", "scopes: [ops]\nmessages: [{role: user, content: hi}]\n")
    assert prompt.scopes == frozenset({"ops"}) and META_MODEL not in prompt.meta


@pytest.mark.parametrize(("body", "line", "message"), [
    ("- just\n- a list\n", 1, "is a mapping"),
    ("name: x\n", 1, "messages must be a list"),
    ("messages: []\n", 1, "messages must be a list"),
    ("name: [1]\nmessages: [{role: user, content: hi}]\n", 1, "name must be text"),
    ("messages:\n  - role: user\n    content: hi\n  - role: robot\n    content: hi\n", 4, "role must be one of"),
    ("messages:\n  - role: user\n    content: [1, 2]\n", 3, "content must be text"),
    ("messages:\n  - hi\n", 2, "message 1 must be a mapping"),
    ("modelParameters:\n  temperature: warm\nmessages: [{role: user, content: hi}]\n", 2,
     "modelParameters.temperature must be a number"),
    ("modelParameters:\n  maxTokens: 1.5\nmessages: [{role: user, content: hi}]\n", 2,
     "modelParameters.maxTokens must be a whole number"),
    ("modelParameters: 3\nmessages: [{role: user, content: hi}]\n", 1, "modelParameters must be a mapping"),
    ("responseFormat: xml\nmessages: [{role: user, content: hi}]\n", 1, "responseFormat must be one of"),
    ("responseFormat: json_schema\nmessages: [{role: user, content: hi}]\n", 1, "needs a jsonSchema"),
    ("messages: [{role: user, content: hi}]\ntestData: {a: 1}\n", 2, "testData must be a list"),
    ("messages: [{role: user, content: hi}]\nevaluators:\n  - name: e\n", 3, "needs one of string, llm or uses"),
    ("messages: [{role: user, content: hi}]\nevaluators:\n  - name: e\n    string: {near: x}\n", 4,
     "string takes one of"),
    ("messages: [{role: user, content: hi}]\nevaluators:\n  - string: {equals: x}\n", 3, "with a name"),
    ("messages: [{role: user, content: hi}\n", 1, "not valid YAML"),
    ("name: a\nb: c: d\n", 2, "not valid YAML"),
    ("scopes: 3\nmessages: [{role: user, content: hi}]\n", 1, "scopes must be a list"),
])
def test_a_malformed_file_is_one_problem_naming_the_file_and_line(tmp_path: Path, body: str, line: int,
                                                                  message: str) -> None:
    rel = "docs/bad.prompt.yml"
    path, got_line, reason = problem(tmp_path, rel, body)
    assert path == rel and got_line == line and message in reason, (got_line, reason)


def test_a_name_from_a_path_that_is_no_prompt_name_is_a_problem(tmp_path: Path) -> None:
    path, _, reason = problem(tmp_path, "a b.prompt.yml", "messages: [{role: user, content: hi}]\n")
    assert path == "a b.prompt.yml" and "prompt name 'a b'" in reason


def test_rows_past_the_tests_bounds_are_left_out_and_named() -> None:
    rows = [{"x": str(i)} for i in range(MAX_CASES + 5)] + [{"x": "v" * 20_000}]
    cases, left = cases_of(rows, ["x"])
    assert len(cases) == MAX_CASES
    assert left == [f"testData rows {MAX_CASES + 1} to {MAX_CASES + 6} are not tests: at most {MAX_CASES} are"]
    cases, left = cases_of([{"x": "v" * 20_000}, {"x": {"a": 1}}, {"y": 1}], ["x"])
    assert cases == [] and len(left) == 3 and "at most 10000 characters" in left[0]
    assert cases_of([{"y": 1}], []) == ([], ["testData row 1 is not a test: the messages have no placeholder "
                                             "to check"])
    with pytest.raises(LineError, match="testData must be a list"):
        cases_of(["x"], [])


def test_many_messages_repeating_a_long_value_are_refused_before_they_are_made() -> None:
    body = "messages:\n" + "  - {role: user, content: '{{v}}'}\n" * 8
    prompt = read("m.prompt.yml", body)
    value = "v" * 900_000  # within the bound of one value; eight of them are past the output's
    assert 8 * len(value) > MAX_OUTPUT_CHARS
    with pytest.raises(InternalError) as refused:
        messages(prompt, v=value)
    assert "longer than" in str(refused.value.detail)


def test_a_broken_reload_keeps_the_last_good_version(tmp_path: Path) -> None:
    source = load(tmp_path, {"s.prompt.yml": SUMMARIZER})
    path = tmp_path / "s.prompt.yml"
    path.write_text(SUMMARIZER.replace("  - role: system", "  - role: robot"))
    source.update([str(path)])
    assert prompts(source)["s"].title == "Text Summarizer"
    assert [(e.line, e.reason[:40]) for e in source.errors["s.prompt.yml"]] == [
        (7, "message 1: role must be one of system, u")]
    path.write_text(SUMMARIZER.replace("Text Summarizer", "Summarizer 2"))
    source.update([str(path)])
    assert prompts(source)["s"].title == "Summarizer 2" and not source.errors
    path.unlink()
    source.update([str(path)])
    assert "s" not in prompts(source)


def test_build_reads_it_as_a_folder_load_does(tmp_path: Path) -> None:
    prompt, found = build(tmp_path, "s.prompt.yml", SUMMARIZER)
    assert prompt is not None and not found and prompt.tests is not None


# -- served end to end: a real ``promptdeck serve`` over stdio, to the official SDK client ----------------


def test_serve_gives_githubs_example_to_the_sdk_client_and_follows_its_edits(tmp_path: Path) -> None:
    """GitHub's documented example served beside a promptdeck file: listed with its title and required
    argument, rendered, and reloaded as it changes; a broken edit leaves the last good version served."""
    root = tmp_path / "lib"
    write(root, {"summarize.prompt.yml": SUMMARIZER, "hello.md": "Hello.\n"})
    changes = anyio.Event()
    seen: list[types.PromptListChangedNotification] = []

    async def on_message(message: object) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            seen.append(message)
            changes.set()

    async def changed() -> None:
        nonlocal changes
        with anyio.fail_after(20):
            await changes.wait()
        changes = anyio.Event()

    params = StdioServerParameters(command=sys.executable, args=["-m", "promptdeck", "serve", str(root)],
                                   env=dict(os.environ))

    async def run() -> None:
        async with stdio_client(params) as (read_, write_), \
                ClientSession(read_, write_, message_handler=on_message) as session:
            await session.initialize()
            listed = {p.name: p for p in (await session.list_prompts()).prompts}
            assert set(listed) == {"summarize", "hello"}
            summarize = listed["summarize"]
            assert summarize.title == "Text Summarizer" and summarize.description == "Summarizes input text concisely"
            assert [(a.name, a.required) for a in summarize.arguments or []] == [("input", True)]
            assert summarize.meta is not None and summarize.meta["promptdeck.dev/format"] == "github-models"
            got = await session.get_prompt("summarize", {"input": "A fox {{input}}."})
            assert [(m.role, m.content.text) for m in got.messages if isinstance(m.content, types.TextContent)] \
                == [("user", "You are a text summarizer. Your only job is to summarize text given to you."),
                    ("user", 'Summarize the given text, beginning with "Summary -":\n<text>\nA fox {{input}}.\n'
                             '</text>\n')]
            await anyio.sleep(0.3)  # let the watcher settle before the edit
            edited = SUMMARIZER.replace("Summarize the given", "Shorten the given")
            write(root, {"summarize.prompt.yml": edited.replace("input text concisely", "text")})
            await changed()
            listed = {p.name: p for p in (await session.list_prompts()).prompts}
            assert listed["summarize"].description == "Summarizes text"
            got = await session.get_prompt("summarize", {"input": "x"})
            assert got.messages[1].content.text.startswith("Shorten the given")
            # A broken edit beside a new file: the new one is listed, the broken one stays its last good version.
            write(root, {"summarize.prompt.yml": SUMMARIZER.replace("role: user", "role: robot"),
                         "second.prompt.yml": "messages: [{role: user, content: 'Second {{x}}'}]\n"})
            await changed()
            listed = {p.name: p for p in (await session.list_prompts()).prompts}
            assert set(listed) == {"summarize", "hello", "second"}
            got = await session.get_prompt("summarize", {"input": "x"})
            assert got.messages[1].content.text.startswith("Shorten the given")

    anyio.run(run)
