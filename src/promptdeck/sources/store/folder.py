"""A library folder read as a publish reads it: every file ``serve`` would read, and nothing that leads out."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ...protocol.errors import PromptdeckError
from ..files.paths import READ_FLAGS, SkillLimits, is_prompt_path, may_hold_prompts, read_confined, read_opened
from ..files.skills import walk
from ..files.skillset import FolderSkills
from .model import StoreError, skill_folders
from .schema import MAX_FILE_BYTES

log = logging.getLogger("promptdeck.store")

def read_library(root: str | os.PathLike[str], prefix: str = "", skill_limits: SkillLimits | None = None,
                 left_out: list[str] | None = None) -> dict[str, bytes]:
    """Every file of a library as ``serve`` would read it: regular, non-hidden, inside the root. With a
    ``prefix`` (``paths.folder_prefix``: the folder is ``.claude/commands/``, say), its prompt files only,
    each under its path below a library root, as ``FileSource`` names them. And every file of every skill
    in its skill folders (``paths.SKILL_FOLDERS``, hidden ones too), exactly those the skill serves
    (``read_skill``). A skill folder with a problem is left out whole, and named in ``left_out``: ``check``
    says what is wrong with it.

    Walked with directory descriptors (``os.fwalk``) and opened relative to them without following
    links, so no component of a path is resolved twice and none can be swapped for a link meanwhile;
    only a file that is itself a link goes through ``read_confined``, which follows it if it stays
    inside. (Resolving every path cost 7 ``lstat`` calls a file: 7 s of a 100,000-file publish.)
    """
    base = Path(root).resolve()
    skills = FolderSkills(base, prefix, skill_limits or SkillLimits())
    origins = skills.origins()
    # A skill's folder is the skill's: its files are read by its own rules (below), not as a library's.
    inside = {origin[len(prefix):] for origin, _ in origins if origin.startswith(prefix)}
    out: dict[str, bytes] = {}
    whole_skill = any(not origin.startswith(prefix) for origin, _ in origins)  # FOLDER is one skill
    for dirpath, dirnames, filenames, dirfd in ([] if whole_skill else os.fwalk(base)):
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        below = "" if rel_dir == "." else rel_dir + "/"
        # Hidden folders are left out, but for the other tools' prompt folders (``.claude/commands``, ...),
        # of which only the prompt files are taken.
        dirnames[:] = sorted(d for d in dirnames if ((not prefix and not d.startswith("."))
                                                     or may_hold_prompts(prefix + below + d))
                             and below + d not in inside)
        # Tested on ``below``, not ``rel_dir``: the root's ``rel_dir`` is ".", which is no hidden folder.
        hidden = bool(prefix) or below.startswith(".") or "/." in below
        for name in sorted(filenames):
            real, rel = below + name, prefix + below + name
            # A prompt's tests beside it (``files.tests.sidecar_of``) are its own: kept with it.
            if name.startswith(".") or (hidden and not is_prompt_path(rel) and not name.endswith(".tests.yaml")):
                continue
            try:
                fd = os.open(name, READ_FLAGS, dir_fd=dirfd)
            except OSError:  # a link (ELOOP), or gone: the path-checking read decides, and says why
                out[rel] = read_confined(str(base), real, MAX_FILE_BYTES)
                _refuse_copied_source(base, real, out[rel])
                continue
            out[rel] = read_opened(fd, real, MAX_FILE_BYTES)
    for origin, path in origins:
        files = read_skill(skills, origin, path)
        if files is None and left_out is not None:
            left_out.append(origin)
        out.update(files or {})
    return out


def read_skill(skills: FolderSkills, origin: str, path: str) -> dict[str, bytes] | None:
    """The files of the skill folder ``origin`` (at ``path``), by their paths below the library root: what
    ``FileSource`` serves of it (``files.skills.walk``: no hidden file or ``__pycache__``; a link to a file
    of the skill as that file's bytes, a link to a folder not followed), each read confined to the skill's
    real folder. None when the walk finds a problem or passes a cap: ``check`` says what, and refuses the
    publish, so no file past a cap is ever read (a 100 MB file, 10,000 files)."""
    real, _ = skills.real_folder(path)
    if real is None:
        return None
    limits = skills.limits
    walked = walk(real, limits)
    if not walked.complete or walked.problems or sum(e.size for e in walked.files) > limits.max_total_bytes:
        return None
    return {f"{origin}/{entry.rel}": read_confined(real, entry.rel, limits.max_file_bytes) for entry in walked.files}


def _refuse_copied_source(base: Path, rel: str, data: bytes) -> None:
    """A link that is no prompt file but leads to a scoped one (or to a file of a scoped skill) would be
    stored as a copy of its source, which then serves as material to every reader: refused, naming both."""
    from ..files.library import file_scopes

    target = os.path.relpath(os.path.realpath(base / rel), base).replace(os.sep, "/")
    if is_prompt_path(rel):
        return
    if any(part.startswith(".") for part in target.split("/")):
        # The read gate never lets a hidden file be named (``files.paths``); in a folder a link to one is
        # refused where it leads, but a store would keep its bytes under the link's own name.
        raise StoreError(f"{rel} is a link to the hidden file {target}, which no prompt may read by an argument "
                         "or an expression; a store would keep it as a copy that every reader may read. Remove "
                         "the link, or copy what may be shared")
    if is_prompt_path(target) and file_scopes(target, data) != frozenset():
        raise StoreError(f"{rel} is a link to the prompt file {target}, which scopes restrict; a store would keep "
                         "it as a copy that every reader may read. Remove the link, or copy what may be shared")
    for skill_md in _skill_files_above(base, target):
        try:
            scopes = file_scopes(skill_md, read_confined(str(base), skill_md, MAX_FILE_BYTES))
        except PromptdeckError:
            scopes = None
        if scopes != frozenset():
            raise StoreError(f"{rel} is a link to {target}, a file of the skill of {skill_md}, which scopes "
                             "restrict; a store would keep it as a copy that every reader may read. Remove the "
                             "link, or copy what may be shared")


def _skill_files_above(base: Path, target: str) -> list[str]:
    """The ``SKILL.md`` of every skill the library file ``target`` lies in (the outermost first)."""
    return [f"{folder}/SKILL.md" for folder in skill_folders(target) if os.path.lexists(base / folder / "SKILL.md")]
