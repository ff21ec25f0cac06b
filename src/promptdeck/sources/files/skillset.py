"""The skills of one library folder, kept up to date file by file: what ``FileSource.skills()`` serves.

The skill folders are ``paths.SKILL_FOLDERS``; each subfolder of one (``.claude/skills/git-workflow``) is an
*origin*, read whole by ``skills.find_skills``. A change anywhere below an origin re-reads that origin only
(``reload``). As for prompts, a skill whose re-read finds problems keeps its last good version: its listing
stays the one last checked, and a file of it that has changed since is refused rather than served with
bytes the listing does not promise (``read``). A skill whose ``SKILL.md`` or folder is gone is gone.

Two origins may give one skill-path (``.claude/skills/git`` and ``.agents/skills/git``, kept for two tools):
the first in byte order serves it; the other is no problem when its files are the same bytes (a copy or a
link, for another tool), and a ``check`` problem when they differ.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...protocol.errors import InvalidParams, PromptFileError
from .paths import SKILL_FOLDERS, SkillLimits, skill_folder_of

# The skill reader (``skills``, with hashlib and the front matter's JSON reader) is imported when a skill
# folder is first read: a library without skills never loads it, and a stdio server's first get stays light.
if TYPE_CHECKING:
    from ...prompts.skills import Skill
    from .skills import Found, KnownDigest

log = logging.getLogger("promptdeck.files")


class FolderSkills:
    """The skills below ``root`` (real), whose files lie at ``prefix`` below a library root (``FileSource``'s
    prefix: ``""``, or ``.claude/`` for a served ``~/.claude``). Problems name files below the served
    folder, as the user knows them."""

    def __init__(self, root: Path, prefix: str, limits: SkillLimits, known: KnownDigest | None = None) -> None:
        self.root = root
        self.prefix = prefix
        self.limits = limits
        #: digests the owner vouches for, by path below the library root (``skills.KnownDigest``): a store's
        self.known = known
        #: origin -> the skills it served last (its last good versions), by skill-path
        self._good: dict[str, dict[tuple[str, ...], Skill]] = {}
        #: origin -> its real folder, where its skills' files are read (a nested skill's below it)
        self._real: dict[str, str] = {}
        #: origin -> the problems of its last read
        self._problems: dict[str, list[PromptFileError]] = {}
        #: origin -> problems of a skill-path another origin serves (recomputed with the snapshot)
        self._clashes: dict[str, list[PromptFileError]] = {}
        self._snapshot: dict[tuple[str, ...], Skill] = {}

    # -- what is served ------------------------------------------------------------------------

    def skills(self) -> Mapping[tuple[str, ...], Skill]:
        """skill-path -> skill: a snapshot, replaced (never changed) when a reload changes what is served."""
        return self._snapshot

    @property
    def errors(self) -> dict[str, list[PromptFileError]]:
        """origin -> its problems now (a skill with one is not served, or is served as it last was)."""
        out: dict[str, list[PromptFileError]] = {}
        for origin in sorted({*self._problems, *self._clashes}):
            found = self._problems.get(origin, []) + self._clashes.get(origin, [])
            if found:
                out[origin] = [PromptFileError(self._shown(e.path), e.reason, e.line) for e in found]
        return out

    def _shown(self, path: str) -> str:
        return path[len(self.prefix):] if path.startswith(self.prefix) else path

    def read(self, skill: Skill, rel: str) -> bytes:
        """The bytes of ``skill``'s file at ``rel``, read confined to its skill folder, and exactly those its
        listing's digest was taken of; ``InvalidParams`` for a file it does not have, or one changed since."""
        file = skill.file(rel)
        at = skill_folder_of(skill.origin)
        origin = at[0] + at[1] if at is not None else skill.origin
        top = self._real.get(origin)
        if file is None or top is None:
            raise InvalidParams(f"skill {'/'.join(skill.path)} has no file {rel!r}")
        below = skill.origin[len(origin) + 1:]  # a nested skill's folder below its origin's
        from .skills import read_skill_bytes

        return read_skill_bytes(top, f"{below}/{rel}" if below else rel, file, self.limits.max_file_bytes)

    # -- reading -------------------------------------------------------------------------------

    def origins(self) -> list[tuple[str, str]]:
        """(origin, absolute path) of every subfolder of a skill folder below ``root``, in byte order; the
        served folder itself when it is one (``promptdeck serve ~/.claude/skills/git-workflow``)."""
        found: list[tuple[str, str]] = []
        for folder, _tools in SKILL_FOLDERS:
            if folder.startswith(self.prefix):
                base = self.root / folder[len(self.prefix):]
                try:
                    with os.scandir(base) as listing:
                        found.extend((folder + e.name, e.path) for e in listing
                                     if e.name[:1] not in (".", "_") and e.is_dir())
                except OSError:
                    continue
            elif self.prefix.startswith(folder):
                name = self.prefix[len(folder):].rstrip("/")
                if name and "/" not in name and name[:1] not in (".", "_"):
                    found.append((folder + name, str(self.root)))
        return sorted(found)

    def load(self) -> list[PromptFileError]:
        """Read every skill folder; the problems found."""
        self._good.clear()
        self._real.clear()
        self._problems.clear()
        for origin, path in self.origins():
            self._read(origin, path)
        self._rebuild()
        return [e for errors in self.errors.values() for e in errors]

    def reload(self, paths: Iterable[str]) -> list[PromptFileError]:
        """Re-read the origins that the changed absolute ``paths`` lie in (or lead into, through a linked skill
        folder); a change to a skill folder itself, or above one, re-reads them all. The problems of the
        origins re-read."""
        root = str(self.root)
        touched: set[str] = set()
        everything = False
        for path in paths:
            absolute = os.path.abspath(path)
            touched.update(origin for origin, real in self._real.items() if _within(absolute, real))
            if not _within(absolute, root):
                continue
            below = os.path.relpath(absolute, root).replace(os.sep, "/")
            rel = (self.prefix + ("" if below == "." else below)).rstrip("/")
            at = skill_folder_of(rel)
            if at is not None:
                touched.add(at[0] + at[1])
            elif any(not rel or folder.startswith(rel + "/") for folder, _ in SKILL_FOLDERS):
                everything = True  # a skill folder, or a folder above one, was made, moved or removed
        if not touched and not everything:
            return []  # a change to prompts only: no skill folder is listed
        now = dict(self.origins())
        if everything:
            touched |= set(now) | set(self._good) | set(self._problems)
        for origin in sorted(touched):
            if origin in now:
                self._read(origin, now[origin])
            else:  # its folder is gone: so are its skills
                self._forget(origin)
        self._rebuild()
        errors = self.errors
        return [e for origin in sorted(touched) for e in errors.get(origin, [])]

    def _forget(self, origin: str) -> None:
        self._good.pop(origin, None)
        self._real.pop(origin, None)
        self._problems.pop(origin, None)

    def real_folder(self, path: str) -> tuple[str | None, str]:
        """(the real folder, "") of the origin at ``path`` (from ``origins``), or (None, what is wrong with it):
        a skill folder that is a link is read where it leads, if that lies inside the library and is no
        hidden folder but a skill folder's own."""
        real = os.path.realpath(path)
        library = str(self.root)
        at = os.path.relpath(real, library).replace(os.sep, "/") if _within(real, library) else None
        if at is None:
            return None, "is a link that leads out of the library"
        if at != "." and _hidden_outside_skill_folders(self.prefix + at):
            return None, "is a link to a hidden folder"
        return real, ""

    def _read(self, origin: str, path: str) -> None:
        """Read ``origin`` (at ``path``) again."""
        real, wrong = self.real_folder(path)
        if real is None:
            self._forget(origin)
            self._problems[origin] = [PromptFileError(origin, wrong)]
            return
        self._real[origin] = real
        from .skills import find_skills

        found: Found = find_skills(real, origin, self.limits, name=origin.rpartition("/")[2], known=self.known)
        old = self._good.get(origin, {})
        good = {skill.path: skill for skill in found.skills}
        for path_ in found.claimed:
            if path_ not in good and path_ in old:  # broken now: the last good version stays
                good[path_] = old[path_]
                log.error("skill %s has problems; still serving its last good version", "/".join(path_))
        self._good[origin] = good
        self._problems[origin] = found.problems

    def _rebuild(self) -> None:
        """The snapshot of every origin's skills: a skill-path is the first origin's; another origin giving
        it other bytes is a problem of that origin."""
        snapshot: dict[tuple[str, ...], Skill] = {}
        self._clashes = {}
        for origin in sorted(self._good):
            for path, skill in sorted(self._good[origin].items()):
                first = snapshot.get(path)
                if first is None:
                    snapshot[path] = skill
                elif _content(first) != _content(skill):
                    self._clashes.setdefault(origin, []).append(PromptFileError(
                        skill.origin, f"skill {'/'.join(path)} is already served from {self._shown(first.origin)}, "
                                      "whose files differ: one of them is not served"))
        self._snapshot = dict(sorted(snapshot.items()))

    # -- what changed before a watcher could see it ----------------------------------------------

    def changed_since(self, since_ns: int) -> list[str]:
        """Absolute paths of origins made, removed, or holding a file or folder changed since ``since_ns``."""
        now = dict(self.origins())
        known = {*self._good, *self._problems}
        changed = set(now).symmetric_difference(known)
        for origin in set(now) & known:
            if _changed_below(now[origin], since_ns, self.limits):
                changed.add(origin)
        return [str(self.root / origin[len(self.prefix):]) for origin in sorted(changed)]


def _content(skill: Skill) -> tuple[tuple[str, str], ...]:
    return tuple((f.path, f.digest) for f in skill.files)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _hidden_outside_skill_folders(rel: str) -> bool:
    """Whether ``rel`` (below a library root) is hidden but for a skill folder's own hidden parts."""
    at = skill_folder_of(rel)
    rest = rel[len(at[0]):] if at is not None else rel
    return any(part.startswith(".") for part in rest.split("/"))


def _changed_below(path: str, since_ns: int, limits: SkillLimits) -> bool:
    seen = 0
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in [".", *filenames]:
            seen += 1
            if seen > 10 * limits.max_files:
                return True  # too big to look at cheaply: read it again
            try:
                if os.stat(os.path.join(dirpath, name), follow_symlinks=False).st_mtime_ns >= since_ns:
                    return True
            except OSError:
                return True
    return False
