"""Serving a label of a versioned store (``sources.store``), kept current as the label moves.

A publish records each prompt file's listing entry beside it, so a label is
listed straight from the store: start-up reads one row per prompt and no file,
and a ``StoredPrompt`` parses its file only when a request first needs more
than its listing entry (its arguments, to validate a ``prompts/get``). The
files themselves go to a private folder, where they are parsed, confined and
rendered exactly as a folder's: material (every file that is not a prompt
file) at once, prompt files when first needed and, in the background, all the
rest, so that the label stays renderable through a store outage.

A prompt file without a listing of this promptdeck's format (published by an
older one) is read and parsed at once instead, as a folder's files are; a file
that fails to parse keeps its last good version served.

When the label moves, only what changed is fetched again. Two threads keep the
label current (``followers``): one follows the label's moves (PostgreSQL's
notifications, SQLite's commit counter) and calls ``sync``; the other writes
the position's files to the folder in the background. This module is the
catalog served: a position's prompts, which of its files go to the private
folder and when (``private_files.PrivateFiles`` writes them), and reading on
first need.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from ...prompts.catalog import Catalog
from ...prompts.skills import Skill
from ...prompts.spec import Offered, Prompt
from ...prompts.usage import Usage
from ...protocol.errors import INTERNAL_ERROR, InternalError, McpError, PromptdeckError, PromptFileError
from .. import Source
from ..files.library import TemplateFolder
from ..files.paths import SkillLimits, is_prompt_path
from ..files.resources import FolderResources
from ..files.source import EAGER_COMPILE_LIMIT, MAX_PROMPT_FILE_BYTES, build_prompt, stage_file
from .catalog import META_LABEL, META_VERSION, StoredCatalog, StoredPrompt, listed
from .database import Store
from .followers import PAGE_FILES, Followers
from .model import Entry, StoreError, unshadowed
from .private_files import PrivateFiles
from .skills import StoredSkills
from .splits import LiveRollouts
from .urls import sqlite_path
from .usage import UsageWriter

log = logging.getLogger("promptdeck.store")

#: How long a request may wait to connect to the store (a page or a prompt not read before).
READ_TIMEOUT_SECONDS = 3
T = TypeVar("T")


class StoreSource(Source):
    """The prompts ``label`` points at in the store at ``url``.

    Two ways to serve, chosen per label position: *listed*, when every prompt file of the position has
    a listing of this promptdeck's format and the server has no other source (``catalog`` then pages
    the listing from the database, and nothing is held per prompt until it is used); otherwise *loaded*:
    one ``StoredPrompt`` per listed file and a parsed prompt per unlisted one, held in memory.

    The label's Agent Skills are served too (``skills``; ``skills=False`` serves none), each within
    ``skill_limits`` (``stored_skills.StoredSkills``).
    """

    def __init__(self, url: str, label: str = "production", *, skills: bool = True,
                 skill_limits: SkillLimits | None = None) -> None:
        self.url = url
        self.label = label
        self._skill_limits = (skill_limits or SkillLimits()) if skills else None
        #: the label's skills, once loaded (None: before ``load``, or skills are not served)
        self._skills: StoredSkills | None = None
        #: the label's files in the private folder, and the local copies of its listing
        self.files = PrivateFiles(label)
        #: writes the renders counted into the store (``take_usage``)
        self._usage: UsageWriter | None = None
        self._library: TemplateFolder | None = None
        self._position: int | None = None
        #: served from the database's listing (``StoredCatalog``), rather than loaded
        self._listed = False
        self._catalog: StoredCatalog | None = None
        #: loaded: the files the label points at now, and the prompt served for each prompt file
        self._entries: dict[str, Entry] = {}
        self._prompts: dict[str, Offered] = {}
        #: loaded: the problems of unlisted prompt files that failed to parse
        self.errors: dict[str, list[PromptFileError]] = {}
        self._lock = threading.RLock()
        #: the connection prompts and listing pages are read through (opened on need; again after a failure)
        self._reader: Store | None = None
        #: a PostgreSQL store's listing of the position ``_mirrored``, copied to a local SQLite file: pages
        #: are read there without a network round trip, and through an outage
        self._mirror: Store | None = None
        self._mirrored: int | None = None
        #: the mirror's own lock, so pages never wait behind a connection attempt to the store
        self._mirroring = threading.Lock()
        self._reading = threading.Lock()
        self._changed: Callable[[], object] | None = None
        #: the threads that follow the label and write its files (started by ``attach``)
        self.followers = Followers(self)
        #: the label's live rollouts (``splits``), followed as the label is
        self.splits = LiveRollouts(label)
        #: when this process last saw the label (or its rollouts) change: loaded, moved (unix time; ``/metrics``)
        self.changed_at: float | None = None

    @property
    def unreachable(self) -> bool:
        """Whether the store could not be reached when the follower last tried: what is served is the label's
        last good copy (``Rendered.stale`` in an application), until it is reached and caught up again."""
        return self.followers.failing

    @property
    def position(self) -> int | None:
        """The label position served now (None before ``load``)."""
        return self._position

    @property
    def from_listing(self) -> bool:
        """Whether the position is served from the database's listing (``StoredCatalog``), rather than loaded."""
        return self._listed

    @property
    def library(self) -> TemplateFolder | None:
        """The label's files as templates see them (material fetched from the store on first need); None
        before ``load``. What a file being edited for this label is checked against."""
        with self._lock:
            return self._library

    # -- Source ----------------------------------------------------------------------------------

    def load(self) -> Sequence[PromptdeckError]:
        with Store(self.url) as store:
            position = store.reads.require_position(self.label)
            folder = self.files.open()
            self._library = TemplateFolder(Path(folder), self._fetch_missing)
            self._library.lookup = self._named
            if self._skill_limits is not None:
                self._skills = StoredSkills(folder, self._skill_limits, self.files.written.get, self.put)
            if store.reads.fully_listed(position):
                self._move_listed(store, position)
                problems = self._move_skills(store, position)
            else:
                problems = [*self._load_all(store), *self._move_skills(store, position)]
            self.splits.follow(store, lambda: self._library)
            self.changed_at = time.time()
            return problems

    def catalog(self, page_size: int) -> Catalog | None:
        with self._lock:
            if not self._listed or self._position is None:
                return None
            if self._catalog is None or self._catalog.position != self._position \
                    or self._catalog.page_size != page_size:
                self._catalog = StoredCatalog(self, self._position, page_size)
            return self._catalog

    def prompts(self) -> list[Offered]:
        if self._listed:  # another source is served beside this one: every prompt is held from now on
            with Store(self.url) as store:
                self._load_all(store)
        with self._lock:
            return [self._prompts[path] for path in sorted(self._prompts)]

    def resources(self) -> list[FolderResources]:
        """The label's files its prompts send, from its folder, as a folder's (``files.resources``)."""
        return [] if self._library is None else [FolderResources(self._library)]

    def skills(self) -> Mapping[tuple[str, ...], Skill]:
        """The label's skills: a snapshot, replaced whole when the label moves, before ``changed`` is called."""
        return self._skills.skills() if self._skills is not None else {}

    def read_skill_file(self, skill: Skill, rel: str) -> bytes:
        """The bytes of ``skill``'s file at ``rel``, exactly those its listing's digest promises."""
        if self._skills is None:
            return super().read_skill_file(skill, rel)

        def fetch(digest: str) -> bytes:
            try:
                return self.read(lambda store: store.reads.blob(digest))
            except StoreError as exc:
                log.error("a file of skill %s (label %s) cannot be read from the store: %s", "/".join(skill.path),
                          self.label, exc)
                raise McpError(f"skill file {skill.file_uri(rel)} cannot be read from the store now; try again",
                               code=INTERNAL_ERROR) from None

        return self._skills.read(skill, rel, fetch)

    def rolling_out(self) -> frozenset[str]:
        return self.splits.names()

    def split(self, prompt: Offered, key: str | None) -> Prompt | None:
        return self.splits.choose(prompt, key)

    def attach(self, changed: Callable[[], object]) -> None:
        self._changed = changed
        self.followers.start()

    def take_usage(self, usage: Usage) -> None:
        """Write the renders ``usage`` counts into the store, in batches from a thread of its own."""
        if self._usage is None:
            self._usage = UsageWriter(self.url, usage)
            self._usage.start()
            # ``serve`` ends with the process, not ``close``: what was counted since the last write is written
            # as it exits (a SIGTERM too; a SIGKILL loses it, docs/usage.md)
            atexit.register(self._usage.stop)

    def close(self) -> None:
        """Write the usage counted, stop following the label and remove the private folder."""
        if self._usage is not None:
            self._usage.stop()
        self.followers.stop()
        with self._reading, self._mirroring:
            for reader in (self._reader, self._mirror):
                if reader is not None:
                    reader.close()
            self._reader = self._mirror = None
        self.files.close()

    # -- a label position ------------------------------------------------------------------------

    def _move_listed(self, store: Store, position: int) -> None:
        """Serve ``position`` from the database's listing: drop written files it does not have at the
        same version, and write the material that is new to the folder."""
        written = self.files.written
        versions = store.reads.versions_at(position) if written else None  # at start: nothing written yet
        with self._lock:
            for path in [p for p, v in written.items() if versions is None or versions.get(p) != v]:
                self.files.remove(path)
            self._position = position
            self._listed = True
            self._entries, self._prompts = {}, {}
        new = None if versions is None else \
            [(p, v) for p, v in versions.items() if not is_prompt_path(p) and written.get(p) != v]
        if new is not None and len(new) <= PAGE_FILES // 10:  # a move: the few that changed, one by one
            for path, version in new:
                self.put(path, version, store.reads.content(path, version), position)
        else:
            after = ""
            while page := store.reads.contents(position, after=after, limit=PAGE_FILES, material=True):
                for path, version, data in page:
                    self.put(path, version, data, position)
                after = page[-1][0]
        self.followers.behind()

    def _load_all(self, store: Store) -> list[PromptFileError]:
        position, entries = store.reads.entries(self.label)
        with self._lock:
            self._listed = False
            return self._apply(store, position, entries)

    def _write_unlisted(self, store: Store, position: int, only: set[str]) -> None:
        """Write the files of ``position`` in ``only`` that have no listing (material; prompt files of
        older promptdecks)."""
        after = ""
        while page := store.reads.contents(position, after=after, limit=PAGE_FILES, unlisted=True):
            for path, version, data in page:
                if path in only:
                    self.put(path, version, data, position)
            after = page[-1][0]

    def _apply(self, store: Store, position: int, entries: list[Entry]) -> list[PromptFileError]:
        """Load ``entries``, the files of ``position``: write the unlisted ones that changed, parse the
        unlisted prompt files among them, and hold a ``StoredPrompt`` per listed one. The problems found."""
        new = unshadowed({entry.path: entry for entry in entries}, self.label)
        written = self.files.written
        with self._lock:
            old = self._entries
            changed = [path for path, entry in new.items() if (was := old.get(path)) is None
                       or was.version != entry.version or was.listing != entry.listing]
            for path in [p for p in {*old, *written} if p not in new]:
                self.files.remove(path)
                self._prompts.pop(path, None)
                self.errors.pop(path, None)
            for path in changed:
                if written.get(path, new[path].version) != new[path].version:
                    self.files.remove(path)  # an older version: written again when needed
            self._entries = new
            self._position = position
        unlisted = {path for path in changed if not listed(new[path])}
        if unlisted:
            self._write_unlisted(store, position, unlisted)
        problems: list[PromptFileError] = []
        parsed = [path for path in sorted(unlisted) if is_prompt_path(path)]
        compile_now = len(parsed) <= EAGER_COMPILE_LIMIT
        with self._lock:
            for path in sorted(changed):
                entry = new[path]
                if listed(entry):
                    self._prompts[path] = StoredPrompt(entry, position, self.label, self.load_prompt)
                    self.errors.pop(path, None)
            for path in parsed:
                problems += self._parse(new[path], compile_now)
        if len(parsed) > 100:
            log.info("label %s: %d prompt files were published without a listing of this promptdeck's; they "
                     "were read and parsed (publish them again for a start that reads no files)", self.label,
                     len(parsed))
        self.followers.behind()
        return problems

    def _parse(self, entry: Entry, compile_now: bool) -> list[PromptFileError]:
        """(Holding the lock.) Parse an unlisted prompt file now; on failure its last good version stays."""
        if self.files.written.get(entry.path) != entry.version:  # left out when written: nothing new to parse
            return []
        assert self._library is not None
        try:
            data = self.files.read(entry.path, MAX_PROMPT_FILE_BYTES)
        except McpError as exc:
            return [PromptFileError(entry.path, exc.message)]
        parsed = build_prompt(self._library, entry.path, stage_file(entry.path, data), compile_now=compile_now)
        if parsed.prompt is None and not parsed.errors:  # a file its own tool offers as no prompt
            self._prompts.pop(entry.path, None)
            self.errors.pop(entry.path, None)
            return []
        if parsed.prompt is None:
            self.errors[entry.path] = parsed.errors
            if entry.path in self._prompts:
                log.error("%s; still serving its last good version", parsed.errors[0])
            return parsed.errors
        self.errors.pop(entry.path, None)
        self._prompts[entry.path] = parsed.prompt.with_meta({META_VERSION: entry.version, META_LABEL: self.label})
        return []

    def put(self, path: str, version: int, data: bytes, position: int) -> bool:
        """Write a file of ``position`` to the folder, if the label is still there; whether it is there now."""
        with self._lock:
            if position != self._position:
                return False
            return self.files.put(path, version, data)

    # -- reading on first need -------------------------------------------------------------------

    def read(self, what: Callable[[Store], T], position: int | None = None) -> T:
        """``what(store)`` through the reading connection, opened now if need be. A connection that fails
        is replaced and tried once more: after a database restart the old one is dead, not the store.

        With ``position``, a listing read: answered by the local copy of that position's listing when
        there is one (a PostgreSQL store's, see ``_write_rest``)."""
        if position is not None:
            with self._mirroring:
                if self._mirror is not None and self._mirrored == position:
                    return what(self._mirror)
        with self._reading:
            for attempt in (1, 2):
                try:
                    if self._reader is None:
                        # Short: this runs on a request's path, and an unreachable store must not hold it long.
                        self._reader = Store(self.url, timeout=READ_TIMEOUT_SECONDS)
                    return what(self._reader)
                except StoreError:
                    if self._reader is not None:
                        with contextlib.suppress(Exception):
                            self._reader.close()
                        self._reader = None
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable")

    def load_prompt(self, prompt: StoredPrompt) -> Prompt:
        """Parse the file of ``prompt`` (``StoredPrompt.parsed``): from the folder if written there,
        else from the store, and written to the folder if the label is still where it was."""
        path, version = prompt.source, prompt.version
        with self._lock:
            written = self.files.written.get(path) == version
        try:
            if written:
                data = self.files.read(path, MAX_PROMPT_FILE_BYTES)
            else:
                data = self.read(lambda store: store.reads.content(path, version))
                self.put(path, version, data, prompt.position)
        except (StoreError, McpError) as exc:
            log.error("prompt %r (%s, version %d of label %s) cannot be read: %s", prompt.name, path, version,
                      self.label, exc)
            raise McpError(f"prompt {prompt.name!r} cannot be read from the store now; try again",
                           code=INTERNAL_ERROR) from None
        assert self._library is not None
        parsed = build_prompt(self._library, path, stage_file(path, data), compile_now=True)
        if parsed.prompt is None:
            raise InternalError(f"prompt {prompt.name!r} (label {self.label}) no longer parses: {parsed.errors[0]}")
        if parsed.prompt.name != prompt.name or parsed.prompt.scopes != prompt.scopes:
            # Scopes decide who sees a prompt: a listing that disagrees with its file is never rendered.
            raise InternalError(f"the store's listing of {path} (version {version}) disagrees with the file: "
                                f"{prompt.name!r} {sorted(prompt.scopes)} listed, {parsed.prompt.name!r} "
                                f"{sorted(parsed.prompt.scopes)} parsed; publish it again")
        return parsed.prompt

    def _named(self, name: str) -> Offered | None:
        """The label's prompt ``name``, for ``prompt(NAME)`` in its templates: a prompt of the same label
        composes, at the label's current position."""
        with self._lock:
            if not self._listed or self._position is None:
                return next((p for p in self._prompts.values() if p.name == name), None)
            catalog = self._catalog
            if catalog is None or catalog.position != self._position:
                catalog = StoredCatalog(self, self._position, 50)
        return catalog.get(name)

    def _fetch_missing(self, path: str) -> bool:
        """A template asked for a file not in the folder: write it if the label has it (``LibraryRoot``)."""
        with self._lock:
            position, entry = self._position, self._entries.get(path)
            if position is None:
                return False
        try:
            version = entry.version if entry is not None else \
                self.read(lambda store: store.reads.version_at(position, path), position) if self._listed else None
            if version is None or self.files.written.get(path) == version:
                return False
            return self.put(path, version, self.read(lambda store: store.reads.content(path, version)), position)
        except StoreError as exc:
            log.error("file %r of label %s cannot be read from the store: %s", path, self.label, exc)
            return False

    def mirror(self, store: Store, position: int) -> None:
        """(The files thread's, for a listed label of a PostgreSQL store.) Copy the position's listing to a local
        SQLite file and read pages there from now on."""
        path = self.files.copy_listing(store, position)
        mirror = Store(f"sqlite:///{path}")
        with self._mirroring:
            old, self._mirror, self._mirrored = self._mirror, mirror, position
        if old is not None:
            old.close()
            self.files.drop_listing(sqlite_path(old.url))
        log.info("label %s: the listing of position %d is copied locally", self.label, position)

    # -- following the label ---------------------------------------------------------------------

    def sync(self, store: Store | None = None) -> bool:
        """Catch up with where the label points now; whether anything changed. ``store``: the follower's
        connection (a replica told of a move answers it without connecting anew); else one for this."""
        if store is None:
            with Store(self.url) as opened:
                return self.sync(opened)
        problems: list[PromptdeckError] = []
        head = store.reads.head(self.label)
        position = head[0] if head is not None else None
        skills_at = self._skills.position if self._skills is not None else position
        if position == self._position and position == skills_at:
            if not self.splits.follow(store, lambda: self.library):
                return False
            self.changed_at = time.time()  # a rollout started, changed or ended
            return True
        if position != self._position:
            if self._listed and head is not None and head[1]:
                self._move_listed(store, head[0])
            else:
                problems += self._load_all(store)
        if position is not None:  # the skills follow once the prompts have moved (or again, after a failure)
            problems += self._move_skills(store, position)
        for problem in problems:
            log.error("%s (label %s)", problem, self.label)
        log.info("label %s moved to position %s", self.label, position)
        self.splits.follow(store, lambda: self.library)
        self.changed_at = time.time()
        if self._changed is not None:
            self._changed()
        return True

    def _move_skills(self, store: Store, position: int) -> list[PromptdeckError]:
        """Serve the skills of ``position`` (written to the folder first); the problems found."""
        return [*self._skills.move(store.reads, position)] if self._skills is not None else []


__all__ = ["META_LABEL", "META_VERSION", "StoreError", "StoreSource"]
