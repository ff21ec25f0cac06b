"""Imported prompts into a folder and into a store (SQLite and PostgreSQL): the versions in order, then the
labels through the store's own label move; importing twice changes nothing; the report names every warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptdeck.importers import langfuse, langsmith
from promptdeck.importers.model import Imported, ImportRefused
from promptdeck.importers.targets import Report, into_folder, into_store, prepare
from promptdeck.protocol.errors import PromptdeckError
from promptdeck.sources.files.source import FileSource
from promptdeck.sources.store.database import Store
from tests.support.imports import langfuse_records, langsmith_commits


def langfuse_prompts() -> list[Imported]:
    return langfuse.read(json.dumps(langfuse_records()).encode(), "lf.json")


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_folder_gets_each_prompts_production_version_and_a_second_import_changes_nothing(tmp_path: Path) -> None:
    report = Report()
    into_folder(prepare(langfuse_prompts(), "lf.json", report), str(tmp_path), False, report)
    assert (report.prompts, report.versions, report.unchanged) == (2, 2, 0)
    written = files_of(tmp_path)
    assert sorted(written) == ["greet.md", "support/triage.md"]
    source = FileSource(str(tmp_path))
    source.load(compile_all=True)
    assert not source.errors
    greet = {p.name: p for p in source.prompts()}["greet"]
    assert [a.name for a in greet.arguments] == ["name", "team"]
    assert greet.meta["promptdeck.dev/model"] == {"model": "gpt-4o", "temperature": 0.2}
    again = Report()
    into_folder(prepare(langfuse_prompts(), "lf.json", again), str(tmp_path), False, again)
    assert (again.versions, again.unchanged) == (0, 2) and files_of(tmp_path) == written


def test_a_folder_file_holding_other_text_is_kept_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "greet.md").write_text("mine\n")
    with pytest.raises(ImportRefused, match="exists with other text; nothing was written"):
        into_folder(prepare(langfuse_prompts(), "lf.json", Report()), str(tmp_path), False, Report())
    assert files_of(tmp_path) == {"greet.md": b"mine\n"}  # triage neither: nothing was written
    into_folder(prepare(langfuse_prompts(), "lf.json", Report()), str(tmp_path), True, Report())
    assert b"welcome to {{ team }}" in (tmp_path / "greet.md").read_bytes()


def test_a_store_gets_every_version_in_order_then_the_labels_and_a_second_import_changes_nothing(
        store_url: str) -> None:
    report = Report()
    with Store(store_url, create=True) as store:
        into_store(prepare(langfuse_prompts(), "lf.json", report), store, "importer", report)
        assert (report.versions, report.unchanged, report.labels) == (3, 0, 2)
        history = store.reads.history("greet")
        assert [(v.version, v.message) for v in history] == [(2, "warmer"), (1, "import of version 1")]
        assert b"Hi {{ name }}" in store.reads.content("greet.md", 1)
        assert store.reads.snapshot("production").keys() == {"greet.md"}
        assert store.reads.position("production").files == {"greet.md": 2}  # type: ignore[union-attr]
        assert store.reads.position("staging").files == {"support/triage.md": 1}  # type: ignore[union-attr]
        moves = len(store.reads.label_moves())
        again = Report()
        into_store(prepare(langfuse_prompts(), "lf.json", again), store, "importer", again)
        assert (again.versions, again.unchanged, again.labels) == (0, 3, 0)
        assert len(store.reads.history()) == 3 and len(store.reads.label_moves()) == moves


def test_a_label_that_requires_approvals_is_not_moved_by_an_import(tmp_path: Path) -> None:
    """The label moves through ``Store.label``, so the release gate's rules hold for an import as for any move."""
    with Store(str(tmp_path / "s.db"), create=True) as store:
        store.governance.protect("production", "store:write", require_tests=False, author="ops", approvals=1)
        with pytest.raises(PromptdeckError, match="approv"):
            into_store(prepare(langfuse_prompts(), "lf.json", Report()), store, "importer", Report())
        assert store.reads.position("production") is None


def test_langsmith_commits_into_a_store_keep_their_order_and_tag(tmp_path: Path) -> None:
    report = Report()
    prompts = langsmith.read(json.dumps(langsmith_commits()).encode(), "joke.json")
    with Store(str(tmp_path / "s.db"), create=True) as store:
        into_store(prepare(prompts, "joke.json", report), store, "importer", report)
        assert [v.message for v in store.reads.history("joke")] == ["LangSmith commit f6e5d4c3b2a1",
                                                                    "LangSmith commit a1b2c3d4e5f6"]
        assert store.reads.position("prod").files == {"joke.md": 2}  # type: ignore[union-attr]
    assert report.warnings == ["prompt 'joke': not translated: its system message (a user message here: MCP "
                               "prompts have user and assistant messages only); the message placeholder "
                               "'history' (messages given at run time)"]


def test_two_names_on_one_path_and_a_translation_that_does_not_check(tmp_path: Path) -> None:
    records = langfuse_records()
    clash = {**records[0], "name": "GREET"}
    with pytest.raises(ImportRefused, match="prompts 'greet' and 'GREET' would both be GREET.md"):
        prepare(langfuse.read(json.dumps([records[0], clash]).encode(), "lf.json"), "lf.json", Report())
    jinja = {**records[0], "prompt": "{{ name | nosuchfilter }}"}
    prompts = langfuse.read(json.dumps([jinja]).encode(), "lf.json")
    prompts[0].versions[0].messages[0].text = "{{ name | nosuchfilter }}"  # as a Jinja source would give it
    report = Report()
    (prepared,) = prepare(prompts, "lf.json", report)
    assert b'{{ "{" }}{ name | nosuchfilter }}' in prepared.files[0][1]
    assert "the whole text, kept literal (" in report.warnings[0]


def test_a_store_file_with_versions_of_its_own_is_said_and_kept_below_the_imported_ones(tmp_path: Path) -> None:
    report = Report()
    with Store(str(tmp_path / "s.db"), create=True) as store:
        store.publish_file("greet.md", b"mine\n", None, author="me", message="mine")
        into_store(prepare(langfuse_prompts(), "lf.json", report), store, "importer", report)
        assert [v.message for v in store.reads.history("greet.md")] == ["warmer", "import of version 1", "mine"]
    assert "prompt 'greet': the store's greet.md has versions that are not this source's; the imported ones come " \
           "after them" in report.warnings
