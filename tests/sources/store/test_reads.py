"""``Reads`` (sources/store/reads.py), on SQLite and a real PostgreSQL cluster: where labels point, the files and
listings there, versions and history, each read through the connection it was given."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from promptdeck.sources.store.connection import Connection
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreMissing
from promptdeck.sources.store.reads import Reads
from tests.support.stores import publish_texts

GREET = "---\ndescription: Say hello\n---\n{} there!\n"


def three_publishes(store: Store) -> None:
    """greet 1, 2 and a deletion (3); docs/notes.txt 1; bye 1 and 2. production: publish 2, staging: publish 3."""
    notes = {"docs/notes.txt": "material"}
    publish_texts(store, None, {"greet.md": GREET.format("Hello"), **notes, "bye.md": "Bye"}, author="ana",
                  message="first")
    publish_texts(store, "production", {"greet.md": GREET.format("Hi"), **notes, "bye.md": "Bye"}, author="bo",
                  message="second")
    publish_texts(store, "staging", {"docs/notes.txt": "material", "bye.md": "Ciao"}, author="cy", message="third")


def test_reads_take_the_connection_they_are_given(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        three_publishes(store)
    with Connection(store_url) as db:
        reads = Reads(db)
        assert reads.labels() == ["production", "staging"]
        latest = reads.latest()
        assert {path: (newest.version, newest.digest is None) for path, newest in latest.items()} == \
            {"greet.md": (3, True), "docs/notes.txt": (1, False), "bye.md": (2, False)}


def test_where_a_label_points_and_what_it_serves(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        three_publishes(store)
        reads = store.reads
        production = reads.position("production")
        assert production is not None and production.files == {"greet.md": 2, "docs/notes.txt": 1, "bye.md": 1}
        assert production.author == "bo" and reads.position("production", back=1) is None
        assert reads.position_id("production") == production.id == reads.require_position("production")
        assert reads.position_id("nowhere") is None
        with pytest.raises(StoreMissing, match=r"no label 'nowhere' in the store \(labels: production, staging\)"):
            reads.require_position("nowhere")
        assert reads.snapshot("staging") == {"docs/notes.txt": (1, b"material"), "bye.md": (2, b"Ciao")}
        head = reads.head("production")
        assert head == (production.id, True) and reads.fully_listed(production.id)
        position, entries = reads.entries("production")
        assert position == production.id
        assert sorted((e.path, e.version, e.prompt) for e in entries) == \
            [("bye.md", 1, "bye"), ("docs/notes.txt", 1, None), ("greet.md", 2, "greet")]
        assert reads.versions_at(position) == production.files
        assert reads.version_at(position, "greet.md") == 2 and reads.version_at(position, "gone.md") is None


def test_a_positions_files_and_listing_come_in_pages(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        three_publishes(store)
        reads = store.reads
        position = reads.require_position("production")
        first = reads.contents(position, limit=2)
        rest = reads.contents(position, after=first[-1][0], limit=2)
        assert [path for path, _, _ in first + rest] == ["bye.md", "docs/notes.txt", "greet.md"]
        assert reads.contents(position, material=True) == [("docs/notes.txt", 1, b"material")]
        assert reads.contents_of(position, ["docs/notes.txt", "nowhere"]) == [("docs/notes.txt", 1, b"material")]
        names = [entry.prompt for entry in reads.listed(position, limit=10)]
        assert names == ["bye", "greet"] and reads.listed_count(position) == 2
        assert [entry.prompt for entry in reads.listed(position, after="bye", limit=10)] == ["greet"]
        assert [entry.path for entry in reads.listed(position, name="greet")] == ["greet.md"]
        assert reads.scope_sets(position) == []


def test_versions_history_and_contents(store_url: str) -> None:
    with Store(store_url, create=True) as store:
        three_publishes(store)
        reads = store.reads
        assert reads.content("greet.md", 1) == GREET.format("Hello").encode()
        with pytest.raises(StoreMissing, match="no version 9 of 'greet.md'"):
            reads.content("greet.md", 9)
        assert reads.version_of("greet", None) == ("greet.md", 3, None)  # its newest version is its deletion
        assert reads.version_of("greet", 2) == ("greet.md", 2, GREET.format("Hi").encode())
        assert reads.file_version("bye.md", None) == (2, b"Ciao")
        assert reads.path_of("bye") == "bye.md" and reads.path_of("bye.md") == "bye.md"
        with pytest.raises(StoreMissing, match="no prompt 'hello' in the store"):
            reads.path_of("hello")
        assert [(v.version, v.author, v.message) for v in reads.history("greet")] == \
            [(3, "cy", "third"), (2, "bo", "second"), (1, "ana", "first")]
        assert {v.path for v in reads.history()} == {"greet.md", "docs/notes.txt", "bye.md"}
        assert reads.publish_of("bye.md", 2) == 3
        assert reads.as_of("greet.md", 2) == 2 and reads.as_of("greet.md", 3) is None
        assert reads.last_held("greet.md", 3) == 2
        assert reads.named_as_of("greet", 1) == "greet.md" and reads.named_as_of("greet", 3) is None
        recorded = reads.recorded([("greet.md", 1), ("greet.md", 3), ("nowhere", 1)])
        assert set(recorded) == {("greet.md", 1), ("greet.md", 3)} and recorded["greet.md", 3].digest is None
        assert reads.labels_at("bye.md") == {1: ["production"], 2: ["staging"]}
        moves = {now.label: (now.reason, before) for now, before in reads.label_moves()}
        assert moves == {"production": ("publish 2", None), "staging": ("publish 3", None)}
        digest = hashlib.sha256(b"material").hexdigest()
        assert reads.blob(digest) == b"material"
        with pytest.raises(StoreMissing):
            reads.blob("0" * 64)


def test_skills_are_found_by_their_folders(store_url: str) -> None:
    skill = "---\nname: git\ndescription: Use git well\n---\nCommit often.\n"
    with Store(store_url, create=True) as store:
        publish_texts(store, "production", {"skills/git/SKILL.md": skill, "skills/git/notes.md": "more"})
        reads = store.reads
        position = reads.require_position("production")
        assert [path for path, _, _ in reads.skill_files(position)] == ["skills/git/SKILL.md", "skills/git/notes.md"]
        assert reads.skill_markers() == {"skills/git/SKILL.md"}
        assert reads.skill_target("skill://git") == ("skills/git", True)
        assert reads.skill_target("skill://git/SKILL.md") == ("skills/git/SKILL.md", False)
        assert reads.skill_target("skills/git") == ("skills/git", True)
        assert reads.skill_target("skill://nothing") is None and reads.skill_target("greet.md") is None
        assert {v.path for v in reads.history_below("skills/git")} == {"skills/git/SKILL.md", "skills/git/notes.md"}


def test_a_positions_listing_copies_to_a_local_sqlite_file(store_url: str, tmp_path: Path) -> None:
    with Store(store_url, create=True) as store:
        three_publishes(store)
        position = store.reads.require_position("production")
        store.reads.copy_listing(position, str(tmp_path / "copy.db"))
        original = store.reads.listed(position, limit=10)
    with Store(f"sqlite:///{tmp_path}/copy.db") as copy:
        assert copy.reads.listed(position, limit=10) == original
        assert copy.reads.head("production") == (position, True)
        assert copy.db.rows("SELECT count(*) FROM blobs") == [(0,)]  # a listing, no file contents


def test_the_state_key_is_made_once_with_the_store_and_read_alike_by_every_connection(store_url: str) -> None:
    """The key replicas sign session ids and requestState with: one per store, the same from every connection,
    and another store's differs."""
    with Store(store_url, create=True) as first, Store(store_url) as second:
        key = first.reads.state_key()
        assert key is not None and len(key) >= 32 and second.reads.state_key() == key
    other = store_url.replace("prompts.db", "other.db") if store_url.startswith("sqlite") else None
    if other is not None:
        with Store(other, create=True) as elsewhere:
            assert elsewhere.reads.state_key() not in (None, key)
