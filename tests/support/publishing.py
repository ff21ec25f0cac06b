"""Stores filled for a test: greet published three times with the real CLI, or a folder published in this
process as ``promptdeck publish`` would."""

from __future__ import annotations

from pathlib import Path

from promptdeck.sources.files.source import FileSource
from promptdeck.sources.store.database import Store
from promptdeck.sources.store.folder import read_library
from promptdeck.sources.store.model import listing_of
from tests.support.cli import pd

GREET = "---\ndescription: Say hello\narguments:\n  - name: who\n---\n{} {{{{ who }}}}!\n"


def greet_store(tmp_path: Path, url: str) -> Path:
    """greet: version 1 (label production), version 2 (same arguments), version 3 (another argument)."""
    folder = tmp_path / "lib"
    folder.mkdir(exist_ok=True)
    (folder / "greet.md").write_text(GREET.format("Hello"))
    pd("publish", str(folder), "--store", url, "--label", "production")
    (folder / "greet.md").write_text(GREET.format("Hi"))
    pd("publish", str(folder), "--store", url)
    (folder / "greet.md").write_text(GREET.format("Yo").replace("- name: who", "- name: who\n  - name: mood"))
    pd("publish", str(folder), "--store", url)
    return folder


def publish(url: str, folder: Path, label: str | None = "production", message: str = "why",
            author: str = "ana") -> int | None:
    """What ``promptdeck publish`` does, in this process."""
    source = FileSource(str(folder))
    source.load()
    listed = {prompt.source: listing_of(prompt) for prompt in source.prompts()}
    with Store(url, create=True) as store:
        return store.publish(read_library(str(folder)), listed, author=author, message=message, label=label)[0]
