"""A library's files as resources: what the prompts a principal may see can send, read by their URIs.

A prompt sends a library file whole when a role line names it (an image, audio, an embedded resource, a
link: ``promptdeck:///PATH``) or a ``path`` argument names it. Those, and only those, are readable here,
and only for a principal that may see such a prompt (``Reach``, worked out once per view): nothing a
``prompts/get`` of a prompt it may see could not send it already.

Every file is held to the rules a ``path`` argument follows (``LibraryRoot.readable``): never a hidden
file, never a prompt file (another prompt's source, perhaps restricted), symlinks held to those rules at
both ends and never out of the library, read once opened as a regular file within the embedding limit.
A path argument's own rules (pattern, enum, length, the material folders without a pattern) choose among
the rest; a file a role line names needs no material folder, as its author chose it. A URI is taken only
in the one spelling ``file_uri`` gives (no second spelling through percent-escapes).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Hashable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ...prompts.access import reading_as
from ...prompts.read_budget import spend
from ...prompts.resources import MAX_LISTED, Resource, ResourceProvider, Sight, Template
from ...protocol.content import ResourceContents
from ...protocol.errors import InvalidParams
from .paths import MAX_EMBED_BYTES, URI_PREFIX, Origin, file_contents, file_uri, guess_mime, read_real, uri_path

if TYPE_CHECKING:
    from ...prompts.arguments import Argument
    from .library import TemplateFolder
    from .paths import LibraryRoot

log = logging.getLogger("promptdeck.resources")

_ANY = re.compile(".*", re.DOTALL)
TEMPLATE = Template(uri_template=URI_PREFIX + "{+path}", name="library-file", title="A file of the prompt library",
                    description="A file that a prompt you may see sends whole (an image, audio, an embedded "
                                "resource, a link), or that one of its path arguments may name.")


class Reached:
    """What the prompts of one view reach in one library: the files they name, and their path arguments, each
    with the scopes of every prompt that reaches it (the access rule reads a file on behalf of one of them)."""

    __slots__ = ("files", "paths")

    def __init__(self, files: dict[str, tuple[frozenset[str], ...]],
                 paths: tuple[tuple[Argument, frozenset[str]], ...]) -> None:
        self.files = files
        self.paths = paths


class FolderResources(ResourceProvider):
    """The files of one library (a folder's, or a store label's copy) that its prompts send."""

    def __init__(self, library: TemplateFolder) -> None:
        self.root: LibraryRoot = library.root

    def _reached(self, sight: Sight) -> Reached:
        key = (FolderResources, self.root)
        reached: Reached | None = sight.memo.get(key)
        if reached is None:
            files: dict[str, dict[frozenset[str], None]] = {}
            paths: dict[tuple[Argument, frozenset[str]], None] = {}
            for prompt in sight.prompts:
                reach = prompt.parsed().reach
                if reach is not None and reach.root is self.root:
                    for rel in reach.files:
                        files.setdefault(rel, {})[prompt.scopes] = None
                    paths.update(dict.fromkeys((argument, prompt.scopes) for argument in reach.paths))
            reached = sight.memo[key] = Reached({rel: tuple(scopes) for rel, scopes in files.items()},
                                                tuple(paths))
        return reached

    def _real(self, rel: str, reached: Reached) -> Path | None:
        """Where ``rel`` leads, if a prompt of the view may send it; None otherwise (the reason is logged).

        Through the read gate as the prompt that reaches it would read it: a file its role line names as a
        ``path`` argument with any pattern would (no hidden file, no prompt source), a file an argument may
        name by that argument's rules, and each on behalf of that prompt's scopes (a skill's file is read
        only for a prompt whose readers may all see the skill, as ``prompts/get`` of it would)."""
        refused: InvalidParams | None = None
        for scopes in reached.files.get(rel, ()):
            try:
                with reading_as(scopes):
                    return self.root.gate(rel, Origin.TYPED, _ANY)
            except InvalidParams as exc:
                refused = exc
        for argument, scopes in reached.paths:
            try:
                argument.convert(rel)
                with reading_as(scopes):
                    return self.root.gate(rel, Origin.TYPED, argument.pattern)
            except InvalidParams as exc:
                refused = exc
        if refused is not None:
            log.debug("library file %r is not served as a resource: %s", rel, refused.message)
        return None

    def _found(self, uri: str, sight: Sight) -> tuple[str, Path] | None:
        """The path ``uri`` names and where it leads, if ``sight`` may read it."""
        rel = uri_path(uri)
        if rel is None:
            return None
        real = self._real(rel, self._reached(sight))
        return None if real is None else (rel, real)

    def read(self, uri: str, sight: Sight) -> ResourceContents | None:
        found = self._found(uri, sight)
        if found is None:
            return None
        rel, real = found
        try:
            spend(real.stat().st_size, uri)  # before a byte is read: a read past the budget reads nothing
        except OSError:
            return None
        try:
            # The real path that was held to the rules (where a link led when it was checked), as read_confined
            # reads it once it has resolved a path.
            data = read_real(str(real), rel, MAX_EMBED_BYTES)
        except InvalidParams as exc:
            log.debug("library file %r is not served as a resource: %s", rel, exc.message)
            return None
        mime, text = file_contents(rel, data)
        return ResourceContents(uri, mime, text=text) if text is not None else \
            ResourceContents(uri, mime, blob=data)

    def stamp(self, uri: str, sight: Sight) -> Hashable | None:
        found = self._found(uri, sight)
        if found is None:
            return None
        try:
            info = os.stat(found[1])
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size, info.st_ino, info.st_dev

    def resources(self, sight: Sight) -> Iterable[Resource]:
        reached = self._reached(sight)
        if not reached.files and not reached.paths:
            return []
        # Files a path argument may name are found by a walk, of the material folders alone when no argument
        # has a pattern (``files`` leaves out hidden files and prompt files already).
        candidates = set(reached.files)
        if reached.paths:
            material = all(argument.pattern is None for argument, _ in reached.paths)
            found = self.root.files(limit=MAX_LISTED, material_only=material)
            if len(found) >= MAX_LISTED:
                log.warning("more than %d library files may be read as resources; the list shows the first",
                            MAX_LISTED)
            candidates.update(found)
        out = []
        for rel in sorted(candidates):
            real = self._real(rel, reached)
            if real is None:
                continue
            try:
                size = real.stat().st_size
            except OSError:
                continue
            if size <= MAX_EMBED_BYTES:
                out.append(Resource(file_uri(rel), rel.rpartition("/")[2], title=rel, mime_type=guess_mime(rel),
                                    size=size))
        return out

    def templates(self) -> Iterable[Template]:
        return (TEMPLATE,)
