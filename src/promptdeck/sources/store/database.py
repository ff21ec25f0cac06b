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
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ...protocol.errors import LibraryError
from ..files.paths import READ_FLAGS, is_prompt_path, may_hold_prompts, read_confined, read_opened

if TYPE_CHECKING:
    from ...prompts.spec import Prompt

log = logging.getLogger("promptdeck.store")

#: The schema this promptdeck writes; a store with a newer one is refused, an older one needs
#: ``promptdeck store upgrade``.
SCHEMA_VERSION = 3
#: The PostgreSQL channel a label move is announced on (its payload: the label's name).
CHANNEL = "promptdeck_labels"
#: The largest file a library may hold (prompt files have their own, smaller limit when parsed).
MAX_FILE_BYTES = 10 * 1024 * 1024
#: A label's name (``is_label``): 1-64 letters, digits, '_', '-' and '.', not starting with '-' or '.'.
_LABEL_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}\Z")

_SCHEMA = [
    "CREATE TABLE promptdeck_schema (version INTEGER NOT NULL)",
    "CREATE TABLE publishes (id {serial} PRIMARY KEY, author TEXT NOT NULL, message TEXT NOT NULL, "
    "created DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE blobs (digest TEXT PRIMARY KEY, data {blob} NOT NULL)",
    # digest NULL: the file was deleted in that version.
    "CREATE TABLE files (path TEXT NOT NULL, version INTEGER NOT NULL, publish INTEGER NOT NULL "
    "REFERENCES publishes(id), prompt TEXT, digest TEXT REFERENCES blobs(digest), PRIMARY KEY (path, version))",
    "CREATE TABLE positions (id {serial} PRIMARY KEY, label TEXT NOT NULL, author TEXT NOT NULL, "
    "reason TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX positions_by_label ON positions (label, id)",
    "CREATE TABLE position_files (position INTEGER NOT NULL REFERENCES positions(id), path TEXT NOT NULL, "
    "version INTEGER NOT NULL, PRIMARY KEY (position, path))",
]
#: What each schema version adds to the one before, applied in order by ``upgrade`` in one transaction.
_MIGRATIONS: dict[int, list[str]] = {
    1: _SCHEMA,
    # 2: requestState single use across replicas (``StateLedger``), and the key replicas sign states with.
    2: ["CREATE TABLE used_states (nonce TEXT PRIMARY KEY, principal TEXT NOT NULL, "
        "expires DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX used_states_by_principal ON used_states (principal, expires)",
        "CREATE TABLE state_key (key TEXT NOT NULL)"],
    # 3: each prompt file's listing entry and scopes, written at publish, so a server lists a label
    # without reading its files (``StoreSource``); NULL where an older promptdeck published.
    # A position's prompt names and scopes sit beside its files, indexed, so a server pages a label's
    # listing straight from the database (``StoredCatalog``).
    3: ["ALTER TABLE files ADD COLUMN listing TEXT",
        "ALTER TABLE files ADD COLUMN scopes TEXT",
        "ALTER TABLE position_files ADD COLUMN name TEXT{bytewise}",
        "ALTER TABLE position_files ADD COLUMN scopes TEXT",
        "UPDATE position_files SET name = (SELECT f.prompt FROM files f WHERE f.path = position_files.path "
        "AND f.version = position_files.version)",
        "CREATE INDEX position_files_by_name ON position_files (position, name)",
        # Whether every prompt file of the position has a listing (of which format), and the distinct
        # scope sets its prompts carry (a JSON list): what a server needs before its first page.
        "ALTER TABLE positions ADD COLUMN listing_format INTEGER",
        "ALTER TABLE positions ADD COLUMN scope_sets TEXT"],
}
#: The shape of ``files.listing``: '{"v":FORMAT,"d":<Prompt.listing()>}'. A listing of another format
#: (another promptdeck's) is not used; the server reads the files instead.
LISTING_FORMAT = 1
LISTING_HEAD = f'{{"v":{LISTING_FORMAT},'


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


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql:", "postgres:"))


