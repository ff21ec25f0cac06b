"""The composition graph: what each prompt uses, and who uses each part, transitively (issue 31)."""

from __future__ import annotations

from pathlib import Path

from promptdeck.prompts.graph import Graph
from promptdeck.sources.files.source import FileSource
from tests.support.libraries import composed_library


def _graph(tmp_path: Path, extra: dict[str, str] | None = None) -> Graph:
    composed_library(tmp_path)
    for rel, text in (extra or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    source = FileSource(tmp_path)
    assert source.load(compile_all=True) == []
    return Graph(source.prompts())


def test_a_prompt_uses_its_partials_and_prompts_and_a_partial_affects_every_user(tmp_path: Path) -> None:
    graph = _graph(tmp_path)
    assert sorted(graph.uses("review").files) == ["_partials/lists.j2"]
    assert graph.uses("review").prompts == {"rules", "few-shot"}
    assert graph.uses("rules").files == {"_partials/tone.md"}
    # review composes rules, which includes tone.md: a change to tone.md changes both renders
    assert graph.users(files=["_partials/tone.md"]) == {"rules", "review"}
    assert graph.direct_users_of_file("_partials/tone.md") == {"rules"}
    assert graph.users(prompts=["few-shot"]) == {"review"}
    assert graph.parts("review") == ({"_partials/lists.j2", "_partials/tone.md"}, {"rules", "few-shot"})
    assert graph.users(files=["nothing.md"]) == set()


def test_the_users_of_a_part_are_found_through_a_chain(tmp_path: Path) -> None:
    chain = {"top.md": '{{ prompt("review", code="x") }}\n', "_partials/inner.md": "inner\n",
             "_partials/outer.md": '{% include "_partials/inner.md" %}\n', "_data/facts.txt": "facts\n",
             "other.md": '{% include "_partials/outer.md" %}{{ read("_data/facts.txt") }}\n'}
    graph = _graph(tmp_path, chain)
    assert graph.users(files=["_partials/tone.md"]) == {"rules", "review", "top"}
    # a partial included by a partial is the user's file too
    assert graph.uses("other").files == {"_partials/outer.md", "_partials/inner.md", "_data/facts.txt"}
    assert graph.users(files=["_partials/inner.md"]) == {"other"}
    assert graph.users(files=["_data/facts.txt"]) == {"other"}


def test_entries_hide_what_the_viewer_may_not_see(tmp_path: Path) -> None:
    secret = '{% include "_partials/only-secret.md" %}{{ prompt("rules", tone="kind") }}\n'
    graph = _graph(tmp_path, {"secret.md": secret, "_partials/only-secret.md": "classified\n"})
    everyone = graph.as_json()
    assert everyone["files"]["_partials/only-secret.md"] == {"usedBy": ["secret"], "affects": ["secret"]}
    assert "secret" in everyone["prompts"]["rules"]["usedBy"]
    seen = graph.as_json(lambda name: name != "secret")
    assert "secret" not in seen["prompts"]
    assert "_partials/only-secret.md" not in seen["files"]
    assert seen["prompts"]["rules"]["usedBy"] == ["review"]
    assert seen["files"]["_partials/tone.md"] == {"usedBy": ["rules"], "affects": ["review", "rules"]}
    assert graph.file_entry("_partials/only-secret.md", lambda name: name != "secret") is None


def test_a_cycle_ends(tmp_path: Path) -> None:
    # check refuses a cycle; the graph of such a library still ends (each prompt visited once)
    (tmp_path / "a.md").write_text('{{ prompt("b") }}\n')
    (tmp_path / "b.md").write_text('{{ prompt("a") }}\n')
    source = FileSource(tmp_path)
    source.load(compile_all=True)
    graph = Graph(source.prompts())
    assert graph.users(prompts=["a"]) == {"a", "b"}
    assert graph.parts("a") == (set(), {"b"})
