"""The Agent Skills of a stored label (docs/skills.md), served as a folder's are: what ``StoreSource.skills()``
answers.

A publish keeps every file of a skill as a version of its path, like any other file. A server writes a
label position's files to its private folder, and there its skills are found and checked by the very code
that reads a folder's (``files.skillset.FolderSkills``: the caps, the front matter rules, nesting and
scopes, a broken skill's last good version). Only their digests are not worked out again: each file was
written from a blob the store keeps under its SHA-256, so that digest is the listing's (``KnownDigest``).
A file whose MIME type depends on its bytes, and each ``SKILL.md``, whose front matter is read anyway, are
still read.

At a label move, the files of the skill folders that changed are written, and only the skills they lie in
are read again; the snapshot ``skills()`` returns is replaced in one step, before the server is told of the
move. A file is always served with exactly the bytes its listing's digest promises: from the folder when
it holds them, else (a skill of an earlier position, its last good version, a file rewritten since) from
the store by that digest.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ...prompts.skills import Skill
from ...protocol.errors import InvalidParams, PromptFileError
from ..files.paths import SkillLimits
from ..files.skillset import FolderSkills
from .reads import Reads

log = logging.getLogger("promptdeck.store")

#: Files fetched per query when writing a position's skill files.
PAGE_FILES = 500


class StoredSkills:
    """The skills of the label position last given to ``move``, from the files written below ``folder``.

    ``written(path)``: the version of ``path`` the folder holds now (None: not written);
    ``put(path, version, data, position)``: write a file of that position to the folder (``StoreSource._put``).
    """

    def __init__(self, folder: str, limits: SkillLimits, written: Callable[[str], int | None],
                 put: Callable[[str, int, bytes, int], bool]) -> None:
        self.folder = folder
        self._written = written
        self._put = put
        #: the position whose skills are served (None before the first ``move``)
        self.position: int | None = None
        #: every file in a skill folder at that position: path -> (version, digest as 64 hex digits)
        self._files: dict[str, tuple[int, str]] = {}
        self._set = FolderSkills(Path(folder), "", limits, known=self._known)

    def skills(self) -> Mapping[tuple[str, ...], Skill]:
        """skill-path -> ``Skill``: a snapshot, replaced whole at a move."""
        return self._set.skills()

    def _known(self, path: str) -> str | None:
        """The digest of the bytes the folder holds at ``path``: its version's, when that version is written."""
        found = self._files.get(path)
        return found[1] if found is not None and self._written(path) == found[0] else None

    def move(self, store: Reads, position: int) -> list[PromptFileError]:
        """Serve the skills of ``position``: write its skill files not written yet, then read again the skill
        folders in which a file was added, changed or removed. The problems found there."""
        files = {path: (version, digest) for path, version, digest in store.skill_files(position)}
        missing = sorted(path for path, (version, _) in files.items() if self._written(path) != version)
        for start in range(0, len(missing), PAGE_FILES):
            for path, version, data in store.contents_of(position, missing[start:start + PAGE_FILES]):
                self._put(path, version, data, position)
        changed = sorted(path for path in files.keys() | self._files.keys()
                         if files.get(path, (0, ""))[0] != self._files.get(path, (0, ""))[0])
        first = self.position is None
        self._files = files
        if first:
            problems = self._set.load()
        elif changed:
            problems = self._set.reload([os.path.join(self.folder, path) for path in changed])
        else:
            problems = []
        self.position = position
        return problems

    def read(self, skill: Skill, rel: str, fetch: Callable[[str], bytes]) -> bytes:
        """The bytes of ``skill``'s file at ``rel``, exactly those its digest was taken of: from the folder, or
        else ``fetch(digest)`` from the store. ``InvalidParams`` for a file it does not have, or bytes that do
        not match (another tool wrote the store)."""
        try:
            return self._set.read(skill, rel)
        except InvalidParams:
            file = skill.file(rel)
            if file is None:
                raise
        data = fetch(file.digest.removeprefix("sha256:"))
        if len(data) != file.size or "sha256:" + hashlib.sha256(data).hexdigest() != file.digest:
            log.error("the store's bytes of %s (skill %s) do not match their digest; not served", rel,
                      "/".join(skill.path))
            raise InvalidParams(f"file {rel!r} of skill {'/'.join(skill.path)} cannot be read")
        return data
