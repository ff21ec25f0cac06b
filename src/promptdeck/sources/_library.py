"""A library folder as templates see it: confined file access and one sandboxed Jinja environment."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..prompts.arguments import Argument
from ..prompts.paths import LibraryRoot
from ..prompts.render import make_environment
from ..prompts.spec import SyncCompleter

if TYPE_CHECKING:
    from jinja2.sandbox import SandboxedEnvironment

#: A file that ``read()`` may pull into a template.
MAX_READ_BYTES = 1024 * 1024


class Library:
    def __init__(self, root: Path, missing: Callable[[str], bool] | None = None) -> None:
        self.root = LibraryRoot(root, missing)
        self._env: SandboxedEnvironment | None = None

    @property
    def env(self) -> SandboxedEnvironment:
        """The library's sandboxed Jinja environment, made (and Jinja imported) on first need."""
        if self._env is None:
            self._env = make_environment({"read": self.read})
        return self._env

    def read(self, path: str) -> str:
        """``read(path)`` in templates: the text of a library file."""
        return self.root.read_text(path, MAX_READ_BYTES)

    def path_completer(self, argument: Argument) -> SyncCompleter:
        """Library files below the typed prefix that the argument's pattern accepts."""
        pattern = argument.pattern

        def complete(value: str, _context: Mapping[str, str]) -> Iterable[str]:
            files = self.root.files(prefix=value, limit=5000, material_only=pattern is None)
            return [f for f in files if pattern.fullmatch(f)] if pattern is not None else files

        return complete

    def path_completers(self, arguments: tuple[Argument, ...]) -> dict[str, SyncCompleter]:
        return {a.name: self.path_completer(a) for a in arguments if a.type == "path" and not a.enum}
