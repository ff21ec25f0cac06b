"""A label's files written into a folder (``promptdeck pull``): only what differs, never outside the folder.

The plan (``plan``) is made before anything is written, and refuses the whole pull when a path the store
gives is not one of a library (absolute, ``..``, hidden: ``model.is_safe_path``), when the way to it in
the folder passes a symbolic link or a file that is not a directory, or, unless forced, when the folder's
file holds work the store never had (its bytes are no version of that path): a pull never overwrites or
deletes what was not published. Then ``apply`` writes each file to a new file beside it that replaces it
(a reader never sees half a file), and deletes the files of prompts the label no longer has.

Only files the store knows (paths it has a version of) are ever written or deleted: the folder's other
files, its hidden files and its base file are never touched.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .model import StoreConflict, StoreError, is_safe_path
from .private import replace_whole
from .schema import MAX_FILE_BYTES


@dataclass
class Plan:
    """What a pull does: ``write`` (path -> bytes; ``new``: those the folder lacks), ``delete``, and the
    files left as they are since they hold the label's bytes already (``same``, a count)."""

    write: dict[str, bytes] = field(default_factory=dict)
    new: set[str] = field(default_factory=set)
    delete: list[str] = field(default_factory=list)
    same: int = 0


def _inside(root: Path, path: str, folders: set[str] | None = None) -> Path:
    """Where ``path`` lies in the folder ``root``; ``StoreError`` when it is no library path, or when a part
    of the way to it is a symbolic link or not a directory (so nothing is written through a link). A path of
    no '..' part whose every part is a real folder or missing lies below ``root``: no ``resolve`` is needed.
    ``folders``: the folders (relative) this plan found real already, not looked at again."""
    if not is_safe_path(path):
        raise StoreError(f"the store holds a path that is not a library path: {path!r}; nothing was written")
    at = str(root)
    parts = path.split("/")
    for number, part in enumerate(parts):
        at = f"{at}/{part}"  # strings, not Path: this runs for each file of a 10,000-prompt pull, thrice
        last = number == len(parts) - 1
        prefix = "/".join(parts[:number + 1])
        if not last and folders is not None and prefix in folders:
            continue
        try:
            mode = os.lstat(at).st_mode
        except FileNotFoundError:
            break
        except OSError as exc:
            raise StoreError(f"{at}: {exc.strerror}; nothing was written") from None
        if stat.S_ISLNK(mode):
            raise StoreError(f"{at} is a symbolic link; pull never writes through one (the store's {path!r}); "
                             "nothing was written")
        if not last and not stat.S_ISDIR(mode) or last and not stat.S_ISREG(mode):
            raise StoreError(f"{at} is not a {'regular file' if last else 'folder'} (the store's {path!r}); "
                             "nothing was written")
        if not last and folders is not None:
            folders.add(prefix)
    return Path(root, path)


def _held(where: Path) -> bytes | None:
    """The bytes of the regular file ``where`` (checked by ``_inside``), or None when there is none."""
    try:
        fd = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{where}: {exc.strerror}; nothing was written") from None
    with os.fdopen(fd, "rb") as opened:
        data = opened.read(MAX_FILE_BYTES + 1)
    return data


def plan(folder: str | os.PathLike[str], files: dict[str, bytes], known: dict[str, set[str]], *,
         force: bool = False) -> Plan:
    """What writing ``files`` (the label's: path -> bytes) into ``folder`` does. ``known``: every path the store
    has versions of, with the digests of those versions; a known path the label lacks is deleted from the
    folder. ``StoreConflict`` naming the files that hold unpublished work, unless ``force``."""
    root = Path(folder).resolve()
    done = Plan()
    unpublished: list[str] = []
    folders: set[str] = set()
    for path in sorted(files.keys() | known.keys()):
        where = _inside(root, path, folders)
        held = _held(where)
        data = files.get(path)
        if held == data:
            done.same += held is not None
            continue
        if held is not None and hashlib.sha256(held).hexdigest() not in known.get(path, set()):
            unpublished.append(path)
        if data is None:
            if held is not None:
                done.delete.append(path)
        else:
            done.write[path] = data
            if held is None:
                done.new.add(path)
    if unpublished and not force:
        shown = ", ".join(unpublished[:10]) + (f", … and {len(unpublished) - 10} more" if len(unpublished) > 10
                                               else "")
        raise StoreConflict(f"{len(unpublished)} file{'s' * (len(unpublished) != 1)} in {folder} hold work the "
                            f"store never had and would be overwritten or deleted: {shown}; publish or "
                            "commit them first (--force overwrites them); nothing was written")
    return done


def apply(folder: str | os.PathLike[str], done: Plan) -> None:
    """Carry out ``done`` in ``folder``: each file written whole to a new file that replaces it, then the
    deletions. Each path is checked again as it is written."""
    root = Path(folder).resolve()
    written = 0
    try:
        for path, data in sorted(done.write.items()):
            _write(root, path, data)
            written += 1
        for path in done.delete:
            _inside(root, path).unlink(missing_ok=True)
            written += 1
    except StoreError as exc:  # the folder changed under the pull (a link swapped in): say how far it got
        raise StoreError(str(exc).replace("nothing was written", f"the pull stopped after {written} of "
                                          f"{len(done.write) + len(done.delete)} changes")) from None


def _write(root: Path, path: str, data: bytes) -> None:
    where = _inside(root, path)
    if not where.parent.is_dir():
        where.parent.mkdir(parents=True, exist_ok=True)
        _inside(root, path)  # the folders just made are folders, not links
    replace_whole(where, data, ".promptdeck-pull.")
