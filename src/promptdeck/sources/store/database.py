"""A versioned prompt store: every published file a numbered version, labels that point at versions.

One schema, two databases: SQLite (``sqlite:///path.db`` or a path ending in
``.db``; embedded, for one machine) and PostgreSQL (``postgresql://…``; for
teams and replicas, through psycopg 3, whose blocking API fits the ``Source``
seam and whose ``notifies()`` carries LISTEN/NOTIFY).

What is versioned is the library's files, as ``serve FOLDER`` reads them:
prompt files and the material they embed or read (every non-hidden regular
file). A publish is one transaction: it records a new version of every file
whose bytes changed and a deletion for every file gone, under one publish
number with author, time and message. A label (``production``, ``staging``)
is a sequence of positions; each position names one version of every file,
so a label moves all its prompts at once, and rolling back restores the
position before the current one. Files are stored once per content digest.

Writers take the store's lock first (``BEGIN IMMEDIATE`` in SQLite, a table
lock in PostgreSQL), so two publishers never interleave; a reader sees only
committed positions, and a crash mid-publish leaves nothing behind. A label
move sends ``NOTIFY promptdeck_labels`` in PostgreSQL, delivered at commit.

The modules of this package: ``schema`` (tables and migrations), ``model`` (the values and errors),
``urls`` (store URLs and their secrets), ``connection`` (``Connection``: the dialect, the lock, the schema
check), ``reads`` (``Reads``: the queries), ``governance`` (``Governance``: label moves and their audit,
protected labels, rollouts), ``proposals`` and ``reviews`` (proposals, their reviews, and the approvals a
label may require of its moves), ``events``, ``webhooks`` and ``delivery`` (the outbox and its sending), this
module (``Store``, composing them, and the writes: publish, label, rollback), ``ledger`` (replicas'
requestState nonces), ``folder`` (a library folder as a publish reads it), and ``source``, ``followers``
and ``catalog`` (a label served as a ``Source``).

Each part takes the connection rather than inheriting it: ``store.reads.latest()``,
``store.governance.protect(…)``, ``store.db.rows(…)``.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Collection
from typing import Self

from .connection import Connection
from .event_kinds import GitProvenance, Published
from .events import changed_prompts, emit, listening, seen_changes, short
from .governance import Governance
from .model import (
    _NEW,
    Guard,
    Latest,
    Listed,
    MoveRule,
    Position,
    StoreConflict,
    StoreError,
    StoreMissing,
    is_safe_path,
)
from .proposals import Proposals
from .provenance import Provenance
from .reads import Reads
from .sync import Checks, check_base, check_deletions, record_base, stored_base

log = logging.getLogger("promptdeck.store")

class Store:
    """One store, opened from its URL: its connection (``db``), its queries (``reads``), its governance
    (``governance``), and the writes that record versions. Methods that write are one transaction each."""

    __slots__ = ("db", "reads", "governance", "proposals")

    def __init__(self, url: str, *, create: bool = False, timeout: float = 10) -> None:
        """Open the store; with ``create``, make (or upgrade) its schema where needed. ``timeout``: how long
        connecting to a PostgreSQL store may take, in seconds."""
        self.db = Connection(url, create=create, timeout=timeout)
        self.reads = Reads(self.db)
        self.governance = Governance(self.db, self.reads)
        self.proposals = Proposals(self.db, self.reads, self.governance)

    @property
    def url(self) -> str:
        return self.db.url

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def publish(self, files: dict[str, bytes], prompts: dict[str, Listed], *, author: str, message: str,
                label: str | None = None, inputs: Collection[str] = (), checks: Checks | None = None,
                provenance: Provenance | None = None) -> tuple[int | None, list[str]]:
        """Record ``files`` (path -> bytes; ``prompts``: path -> its listing) as the library's new state.
        ``inputs``: prompt files whose bytes may be the same but whose parts changed (``parts.users_of_changes``):
        each gets a new version too (its bytes and listing as before), so its version says its render changed.

        Returns (the publish number, or None when nothing changed; the paths that changed). With
        ``label``, the label moves to the whole new state (unless it points there already). A prompt
        file whose bytes did not change but whose listing did (it was published by another promptdeck)
        gets the new listing in place: a listing is derived from the bytes, not a version of its own.

        With ``checks`` (``publish`` from a folder), before anything is written (``sync``): with ``label``, a
        publish whose base (``checks.base``, else the label's base the store records) is an older position of
        the label, where the label since changed what the publish would change again, is refused unless
        ``checks.force``; so is one that would delete more than half of the label's prompts (without ``label``:
        of the store's newest), unless ``checks.delete`` (``PublishRefused``).
        ``provenance``: the folder's git commit, branch and dirtiness, recorded with the publish.
        """
        for path in files:
            if not is_safe_path(path):
                raise StoreError(f"{path!r} is not a library path (relative, '/'-separated, no hidden or '..' parts)")
        with self.db.transaction():
            current = self.reads.latest()
            if checks is not None:
                self._may_publish(files, current, label, checks)
            changed: list[tuple[str, int, str | None]] = []
            bumped: list[tuple[str, int, str | None]] = []
            relisted: list[tuple[str | None, str | None, str, int]] = []
            for path, data in sorted(files.items()):
                digest = hashlib.sha256(data).hexdigest()
                version, known, listed, _ = current.get(path, _NEW)
                if known != digest:
                    changed.append((path, version + 1, digest))
                    self.db.run("INSERT INTO blobs (digest, data) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING",
                                digest, data)
                    continue
                if path in inputs:
                    bumped.append((path, version + 1, digest))
                if path in prompts and not listed:
                    relisted.append((prompts[path].listing, prompts[path].scopes, path, version))
            for path, (version, last, _, _) in sorted(current.items()):
                if last is not None and path not in files:
                    changed.append((path, version + 1, None))
            if changed:  # a part's change is a change of its users (none without a change of a part)
                changed += bumped
            if relisted:
                self.db.many("UPDATE files SET listing = ?, scopes = ? WHERE path = ? AND version = ?", relisted)
                self.db.many("UPDATE position_files SET scopes = ? WHERE path = ? AND version = ?",
                             [row[1:] for row in relisted])
                for (current,) in self.db.rows("SELECT MAX(id) FROM positions GROUP BY label"):
                    self.governance.summarize(int(current))
            publish_id: int | None = None
            if changed:
                git = provenance or (None, None, None)
                publish_id = int(self.db.run("INSERT INTO publishes (author, message, created, git_commit, git_branch, "
                                             "git_dirty) VALUES (?, ?, ?, ?, ?, ?) RETURNING id", author, message,
                                             time.time(), git[0], git[1],
                                             None if git[2] is None else int(git[2])).fetchone()[0])
                rows = []
                for path, version, stored in changed:
                    listed_now = prompts.get(path) if stored else None
                    if listed_now is None and stored and path in inputs:  # same bytes: the same listing as before
                        listed_now = self._listed(path, version - 1)
                    # A prompt's name from this folder's load; kept from before for deletions and other files.
                    name = listed_now.name if listed_now else self._prompt_of(path)
                    rows.append((path, version, publish_id, name, stored,
                                 listed_now.listing if listed_now else None, listed_now.scopes if listed_now else None))
                self.db.many("INSERT INTO files (path, version, publish, prompt, digest, listing, scopes) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                self._published(publish_id, {path: version for path, version, _ in changed}, author, message, label,
                                provenance)
            if label is not None:
                state = {path: newest.version for path, newest in self.reads.latest().items() if path in files}
                moved = self.governance.release(label, state, author,
                                                f"publish {publish_id}" if publish_id else "publish (unchanged)",
                                                message)
                record_base(self.db, label, moved or self.reads.require_position(label), author)
        return publish_id, sorted(path for path, _, _ in changed)

    def publish_file(self, path: str, data: bytes, listed: Listed | None, *, author: str, message: str,
                     base: int | None = None, label: str | None = None, seen: Callable[[int], bool] | None = None,
                     allow: MoveRule | None = None, guard: Guard | None = None) -> tuple[int, int | None]:
        """Record a new version of the one file ``path`` (the web editor's save); every other file stays.

        Returns (the file's version now, the publish number or None when ``data`` is its newest version
        already). ``base``: the version the edit started from; when the file has a newer one, nothing is
        recorded (``StoreConflict``), so one person's save never silently undoes another's. ``seen``: which
        versions the author may see; ``base`` is held to the newest of those, and the conflict names no
        other. With ``label``, the label points at the file's new version and the rest of the label stays
        (``allow`` may refuse that move).
        """
        if not is_safe_path(path):
            raise StoreError(f"{path!r} is not a library path (relative, '/'-separated, no hidden or '..' parts)")
        digest = hashlib.sha256(data).hexdigest()
        with self.db.transaction():
            version, known, _, _ = self.reads.latest().get(path, _NEW)
            newest = version
            while seen is not None and newest > 0 and not seen(newest):
                newest -= 1
            if base is not None and base != newest:
                rows = self.db.rows("SELECT p.author FROM files f JOIN publishes p ON p.id = f.publish "
                                    "WHERE f.path = ? AND f.version = ?", path, newest)
                who = f" by {rows[0][0]}" if rows else ""
                raise StoreConflict(f"{path} has a newer version {newest}{who} than the version {base} "
                                    "you edited; nothing was saved. Open the newest version and edit it again")
            publish_id: int | None = None
            if known != digest:
                self.db.run("INSERT INTO blobs (digest, data) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING",
                            digest, data)
                publish_id = int(self.db.run("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?) "
                                             "RETURNING id", author, message, time.time()).fetchone()[0])
                version += 1
                self.db.run("INSERT INTO files (path, version, publish, prompt, digest, listing, scopes) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", path, version, publish_id,
                            listed.name if listed else self._prompt_of(path), digest,
                            listed.listing if listed else None, listed.scopes if listed else None)
                self._published(publish_id, {path: version}, author, message, label)
            if label is not None:
                self._point(label, path, version, author,
                            f"publish {publish_id}" if publish_id else f"label {path}@{version}", message, allow, guard)
        return version, publish_id

    def _may_publish(self, files: dict[str, bytes], latest: dict[str, Latest], label: str | None,
                     checks: Checks) -> None:
        """(Inside the publish's transaction, before it writes.) ``sync.check_base`` and ``sync.check_deletions``."""
        now = self.reads.position(label) if label is not None else None
        if now is not None and not checks.force:
            base = checks.base if checks.base is not None else stored_base(self.db, now.label)
            check_base(self.db, self.reads, now.label, base, files, now.id, now.files)
        if checks.delete:
            return
        if now is not None:
            names = dict(self.db.rows("SELECT path, name FROM position_files WHERE position = ?", now.id))
            check_deletions(self.db, f"label {now.label!r}", {p: (v, names.get(p)) for p, v in now.files.items()},
                            files)
        elif label is None:
            check_deletions(self.db, "the store's newest library",
                            {p: (n.version, n.prompt) for p, n in latest.items() if n.digest is not None}, files)

    def record_base(self, label: str, position: int, author: str) -> None:
        """Record ``position`` of ``label`` (the one a pull wrote into a folder) as the label's base."""
        with self.db.transaction():
            rows = self.db.rows("SELECT label FROM positions WHERE id = ?", position)
            if not rows or rows[0][0] != label:
                raise StoreMissing(f"position {position} is not one of label {label!r}'s")
            record_base(self.db, label, position, author)

    def _published(self, publish_id: int, versions: dict[str, int], author: str, message: str,
                   label: str | None, provenance: Provenance | None = None) -> None:
        """(Inside the publish's transaction.) The ``publish`` event: its new versions (path -> version)."""
        if not listening(self.db, "publish"):
            return
        before = {p: v - 1 for p, v in versions.items() if v > 1}
        prompts, truncated = changed_prompts(self.db, before, versions)
        emit(self.db, "publish", Published(publish=publish_id, author=author, message=short(message), label=label,
                                           files=len(versions), prompts=prompts, truncated=truncated,
                                           git=None if provenance is None else GitProvenance(
                                               commit=provenance.commit, branch=provenance.branch,
                                               dirty=provenance.dirty)),
             seen_changes(self.reads, before, versions))

    def _listed(self, path: str, version: int) -> Listed | None:
        rows = self.db.rows("SELECT prompt, listing, scopes FROM files WHERE path = ? AND version = ?", path, version)
        return Listed(*rows[0]) if rows and rows[0][0] is not None and rows[0][1] is not None else None

    def _prompt_of(self, path: str) -> str | None:
        rows = self.db.rows("SELECT prompt FROM files WHERE path = ? ORDER BY version DESC LIMIT 1", path)
        return rows[0][0] if rows else None

    def label(self, prompt: str, version: int | None, label: str, *, author: str, allow: MoveRule | None = None,
              message: str = "", guard: Guard | None = None) -> int:
        """Point ``label`` at one version of one prompt (its newest when None), the rest unchanged."""
        with self.db.transaction():
            path, found, data = self.reads.version_of(prompt, version)
            if data is None:
                raise StoreConflict(f"version {found} of {prompt!r} is its deletion; choose a version that has it")
            self._point(label, path, found, author, f"label {prompt}@{found}", message, allow, guard)
        return found

    def _point(self, label: str, path: str, version: int, author: str, reason: str, message: str = "",
                allow: MoveRule | None = None, guard: Guard | None = None) -> None:
        """(Inside a write transaction.) Point ``label`` at ``version`` of ``path``; its other files stay."""
        now = self.reads.position(label)
        files = dict(now.files) if now is not None else {}
        files[path] = version
        self.governance.release(label, files, author, reason, message, allow, now, guard)

    def rollback(self, label: str, *, author: str, allow: MoveRule | None = None, message: str = "",
                 guard: Guard | None = None) -> Position:
        """Point ``label`` where it pointed before its current position; that position."""
        with self.db.transaction():
            before = self.reads.position(label, back=1)
            if before is None:
                if guard is not None:  # a label the writer may not move is refused as such, first
                    guard(self.governance.protection(label))
                raise StoreConflict(f"label {label!r} has no earlier position to roll back to")
            self.governance.release(label, before.files, author, f"rollback to position {before.id}", message, allow,
                                    guard=guard, event="rollback")
        return before
