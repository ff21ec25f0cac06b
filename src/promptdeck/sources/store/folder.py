"""A library folder read as a publish reads it: every file ``serve`` would read, and nothing that leads out."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..files.paths import READ_FLAGS, is_prompt_path, may_hold_prompts, read_confined, read_opened
from .model import StoreError
from .schema import MAX_FILE_BYTES

log = logging.getLogger("promptdeck.store")

def read_library(root: str | os.PathLike[str], prefix: str = "") -> dict[str, bytes]:
    """Every file of a library as ``serve`` would read it: regular, non-hidden, inside the root. With a
    ``prefix`` (``paths.folder_prefix``: the folder is ``.claude/commands/``, say), its prompt files only,
    each under its path below a library root, as ``FileSource`` names them.

    Walked with directory descriptors (``os.fwalk``) and opened relative to them without following
    links, so no component of a path is resolved twice and none can be swapped for a link meanwhile;
    only a file that is itself a link goes through ``read_confined``, which follows it if it stays
    inside. (Resolving every path cost 7 ``lstat`` calls a file: 7 s of a 100,000-file publish.)
    """
    base = Path(root).resolve()
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames, dirfd in os.fwalk(base):
        rel_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        below = "" if rel_dir == "." else rel_dir + "/"
        # Hidden folders are left out, but for the other tools' prompt folders (``.claude/commands``, ...),
        # of which only the prompt files are taken.
        dirnames[:] = sorted(d for d in dirnames if (not prefix and not d.startswith("."))
                             or may_hold_prompts(prefix + below + d))
        hidden = bool(prefix) or rel_dir.startswith(".") or "/." in rel_dir
        for name in sorted(filenames):
            real, rel = below + name, prefix + below + name
            if name.startswith(".") or (hidden and not is_prompt_path(rel)):
                continue
            try:
                fd = os.open(name, READ_FLAGS, dir_fd=dirfd)
            except OSError:  # a link (ELOOP), or gone: the path-checking read decides, and says why
                out[rel] = read_confined(str(base), real, MAX_FILE_BYTES)
                _refuse_copied_source(base, real, out[rel])
                continue
            out[rel] = read_opened(fd, real, MAX_FILE_BYTES)
    return out


def _refuse_copied_source(base: Path, rel: str, data: bytes) -> None:
    """A link that is no prompt file but leads to a scoped one would be stored as a copy of its source,
    which then serves as material to every reader: refused, naming both."""
    from ..files.library import file_scopes

    target = os.path.relpath(os.path.realpath(base / rel), base).replace(os.sep, "/")
    if not is_prompt_path(rel) and is_prompt_path(target) and file_scopes(target, data) != frozenset():
        raise StoreError(f"{rel} is a link to the prompt file {target}, which scopes restrict; a store would keep "
                         "it as a copy that every reader may read. Remove the link, or copy what may be shared")
