"""``promptdeck check --graph``: what each prompt uses and what uses each part, as text and JSON (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import cli
from tests.support.files import write
from tests.support.libraries import composed_library


def test_the_graph_as_text(tmp_path: Path) -> None:
    done = cli("check", "--graph", str(composed_library(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "prompts:\n"
        "  few-shot  (few-shot.md)\n"
        "    used by review\n"
        "  review  (review.md)\n"
        "    uses prompt few-shot\n"
        "    uses prompt rules\n"
        "    uses file _partials/lists.j2\n"
        "  rules  (rules.md)\n"
        "    uses file _partials/tone.md\n"
        "    used by review\n"
        "files:\n"
        "  _partials/lists.j2\n"
        "    used by review\n"
        "  _partials/tone.md\n"
        "    used by rules\n"
        "    a change reaches review, rules\n"
        "3 prompts ok\n")


def test_the_graph_as_json_with_its_problems(tmp_path: Path) -> None:
    folder = write(composed_library(tmp_path), {
        "pick.md": '---\narguments:\n  - name: which\n---\n{% include "_partials/" ~ which ~ ".md" %}\n',
        "broken.md": '{{ prompt("nowhere") }}\n',
    })
    done = cli("check", "--graph", "--json", str(folder))
    assert done.returncode == 1
    found = json.loads(done.stdout)
    assert found["prompts"]["pick"]["uses"] == {"files": [], "prompts": [], "dynamic": True}
    assert found["prompts"]["review"]["parts"] == {"files": ["_partials/lists.j2", "_partials/tone.md"],
                                                   "prompts": ["few-shot", "rules"]}
    assert found["prompts"]["review"]["file"] == "review.md"
    assert found["files"]["_partials/tone.md"] == {"usedBy": ["rules"], "affects": ["review", "rules"]}
    assert len(found["problems"]) == 1 and "broken.md" in found["problems"][0] and "nowhere" in found["problems"][0]
    assert "problem" in done.stderr


def test_json_without_graph_is_a_usage_error(tmp_path: Path) -> None:
    done = cli("check", "--json", str(composed_library(tmp_path)))
    assert done.returncode == 2 and "--graph" in done.stderr
