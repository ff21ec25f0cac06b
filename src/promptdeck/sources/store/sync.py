"""A folder (a git work tree) and a label kept in step: the base a publish starts from, and what it may undo.

A label's *base* for a folder is the label's position when that folder was last published to it or pulled
from it. The store keeps the newest one per label (``label_bases``: the position git and the store last
agreed on, which a fresh clone in CI starts from), and the folder echoes it in ``BASE_FILE``, a small file
git can ignore, one ``LABEL POSITION`` line per label; ``publish --base N`` overrides both.

A publish to a label that moved since its base (a web save, another publish) would undo those changes: it
is refused (``PublishRefused``) naming the prompts changed on both sides and those only the store changed,
unless forced. So is one that would delete more than half of the label's prompts (publishing the wrong
folder), unless deletions are asked for. Both checks run inside the publish's write transaction, before
anything is written, so a refused publish changes nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from .connection import Connection
from .model import StoreConflict, StoreError, is_label
from .private import replace_whole
from .reads import Reads

#: The file in a library folder that records its labels' bases (docs/store.md#git).
BASE_FILE = ".promptdeck-base"
#: A base file larger than this is not one of ours.
MAX_BASE_BYTES = 64 * 1024
_LINE = re.compile(r"([^\s#]+)[ \t]+([0-9]{1,18})[ \t]*\Z")
_HEADER = ("# promptdeck: each label's position when this folder was last published to it or pulled from it.\n"
           "# Written by promptdeck publish and pull; git can ignore it (docs/store.md#git).\n")


class Checks(NamedTuple):
    """What a publish from a folder is held to (``Store.publish``): its ``base`` (None: the one the store
    records for the label), whether a moved label may be overwritten (``force``), and whether it may delete
    more than half of the label's prompts (``delete``)."""

    base: int | None = None
    force: bool = False
    delete: bool = False


class PublishRefused(StoreConflict):
    """A publish that would undo changes made in the store since its base, or delete more than half of a
    label's prompts: nothing was changed. ``both``: paths changed in the folder and in the store since the
    base; ``store_only``: paths the store changed and the publish would put back; ``deleted``: the paths a
    publish would delete."""

    def __init__(self, message: str, *, both: Sequence[str] = (), store_only: Sequence[str] = (),
                 deleted: Sequence[str] = (), base: int | None = None, now: int | None = None) -> None:
        super().__init__(message)
        self.both = list(both)
        self.store_only = list(store_only)
        self.deleted = list(deleted)
        self.base = base
        self.now = now


def _some(paths: list[str], limit: int = 10) -> str:
    return ", ".join(paths[:limit]) + (f", … and {len(paths) - limit} more" if len(paths) > limit else "")


# -- the base file ------------------------------------------------------------------------------------

