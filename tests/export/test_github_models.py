"""``export --to github-models``: ``NAME.prompt.yml`` files that read back as the same prompt, on GitHub's own
documented examples (tests/support/github_models.py says where each comes from) and on edge cases, with what
the format cannot hold named in the export's warnings. The example library's round trip is
tests/export/test_writers.py::test_a_round_trip_keeps_every_rendering_the_format_can_express."""

from __future__ import annotations

from pathlib import Path

import yaml

from promptdeck.export.writers import export
from promptdeck.prompts.arguments import make_argument
from promptdeck.prompts.spec import Prompt
from promptdeck.prompts.testcases import parse_tests
from promptdeck.protocol.content import Message, Text, assistant, user
from promptdeck.sources.files.native import META_MODEL
from promptdeck.sources.files.native.github_models import read
from tests.support.cli import pd
from tests.support.files import load, prompts, write
from tests.support.github_models import EVAL_HELP, WITH_SIMILARITY
from tests.support.native import messages
from tests.support.paths import REPO


def _texts(found: list[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content.text) for m in found if isinstance(m.content, Text)]


def test_githubs_examples_are_written_back_as_they_were() -> None:
    """GitHub's documented example and gh models eval's help example: read, exported, the same YAML again
    (as data: key order and quoting aside), and read back as the same prompt."""
    for rel, original in (("summarize.prompt.yml", WITH_SIMILARITY), ("eval.prompt.yml", EVAL_HELP)):
        prompt = read(rel, original)
        [written] = export([prompt], "github-models")
        assert written.path == rel and written.warnings == []
        assert yaml.safe_load(written.text) == yaml.safe_load(original)
        back = read(written.path, written.text)
        assert (back.name, back.title, back.description) == (prompt.name, prompt.title, prompt.description)
        assert back.arguments == prompt.arguments and back.meta == prompt.meta
        assert back.tests is not None and prompt.tests is not None
        assert back.tests.to_json() == prompt.tests.to_json()
        values = {a.name: "{{input}} $1 ${x}" for a in prompt.arguments}
        assert _texts(messages(back, **values)) == _texts(messages(prompt, **values))


def _edge() -> Prompt:
    tests, _ = parse_tests([{"vars": {"who": "Ada"}, "assert": [{"type": "contains", "value": "Ada"}]}],
                           [make_argument("who", required=True)])

    def render(values: dict[str, object], ctx: object) -> list[Message]:
        return [user(f"Hello {values['who']}!  \nKeep {{{{literal}}}} and {{{{ spaced }}}} as text: # not a "
                     f"comment, key: value\n\n\u00e9t\u00e9 {values.get('mood', '')}\n"),
                assistant("Sure."), user(f"{values['who']}")]

    return Prompt("edge.case", render, title="Edge: case", description="line one\nline two",
                  arguments=(make_argument("who", required=True, description="whom to greet"),
                             make_argument("mood", description="fills {{mood}}")),
                  meta={META_MODEL: {"name": "gpt-4o", "temperature": 0.2, "max_tokens": 50, "top_p": 1,
                                   "tools": ["search"]}},
                  tests=tests)


def test_edge_cases_read_back_and_what_is_lost_is_named() -> None:
    prompt = _edge()
    [written] = export([prompt], "github-models")
    assert written.path == "edge.case.prompt.yml"
    assert written.warnings == [
        "the text holds '{{literal}}', which GitHub Models would fill in",
        "argument 'mood' must be given: GitHub Models leaves {{mood}} as written when its test data has no value "
        "for it",
        "the descriptions of 'who' are left out: the format has no place for them",
        "model settings 'tools' are left out: the format has no place for them",
        "its 1 test cases are left out: they check the rendered prompt, GitHub Models' evaluators the model's "
        "answer"]
    data = yaml.safe_load(written.text)
    assert data["name"] == "Edge: case" and data["description"] == "line one\nline two"
    assert data["model"] == "gpt-4o"
    assert data["modelParameters"] == {"temperature": 0.2, "maxTokens": 50, "topP": 1}
    back = read(written.path, written.text)
    assert back.title == "Edge: case" and back.description == "line one\nline two"
    # {{literal}} in the text comes back as a placeholder: the clash the first warning names
    assert [a.name for a in back.arguments] == ["who", "literal", "mood"]
    mine = _texts(messages(prompt, who="Bo", mood="calm"))
    theirs = _texts(messages(back, who="Bo", mood="calm", literal="{{literal}}"))
    assert theirs == mine
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "user"]


def test_a_prompt_without_a_title_keeps_none(tmp_path: Path) -> None:
    prompt = Prompt("plain", lambda values, ctx: [user("Hi.")])
    [written] = export([prompt], "github-models")
    assert yaml.safe_load(written.text) == {"name": "plain", "messages": [{"role": "user", "content": "Hi."}]}
    back = read(written.path, written.text)
    assert back.title is None and back.arguments == () and META_MODEL not in back.meta


def test_exported_files_are_served_and_check_names_the_evaluators(tmp_path: Path) -> None:
    library = write(tmp_path / "lib", {"summarize.prompt.yml": WITH_SIMILARITY, "hello.md": "Hello.\n"})
    pd("export", str(library), str(tmp_path / "out"), "--to", "github-models")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["hello.prompt.yml", "summarize.prompt.yml"]
    served = prompts(load(tmp_path / "out", {}))
    assert served["summarize"].title == "Text Summarizer" and served["hello"].title is None
    done = pd("check", str(tmp_path / "out"))
    assert "summarize.prompt.yml: warning: evaluator 'Similarity' (uses github/similarity) judges the model's " \
           "answer" in done.stdout
    assert "2 prompts ok" in done.stdout + done.stderr
    # docs/native-formats.md shows check's warning for GitHub's example as check prints it
    shown = (REPO / "docs" / "native-formats.md").read_text().split("```console\n")[-1].split("\n```")[0]
    assert shown.startswith("summarize.prompt.yml: warning: evaluator") and shown in done.stdout.splitlines()
    tested = pd("test", str(tmp_path / "out"))
    assert "1 of 1 test case passed" in tested.stdout + tested.stderr


def test_a_store_label_keeps_the_file_and_its_tests(tmp_path: Path) -> None:
    """Published (its testData case run and passed first), then exported from the label: the same file."""
    library = write(tmp_path / "lib", {"summarize.prompt.yml": WITH_SIMILARITY})
    url = f"sqlite:///{tmp_path}/s.db"
    pd("publish", str(library), "--store", url, "--label", "production")
    tested = pd("test", "--store", url, "--label", "production")
    assert "1 of 1 test case passed" in tested.stdout + tested.stderr
    pd("export", str(tmp_path / "out"), "--store", url, "--label", "production", "--to", "github-models")
    written = (tmp_path / "out" / "summarize.prompt.yml").read_text()
    assert yaml.safe_load(written) == yaml.safe_load(WITH_SIMILARITY)
