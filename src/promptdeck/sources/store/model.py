"""What the store holds and answers, as values: listings, entries, versions, moves and positions, and its
errors."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ...protocol.errors import LibraryError
from ..files.paths import is_prompt_path
from .schema import _LABEL_RE, LISTING_FORMAT

if TYPE_CHECKING:
    from ...prompts.spec import Prompt

log = logging.getLogger("promptdeck.store")

def listing_of(prompt: Prompt) -> Listed:
    """What a publish records of a prompt beside its file: its name, listing entry and scopes."""
    from ...protocol.jsonrpc import encode_json

    text = encode_json({"v": LISTING_FORMAT, "d": prompt.listing()}).decode()
    return Listed(prompt.name, text, " ".join(sorted(prompt.scopes)))


class StoreError(LibraryError):
    """The store cannot do what was asked: unreachable, wrong schema, an unknown label or version."""


class StoreConflict(StoreError):
    """A write that would undo or clash with what the store holds now: nothing was changed."""


class StoreMissing(StoreError):
    """The store has no such prompt, version or label."""


@dataclass(frozen=True, slots=True)
class Listed:
    """A prompt file's entry in the store's listing (see ``listing_of``)."""

    name: str
    listing: str
    scopes: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One file a label points at, without its bytes: a prompt file with its listing, or material."""

    path: str
    version: int
    prompt: str | None
    #: ``files.listing``: None for material, and for a prompt published by an older promptdeck
    listing: str | None
    scopes: str | None


class Latest(NamedTuple):
    """A path's newest version in the store."""

    version: int
    #: None: the file was deleted in that version
    digest: str | None
    #: whether it has a listing of this promptdeck's format
    listed: bool
    prompt: str | None


_NEW = Latest(0, None, False, None)


def to_check(files: dict[str, bytes], latest: dict[str, Latest]) -> set[str] | None:
    """Which prompt files of ``files`` a publish must parse, the store's newest versions being ``latest``.

    A file whose bytes the store has was checked when it was published; its listing says what it
    serves. So when only prompt files were added or changed (or lack this promptdeck's listing), only
    those are parsed, and the rest are taken from their listings. A change to any other file (material
    that prompts embed and read), or a file gone, may change what any prompt makes of the library:
    then None, for a check of every file. An empty set: nothing to check.
    """
    some: set[str] = set()
    for path, data in files.items():
        newest = latest.get(path, _NEW)
        if newest.digest != hashlib.sha256(data).hexdigest():
            if not is_prompt_path(path):
                return None
            some.add(path)
        elif not newest.listed and is_prompt_path(path):
            some.add(path)
    if any(newest.digest is not None and path not in files for path, newest in latest.items()):
        return None
    return some


@dataclass(frozen=True, slots=True)
class FileVersion:
    path: str
    version: int
    publish: int
    prompt: str | None
    digest: str | None
    author: str
    message: str
    created: float
    #: the scopes publish recorded for a prompt file's version (space-separated); None for material,
    #: deletions and versions published before listings
    scopes: str | None = None


class Recorded(NamedTuple):
    """What the store records of one version of one file, besides its bytes."""

    prompt: str | None
    #: None: the version is the file's deletion
    digest: str | None
    #: space-separated; None for material and for prompt files published before listings
    scopes: str | None


#: A write's own rule for the label move it makes: given where the label pointed (path -> version) and
#: where it is to point, it raises to refuse the move (inside the write, so nothing is changed).
MoveRule = Callable[[dict[str, int], dict[str, int]], None]


class Move(NamedTuple):
    """One move of a label (a position, without its files)."""

    position: int
    label: str
    reason: str
    author: str
    created: float


@dataclass(frozen=True, slots=True)
class Position:
    """Where a label points: one version of each file, and how it got there."""

    id: int
    label: str
    reason: str
    author: str
    created: float
    files: dict[str, int]


def is_safe_path(path: object) -> bool:
    """Whether ``path`` can name a file of a library: relative, '/'-separated, at most 1,024 characters, with
    no empty, hidden, '.' or '..' part and no backslash or NUL. Paths come from the database, which
    another tool may have written, and each becomes a file below a folder of ours."""
    # Substring tests rather than a split: this runs for every file of a publish and of a label.
    # A hidden part is allowed only on the way to another tool's prompt file (``.claude/commands/x.md``),
    # whose pattern admits no '.' or '..' part.
    return (isinstance(path, str) and 0 < len(path) <= 1024 and "\\" not in path and "\0" not in path
            and path[0] != "/" and path[-1] != "/" and "//" not in path
            and ((path[0] != "." and "/." not in path) or is_prompt_path(path)))


def is_label(value: str) -> bool:
    """Whether ``value`` can name a label: 1-64 letters, digits, '_', '-' and '.', not starting with '-' or '.'."""
    return _LABEL_RE.match(value) is not None


def no_version(prompt: str, version: int | None) -> StoreMissing:
    """What the store says of a version it does not have (and the store API of one hidden by scopes)."""
    return StoreMissing(f"prompt {prompt!r} has no version {version}")


def first_line(exc: BaseException) -> str:
    """An exception's first line (a driver's message may run on for many), or its type's name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
