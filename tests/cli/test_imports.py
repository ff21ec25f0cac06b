"""``promptdeck import`` as a real process: the report, usage errors, a round trip through ``export``, and
``--url`` with keys that never show. Inputs are made by each tool's own library (tests/support/imports.py);
the round trips render with promptdeck what the tool's own library renders from the same input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from langfuse.api import Prompt_Text
from langfuse.model import TextPromptClient

from promptdeck import Prompts
from tests.support.cli import pd
from tests.support.fake_langfuse import PUBLIC_KEY, SECRET_KEY, fake_langfuse
from tests.support.imports import joke_templates, langfuse_records, langsmith_commits, write_json


def rendered(folder: Path, prompt: str, /, **values: str) -> tuple[str, list[str]]:
    """(the text promptdeck renders of ``prompt`` in ``folder``, its arguments' names)."""
    prompts = Prompts(str(folder))
    try:
        return prompts.render(prompt, **values).text(), [a["name"] for a in prompts.get(prompt).arguments]
    finally:
        prompts.close()


def test_the_report_names_what_was_imported_and_a_second_import_changes_nothing(tmp_path: Path) -> None:
    source = write_json(tmp_path / "lf.json", langfuse_records())
    first = pd("import", "langfuse", str(source), "--to", str(tmp_path / "lib"))
    assert first.stdout == "imported 2 prompts from langfuse: 2 files written, 0 already there, 0 labels moved, " \
                           "1 warning\n"
    assert first.stderr.splitlines() == [
        "warning: prompt 'support/triage': not translated: its system message (a user message here: MCP prompts "
        "have user and assistant messages only)"]
    again = pd("import", "langfuse", str(source), "--store", str(tmp_path / "s.db"))
    assert "3 versions published, 0 already there, 2 labels moved" in again.stdout
    twice = pd("import", "langfuse", str(source), "--store", str(tmp_path / "s.db"))
    assert "0 versions published, 3 already there, 0 labels moved" in twice.stdout


def test_langfuse_round_trip_through_a_store_and_export_keeps_text_and_arguments(tmp_path: Path) -> None:
    records = langfuse_records()
    source = write_json(tmp_path / "lf.json", records)
    pd("import", "langfuse", str(source), "--store", str(tmp_path / "s.db"))
    pd("export", str(tmp_path / "out"), "--store", str(tmp_path / "s.db"), "--label", "production", "--to", "prompty")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["greet.prompty"]
    text, arguments = rendered(tmp_path / "out", "greet", name="Ann", team="ops")
    expected = TextPromptClient(Prompt_Text.model_validate(records[1])).compile(name="Ann", team="ops")
    assert text == expected == "Hello Ann, welcome to ops." and arguments == ["name", "team"]


def test_langsmith_round_trip_through_a_folder_and_export_keeps_text_and_arguments(tmp_path: Path) -> None:
    commits = langsmith_commits()
    source = write_json(tmp_path / "joke.json", commits)
    pd("import", "langsmith", str(source), "--to", str(tmp_path / "lib"))
    pd("export", str(tmp_path / "lib"), str(tmp_path / "out"), "--to", "prompty")
    text, arguments = rendered(tmp_path / "out", "joke", style="dry", topic="cats")
    template = joke_templates()[1]  # the template the manifest was serialized from
    expected = "\n\n".join(str(m.content) for m in template.format_messages(style="dry", topic="cats", history=[]))
    assert text == expected and arguments == ["style", "topic"]


def test_usage_errors(tmp_path: Path) -> None:
    source = write_json(tmp_path / "lf.json", langfuse_records())
    both = pd("import", "langfuse", str(source), "--to", "x", "--store", "s.db", check=False)
    assert both.returncode == 2 and "one of them" in both.stderr
    url = pd("import", "openai", "--url", "http://127.0.0.1:1", "--to", "x", check=False)
    assert url.returncode == 2 and "only langfuse takes it" in url.stderr
    assert not (tmp_path / "x").exists()


def run_import(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "promptdeck", "import", "langfuse", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env}, stdin=subprocess.DEVNULL)


def test_url_fetches_with_keys_from_the_environment_that_never_appear_in_output_or_files(tmp_path: Path) -> None:
    keys = {"LANGFUSE_PUBLIC_KEY": PUBLIC_KEY, "LANGFUSE_SECRET_KEY": SECRET_KEY}
    with fake_langfuse(langfuse_records()) as (url, seen):
        done = run_import("--url", url, "--store", str(tmp_path / "s.db"), env=keys)
        wrong = run_import("--url", url, "--to", str(tmp_path / "lib"), env={**keys, "LANGFUSE_SECRET_KEY":
                                                                             "sk-lf-wrong-but-secret"})
    assert done.returncode == 0, done.stderr
    assert "3 versions published" in done.stdout and len(seen) == 5 + 1
    assert wrong.returncode == 1 and wrong.stderr == f"promptdeck: {url}/api/public/v2/prompts: Langfuse " \
                                                     "answered 401 (check the keys)\n"
    written = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    for secret in (SECRET_KEY, "sk-lf-wrong-but-secret"):
        for shown in (done.stdout, done.stderr, wrong.stdout, wrong.stderr, written.decode("latin-1")):
            assert secret not in shown
    missing = run_import("--url", url, "--to", str(tmp_path / "lib"), env={"LANGFUSE_SECRET_KEY": ""})
    assert missing.returncode == 2 and "LANGFUSE_SECRET_KEY" in missing.stderr


def test_each_source_kinds_round_trip_through_export_keeps_text_and_arguments(tmp_path: Path) -> None:
    """OpenAI's objects (its SDK's message types), PromptLayer's and Humanloop's documented examples: imported,
    exported as prompty, and rendered by promptdeck from the prompty files as the tool fills its template."""
    from tests.support.imports import HUMANLOOP_PROMPT, openai_prompt_objects, promptlayer_versions

    (tmp_path / "hl.prompt").write_text(HUMANLOOP_PROMPT)
    inputs = {"openai": write_json(tmp_path / "o.json", openai_prompt_objects()),
              "promptlayer": write_json(tmp_path / "p.json", promptlayer_versions()),
              "humanloop": tmp_path / "hl.prompt"}
    for kind, path in inputs.items():
        done = pd("import", kind, str(path), "--to", str(tmp_path / "lib"))
        assert f"imported 1 prompt from {kind}: 1 file written" in done.stdout
    assert sorted(p.name for p in (tmp_path / "lib").iterdir()) == ["hl.md", "summarize.md", "welcome-email.md"]
    pd("export", str(tmp_path / "lib"), str(tmp_path / "out"), "--to", "prompty")
    assert rendered(tmp_path / "out", "summarize", city="Oslo", days="2") == \
        ("You plan trips.\n\nA 2-day trip to Oslo.", ["days", "city"])
    assert rendered(tmp_path / "out", "welcome-email", customer="Ann") == \
        ("You write emails.\n\nWelcome aboard, Ann!", ["customer"])
    assert rendered(tmp_path / "out", "hl", company="Acme", question="Why?") == \
        ("You are a friendly assistant for Acme.\n\nWhy?", ["company", "question"])
