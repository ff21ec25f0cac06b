"""A library folder as templates see it: confined file access and one sandboxed Jinja environment."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...prompts.access import covers, may_see, reader_scopes, shown_scopes, viewer
from ...prompts.arguments import Argument
from ...prompts.render import PARTIAL_GUARD, READ_LITERAL, make_environment
from ...prompts.spec import Offered, Prompt, SyncCompleter
from ...protocol.errors import InvalidParams, LineError
from .frontmatter import read_front_matter, scopes_in, split_front_matter
from .paths import LibraryRoot, Origin, prompt_format, skill_folder_of

if TYPE_CHECKING:
    from jinja2.sandbox import SandboxedEnvironment

#: A file that ``read()`` may pull into a template.
MAX_READ_BYTES = 1024 * 1024


class TemplateFolder:
    """A library folder as its templates see it: its files, confined (``root``), the one sandboxed Jinja
    environment they compile in (``env``), and the prompts they may compose (``lookup``)."""

    def __init__(self, root: Path, missing: Callable[[str], bool] | None = None) -> None:
        self.root = LibraryRoot(root, missing, self.may_use)
        self._env: SandboxedEnvironment | None = None
        #: the prompt of this library named so (for ``prompt(NAME)`` in templates), set by its source; None
        #: where the library has no prompts to compose
        self.lookup: Callable[[str], Offered | None] | None = None

    @staticmethod
    def may_use(rel: str, source: str, data: bytes) -> None:
        """The access rule (``prompts.access``) for a prompt file that a template reads or a block embeds:
        ``source`` (reached as ``rel``) holding ``data``, which is the version whose scopes count.

        Refused, as a file that is not there, when the reading prompt's readers may not all see it
        (``covers``), or when it is hidden from the principal a check answers (``viewing``). Only the
        first says why, in ``detail``, for the author's check and the server log, never to a client.
        """
        scopes = file_scopes(source, data)
        absent = f"file {rel!r} does not exist in the library"
        checking, held = viewer()
        if checking and (scopes is None or not may_see(held, scopes)):
            raise InvalidParams(absent)
        reader = reader_scopes()
        if scopes is None:
            raise InvalidParams(absent, detail=f"{source} is a prompt file whose scopes cannot be read; "
                                               "a template may not read it")
        if not covers(reader, scopes):
            what = f"{source} is a prompt" if rel == source or not source.endswith("/SKILL.md") else \
                f"{rel} is a file of the skill of {source},"
            raise InvalidParams(absent, detail=(
                f"{what} restricted to {shown_scopes(scopes)}; a prompt seen by "
                f"{shown_scopes(reader)} may not read it, as its readers could not all see it"))

    @property
    def env(self) -> SandboxedEnvironment:
        """The library's sandboxed Jinja environment, made (and Jinja imported) on first need."""
        if self._env is None:
            from .partials import dynamic_partial, make_loader

            env = make_environment({"read": self.read, "prompt": self.prompt, PARTIAL_GUARD: dynamic_partial(self)},
                                   literal_reads=True)
            env.loader = make_loader(self)
            self._env = env
        return self._env

    def prompt(self, name: str, **arguments: Any) -> str:
        """``prompt(NAME, **ARGUMENTS)`` in templates: the text of another prompt of the library, rendered."""
        from .compose import composed_text

        return composed_text(self, name, arguments)

    def read(self, path: str, **literal: bool) -> str:
        """``read(path)`` in templates: the text of a library file, through the read gate as a path an
        expression names, unless the template wrote it as a literal string (``render.READ_LITERAL``)."""
        origin = Origin.LITERAL if literal.get(READ_LITERAL) is True else Origin.EXPRESSION
        if literal.keys() - {READ_LITERAL}:
            raise InvalidParams("read() takes one path")
        return self.root.read_text(path, MAX_READ_BYTES, origin)

    def path_completer(self, argument: Argument) -> SyncCompleter:
        """Library files below the typed prefix that the argument's pattern accepts."""
        pattern = argument.pattern

        def complete(value: str, _context: Mapping[str, str]) -> Iterable[str]:
            files = self.root.files(prefix=value, limit=5000, material_only=pattern is None)
            return [f for f in files if pattern.fullmatch(f)] if pattern is not None else files

        return complete

    def path_completers(self, arguments: tuple[Argument, ...]) -> dict[str, SyncCompleter]:
        return {a.name: self.path_completer(a) for a in arguments if a.type == "path" and not a.enum}


def file_scopes(source: str, data: bytes) -> frozenset[str] | None:
    """The scopes of the prompt file ``source`` holding ``data``: its own front matter's, for promptdeck's
    format and for a skill's ``SKILL.md`` (whose scopes are the whole skill's: ``prompts.skills``); None
    when they cannot be read from it."""
    skill = source.endswith("/SKILL.md") and skill_folder_of(source) is not None
    if not skill and prompt_format(source) != "promptdeck":
        return frozenset()
    # The skill rules are imported for a SKILL.md only: a library without skills never loads them.
    from ...prompts.skills import SkillSpecError, skill_scopes

    try:
        front, _, _ = split_front_matter(data.decode("utf-8"))
        meta = read_front_matter(front) if front is not None else {}
        return skill_scopes(meta) if skill else scopes_in(meta)
    except (UnicodeDecodeError, LineError, SkillSpecError):
        return None


def read_gate_warnings(root: LibraryRoot, prompts: Iterable[Prompt]) -> list[str]:
    """What ``check`` warns of, for the read gate (``paths.LibraryRoot.gate``): a ``path`` argument with no
    pattern (it names material folders only, which its author may not know), and a link among the library's
    files whose target the gate refuses (no prompt can read it: a mistake, or a secret one step away)."""
    import os
    import re

    out: list[str] = []
    for prompt in prompts:
        reach = prompt.reach
        for argument in reach.paths if reach is not None and reach.root is root else ():
            if argument.pattern is None and not argument.enum:
                out.append(f"{prompt.source}: warning: path argument {argument.name!r} has no pattern: it names "
                           "files in material folders only (whose names start with '_'); a pattern says which "
                           "other files it may name")
    anything = re.compile(".*", re.DOTALL)
    for dirpath, dirnames, filenames in os.walk(root.root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), root.root).replace(os.sep, "/")
            # A skill's links are its own check's (``skills``), a prompt file's link is the prompt's.
            if name.startswith(".") or not os.path.islink(os.path.join(dirpath, name)) or prompt_format(rel) \
                    or skill_folder_of(rel) is not None:
                continue
            try:
                root.gate(rel, Origin.TYPED, anything)
            except InvalidParams as exc:
                out.append(f"{rel}: warning: a link the read gate refuses, so no prompt can read it: "
                           f"{exc.detail or exc.message}")
    return out
