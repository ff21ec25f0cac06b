"""Who may see a version of a stored file: the scope sets a reader must hold, each one of, to see it.

One rule for every reader of the store's history: the store API and the web page (a principal,
``server.web.store_api._StoreView``) and the webhooks' events (a webhook's scopes, ``events``). A prompt file's
version is seen by the scopes recorded for it (or, published before listings, its own front matter's); material
and deletions by everyone as far as the file goes; and a file of a skill (its ``SKILL.md`` too) only by whoever
may see every skill it lies in, as that skill was when the version was published. A version whose scopes cannot
be read is seen by nobody.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...prompts.access import EVERYONE, may_see, parse_scopes
from ..files.library import file_scopes
from ..files.paths import is_prompt_path
from .model import Recorded, in_skill, skill_folders

if TYPE_CHECKING:
    from .reads import Reads

#: A scope no principal or webhook holds: what an unreadable version needs.
NOBODY = frozenset({"\0unreadable"})


class Seen:
    """The scope sets each version needs, read from one store (cached for the life of one call)."""

    __slots__ = ("store", "_skills")

    def __init__(self, store: Reads) -> None:
        self.store = store
        #: (a SKILL.md's path, a publish) -> the scopes of that skill as of the publish
        self._skills: dict[tuple[str, int], frozenset[str]] = {}

    def needs(self, path: str, version: int, recorded: Recorded | None = None) -> list[frozenset[str]] | None:
        """What seeing ``version`` of ``path`` needs: a scope set per rule it falls under (the file's own, then
        each skill's it lies in), every one to be met; None when the store has no such version."""
        if recorded is None or (recorded.publish is None and in_skill(path)):
            recorded = self.store.recorded([(path, version)]).get((path, version))
        if recorded is None:
            return None
        return [self._own(path, version, recorded), *self._skill_scopes(path, recorded)]

    def may_see(self, held: frozenset[str] | None, path: str, version: int, recorded: Recorded | None = None) -> bool:
        """Whether a reader holding ``held`` (None: trusted) may see ``version`` of ``path``."""
        needed = self.needs(path, version, recorded)
        return needed is not None and all(may_see(held, scopes) for scopes in needed)

    def _own(self, path: str, version: int, recorded: Recorded) -> frozenset[str]:
        if recorded.digest is None:
            return EVERYONE
        # A listed prompt file first: a publish of many files asks this of each, and its path need not be parsed.
        if recorded.prompt is not None and recorded.scopes is not None:
            return parse_scopes(recorded.scopes)
        if not is_prompt_path(path):
            return EVERYONE
        # Published before listings (or forged): the version's own bytes say; unreadable ones hide it.
        found = file_scopes(path, self.store.content(path, version))
        return found if found is not None else NOBODY

    def _skill_scopes(self, path: str, recorded: Recorded) -> list[frozenset[str]]:
        """The scopes of each skill ``path`` lies in, read from the newest version of its ``SKILL.md`` that
        held the file when ``recorded`` was published (a deletion is judged by the skill it removed)."""
        if not in_skill(path) or recorded.publish is None:
            return []
        found = []
        for skill_md in (f"{folder}/SKILL.md" for folder in skill_folders(path)):
            key = (skill_md, recorded.publish)
            if key not in self._skills:
                version = self.store.last_held(skill_md, recorded.publish)
                if version is None:  # no skill there (an outer folder without a SKILL.md is no skill)
                    continue
                data = self.store.file_version(skill_md, version)[1]
                scopes = file_scopes(skill_md, data) if data is not None else None
                self._skills[key] = scopes if scopes is not None else NOBODY
            found.append(self._skills[key])
        return found
