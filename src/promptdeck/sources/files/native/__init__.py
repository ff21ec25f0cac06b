"""Prompt files in other tools' formats, read natively: one module per family, one dispatch by path.

``paths.prompt_format`` says which format a path holds (``formats.FORMATS``); ``stage_file`` hands such a file over
as ``Native`` (plain data, so worker processes can make it) and ``build`` reads it with its format's
reader. Every reader gives a ``Prompt`` or raises ``LineError`` with the line at fault. The formats and
how each maps to MCP are in docs/native-formats.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ....prompts.spec import Prompt
from ....protocol.errors import LineError, PromptFileError

if TYPE_CHECKING:
    from ..library import TemplateFolder

from ..formats import FORMATS, readers
from ..frontmatter import EMPTY_PROMPT
from ._common import META_FORMAT, META_MODEL, json_safe

#: A reader's module is imported when a file of its format is first read (``formats.Format.reader``): a
#: library of promptdeck's own files needs none of them, and the stdio server's first request used to pay
#: ~3 ms for all of them, tomllib among them (issue 29). A reader's None: a file of that format that its tool
#: does not offer as a prompt (a Continue prompt that is not ``invokable``).
READERS = readers(FORMATS)


def _reader(where: tuple[str, str]) -> Callable[..., Prompt | None]:
    module, name = where
    reader: Callable[..., Prompt | None] = getattr(importlib.import_module(f".{module}", __name__), name)
    return reader


class Native(NamedTuple):
    """A decoded file of another tool's format, waiting for its reader."""

    kind: str
    text: str


def build(
    library: TemplateFolder, rel: str, staged: Native, prefix: str = ""
) -> tuple[Prompt | None, list[PromptFileError]]:
    """The prompt of a native file, with the tests of the ``NAME.tests.yaml`` beside it, or the problems that
    keep it from being one; (None, []) for a file that is no prompt in its own tool. ``prefix``: where the
    library's folder lies below a library root, which ``rel`` starts with."""
    if not staged.text.strip():  # an empty file is no prompt in any format, but a name taken by nothing
        return None, [PromptFileError(rel, EMPTY_PROMPT)]
    fmt = READERS.get(staged.kind)
    if fmt is None or fmt.reader is None:
        return None, [PromptFileError(rel, f"the {staged.kind} format is not read yet")]
    try:
        if fmt.templated:  # its bodies are templates, run in the library's sandboxed environment
            prompt = _reader(fmt.reader)(library, rel, staged.text)
        else:
            prompt = _reader(fmt.reader)(rel, staged.text)
    except LineError as exc:
        return None, [PromptFileError(rel, str(exc), exc.line)]
    if prompt is None:
        return None, []
    from ..tests import read_sidecar  # another tool's file has no place for promptdeck's tests: a file beside it

    tests, problems = read_sidecar(lambda path, limit: library.root.read_bytes(path[len(prefix):], limit), rel,
                                   prompt.arguments)
    if problems:
        return None, problems
    return (prompt.replace(tests=tests) if tests is not None else prompt), []


__all__ = ["META_FORMAT", "META_MODEL", "READERS", "Native", "build", "json_safe"]
