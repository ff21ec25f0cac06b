"""Prompt libraries made on the fly for tests."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "prompts"

#: Arguments that make every example prompt render (required ones, and paths that exist).
EXAMPLE_ARGS: dict[str, dict[str, str]] = {
    "code-review": {"code": "def add(a, b):\n    return a - b"},
    "explain-code": {"code": "print(sum(range(10)))"},
    "git.commit": {"diff": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"},
    "debug.workflow": {"error": "KeyError: 'user_id'"},
    "project-analysis": {},
    "describe-image": {},
    "standup.transcribe": {},
    "write-tests": {"source": "_material/service.py"},
    "docs.release-notes": {"version": "2.4.0"},
    "summarize": {"text": "promptdeck serves prompt libraries to MCP clients."},
    "changelog": {"arguments": "2.5.0"},
}

#: A prompt whose required arguments are of every type a form field has (text with bounds, an integer, a choice,
#: a boolean), beside an optional one: what the elicitation tests ask for.
BRIEF = """---
description: Writes a brief
arguments:
  - {name: topic, title: Topic, description: What the brief is about, required: true, min: 3, max: 80}
  - {name: pages, description: How many pages, type: integer, required: true, min: 1, max: 5}
  - {name: audience, description: Who reads it, enum: [engineers, managers], required: true}
  - {name: urgent, description: Whether it is urgent, type: boolean, required: true}
  - {name: tone, enum: [plain, formal], default: plain}
---
A {{ tone }} brief of {{ pages }} pages on {{ topic }} for {{ audience }}{% if urgent %}, urgent{% endif %}.
"""
#: What answers the brief's form fully, as a client's form would send it (typed JSON values), and what it renders.
BRIEF_ANSWER: dict[str, str | int | float | bool | list[str] | None] = {
    "topic": "caching", "pages": 2, "audience": "managers", "urgent": True}
BRIEF_RENDERED = "A plain brief of 2 pages on caching for managers, urgent."


def write_prompts(root: Path, count: int, *, per_folder: int = 500) -> list[str]:
    """``count`` small prompts with two arguments, in folders of ``per_folder``; returns their names."""
    names: list[str] = []
    for i in range(count):
        folder = root / f"set{i // per_folder:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"p{i:05d}.md").write_text(
            "---\n"
            f"description: Generated prompt number {i}\n"
            "arguments:\n"
            "  - {name: topic, required: true, description: What to write about}\n"
            "  - {name: tone, enum: [plain, formal], default: plain}\n"
            "---\n"
            f"Write a {{{{ tone }}}} note about {{{{ topic }}}} (prompt {i}).\n"
        )
        names.append(f"set{i // per_folder:03d}.p{i:05d}")
    return sorted(names)


def prompt_folder(root: Path, files: dict[str, str]) -> Path:
    """A folder ``root`` holding ``files`` (relative path -> text)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def copy_examples(dest: Path) -> Path:
    shutil.copytree(EXAMPLES, dest)
    return dest


#: A library whose prompts compose (issue 31): partials included and imported, a prompt's text inside another
#: with arguments, and a prompt's messages brought in whole by a role line. ``review`` uses every way.
COMPOSED: dict[str, str] = {
    "_partials/tone.md": "Be {{ tone }}, and keep it short.\n",
    "_partials/lists.j2": "{% macro bullets(items) %}{% for item in items %}- {{ item }}\n{% endfor %}{% endmacro %}\n",
    "rules.md": "---\ndescription: The house rules\narguments:\n  - name: tone\n    enum: [kind, blunt]\n"
                "    required: true\n---\nHouse rules.\n{% include \"_partials/tone.md\" %}\n",
    "few-shot.md": "---\ndescription: One worked example\narguments:\n  - name: language\n    required: true\n---\n"
                   "user:\nReview this {{ language }}: x=1\nassistant:\nName it `count`.\n",
    "review.md": "---\ndescription: A review with the house rules\narguments:\n  - name: code\n    required: true\n"
                 "  - name: tone\n    default: kind\n---\n{{ prompt(\"rules\", tone=tone) }}\n\n"
                 "{% from \"_partials/lists.j2\" import bullets %}Look at:\n"
                 "{{ bullets([\"correctness\", \"naming\"]) }}\n"
                 "user: {prompt: few-shot, arguments: {language: python}}\nuser:\nReview this:\n{{ code }}\n",
}
#: What ``review`` is given in the composed tests.
COMPOSED_ARGS = {"code": "def f(): return 1", "tone": "blunt"}


def composed_library(root: Path) -> Path:
    """``COMPOSED`` written below ``root``; its folder."""
    for rel, text in COMPOSED.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
