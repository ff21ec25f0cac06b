"""Where prompts come from: the ``Source`` seam, and its kinds (``files``, ``python``).

``PromptServer`` builds its catalog from the ``prompts()`` of every source it
was given, in the order they were added; on a name clash the earlier source
wins. A source tells the server what changed in one of two ways:

- a source of files names its folders in ``watch_roots``; the server's watcher
  hands it the changed paths in ``reload`` and swaps the catalog;
- a source that learns of changes itself (a store told of a new version) calls
  the ``changed`` callback it is given in ``attach``, on any thread.

A source may serve Agent Skills too (``skills``, ``read_skill_file``; docs/skills.md), read and reloaded
with its prompts: a folder finds them in its skill folders.

A source may also give resources (``resources``): what clients read by URI, such as the library files its
prompts send (``prompts.resources`` has the seam).

Problems are returned, never raised, so one bad prompt never stops a library:
the server logs them and serves the rest, and a prompt that fails to reload
keeps its last good version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.resources import ResourceProvider
    from ..prompts.skills import Skill
    from ..prompts.spec import Offered, Prompt
    from ..protocol.errors import PromptdeckError


class Source:
    """A place prompts come from. ``prompts`` is all a source must have; the rest defaults to nothing."""

    def load(self) -> Sequence[PromptdeckError]:
        """Read everything, at start-up; the problems found."""
        return []

    def prompts(self) -> Iterable[Offered]:
        """The prompts this source serves now."""
        raise NotImplementedError

    def watch_roots(self) -> Sequence[str]:
        """Folders (absolute paths) whose changes ``reload`` takes."""
        return ()

    def reload(self, paths: Sequence[str]) -> Sequence[PromptdeckError]:
        """Re-read what changed at ``paths`` (absolute, any of them possibly outside this source); the
        problems found in those paths."""
        return []

    def changed_since_load(self) -> list[str]:
        """Paths changed while loading, before a watcher could see them (handed to ``reload`` next)."""
        return []

    def catalog(self, page_size: int) -> Catalog | None:
        """The server's whole catalog, when it serves this source alone and the source can list itself
        (a stored label pages its listing from the database); None: built from ``prompts()``."""
        return None

    def skills(self) -> Mapping[tuple[str, ...], Skill]:
        """The Agent Skills this source serves now (docs/skills.md): skill-path -> ``Skill``, a snapshot that
        is replaced, never changed, when a reload changes it. None by default."""
        return {}

    def read_skill_file(self, skill: Skill, rel: str) -> bytes:
        """The bytes of the file at ``rel`` of one of this source's ``skills()``: exactly the bytes whose digest
        its listing gives, read within the source's bounds; ``InvalidParams`` for anything else."""
        from ..protocol.errors import InvalidParams

        raise InvalidParams(f"skill {'/'.join(skill.path)} has no file {rel!r}")

    def resources(self) -> Sequence[ResourceProvider]:
        """Where the resources it serves come from (asked again for each catalog snapshot); none by default."""
        return ()

    def rolling_out(self) -> frozenset[str]:
        """The names of prompts whose renders are split between versions now (a stored label's rollouts)."""
        return frozenset()

    def split(self, prompt: Offered, key: str | None) -> Prompt | None:
        """The version of ``prompt`` (one of this source's) to render for a request with rollout key ``key``,
        when a rollout sends that key to another version; None: ``prompt`` itself."""
        return None

    def attach(self, changed: Callable[[], object]) -> None:
        """Called once, when the server takes this source: ``changed()`` rebuilds the server's catalog."""
