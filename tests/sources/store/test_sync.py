"""sources/store/sync.py: the base file a folder keeps (read strictly, written whole), and the checks a
publish from a folder passes inside its transaction, on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdeck.sources.store.database import Store
from promptdeck.sources.store.model import StoreError
from promptdeck.sources.store.sync import BASE_FILE, Checks, PublishRefused, read_bases, write_base
from tests.support.git import prompt
from tests.support.stores import publish_texts


def test_the_base_file_is_written_whole_and_read_back(tmp_path: Path) -> None:
    assert read_bases(tmp_path) == {}
    write_base(tmp_path, "production", 4)
    write_base(tmp_path, "staging", 7)
    write_base(tmp_path, "production", 9)
    assert read_bases(tmp_path) == {"production": 9, "staging": 7}
    assert [p.name for p in tmp_path.iterdir()] == [BASE_FILE]  # no temporary file left
    (tmp_path / BASE_FILE).write_text("garbage\n")
    write_base(tmp_path, "production", 10)  # a file that is not ours is replaced
    assert read_bases(tmp_path) == {"production": 10}


@pytest.mark.parametrize(("text", "error"), [
    ("production\n", ":1: expected 'LABEL POSITION'"),
    ("# c\n\nproduction -1\n", ":3: expected 'LABEL POSITION'"),
    ("-x 1\n", ":1: expected 'LABEL POSITION'"),
    ("production 1 2\n", ":1: expected"),
    ("production 99999999999999999999\n", ":1: expected"),
    ("a 1\na 2\n", ":2: label 'a' is given twice"),
    ("\x1b]0;x\x07 1\n", ":1: expected"),
])
def test_a_base_file_not_ours_is_refused_naming_its_line(tmp_path: Path, text: str, error: str) -> None:
    (tmp_path / BASE_FILE).write_text(text)
    with pytest.raises(StoreError, match=f"{BASE_FILE}{error}"):
        read_bases(tmp_path)


def test_a_base_file_too_large_or_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / BASE_FILE).write_bytes(b"a 1\n" * 20_000)
    with pytest.raises(StoreError, match="larger than"):
        read_bases(tmp_path)
    (tmp_path / BASE_FILE).write_bytes(b"\xff 1\n")
    with pytest.raises(StoreError, match="not UTF-8"):
        read_bases(tmp_path)


def test_a_refused_publish_changes_nothing(store_url: str) -> None:
    texts = {f"{n}.md": prompt(n, n) for n in "abcd"}
    with Store(store_url, create=True) as opened:
        publish_texts(opened, "production", texts)
        opened.publish_file("a.md", prompt("a", "web").encode(), None, author="w", message="", label="production")
        before = opened.reads.latest(), opened.reads.position("production")
        with pytest.raises(PublishRefused, match="changed in the store only .*: a.md") as caught:
            opened.publish({p: t.encode() for p, t in texts.items()}, {}, author="x", message="", label="production",
                           checks=Checks(base=1))
        assert caught.value.store_only == ["a.md"] and (caught.value.base, caught.value.now) == (1, 2)
        with pytest.raises(PublishRefused, match="delete 3 of the 4 prompts"):
            opened.publish({"a.md": prompt("a", "web").encode()}, {}, author="x", message="", label="production",
                           checks=Checks())
        with pytest.raises(PublishRefused, match="delete 4 of the 4 prompts of the store's newest"):
            opened.publish({}, {}, author="x", message="", checks=Checks())
        assert (opened.reads.latest(), opened.reads.position("production")) == before
        number, _ = opened.publish({"a.md": b"x"}, {}, author="x", message="", label="production",
                                   checks=Checks(force=True, delete=True))
        assert number is not None and opened.db.rows("SELECT position FROM label_bases") == [(3,)]
