"""The prompt formats a library reads, one ``Format`` record each: the one place a format is declared.

Every table about formats is built here from ``FORMATS``: where ``paths.prompt_format`` looks for each
(``in_folders``, ``in_library``), the choices of ``--format`` (``folder_formats``), the readers
``native.build`` runs (``Format.reader``), and the endings a tests file may stand beside
(``prompt_endings``). Adding a format is a record here, a reader module in ``native/``, its section in
docs/native-formats.md and its tests; tests/sources/files/test_formats.py checks that no other module keeps
a table of formats of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Format:
    """One prompt format: where its files live, how they end, who reads them and whether ``--format`` names it."""

    #: its id: what ``paths.prompt_format`` answers, ``--format`` takes and ``_meta`` records
    name: str
    #: how its files' names end; after a ``*`` folder, the whole name after that folder (``/SKILL.md``)
    ending: str
    #: its tool's hidden folder below a library root (``.claude/commands/``); ``*`` is one folder of any name
    #: (a skill's). None: it has none
    folder: str | None = None
    #: whether the subfolders of ``folder`` hold its files too
    nested: bool = False
    #: whether its files are also read by their ending anywhere promptdeck's own files may be
    in_library: bool = False
    #: other endings its files may have (GitHub Models reads ``.prompt.yaml`` as ``.prompt.yml``)
    other_endings: tuple[str, ...] = ()
    #: (module in ``sources/files/native/``, function) reading a file of it; None: promptdeck's own, read by
    #: ``source.stage_file`` and ``build_prompt``. Imported when a file of the format is first read.
    reader: tuple[str, str] | None = None
    #: whether its bodies are templates, run in the library's sandbox: then its reader takes the library
    templated: bool = False
    #: whether ``--format NAME`` reads a folder as this format's: as its ``folder`` (or, for promptdeck's
    #: own, as a library root). A format read by its ending wherever promptdeck's own files are (Prompty,
    #: dotprompt) has none: a folder of its files is served as it is, so its name would be ``promptdeck``'s.
    option: bool = False


#: promptdeck's own format: Markdown with YAML front matter (docs/prompt-files.md)
OWN = "promptdeck"

#: Every format, in the order ``prompt_format`` tries them: of two endings one of which ends the other
#: (``.prompt.md``, ``.md``), the longer first.
FORMATS: tuple[Format, ...] = (
    Format("claude-command", ".md", ".claude/commands/", nested=True, reader=("claude", "read_command"), option=True),
    Format("claude-skill", "/SKILL.md", ".claude/skills/*/", reader=("claude", "read_skill"), option=True),
    Format("copilot", ".prompt.md", ".github/prompts/", nested=True, in_library=True, reader=("copilot", "read"),
           option=True),
    # a Continue prompt that is not ``invokable`` is no prompt in Continue: its reader gives None
    Format("cursor", ".md", ".cursor/commands/", reader=("plain", "read_cursor"), option=True),
    Format("continue", ".md", ".continue/prompts/", reader=("plain", "read_continue"), option=True),
    Format("codex", ".md", ".codex/prompts/", reader=("codex", "read"), option=True),
    Format("gemini", ".toml", ".gemini/commands/", nested=True, reader=("gemini", "read"), option=True),
    Format("prompty", ".prompty", in_library=True, reader=("prompty", "read"), templated=True),
    # its partials ({{> name}}) are the library's files, read through the same loader as includes
    Format("dotprompt", ".prompt", in_library=True, reader=("dotprompt", "read"), templated=True),
    # one YAML document; its ending is longer than the rest, so it is told apart before any of them
    Format("github-models", ".prompt.yml", in_library=True, other_endings=(".prompt.yaml",),
           reader=("github_models", "read")),
    Format(OWN, ".md", in_library=True, option=True),
)

BY_NAME: dict[str, Format] = {fmt.name: fmt for fmt in FORMATS}


def in_folders(formats: Iterable[Format]) -> tuple[tuple[str, str, str, str, bool], ...]:
    """(folder before any ``*``, what follows the ``*`` or "" when none, ending, name, nested) of each format
    with a hidden folder of its own: what ``prompt_format`` matches a hidden path against."""
    out = []
    for fmt in formats:
        if fmt.folder is not None:
            head, star, tail = fmt.folder.partition("*")
            out.append((head, star + tail, fmt.ending, fmt.name, fmt.nested))
    return tuple(out)


def in_library(formats: Iterable[Format]) -> tuple[tuple[str, str], ...]:
    """(ending, name) of each format read anywhere promptdeck's own files may be, the longest ending first."""
    found = [(ending, fmt.name) for fmt in formats if fmt.in_library for ending in (fmt.ending, *fmt.other_endings)]
    return tuple(sorted(found, key=lambda pair: -len(pair[0])))


def folder_formats(formats: Iterable[Format]) -> dict[str, str]:
    """``--format``: each format a folder may be read in, with where its files would be below a library root
    ("" for a library root itself)."""
    return {fmt.name: (fmt.folder or "").partition("*")[0] for fmt in formats if fmt.option}


def prompt_endings(formats: Iterable[Format]) -> tuple[str, ...]:
    """Every ending (from its first ``.``) a prompt file's name may have, without repeats, the longest first:
    ``/SKILL.md`` ends in ``.md``."""
    return tuple(sorted({ending[ending.index("."):] for fmt in formats for ending in (fmt.ending, *fmt.other_endings)},
                        key=lambda ending: (-len(ending), ending)))


def readers(formats: Iterable[Format]) -> dict[str, Format]:
    """The formats another tool defines, by name: those ``native.build`` reads."""
    return {fmt.name: fmt for fmt in formats if fmt.reader is not None}