class Store:
    """One store, opened from its URL. Methods that write are one transaction each."""

    def __init__(self, url: str, *, create: bool = False, timeout: float = 10) -> None:
        """Open the store; with ``create``, make (or upgrade) its schema where needed. ``timeout``: how long
        connecting to a PostgreSQL store may take, in seconds."""
        self.url = url
        self.timeout = timeout
        self.postgres = is_postgres_url(url)
        self._errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
        self._conn: Any = self._connect(create)
        #: the schema version ``upgrade`` found (0: none), when this opening upgraded the store
        self.upgraded_from: int | None = None
        self._check_schema(create)

    # -- connecting ------------------------------------------------------------------------------

    def _connect(self, create: bool) -> Any:
        if self.postgres:
            try:
                import psycopg
            except ImportError:
                raise StoreError("a PostgreSQL store needs the store extra: pip install 'promptdeck[store]'") from None
            self._errors = (psycopg.Error,)
            try:
                return psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, round(self.timeout)))
            except psycopg.Error as exc:
                raise StoreError(f"cannot reach the store {shown_url(self.url)}: {self._why(exc)}") from None
        path = sqlite_path(self.url)
        if not create and not os.path.exists(path):
            # shown_url: a mistyped postgresql:// URL is taken for a path, password and all.
            raise StoreError(f"no store at {shown_url(path)!r} (publish to it first, or run "
                             "`promptdeck store upgrade`)")
        try:
            if create:
                _create_private(path)
            else:
                _warn_if_readable(path)
            conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {shown_url(path)!r}: {exc}") from None
        except OSError as exc:
            raise StoreError(f"cannot create the store {shown_url(path)!r}: {exc.strerror}") from None
        return conn

    def _why(self, exc: BaseException) -> str:
        """The first line of a driver's error, without the secrets of this store's URL."""
        return without_secrets(_first_line(exc), self.url)

    @property
    def connection(self) -> Any:
        """The driver's connection (sqlite3 or psycopg), for what the store's methods do not cover."""
        return self._conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    def _rows(self, statement: str, *args: Any) -> list[tuple[Any, ...]]:
        return list(self._run(statement, *args).fetchall())

    def _run(self, statement: str, *args: Any) -> Any:
        try:
            return self._conn.execute(self._sql(statement), args)
        except self._errors as exc:
            # One line naming the store, never a driver traceback: a full disk, a lost connection.
            raise StoreError(f"the store {shown_url(self.url)} failed: {self._why(exc)}") from exc

    @contextmanager
    def _writing(self, lock: str = "LOCK TABLE publishes IN EXCLUSIVE MODE") -> Iterator[None]:
        """One write transaction, holding the store's lock: publishers and label moves queue here.

        SQLite's ``BEGIN IMMEDIATE`` takes the database's one write lock; in PostgreSQL ``lock`` does.
        """
        self._run("BEGIN" if self.postgres else "BEGIN IMMEDIATE")
        try:
            if self.postgres:
                self._run(lock)
            yield
        except BaseException:
            with suppress(StoreError):  # the database may have ended the transaction itself (SQLite I/O errors)
                self._run("ROLLBACK")
            raise
        self._run("COMMIT")

    # -- schema ----------------------------------------------------------------------------------

    def _schema_version(self) -> int | None:
        """The store's schema version; None when it has no promptdeck schema at all."""
        if self.postgres:
            present = self._rows("SELECT to_regclass('promptdeck_schema') IS NOT NULL")[0][0]
        else:
            present = bool(self._rows("SELECT 1 FROM sqlite_master WHERE name = 'promptdeck_schema'"))
        if not present:
            return None
        rows = self._rows("SELECT version FROM promptdeck_schema")
        return int(rows[0][0]) if rows else None

    def _check_schema(self, create: bool) -> None:
        version = self._schema_version()
        if version is None:
            if not create:
                raise StoreError(f"{shown_url(self.url)} is not a promptdeck store yet (publish to it, or run "
                                 "`promptdeck store upgrade`)")
            self.upgrade()
            return
        if version > SCHEMA_VERSION:
            raise StoreError(f"the store {shown_url(self.url)} has schema {version}, made by a newer promptdeck; "
                             f"this one knows schema {SCHEMA_VERSION} at most: upgrade promptdeck")
        if version < SCHEMA_VERSION and create:
            self.upgrade()
        elif version < SCHEMA_VERSION:
            raise StoreError(f"the store {shown_url(self.url)} has schema {version}: run `promptdeck store upgrade "
                             f"{shown_url(self.url)}` first")

    def upgrade(self) -> int:
        """Bring the schema to ``SCHEMA_VERSION``; the version it had (0: none)."""
        # Two first publishers at once: one creates the schema, the other waits for it and finds it (no
        # table exists yet to lock, so an advisory lock).
        with self._writing("SELECT pg_advisory_xact_lock(7151)"):
            found = self._schema_version() or 0
            if found > SCHEMA_VERSION:
                raise StoreError(f"the store has schema {found}, newer than this promptdeck's {SCHEMA_VERSION}")
            serial = "BIGSERIAL" if self.postgres else "INTEGER"
            blob = "BYTEA" if self.postgres else "BLOB"
            # Names compare byte by byte in both databases (SQLite's default), as Python sorts them: pages
            # come out in the order cursors assume, whatever the PostgreSQL database's locale.
            bytewise = ' COLLATE "C"' if self.postgres else ""
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[version]:
                    self._run(statement.format(serial=serial, blob=blob, bytewise=bytewise))
                if version == 2:
                    self._run("INSERT INTO state_key (key) VALUES (?)", secrets.token_urlsafe(32))
            if found == 0:
                self._run("INSERT INTO promptdeck_schema (version) VALUES (?)", SCHEMA_VERSION)
            elif found < SCHEMA_VERSION:
                self._run("UPDATE promptdeck_schema SET version = ?", SCHEMA_VERSION)
            self.upgraded_from = found
            return found

    # -- reading ---------------------------------------------------------------------------------

    def latest(self) -> dict[str, Latest]:
        """Every path's newest version."""
        rows = self._rows("SELECT f.path, f.version, f.digest, coalesce(substr(f.listing, 1, ?) = ?, false), f.prompt "
                          "FROM files f JOIN (SELECT path, MAX(version) AS v FROM files GROUP BY path) m "
                          "ON f.path = m.path AND f.version = m.v", len(LISTING_HEAD), LISTING_HEAD)
        new = tuple.__new__  # a Latest of each row without NamedTuple's Python-level __new__: 100,000 rows
        return {row[0]: new(Latest, (row[1], row[2], bool(row[3]), row[4])) for row in rows}

    def position(self, label: str, back: int = 0) -> Position | None:
        """Where ``label`` points now (``back`` = 1: the position before), or None."""
        rows = self._rows("SELECT id, reason, author, created FROM positions WHERE label = ? ORDER BY id DESC "
                          "LIMIT 1 OFFSET ?", label, back)
        if not rows:
            return None
        position_id, reason, author, created = rows[0]
        files = dict(self._rows("SELECT path, version FROM position_files WHERE position = ?", position_id))
        return Position(int(position_id), label, reason, author, float(created), files)

    def position_id(self, label: str) -> int | None:
        rows = self._rows("SELECT MAX(id) FROM positions WHERE label = ?", label)
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    def labels(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT DISTINCT label FROM positions ORDER BY label")]

    def require_position(self, label: str) -> int:
        """Where ``label`` points now; ``StoreError`` naming the labels there are if it is unknown."""
        position_id = self.position_id(label)
        if position_id is None:
            raise StoreMissing(f"no label {label!r} in the store (labels: {', '.join(self.labels()) or 'none'})")
        return position_id

    def snapshot(self, label: str) -> dict[str, tuple[int, bytes]]:
        """The files a label points at: path -> (version, bytes)."""
        # A blob larger than publish allows is never fetched: the database may have been written by another tool.
        rows = self._rows("SELECT pf.path, pf.version, CASE WHEN length(b.data) <= ? THEN b.data END "
                          "FROM position_files pf JOIN files f ON f.path = pf.path AND f.version = pf.version "
                          "JOIN blobs b ON b.digest = f.digest WHERE pf.position = ?", MAX_FILE_BYTES,
                          self.require_position(label))
        return dict(_usable(rows))

    def entries(self, label: str) -> tuple[int, list[Entry]]:
        """Where ``label`` points: its position, and the files there without their bytes."""
        position_id = self.require_position(label)
        rows = self._rows("SELECT pf.path, pf.version, f.prompt, f.listing, f.scopes FROM position_files pf "
                          "JOIN files f ON f.path = pf.path AND f.version = pf.version WHERE pf.position = ?",
                          position_id)
        out = []
        for path, version, prompt, listing, scopes in rows:
            if is_safe_path(path):
                out.append(Entry(path, int(version), prompt, listing, scopes))
            else:
                log.error("the store holds a file at %r, which is not a library path; it is left out", path)
        return position_id, out

    def contents(self, position_id: int, *, after: str = "", limit: int = 500, unlisted: bool = False,
                 material: bool = False) -> list[tuple[str, int, bytes]]:
        """Up to ``limit`` files of a position, in path order after ``after``: (path, version, bytes).
        With ``unlisted``, only files without a listing (material, and prompt files of older
        promptdecks); with ``material``, only files that are not prompts. Paged, so a large library is
        never in memory at once."""
        # Material is found by the name index (a position's few files without a name), not by walking
        # all its paths: SQLite's unary + keeps the path index out of the plan (PostgreSQL has no need).
        path = "+pf.path" if material and not self.postgres else "pf.path"
        rows = self._rows("SELECT pf.path, pf.version, CASE WHEN length(b.data) <= ? THEN b.data END "
                          "FROM position_files pf JOIN files f ON f.path = pf.path AND f.version = pf.version "
                          f"JOIN blobs b ON b.digest = f.digest WHERE pf.position = ? AND {path} > ?"
                          + (" AND f.listing IS NULL" if unlisted else "")
                          + (" AND pf.name IS NULL" if material else "") + f" ORDER BY {path} LIMIT ?",
                          MAX_FILE_BYTES, position_id, after, limit)
        return [(path, version, data) for path, (version, data) in _usable(rows)]

    # -- a position's listing, paged by name (``StoredCatalog``) ---------------------------------

    def head(self, label: str) -> tuple[int, bool] | None:
        """Where ``label`` points now and whether that position is fully listed (``fully_listed``); one
        query, for a replica told that a label moved."""
        rows = self._rows("SELECT id, listing_format FROM positions WHERE label = ? ORDER BY id DESC LIMIT 1", label)
        return (int(rows[0][0]), rows[0][1] == LISTING_FORMAT) if rows else None

    def fully_listed(self, position_id: int) -> bool:
        """Whether every prompt file of the position has a listing of this promptdeck's format."""
        rows = self._rows("SELECT listing_format FROM positions WHERE id = ?", position_id)
        return bool(rows) and rows[0][0] == LISTING_FORMAT

    def listed(self, position_id: int, *, after: str = "", name: str | None = None, limit: int = 1,
               scopes: Sequence[str] | None = None) -> list[Entry]:
        """The position's prompts in name order after ``after`` (or the one called ``name``), up to
        ``limit``; with ``scopes``, only those without scopes or with one of these scope sets."""
        where = "pf.name = ?" if name is not None else "pf.name > ?"
        args: list[Any] = [position_id, name if name is not None else after]
        if scopes is not None:
            where += f" AND (pf.scopes = '' OR pf.scopes IN ({', '.join('?' * len(scopes)) or 'NULL'}))"
            args += scopes
        rows = self._rows("SELECT pf.path, pf.version, pf.name, f.listing, pf.scopes FROM position_files pf JOIN files "
                          f"f ON f.path = pf.path AND f.version = pf.version WHERE pf.position = ? AND {where} "
                          "ORDER BY pf.name LIMIT ?", *args, limit)
        return [Entry(path, int(version), prompt, listing, scopes_) for path, version, prompt, listing, scopes_ in rows
                if is_safe_path(path)]

    def listed_count(self, position_id: int, scopes: Sequence[str] | None = None) -> int:
        where, args = "", []
        if scopes is not None:
            where = f" AND (scopes = '' OR scopes IN ({', '.join('?' * len(scopes)) or 'NULL'}))"
            args = list(scopes)
        return int(self._rows(f"SELECT count(*) FROM position_files WHERE position = ? AND name IS NOT NULL{where}",
                              position_id, *args)[0][0])

    def scope_sets(self, position_id: int) -> list[str]:
        """The distinct non-empty scope sets of the position's prompts (each space-separated, sorted)."""
        rows = self._rows("SELECT scope_sets FROM positions WHERE id = ?", position_id)
        sets = json.loads(rows[0][0]) if rows and rows[0][0] else []
        return [s for s in sets if isinstance(s, str)]

    def versions_at(self, position_id: int) -> dict[str, int]:
        """Every file of a position: path -> version."""
        return dict(self._rows("SELECT path, version FROM position_files WHERE position = ?", position_id))

    def version_at(self, position_id: int, path: str) -> int | None:
        rows = self._rows("SELECT version FROM position_files WHERE position = ? AND path = ?", position_id, path)
        return int(rows[0][0]) if rows else None

    def copy_listing(self, position_id: int, path: str) -> None:
        """Make a SQLite store at ``path`` (new) holding ``position_id``'s listing and nothing else, no file
        contents: what a replica of a PostgreSQL store pages from locally (see ``StoreSource``)."""
        head = self._rows("SELECT id, label, author, reason, created, listing_format, scope_sets FROM positions "
                          "WHERE id = ?", position_id)
        rows = self._rows("SELECT pf.path, pf.version, pf.name, pf.scopes, f.listing FROM position_files pf JOIN "
                          "files f ON f.path = pf.path AND f.version = pf.version WHERE pf.position = ?", position_id)
        Store(f"sqlite:///{path}", create=True).close()
        conn = sqlite3.connect(path)  # no foreign keys: the mirror has no publishes or blobs
        try:
            with conn:
                conn.execute("INSERT INTO positions (id, label, author, reason, created, listing_format, scope_sets) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", head[0])
                conn.executemany("INSERT INTO position_files (position, path, version, name, scopes) "
                                 "VALUES (?, ?, ?, ?, ?)", [(position_id, *row[:4]) for row in rows])
                conn.executemany("INSERT INTO files (path, version, publish, prompt, listing, scopes) "
                                 "VALUES (?, ?, 0, ?, ?, ?)", [(p, v, n, listing, sc) for p, v, n, sc, listing in rows])
        finally:
            conn.close()

    def content(self, path: str, version: int) -> bytes:
        """The bytes of one version of one file."""
        rows = self._rows("SELECT CASE WHEN length(b.data) <= ? THEN b.data END FROM files f JOIN blobs b "
                          "ON b.digest = f.digest WHERE f.path = ? AND f.version = ?", MAX_FILE_BYTES, path, version)
        if not rows:
            raise StoreMissing(f"the store has no version {version} of {path!r}")
        if rows[0][0] is None:
            raise StoreError(f"the store holds {path!r} larger than {MAX_FILE_BYTES} bytes")
        return bytes(rows[0][0])

    def history(self, prompt: str | None = None) -> list[FileVersion]:
        """Versions, newest first: of one prompt (by name or path), or of every file."""
        query = ("SELECT f.path, f.version, f.publish, f.prompt, f.digest, p.author, p.message, p.created, f.scopes "
                 "FROM files f JOIN publishes p ON p.id = f.publish")
        args: tuple[Any, ...] = ()
        if prompt is not None:
            path = self.path_of(prompt)
            query += " WHERE f.path = ?"
            args = (path,)
        rows = self._rows(query + " ORDER BY f.publish DESC, f.path", *args)
        return [FileVersion(r[0], int(r[1]), int(r[2]), r[3], r[4], r[5], r[6], float(r[7]), r[8]) for r in rows]

    def recorded(self, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Recorded]:
        """What the store records of each (path, version) that it has: its prompt name, digest and scopes."""
        wanted = set(pairs)
        paths = sorted({path for path, _ in wanted})
        out: dict[tuple[str, int], Recorded] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            rows = self._rows(f"SELECT path, version, prompt, digest, scopes FROM files WHERE path IN "
                              f"({', '.join('?' * len(chunk))})", *chunk)
            for path, version, prompt, digest, scopes in rows:
                if (path, int(version)) in wanted:
                    out[path, int(version)] = Recorded(prompt, digest, scopes)
        return out

    def path_of(self, prompt: str) -> str:
        """The file a prompt name (or a path) stands for."""
        rows = self._rows("SELECT path FROM files WHERE prompt = ? OR path = ? ORDER BY publish DESC LIMIT 1",
                          prompt, prompt)
        if not rows:
            raise StoreMissing(f"no prompt {prompt!r} in the store")
        return str(rows[0][0])

    def version_of(self, prompt: str, version: int | None) -> tuple[str, int, bytes | None]:
        """(path, version, bytes; None for a deletion) of a prompt's version (the newest when None)."""
        path = self.path_of(prompt)
        return (path, *self.file_version(path, version, prompt))

    def file_version(self, path: str, version: int | None, shown: str | None = None) -> tuple[int, bytes | None]:
        """(version, bytes; None for a deletion) of a file's version (the newest when None)."""
        prompt = shown or path
        if version is None:
            rows = self._rows("SELECT version, digest FROM files WHERE path = ? ORDER BY version DESC LIMIT 1", path)
        else:
            rows = self._rows("SELECT version, digest FROM files WHERE path = ? AND version = ?", path, version)
        if not rows:
            raise no_version(prompt, version)
        found, digest = int(rows[0][0]), rows[0][1]
        if digest is None:
            return found, None
        data = self._rows("SELECT CASE WHEN length(data) <= ? THEN data END FROM blobs WHERE digest = ?",
                          MAX_FILE_BYTES, digest)[0][0]
        if data is None:
            raise StoreError(f"the store holds {path!r} larger than {MAX_FILE_BYTES} bytes")
        return found, bytes(data)

    def labels_at(self, path: str) -> dict[int, list[str]]:
        """The labels pointing at each version of ``path`` now: version -> labels, sorted."""
        rows = self._rows("SELECT p.label, pf.version FROM positions p JOIN position_files pf ON pf.position = p.id "
                          "WHERE p.id IN (SELECT MAX(id) FROM positions GROUP BY label) AND pf.path = ? "
                          "ORDER BY p.label", path)
        out: dict[int, list[str]] = {}
        for label, version in rows:
            out.setdefault(int(version), []).append(label)
        return out

    def label_moves(self) -> list[tuple[Move, Move | None]]:
        """Every label, sorted: where it points now and where it pointed before (what a rollback restores)."""
        rows = self._rows("SELECT id, label, reason, author, created FROM (SELECT id, label, reason, author, created, "
                          "ROW_NUMBER() OVER (PARTITION BY label ORDER BY id DESC) AS back FROM positions) recent "
                          "WHERE back <= 2 ORDER BY label, id DESC")
        moves: dict[str, list[Move]] = {}
        for position_id, label, reason, author, created in rows:
            moves.setdefault(label, []).append(Move(int(position_id), label, reason, author, float(created)))
        return [(now[0], now[1] if len(now) > 1 else None) for now in moves.values()]

    # -- writing ---------------------------------------------------------------------------------

    def publish(self, files: dict[str, bytes], prompts: dict[str, Listed], *, author: str, message: str,
                label: str | None = None) -> tuple[int | None, list[str]]:
        """Record ``files`` (path -> bytes; ``prompts``: path -> its listing) as the library's new state.

        Returns (the publish number, or None when nothing changed; the paths that changed). With
        ``label``, the label moves to the whole new state (unless it points there already). A prompt
        file whose bytes did not change but whose listing did (it was published by another promptdeck)
        gets the new listing in place: a listing is derived from the bytes, not a version of its own.
        """
        for path in files:
            if not is_safe_path(path):
                raise StoreError(f"{path!r} is not a library path (relative, '/'-separated, no hidden or '..' parts)")
        with self._writing():
            current = self.latest()
            changed: list[tuple[str, int, str | None]] = []
            relisted: list[tuple[str | None, str | None, str, int]] = []
            for path, data in sorted(files.items()):
                digest = hashlib.sha256(data).hexdigest()
                version, known, listed, _ = current.get(path, _NEW)
                if known != digest:
                    changed.append((path, version + 1, digest))
                    self._run("INSERT INTO blobs (digest, data) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING",
                              digest, data)
                elif path in prompts and not listed:
                    relisted.append((prompts[path].listing, prompts[path].scopes, path, version))
            for path, (version, last, _, _) in sorted(current.items()):
                if last is not None and path not in files:
                    changed.append((path, version + 1, None))
            if relisted:
                self._many("UPDATE files SET listing = ?, scopes = ? WHERE path = ? AND version = ?", relisted)
                self._many("UPDATE position_files SET scopes = ? WHERE path = ? AND version = ?",
                           [row[1:] for row in relisted])
                for (current,) in self._rows("SELECT MAX(id) FROM positions GROUP BY label"):
                    self._summarize(int(current))
            publish_id: int | None = None
            if changed:
                publish_id = int(self._run("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?) "
                                           "RETURNING id", author, message, time.time()).fetchone()[0])
                rows = []
                for path, version, stored in changed:
                    listed_now = prompts.get(path) if stored else None
                    # A prompt's name from this folder's load; kept from before for deletions and other files.
                    name = listed_now.name if listed_now else self._prompt_of(path)
                    rows.append((path, version, publish_id, name, stored,
                                 listed_now.listing if listed_now else None, listed_now.scopes if listed_now else None))
                self._many("INSERT INTO files (path, version, publish, prompt, digest, listing, scopes) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            if label is not None:
                state = {path: newest.version for path, newest in self.latest().items() if path in files}
                self._move(label, state, author, f"publish {publish_id}" if publish_id else "publish (unchanged)")
        return publish_id, sorted(path for path, _, _ in changed)

    def publish_file(self, path: str, data: bytes, listed: Listed | None, *, author: str, message: str,
                     base: int | None = None, label: str | None = None, seen: Callable[[int], bool] | None = None,
                     allow: MoveRule | None = None) -> tuple[int, int | None]:
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
        with self._writing():
            version, known, _, _ = self.latest().get(path, _NEW)
            newest = version
            while seen is not None and newest > 0 and not seen(newest):
                newest -= 1
            if base is not None and base != newest:
                rows = self._rows("SELECT p.author FROM files f JOIN publishes p ON p.id = f.publish "
                                  "WHERE f.path = ? AND f.version = ?", path, newest)
                who = f" by {rows[0][0]}" if rows else ""
                raise StoreConflict(f"{path} has a newer version {newest}{who} than the version {base} "
                                    "you edited; nothing was saved. Open the newest version and edit it again")
            publish_id: int | None = None
            if known != digest:
                self._run("INSERT INTO blobs (digest, data) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING",
                          digest, data)
                publish_id = int(self._run("INSERT INTO publishes (author, message, created) VALUES (?, ?, ?) "
                                           "RETURNING id", author, message, time.time()).fetchone()[0])
                version += 1
                self._run("INSERT INTO files (path, version, publish, prompt, digest, listing, scopes) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?)", path, version, publish_id,
                          listed.name if listed else self._prompt_of(path), digest,
                          listed.listing if listed else None, listed.scopes if listed else None)
            if label is not None:
                self._point(label, path, version, author,
                            f"publish {publish_id}" if publish_id else f"label {path}@{version}", allow)
        return version, publish_id

    def _prompt_of(self, path: str) -> str | None:
        rows = self._rows("SELECT prompt FROM files WHERE path = ? ORDER BY version DESC LIMIT 1", path)
        return rows[0][0] if rows else None

    def _many(self, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
        if self.postgres:
            with self._conn.cursor() as cursor:
                cursor.executemany(self._sql(statement), rows)
        else:
            self._conn.executemany(statement, rows)

    def _move(self, label: str, files: dict[str, int], author: str, reason: str, allow: MoveRule | None = None,
              now: Position | None = None) -> bool:
        """Point ``label`` at ``files`` (inside a write transaction); False when it points there already.
        ``allow`` is shown the move first, and may refuse it; ``now``: the label's position, if read."""
        now = now or self.position(label)
        if now is not None and now.files == files:
            return False
        if allow is not None:
            allow(now.files if now is not None else {}, files)
        position_id = int(self._run("INSERT INTO positions (label, author, reason, created) VALUES (?, ?, ?, ?) "
                                    "RETURNING id", label, author, reason, time.time()).fetchone()[0])
        self._many("INSERT INTO position_files (position, path, version) VALUES (?, ?, ?)",
                   [(position_id, path, version) for path, version in sorted(files.items())])
        self._run("UPDATE position_files SET name = f.prompt, scopes = f.scopes FROM files f WHERE "
                  "position_files.position = ? AND f.path = position_files.path AND f.version = position_files.version "
                  "AND f.prompt IS NOT NULL", position_id)
        clash = self._rows("SELECT name FROM position_files WHERE position = ? AND name IS NOT NULL GROUP BY name "
                           "HAVING count(*) > 1 LIMIT 1", position_id)
        if clash:  # only `label NAME@VERSION` can bring this about: a renamed prompt meeting another
            raise StoreConflict(f"label {label!r} would serve two prompts named {clash[0][0]!r}; nothing changed")
        self._summarize(position_id)
        if self.postgres:
            self._run("SELECT pg_notify(?, ?)", CHANNEL, label)
        return True

    def _point(self, label: str, path: str, version: int, author: str, reason: str,
               allow: MoveRule | None = None) -> None:
        """(Inside a write transaction.) Point ``label`` at ``version`` of ``path``; its other files stay."""
        now = self.position(label)
        files = dict(now.files) if now is not None else {}
        files[path] = version
        self._move(label, files, author, reason, allow, now)

    def _summarize(self, position_id: int) -> None:
        """Record what a server needs of a position before its first page (see schema 3)."""
        unlisted = self._rows("SELECT 1 FROM position_files pf JOIN files f ON f.path = pf.path AND "
                              "f.version = pf.version WHERE pf.position = ? AND pf.name IS NOT NULL AND "
                              "(f.listing IS NULL OR substr(f.listing, 1, ?) <> ?) LIMIT 1",
                              position_id, len(LISTING_HEAD), LISTING_HEAD)
        sets = sorted(row[0] for row in self._rows("SELECT DISTINCT scopes FROM position_files WHERE position = ? "
                                                   "AND name IS NOT NULL AND scopes <> ''", position_id))
        self._run("UPDATE positions SET listing_format = ?, scope_sets = ? WHERE id = ?",
                  None if unlisted else LISTING_FORMAT, json.dumps(sets), position_id)

    def label(self, prompt: str, version: int | None, label: str, *, author: str, allow: MoveRule | None = None) -> int:
        """Point ``label`` at one version of one prompt (its newest when None), the rest unchanged."""
        with self._writing():
            path, found, data = self.version_of(prompt, version)
            if data is None:
                raise StoreConflict(f"version {found} of {prompt!r} is its deletion; choose a version that has it")
            self._point(label, path, found, author, f"label {prompt}@{found}", allow)
        return found

    def rollback(self, label: str, *, author: str, allow: MoveRule | None = None) -> Position:
        """Point ``label`` where it pointed before its current position; that position."""
        with self._writing():
            before = self.position(label, back=1)
            if before is None:
                raise StoreConflict(f"label {label!r} has no earlier position to roll back to")
            self._move(label, before.files, author, f"rollback to position {before.id}", allow)
        return before


def no_version(prompt: str, version: int | None) -> StoreMissing:
    """What the store says of a version it does not have (and the store API of one hidden by scopes)."""
    return StoreMissing(f"prompt {prompt!r} has no version {version}")


#: The mode of a SQLite store and its -wal and -shm files: the owner's alone.
PRIVATE_MODE = 0o600
#: Stores already warned about in this process (``_warn_if_readable``): a server opens its store often.
_warned: set[str] = set()


def _create_private(path: str) -> None:
    """Make the SQLite file at ``path`` with ``PRIVATE_MODE`` if it does not exist yet, whatever the umask.

    A store holds prompts that scopes restrict and the key requestStates are signed with: no other user
    of the machine may read it. sqlite3 would create it with the umask's mode (0644 as a rule); made
    here first, SQLite finds it, and gives the -wal and -shm it creates beside it the same mode.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_MODE)
    except FileExistsError:
        _warn_if_readable(path)
        return
    try:
        os.fchmod(fd, PRIVATE_MODE)  # the umask may have taken bits away from the owner, too
    finally:
        os.close(fd)


def _warn_if_readable(path: str) -> None:
    """One warning a store, naming its files and the fix, when the store or its -wal or -shm can be read by
    its group or by others (a store made by an older promptdeck, or copied with a loose umask). The fix
    names the database even when only a companion is loose: SQLite gives new ones the database's mode."""
    if path in _warned:
        return
    loose: list[str] = []
    modes: list[int] = []
    for number, name in enumerate((path, f"{path}-wal", f"{path}-shm")):
        try:
            mode = stat.S_IMODE(os.stat(name).st_mode)
        except OSError:
            continue  # not there (yet): sqlite3 says so if the database itself is missing
        if number == 0 or mode & 0o044:
            loose.append(name)
            modes.append(mode)
    if any(mode & 0o044 for mode in modes):
        _warned.add(path)
        log.warning("the store %s can be read by other users (mode %s), and it holds restricted prompts and the "
                    "requestState signing key: chmod 600 %s", path, "/".join(f"{mode:03o}" for mode in modes),
                    " ".join(loose))


def sqlite_path(url: str) -> str:
    """``sqlite:///rel/path.db`` and ``sqlite:////abs/path.db`` (SQLAlchemy's convention), or a bare path."""
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if path and path != "/":
            return path
    elif not url.startswith("sqlite:"):
        return url
    raise StoreError(f"a SQLite store URL is sqlite:///path.db (or a path ending in .db), not {shown_url(url)!r}")


#: libpq's connection parameters that are secrets, which a URL's query may carry (``?password=…``).
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})
#: The environment variable libpq reads a password from.
PASSWORD_ENV = "PGPASSWORD"


def shown_url(url: str) -> str:
    """A store URL fit for a message or a log line: the password of its userinfo and the value of every
    secret parameter of its query (``password=``, ``sslpassword=``, in any case, its name percent-encoded
    or not: libpq decodes names too) written as ``***``. Anything that only looks like a URL is masked
    the same way, since a mistyped scheme still carries the password it was given."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    # libpq ends the userinfo at the first '/', not at '?' or '#' as RFC 3986 does: a password holding
    # those is still the password, so the authority is cut as libpq cuts it (urlsplit would not).
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        userinfo, _, hosts = authority.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        authority = f"{user}{':***' if colon else ''}@{hosts}"
    head, question, query = f"{scheme}://{authority}{slash}{tail}".partition("?")
    return head + question + "&".join(_masked_parameter(pair) for pair in query.split("&")) if question else head


def _masked_parameter(pair: str) -> str:
    from urllib.parse import unquote

    name, equals, _value = pair.partition("=")
    return f"{name}=***" if equals and unquote(name).strip().lower() in SECRET_PARAMETERS else pair


def store_secrets(url: str) -> list[str]:
    """The secrets a store's URL and libpq's environment hold, as written and percent-decoded: what must
    never reach a message (``without_secrets``)."""
    from urllib.parse import unquote

    found: list[str] = []
    rest = url.partition("://")[2]
    authority = rest.partition("/")[0]
    if "@" in authority:
        found.append(authority.rpartition("@")[0].partition(":")[2])
    for pair in url.partition("?")[2].split("&"):
        name, _, value = pair.partition("=")
        if unquote(name).strip().lower() in SECRET_PARAMETERS:
            found.append(value)
    found.append(os.environ.get(PASSWORD_ENV, ""))
    found += [unquote(secret) for secret in found]
    # Longest first, so a secret that holds another is replaced whole.
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def without_secrets(text: str, url: str) -> str:
    """``text`` (a driver's message, say) with the store URL's secrets and ``$PGPASSWORD`` replaced by ``***``:
    libpq quotes the part of a URL it cannot parse, which may be the password (``invalid percent-encoded
    token: "…"``)."""
    for secret in store_secrets(url):
        text = text.replace(secret, "***")
    return text


class StateLedger:
    """requestState single use across every replica of a PostgreSQL store (see ``server.request_state``).

    A redeemed state's nonce is one row; the primary key makes the first replica to insert it the only
    one to accept it. The rows are bounded per principal (``per_principal`` unexpired ones; past that,
    that principal's states are refused until some expire) and expired rows are deleted as redemptions
    go on. Redemption is rare (the retry of an ``input_required``), so one connection serves it, behind
    a lock, with short timeouts: an unreachable store refuses the state rather than risk a second use.
    """

    TIMEOUT_SECONDS = 2

    def __init__(self, url: str, per_principal: int) -> None:
        self.url = url
        self.per_principal = per_principal
        self._conn: Any = None
        self._lock = threading.Lock()
        self._uses = 0
        self._key: bytes | None = None

    def key(self) -> bytes:
        """The key every replica of this store signs states with (read once, then kept)."""
        with self._lock:
            if self._key is None:
                try:
                    rows = self._execute("SELECT key FROM state_key LIMIT 1").fetchall()
                except Exception as exc:  # the driver's: one line naming the store, its secrets masked
                    raise StoreError(f"cannot read the state key of the store {shown_url(self.url)}: "
                                     f"{without_secrets(_first_line(exc), self.url)}") from None
                if not rows:
                    raise StoreError(f"the store {shown_url(self.url)} has no state key: run `promptdeck store "
                                     "upgrade`")
                self._key = str(rows[0][0]).encode()
            return self._key

    def use(self, nonce: str, principal: str, expires: float, now: float) -> str | None:
        """Record ``nonce`` as used: None the first time; otherwise why the state is refused."""
        try:
            with self._lock:
                live = self._execute("SELECT count(*) FROM used_states WHERE principal = %s AND expires >= %s",
                                     principal, now).fetchone()[0]
                if live >= self.per_principal:
                    return "is no longer accepted (too many were redeemed); send the request again without it"
                inserted = self._execute("INSERT INTO used_states (nonce, principal, expires) VALUES (%s, %s, %s) "
                                         "ON CONFLICT (nonce) DO NOTHING", nonce, principal, expires).rowcount
                self._uses += 1
                if self._uses % 256 == 0:
                    self._execute("DELETE FROM used_states WHERE expires < %s", now)
        except Exception as exc:  # the driver's errors, or a lost connection: refuse, never accept twice
            log.warning("requestState not checked: the store %s is not reachable (%s)", shown_url(self.url),
                        without_secrets(_first_line(exc), self.url))
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            return "cannot be checked now (the store is unreachable); send the request again without it"
        return None if inserted == 1 else "was already used"

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _execute(self, statement: str, *args: Any) -> Any:
        if self._conn is None or self._conn.closed:
            import psycopg

            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=self.TIMEOUT_SECONDS,
                                         options=f"-c statement_timeout={self.TIMEOUT_SECONDS * 1000}")
        return self._conn.execute(statement, args)


def _usable(rows: Sequence[tuple[Any, ...]]) -> Iterator[tuple[str, tuple[int, bytes]]]:
    """(path, (version, bytes)) of rows fit to become a file of ours: a safe path, no oversized blob."""
    for path, version, data in rows:
        if not is_safe_path(path):
            # Written by something other than publish: never a file outside the folder it goes to.
            log.error("the store holds a file at %r, which is not a library path; it is left out", path)
        elif data is None:
            log.error("the store holds %r larger than %d bytes; it is left out", path, MAX_FILE_BYTES)
        else:
            yield path, (int(version), bytes(data))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


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
