"""What a large folder's catalog holds (issue 42 item 5): a 100,000-file library must fit in 150 MiB, so each
loaded prompt may hold about a kilobyte, its text included. Measured with tracemalloc over a few hundred files
loaded as a large library loads them (templates compiled on first use), in this process."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from promptdeck.prompts import arguments
from promptdeck.protocol.content import Text
from promptdeck.protocol.revisions import LATEST
from promptdeck.sources.files import declared, frontmatter
from promptdeck.sources.files.source import FileSource
from tests.support.files import render, write

FILES = 400


def note(number: int, *, own_description: bool) -> str:
    """A prompt file as benchmarks/libgen.py writes them; with ``own_description``, its first argument's
    description names its file, so no two files declare the same argument list."""
    topic = f"What note {number} is about" if own_description else "What the note is about"
    return ("---\n"
            f"description: Benchmark prompt {number} of {FILES}. Drafts a short note about a topic.\n"
            "arguments:\n"
            "  - name: topic\n"
            f"    description: {topic}\n"
            "    required: true\n"
            "  - name: tone\n"
            "    description: Tone of voice\n"
            "    enum: [neutral, friendly, formal, playful]\n"
            "    default: neutral\n"
            "---\n"
            "Write a short note about {{ topic }} in a {{ tone }} tone.\n"
            f"Keep it under {number % 100} words and end with one question for the reader.\n")


def held_per_prompt(root: Path) -> tuple[FileSource, float]:
    """Bytes the loaded catalog holds per prompt (what is still allocated after the load, garbage collected)."""
    source = FileSource(root, compile_all=False, skills=False)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        source.load()
        # The parsers' caches (at most 4,096 entries each, whatever the library's size) aside: a few hundred
        # files with lists of their own would count one entry each, where 100,000 share those 4,096.
        arguments._PARSED.clear()
        arguments._ITEMS.clear()
        declared._DECLARED.clear()
        frontmatter._TOKENS.clear()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(source.prompts()) == FILES
    return source, (after - before) / FILES


@pytest.mark.parametrize(("own_description", "limit"), [(False, 1150), (True, 1500)])
def test_a_loaded_prompt_holds_about_a_kilobyte(tmp_path: Path, own_description: bool, limit: int) -> None:
    """Before: 3.3 KB a prompt (4.3 KB when the argument lists differ): the substitution plan of every template
    made at load, an empty dict or frozenset of its own for each empty field, two closures for its render and
    a copy of every argument each file declares alike."""
    write(tmp_path, {f"s{i // 100}/p{i:04d}.md": note(i, own_description=own_description) for i in range(FILES)})
    source, held = held_per_prompt(tmp_path)
    assert held < limit, f"{held:.0f} bytes a prompt"
    # and every prompt still renders, lists and takes its plain way as before
    prompt = source.named("s1.p0123")
    assert prompt is not None and prompt.plain is not None and prompt.work == "light"
    [message] = render(prompt, topic="owls", tone="formal")
    assert isinstance(message.content, Text) and message.content.text == (
        "Write a short note about owls in a formal tone.\nKeep it under 23 words and end with one question for "
        "the reader.")
    assert prompt.argument("tone") is prompt.arguments[1]
    listed = prompt.descriptor(LATEST)
    assert listed["description"] == f"Benchmark prompt 123 of {FILES}. Drafts a short note about a topic."
    assert [a["name"] for a in listed["arguments"]] == ["topic", "tone"]


def test_files_declaring_an_argument_alike_share_it(tmp_path: Path) -> None:
    """An argument is immutable: two files declaring ``tone`` alike hold one ``Argument``, even when their
    lists differ (each file's ``topic`` names its file)."""
    write(tmp_path, {f"p{i}.md": note(i, own_description=True) for i in range(3)})
    source = FileSource(tmp_path, compile_all=False, skills=False)
    source.load()
    first, second, _ = source.prompts()
    assert first.arguments[1] is second.arguments[1]
    assert first.arguments[0] is not second.arguments[0]
    assert first.arguments[0].description == "What note 0 is about"
    assert second.arguments[0].description == "What note 1 is about"
