"""Importers: other tools' prompts (with versions, labels, variables and model settings) into promptdeck.

``promptdeck import SOURCE-KIND INPUT (--to FOLDER | --store URL)`` (``cli/imports.py``) reads INPUT with
the source's module into ``model.Imported`` records, then ``targets`` writes them. ``SOURCES`` is the table
of source kinds: a new source is a row and its module. docs/import.md has each source's input.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .model import MAX_INPUT_BYTES, Imported, ImportRefused


def _file(path: str) -> bytes:
    """INPUT's bytes: a regular file (not through a symbolic link), within the size bound."""
    file = Path(path)
    if file.is_symlink() or not file.is_file():
        raise ImportRefused(f"{path}: not a file (or a symbolic link)")
    if file.stat().st_size > MAX_INPUT_BYTES:
        raise ImportRefused(f"{path}: the input is larger than {MAX_INPUT_BYTES} bytes")
    return file.read_bytes()


def _langfuse(path: str, name: str | None) -> list[Imported]:
    from . import langfuse

    return langfuse.read(_file(path), path)


def _langsmith(path: str, name: str | None) -> list[Imported]:
    from . import langsmith

    return langsmith.read(_file(path), path, name or Path(path).name.split(".")[0])


def _promptlayer(path: str, name: str | None) -> list[Imported]:
    from . import promptlayer

    return promptlayer.read(_file(path), path)


def _openai(path: str, name: str | None) -> list[Imported]:
    from . import openai_objects

    return openai_objects.read(_file(path), path)


def _humanloop(path: str, name: str | None) -> list[Imported]:
    from . import humanloop

    return humanloop.read(path, path)


#: Source kind -> its reader of INPUT (a path; ``name``: a prompt's name where the input has none).
SOURCES: dict[str, Callable[[str, str | None], list[Imported]]] = {
    "langfuse": _langfuse,
    "langsmith": _langsmith,
    "promptlayer": _promptlayer,
    "openai": _openai,
    "humanloop": _humanloop,
}


def read(kind: str, path: str, name: str | None = None) -> list[Imported]:
    reader = SOURCES.get(kind)
    if reader is None:
        raise ImportRefused(f"unknown source {kind!r}; use one of {', '.join(SOURCES)}")
    return reader(path, name)