def read_bases(folder: str | os.PathLike[str]) -> dict[str, int]:
    """The bases ``folder``'s ``BASE_FILE`` records (label -> position); none when it has no such file.
    ``StoreError`` naming the file and line when it is not one promptdeck wrote: a link, too large, not
    UTF-8, a line that is not ``LABEL POSITION``, a label twice."""
    path = Path(folder) / BASE_FILE
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StoreError(f"{path}: cannot be read as promptdeck's base file ({exc.strerror}); remove it") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"{path}: not a regular file; promptdeck's base file is one (remove it)")
        data = os.read(fd, MAX_BASE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BASE_BYTES:
        raise StoreError(f"{path}: larger than {MAX_BASE_BYTES} bytes; not promptdeck's base file (remove it)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(f"{path}: not UTF-8; not promptdeck's base file (remove it)") from None
    bases: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = _LINE.match(line)
        if found is None or not is_label(found[1]):
            raise StoreError(f"{path}:{number}: expected 'LABEL POSITION' (a label name and a number)")
        if found[1] in bases:
            raise StoreError(f"{path}:{number}: label {found[1]!r} is given twice")
        bases[found[1]] = int(found[2])
    return bases


def write_base(folder: str | os.PathLike[str], label: str, position: int) -> Path:
    """Record ``position`` as ``label``'s base in ``folder``'s ``BASE_FILE``, the other labels' kept; written
    to a new file that replaces the old one, so a reader never sees half of it. The file's path."""
    path = Path(folder) / BASE_FILE
    try:
        bases = read_bases(folder)
    except StoreError:  # replaced whole: what it held was not ours
        bases = {}
    bases[label] = position
    text = _HEADER + "".join(f"{name} {at}\n" for name, at in sorted(bases.items()))
    replace_whole(path, text.encode("utf-8"), BASE_FILE + ".")
    return path


# -- inside the publish's transaction ----------------------------------------------------------------

def stored_base(db: Connection, label: str) -> int | None:
    """The position the store records as ``label``'s base (``label_bases``), if any."""
    rows = db.rows("SELECT position FROM label_bases WHERE label = ?", label)
    return int(rows[0][0]) if rows else None


def record_base(db: Connection, label: str, position: int, author: str) -> None:
    """(Inside a write transaction.) Record ``position`` as ``label``'s base."""
    db.run("INSERT INTO label_bases (label, position, author, created) VALUES (?, ?, ?, ?) ON CONFLICT (label) "
           "DO UPDATE SET position = excluded.position, author = excluded.author, created = excluded.created",
           label, position, author, time.time())


def moved_since(db: Connection, reads: Reads, label: str, base: int, files: dict[str, bytes],
                now_id: int, now: dict[str, int]) -> tuple[list[str], list[str], dict[str, int]]:
    """What ``label`` (at position ``now_id``, serving ``now``) changed since position ``base`` that a publish of
    ``files`` would change again: (the paths changed in the folder too, those the folder has as they were at
    the base, the label's versions at the base). A change the folder already has is neither."""
    rows = db.rows("SELECT label FROM positions WHERE id = ?", base)
    if not rows or rows[0][0] != label or base > now_id:
        raise StoreError(f"position {base} is not one of label {label!r}'s (it is at position {now_id}); "
                         "give a base of this label, or --force")
    at_base = dict(db.rows("SELECT path, version FROM position_files WHERE position = ?", base))
    moved = sorted(path for path in at_base.keys() | now.keys() if at_base.get(path) != now.get(path))
    pairs = [(p, v) for p in moved for v in (at_base.get(p), now.get(p)) if v is not None]
    digests = {key: record.digest for key, record in reads.recorded(pairs).items()}

    def digest(path: str, version: int | None) -> str | None:
        return None if version is None else digests.get((path, version))

    both: list[str] = []
    store_only: list[str] = []
    for path in moved:
        data = files.get(path)
        mine = None if data is None else hashlib.sha256(data).hexdigest()
        if mine == digest(path, now.get(path)):
            continue  # the folder has the store's change already
        (store_only if mine == digest(path, at_base.get(path)) else both).append(path)
    return both, store_only, at_base


def check_base(db: Connection, reads: Reads, label: str, base: int | None, files: dict[str, bytes],
               now_id: int, now: dict[str, int]) -> None:
    """(Inside the publish's write transaction.) Refuse (``PublishRefused``) a publish of ``files`` to ``label``
    whose ``base`` is an older position of the label, where the label since changed a file that the publish
    would change again (``moved_since``)."""
    if base is None or base == now_id:
        return
    both, store_only, _ = moved_since(db, reads, label, base, files, now_id, now)
    if not both and not store_only:
        return
    parts = ([f"changed on both sides: {_some(both)}"] if both else []) + \
        ([f"changed in the store only (the publish would undo it): {_some(store_only)}"] if store_only else [])
    raise PublishRefused(f"label {label!r} moved since your base position {base} (now {now_id}); "
                         + "; ".join(parts) + "; nothing published", both=both, store_only=store_only,
                         base=base, now=now_id)


def check_deletions(db: Connection, what: str, served: dict[str, tuple[int, str | None]],
                    files: dict[str, bytes]) -> list[str]:
    """(Inside the publish's write transaction.) The prompt files of ``served`` (path -> (version, prompt name or
    None)) that ``files`` lacks; ``PublishRefused`` when they are more than half of its prompts."""
    prompts = [path for path, (_, name) in served.items() if name is not None]
    gone = sorted(path for path in prompts if path not in files)
    if gone and 2 * len(gone) > len(prompts):
        raise PublishRefused(f"the publish would delete {len(gone)} of the {len(prompts)} prompts of {what} "
                             f"({_some(gone, 5)}): is this the right folder? --delete publishes it anyway; "
                             "nothing published", deleted=gone)
    return gone
