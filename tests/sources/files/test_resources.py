"""A library's files as resources: exactly what the prompts a principal may see can send, by the path rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from promptdeck.prompts.catalog import Catalog
from promptdeck.prompts.resources import ResourceCatalog, Sight
from promptdeck.protocol.errors import InvalidParams
from promptdeck.sources.files import paths
from promptdeck.sources.files.paths import file_uri, uri_path
from promptdeck.sources.files.resources import TEMPLATE, FolderResources
from promptdeck.sources.files.source import FileSource

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

#: Who reads: a trusted stdio client, an anonymous principal, one holding "hr".
EVERYONE, ANONYMOUS, HR = None, frozenset[str](), frozenset({"hr"})


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    write(root, "_material/guide.txt", "the guide\n")
    write(root, "_material/pic.png", PNG)
    write(root, "_material/.secret", "hidden\n")
    write(root, "_material/notes.md.txt", "notes\n")
    write(root, "_hr/pay.csv", "name,pay\n")
    write(root, "notes/arch.txt", "architecture\n")
    write(root, "notes/other.txt", "not linked\n")
    write(root, ".env", "TOKEN=secret\n")
    os.symlink("guide.txt", root / "_material/alias.txt")
    os.symlink("../.env", root / "_material/env.txt")
    os.symlink("../link.md", root / "_material/prompt.txt")
    os.symlink("/etc/hostname", root / "_material/out.txt")
    write(root, "link.md", "---\narguments:\n  - {name: file, type: path, pattern: '_material/.*'}\n---\n"
                           "user: {resource_link: notes/arch.txt}\n\nuser: {resource: \"{{ file }}\"}\n")
    write(root, "hr.md", "---\nscopes: [hr]\n---\nuser: {resource: _hr/pay.csv}\n")
    write(root, "plain.md", "Just text.\n")
    return root


def catalog_of(root: Path) -> ResourceCatalog:
    source = FileSource(root)
    assert source.load() == []
    return ResourceCatalog(source.resources(), Catalog(source.prompts()), page_size=3)


def listed(resources: ResourceCatalog, held: frozenset[str] | None) -> list[str]:
    return list(resources.listing(resources.sight(held)).uris)


def uri(rel: str) -> str:
    return file_uri(rel)


def test_what_prompts_reach_is_listed_by_who_may_see_them(library: Path) -> None:
    resources = catalog_of(library)
    visible = [uri("_material/alias.txt"), uri("_material/guide.txt"), uri("_material/notes.md.txt"),
               uri("_material/pic.png"), uri("notes/arch.txt")]
    assert listed(resources, ANONYMOUS) == visible
    assert listed(resources, HR) == sorted([*visible, uri("_hr/pay.csv")])
    assert listed(resources, EVERYONE) == listed(resources, HR)
    entry = resources.listing(resources.sight(ANONYMOUS)).entries[3]
    assert (entry.uri, entry.name, entry.title, entry.mime_type, entry.size) == \
        (uri("_material/pic.png"), "pic.png", "_material/pic.png", "image/png", len(PNG))


def test_text_is_text_and_the_rest_a_blob(library: Path) -> None:
    resources = catalog_of(library)
    sight = resources.sight(ANONYMOUS)
    text = resources.read(uri("_material/guide.txt"), sight)
    assert (text.mime_type, text.text, text.blob) == ("text/plain", "the guide\n", None)
    image = resources.read(uri("_material/pic.png"), sight)
    assert (image.mime_type, image.text, image.blob) == ("image/png", None, PNG)
    # A link inside the library to a file it may name is read as the name given.
    alias = resources.read(uri("_material/alias.txt"), sight)
    assert (alias.uri, alias.text) == (uri("_material/alias.txt"), "the guide\n")


@pytest.mark.parametrize("rel", [
    "_material/.secret",     # hidden
    ".env",                  # hidden
    "_material/env.txt",     # a link to a hidden file
    "_material/prompt.txt",  # a link to a prompt file
    "_material/out.txt",     # a link out of the library
    "link.md",               # another prompt's source
    "notes/other.txt",       # no prompt sends it
    "_hr/pay.csv",           # only a prompt it may not see sends it
    "_material/missing.txt",
    "../lib/_material/guide.txt",
    "_material/../_material/guide.txt",
    "/etc/hostname",
])
def test_anything_else_is_not_found(library: Path, rel: str) -> None:
    resources = catalog_of(library)
    sight = resources.sight(ANONYMOUS)
    for spelled in {uri(rel), "promptdeck:///" + rel}:
        with pytest.raises(InvalidParams) as caught:
            resources.read(spelled, sight)
        assert caught.value.message == f"Resource not found: {spelled!r}"
        assert caught.value.data == {"uri": spelled}
        assert resources.stamp(spelled, sight) is None


@pytest.mark.parametrize("spelled", [
    "promptdeck:///_material%2fguide.txt",
    "promptdeck:///%5fmaterial/guide.txt",
    "promptdeck:///_material/%2e%2e/_material/guide.txt",
    "promptdeck:///%2e%2e/lib/_material/guide.txt",
    "promptdeck:///_material/guide.txt%00",
    "promptdeck:///_material/guide.txt%",
    "promptdeck:///_material/guide.txt%zz",
    "promptdeck:///_material//guide.txt",
    "promptdeck:///_material/./guide.txt",
    "promptdeck:///_material/guide.txt/",
    "promptdeck://host/_material/guide.txt",
    "PROMPTDECK:///_material/guide.txt",
    "file:///etc/hostname",
    "",
    "x" * 5000,
])
def test_a_second_spelling_names_nothing(library: Path, spelled: str) -> None:
    resources = catalog_of(library)
    with pytest.raises(InvalidParams, match="^Resource not found: "):
        resources.read(spelled, resources.sight(EVERYONE))


def test_a_file_past_the_embedding_limit_is_not_found(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("promptdeck.sources.files.resources.MAX_EMBED_BYTES", 5)
    resources = catalog_of(library)
    sight = resources.sight(ANONYMOUS)
    with pytest.raises(InvalidParams, match="^Resource not found: "):
        resources.read(uri("_material/guide.txt"), sight)
    assert uri("_material/guide.txt") not in listed(resources, ANONYMOUS)


def test_path_arguments_reach_by_their_own_rules(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    for rel in ("_a/x.txt", "_a/y.png", "docs/d.txt", "docs/e.png", "other/o.txt"):
        write(root, rel, b"data")
    write(root, "any.md", "---\narguments:\n  - {name: f, type: path}\n---\n{{ f }}\n")
    write(root, "png.md", "---\narguments:\n  - {name: f, type: path, pattern: 'docs/.*[.]png'}\n---\n{{ f }}\n")
    write(root, "one.md", "---\narguments:\n  - {name: f, type: path, enum: [other/o.txt]}\n---\n{{ f }}\n")
    resources = catalog_of(root)
    # no pattern: the material folders; a pattern: what it matches anywhere; an enum without a pattern still
    # keeps to the material folders, as it does in a prompts/get
    assert listed(resources, EVERYONE) == [uri("_a/x.txt"), uri("_a/y.png"), uri("docs/e.png")]


def test_a_library_without_reaching_prompts_serves_nothing(tmp_path: Path) -> None:
    write(tmp_path, "_material/guide.txt", "the guide\n")
    write(tmp_path, "plain.md", "Just text.\n")
    resources = catalog_of(tmp_path)
    assert listed(resources, EVERYONE) == []
    with pytest.raises(InvalidParams):
        resources.read(uri("_material/guide.txt"), resources.sight(EVERYONE))
    assert [t.uri_template for t in FolderResources(FileSource(tmp_path).library).templates()] == \
        [TEMPLATE.uri_template]


def test_uris_have_one_spelling(tmp_path: Path) -> None:
    for rel in ("_m/a b.txt", "_m/100%.txt", "_m/é.txt", "_m/q?#.txt", "_m/plain-name_1.txt"):
        spelled = file_uri(rel)
        assert uri_path(spelled) == rel
        assert " " not in spelled and "#" not in spelled and "?" not in spelled
    assert file_uri("_m/a b.txt") == "promptdeck:///_m/a%20b.txt"
    assert uri_path("promptdeck:///_m/a b.txt") is None


def test_stamps_change_with_the_file(library: Path) -> None:
    resources = catalog_of(library)
    sight: Sight = resources.sight(ANONYMOUS)
    before = resources.stamp(uri("_material/guide.txt"), sight)
    assert before is not None
    (library / "_material/guide.txt").write_text("a new guide, longer\n")
    assert resources.stamp(uri("_material/guide.txt"), sight) != before


def test_the_embed_and_the_read_agree_on_text(library: Path) -> None:
    data = (library / "_material/guide.txt").read_bytes()
    assert paths.file_contents("_material/guide.txt", data) == ("text/plain", "the guide\n")
    assert paths.file_contents("_material/pic.png", PNG) == ("image/png", None)
    assert paths.file_contents("_material/tool", b"#!/bin/sh\necho hi\n") == ("text/plain", "#!/bin/sh\necho hi\n")
    assert paths.file_contents("_material/latin.txt", "café".encode("latin-1")) == ("text/plain", None)
