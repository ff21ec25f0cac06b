"""What the store holds and answers, as values: listings, entries, versions, moves and positions, and its
errors."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ...protocol.errors import LibraryError
from ..files.formats import FORMATS, prompt_endings
from ..files.paths import SKILL_FOLDERS, is_prompt_path, skill_folder_of
from .provenance import Provenance
from .schema import _LABEL_RE, LISTING_FORMAT

if TYPE_CHECKING:
    from ...prompts.spec import Prompt

log = logging.getLogger("promptdeck.store")
_SKILL_PREFIXES = tuple(folder for folder, _ in SKILL_FOLDERS)

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


class TestsFailed(StoreConflict):
    """A move of a label that requires passing tests, to files whose tests fail: nothing was changed.
    ``failures``: (the prompt's name, its scopes as recorded, one line per failing case); a prompt that does
    not parse has a line of its own."""

    __test__ = False  # not a test class, whatever pytest makes of the name

    def __init__(self, label: str, failures: list[tuple[str, str, list[str]]], summary: str) -> None:
        lines = [line for _, _, found in failures for line in found]
        shown = "; ".join(lines[:5]) + (f"; … and {len(lines) - 5} more" if len(lines) > 5 else "")
        super().__init__(f"label {label!r} requires passing tests, and {summary}: {shown}; nothing changed")
        self.label = label
        self.failures = failures
        self.summary = summary


class ApprovalsRequired(StoreConflict):
    """A move of a label that requires approvals, other than the merge of a proposal approved on exactly the
    versions the move serves: nothing was changed."""


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
    that prompts embed and read; any file of a skill, whose rules span the whole skill), or a file gone,
    may change what any prompt makes of the library: then None, for a check of every file and skill. An
    empty set: nothing to check.
    """
    some: set[str] = set()
    for path, data in files.items():
        newest = latest.get(path, _NEW)
        if newest.digest != hashlib.sha256(data).hexdigest():
            if not is_prompt_path(path) or in_skill(path):  # a skill is checked whole (its caps, its nesting)
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
    #: the git commit, branch and dirtiness of the folder published, if it was a git work tree
    git: Provenance | None = None


class Recorded(NamedTuple):
    """What the store records of one version of one file, besides its bytes."""

    prompt: str | None
    #: None: the version is the file's deletion
    digest: str | None
    #: space-separated; None for material and for prompt files published before listings
    scopes: str | None
    #: the publish that made the version (a skill's file is seen by its skill's scopes as of then)
    publish: int | None = None


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
    #: why, in the mover's words (``-m``); "" for moves recorded before schema 5
    message: str = ""
    #: the position the label left (None: its first move)
    previous: int | None = None


class Protection(NamedTuple):
    """A protected label: a move of it through /api/store needs ``scope`` (docs/store.md#governance); with
    ``approvals``, every move of it is the merge of a proposal that many reviewers approved (``reviews``)."""

    label: str
    scope: str
    require_tests: bool
    author: str
    created: float
    approvals: int = 0


#: A write's check of the label it moves (``governance.release``, the gate): shown the label's protection (None: not
#: protected), read inside the write transaction, it raises to refuse (nothing is changed).
Guard = Callable[[Protection | None], None]


class Rollout(NamedTuple):
    """A share of a label's renders of one prompt file sent to another version (``governance``)."""

    id: int
    label: str
    path: str
    prompt: str
    #: the version the label points at (the rest of the renders)
    base: int
    version: int
    #: the share, in hundredths of a percent (0-10,000)
    basis_points: int
    author: str
    message: str
    created: float


class RolloutEvent(NamedTuple):
    """A rollout's start, change of share, promotion or end, as ``history --label`` shows it."""

    rollout: Rollout
    #: start, percent, promote, abort, or superseded (the label moved the prompt elsewhere)
    kind: str
    basis_points: int
    author: str
    message: str
    created: float
    #: the label's position the event made (a promotion's), else None
    position: int | None


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
    # whose pattern admits no '.' or '..' part, or to a file of a skill in a tool's skill folder
    # (``.agents/skills/pdf/forms.md``), below which no part is hidden.
    return (isinstance(path, str) and 0 < len(path) <= 1024 and "\\" not in path and "\0" not in path
            and path[0] != "/" and path[-1] != "/" and "//" not in path
            and ((path[0] != "." and "/." not in path) or is_prompt_path(path) or in_skill(path)
                 or _beside_prompt(path)))


#: The endings of prompt files that a tests file (``files.tests.sidecar_of``) may stand beside.
_PROMPT_ENDINGS = prompt_endings(FORMATS)


def _beside_prompt(path: str) -> bool:
    """Whether ``path`` is the tests file of a prompt file another tool's folder may hold
    (``.claude/commands/review.tests.yaml``): safe where that prompt file's path is."""
    stem = path[:-len(".tests.yaml")] if path.endswith(".tests.yaml") else ""
    return bool(stem) and any(is_prompt_path(stem + ending) for ending in _PROMPT_ENDINGS)


def in_skill(path: str) -> bool:
    """Whether the library path ``path`` lies in a skill's folder (``skills/pdf/forms.md``,
    ``.claude/skills/git/SKILL.md``; ``paths.SKILL_FOLDERS``), with no hidden part below the skill folder:
    where a publish keeps a skill's files (docs/skills.md)."""
    at = skill_folder_of(path)
    if at is None:
        return False
    rest = path[len(at[0]):]
    return "/" in rest and "/." not in rest


def skill_marker(path: str) -> int | None:
    """``position_files.skill`` of a path (schema 4): 1 where it lies in a skill folder, else None."""
    return 1 if path.startswith(_SKILL_PREFIXES) else None


def skill_folders(path: str) -> list[str]:
    """Each folder, outermost first, that is or may be the folder of a skill holding the library path
    ``path``: its skill folder's subfolder, and every folder below that on the way to it (a skill nests
    where a ``SKILL.md`` is). ``skills/pdf/forms/fill.md``: ``skills/pdf``, ``skills/pdf/forms``. None
    outside a skill folder."""
    at = skill_folder_of(path)
    if at is None or not in_skill(path):
        return []
    folders = [at[0] + at[1]]
    for part in path[len(folders[0]) + 1:].split("/")[:-1]:
        folders.append(f"{folders[-1]}/{part}")
    return folders


def skill_of(path: str, markers: set[str]) -> str | None:
    """The skill-path (``git``, ``pdf/forms``) of the innermost skill the library path ``path`` lies in, the
    ``SKILL.md`` paths being ``markers``; None outside any."""
    found = [folder for folder in skill_folders(path) if f"{folder}/SKILL.md" in markers]
    if not found:
        return None
    at = skill_folder_of(path)
    assert at is not None
    return found[-1][len(at[0]):]


def is_label(value: str) -> bool:
    """Whether ``value`` can name a label: 1-64 letters, digits, '_', '-' and '.', not starting with '-' or '.'."""
    return _LABEL_RE.match(value) is not None


def no_version(prompt: str, version: int | None) -> StoreMissing:
    """What the store says of a version it does not have (and the store API of one hidden by scopes)."""
    return StoreMissing(f"prompt {prompt!r} has no version {version}")


def first_line(exc: BaseException) -> str:
    """An exception's first line (a driver's message may run on for many), or its type's name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def unshadowed(entries: dict[str, Entry], label: str) -> dict[str, Entry]:
    """``entries`` less any file below another file ("a/b" beside "a"; only another tool writes both):
    whatever order files are written in, "a" is the one served."""
    folders: set[str] = set()
    for folder in {path.rpartition("/")[0] for path in entries if "/" in path}:
        while folder and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    clashes = folders & entries.keys()
    if not clashes:
        return entries
    kept = {}
    for path, entry in entries.items():
        parts = path.split("/")
        if any("/".join(parts[:end]) in clashes for end in range(1, len(parts))):
            log.error("the stored file %r of label %s lies below the file %r; left out", path, label,
                      next("/".join(parts[:end]) for end in range(1, len(parts)) if "/".join(parts[:end]) in clashes))
        else:
            kept[path] = entry
    return kept
