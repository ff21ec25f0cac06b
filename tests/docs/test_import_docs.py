"""docs/import.md's examples, run as written: each source's input saved as the page says, its commands run by
bash from a folder where ``.venv/bin/promptdeck`` is this promptdeck, the output and the file shown compared
with what they print and write. The ``--url`` example runs against a stand-in Langfuse on 127.0.0.1, its URL
and keys put in place of the page's."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_langfuse import PUBLIC_KEY, SECRET_KEY, fake_langfuse
from tests.support.imports import langfuse_records
from tests.support.paths import REPO

PAGE = (REPO / "docs" / "import.md").read_text()
SOURCES = ["Langfuse", "LangSmith", "PromptLayer", "OpenAI prompt objects", "Humanloop"]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def section(title: str) -> str:
    return PAGE.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", "exec 2>&1\n" + script], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def reader_folder(tmp_path: Path) -> None:
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "promptdeck").symlink_to(Path(sys.executable).parent / "promptdeck")


def test_every_source_has_a_section() -> None:
    from promptdeck.importers import SOURCES as KINDS

    shown = set(re.findall(r"promptdeck import (\w+) ", PAGE))
    assert shown == set(KINDS) and all(f"\n## {title}\n" in PAGE for title in SOURCES)


@pytest.mark.parametrize("title", SOURCES)
def test_each_sources_example_runs_as_written(tmp_path: Path, title: str) -> None:
    reader_folder(tmp_path)
    text = section(title)
    saved = re.search(r"Saved as `([^`]+)`:\n\n```\w*\n(.*?)^```", text, re.S | re.M)
    assert saved is not None
    (tmp_path / saved.group(1)).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / saved.group(1)).write_text(saved.group(2))
    blocks = [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]
    ran = 0
    for index, (kind, body) in enumerate(blocks):
        if kind != "sh" or "--url" in body:
            continue
        done = bash(body, tmp_path)
        assert done.returncode == 0, done.stdout
        after = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
        if after[0] == "text":
            assert done.stdout == after[1]
        ran += 1
    assert ran
    for kind, body in blocks:
        if kind == "markdown":  # the file an import wrote
            assert (tmp_path / "prompts" / "support" / "reply.md").read_text() == body
    check = bash(".venv/bin/promptdeck check prompts" if (tmp_path / "prompts").exists() else "true", tmp_path)
    assert check.returncode == 0, check.stdout


def test_the_url_example_runs_against_a_langfuse_server(tmp_path: Path) -> None:
    reader_folder(tmp_path)
    (body,) = [m.group(2) for m in BLOCK.finditer(section("Langfuse")) if "--url" in m.group(2)]
    with fake_langfuse(langfuse_records()) as (url, seen):
        script = body.replace("https://cloud.langfuse.com", url).replace("pk-lf-…", PUBLIC_KEY) \
            .replace("sk-lf-…", SECRET_KEY)
        done = bash(script, tmp_path)
    assert done.returncode == 0 and "imported 2 prompts from langfuse: 3 versions published" in done.stdout
    assert SECRET_KEY not in done.stdout and seen
    assert SECRET_KEY.encode() not in (tmp_path / "prompts.db").read_bytes()
