"""What a store answers: where labels point, the files and listings there, versions and history."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ...prompts.skills import SCHEME, parse_skill_uri
from ..files.paths import SKILL_FOLDERS, skill_folder_of
from .connection import Connection
from .model import (
    Entry,
    FileVersion,
    Latest,
    Move,
    Position,
    Recorded,
    StoreError,
    StoreMissing,
    in_skill,
    is_safe_path,
    no_version,
)
from .provenance import Provenance
from .schema import LISTING_FORMAT, LISTING_HEAD, MAX_FILE_BYTES

log = logging.getLogger("promptdeck.store")

class Reads:
    """The queries of a store, through its connection (``Store.reads``; a replica's listing copy has its own)."""

    __slots__ = ("db",)

    def __init__(self, db: Connection) -> None:
        self.db = db

    def latest(self) -> dict[str, Latest]:
        """Every path's newest version."""
        rows = self.db.rows("SELECT f.path, f.version, f.digest, coalesce(substr(f.listing, 1, ?) = ?, false), "
                            "f.prompt FROM files f JOIN (SELECT path, MAX(version) AS v FROM files GROUP BY path) m "
                            "ON f.path = m.path AND f.version = m.v", len(LISTING_HEAD), LISTING_HEAD)
        new = tuple.__new__  # a Latest of each row without NamedTuple's Python-level __new__: 100,000 rows
        return {row[0]: new(Latest, (row[1], row[2], bool(row[3]), row[4])) for row in rows}

    def position(self, label: str, back: int = 0) -> Position | None:
        """Where ``label`` points now (``back`` = 1: the position before), or None."""
        rows = self.db.rows("SELECT id, reason, author, created FROM positions WHERE label = ? ORDER BY id DESC "
                            "LIMIT 1 OFFSET ?", label, back)
        if not rows:
            return None
        position_id, reason, author, created = rows[0]
        files = dict(self.db.rows("SELECT path, version FROM position_files WHERE position = ?", position_id))
        return Position(int(position_id), label, reason, author, float(created), files)

    def state_key(self) -> bytes | None:
        """The key every replica of this store signs with (2026-07-28 requestState, 2025-era session ids);
        None for a store made before schema 2 had one."""
        rows = self.db.rows("SELECT key FROM state_key LIMIT 1")
        return str(rows[0][0]).encode() if rows else None

    def position_id(self, label: str) -> int | None:
        rows = self.db.rows("SELECT MAX(id) FROM positions WHERE label = ?", label)
        return None if not rows or rows[0][0] is None else int(rows[0][0])

    def labels(self) -> list[str]:
        return [row[0] for row in self.db.rows("SELECT DISTINCT label FROM positions ORDER BY label")]

    def require_position(self, label: str) -> int:
        """Where ``label`` points now; ``StoreError`` naming the labels there are if it is unknown."""
        position_id = self.position_id(label)
        if position_id is None:
            raise StoreMissing(f"no label {label!r} in the store (labels: {', '.join(self.labels()) or 'none'})")
        return position_id

    def snapshot(self, label: str) -> dict[str, tuple[int, bytes]]:
        """The files a label points at: path -> (version, bytes)."""
        # A blob larger than publish allows is never fetched: the database may have been written by another tool.
        rows = self.db.rows("SELECT pf.path, pf.version, CASE WHEN length(b.data) <= ? THEN b.data END "
                            "FROM position_files pf JOIN files f ON f.path = pf.path AND f.version = pf.version "
                            "JOIN blobs b ON b.digest = f.digest WHERE pf.position = ?", MAX_FILE_BYTES,
                            self.require_position(label))
        return dict(_usable(rows))

    def entries(self, label: str) -> tuple[int, list[Entry]]:
        """Where ``label`` points: its position, and the files there without their bytes."""
        position_id = self.require_position(label)
        rows = self.db.rows("SELECT pf.path, pf.version, f.prompt, f.listing, f.scopes FROM position_files pf "
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
        path = "+pf.path" if material and not self.db.postgres else "pf.path"
        rows = self.db.rows("SELECT pf.path, pf.version, CASE WHEN length(b.data) <= ? THEN b.data END "
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
        rows = self.db.rows("SELECT id, listing_format FROM positions WHERE label = ? ORDER BY id DESC LIMIT 1", label)
        return (int(rows[0][0]), rows[0][1] == LISTING_FORMAT) if rows else None

    def fully_listed(self, position_id: int) -> bool:
        """Whether every prompt file of the position has a listing of this promptdeck's format."""
        rows = self.db.rows("SELECT listing_format FROM positions WHERE id = ?", position_id)
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
        rows = self.db.rows("SELECT pf.path, pf.version, pf.name, f.listing, pf.scopes FROM position_files pf "
                            "JOIN files f ON f.path = pf.path AND f.version = pf.version "
                            f"WHERE pf.position = ? AND {where} ORDER BY pf.name LIMIT ?", *args, limit)
        return [Entry(path, int(version), prompt, listing, scopes_) for path, version, prompt, listing, scopes_ in rows
                if is_safe_path(path)]

    def listed_count(self, position_id: int, scopes: Sequence[str] | None = None) -> int:
        where, args = "", []
        if scopes is not None:
            where = f" AND (scopes = '' OR scopes IN ({', '.join('?' * len(scopes)) or 'NULL'}))"
            args = list(scopes)
        return int(self.db.rows(f"SELECT count(*) FROM position_files WHERE position = ? AND name IS NOT NULL{where}",
                                position_id, *args)[0][0])

    def scope_sets(self, position_id: int) -> list[str]:
        """The distinct non-empty scope sets of the position's prompts (each space-separated, sorted)."""
        rows = self.db.rows("SELECT scope_sets FROM positions WHERE id = ?", position_id)
        sets = json.loads(rows[0][0]) if rows and rows[0][0] else []
        return [s for s in sets if isinstance(s, str)]

    def versions_at(self, position_id: int) -> dict[str, int]:
        """Every file of a position: path -> version."""
        return dict(self.db.rows("SELECT path, version FROM position_files WHERE position = ?", position_id))

    def version_at(self, position_id: int, path: str) -> int | None:
        rows = self.db.rows("SELECT version FROM position_files WHERE position = ? AND path = ?", position_id, path)
        return int(rows[0][0]) if rows else None

    def copy_listing(self, position_id: int, path: str) -> None:
        """Make a SQLite store at ``path`` (new) holding ``position_id``'s listing and nothing else, no file
        contents: what a replica of a PostgreSQL store pages from locally (see ``StoreSource``)."""
        head = self.db.rows("SELECT id, label, author, reason, created, listing_format, scope_sets FROM positions "
                            "WHERE id = ?", position_id)
        rows = self.db.rows("SELECT pf.path, pf.version, pf.name, pf.scopes, f.listing FROM position_files pf JOIN "
                            "files f ON f.path = pf.path AND f.version = pf.version WHERE pf.position = ?", position_id)
        Connection(f"sqlite:///{path}", create=True).close()
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
        rows = self.db.rows("SELECT CASE WHEN length(b.data) <= ? THEN b.data END FROM files f JOIN blobs b "
                            "ON b.digest = f.digest WHERE f.path = ? AND f.version = ?", MAX_FILE_BYTES, path, version)
        if not rows:
            raise StoreMissing(f"the store has no version {version} of {path!r}")
        if rows[0][0] is None:
            raise StoreError(f"the store holds {path!r} larger than {MAX_FILE_BYTES} bytes")
        return bytes(rows[0][0])

    def publish_of(self, path: str, version: int) -> int:
        """The publish that recorded ``path``'s ``version``."""
        rows = self.db.rows("SELECT publish FROM files WHERE path = ? AND version = ?", path, version)
        if not rows:
            raise StoreMissing(f"the store has no version {version} of {path!r}")
        return int(rows[0][0])

    def as_of(self, path: str, publish: int) -> int | None:
        """The version of ``path`` the library had just after ``publish``: None when it had none (never
        published by then, or deleted)."""
        rows = self.db.rows("SELECT version, digest FROM files WHERE path = ? AND publish <= ? ORDER BY version DESC "
                            "LIMIT 1", path, publish)
        return int(rows[0][0]) if rows and rows[0][1] is not None else None

    def named_as_of(self, name: str, publish: int) -> str | None:
        """The path of the prompt named ``name`` just after ``publish`` (the first path, as served), or None."""
        rows = self.db.rows("SELECT f.path, f.prompt, f.digest FROM files f JOIN (SELECT path, MAX(version) AS v FROM "
                            "files WHERE publish <= ? AND path IN (SELECT path FROM files WHERE prompt = ?) GROUP BY "
                            "path) m ON f.path = m.path AND f.version = m.v ORDER BY f.path", publish, name)
        return next((str(path) for path, prompt, digest in rows if prompt == name and digest is not None), None)

    def history(self, prompt: str | None = None) -> list[FileVersion]:
        """Versions, newest first: of one prompt (by name or path), or of every file."""
        query = ("SELECT f.path, f.version, f.publish, f.prompt, f.digest, p.author, p.message, p.created, f.scopes, "
                 "p.git_commit, p.git_branch, p.git_dirty FROM files f JOIN publishes p ON p.id = f.publish")
        args: tuple[Any, ...] = ()
        if prompt is not None:
            path = self.path_of(prompt)
            query += " WHERE f.path = ?"
            args = (path,)
        rows = self.db.rows(query + " ORDER BY f.publish DESC, f.path", *args)
        return [FileVersion(r[0], int(r[1]), int(r[2]), r[3], r[4], r[5], r[6], float(r[7]), r[8],
                            None if r[9] is None else Provenance(r[9], r[10], bool(r[11]))) for r in rows]

    def digests(self) -> dict[str, set[str]]:
        """Every path the store has held, with the digests of its versions (a pull's test of unpublished work)."""
        out: dict[str, set[str]] = {}
        for path, digest in self.db.rows("SELECT path, digest FROM files WHERE digest IS NOT NULL"):
            out.setdefault(path, set()).add(digest)
        return out

    def recorded(self, pairs: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Recorded]:
        """What the store records of each (path, version) that it has: its prompt name, digest and scopes."""
        wanted = set(pairs)
        paths = sorted({path for path, _ in wanted})
        out: dict[tuple[str, int], Recorded] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            rows = self.db.rows(f"SELECT path, version, prompt, digest, scopes, publish FROM files WHERE path IN "
                                f"({', '.join('?' * len(chunk))})", *chunk)
            for path, version, prompt, digest, scopes, publish in rows:
                if (path, int(version)) in wanted:
                    out[path, int(version)] = Recorded(prompt, digest, scopes, int(publish))
        return out

    def last_held(self, path: str, publish: int) -> int | None:
        """The newest version of ``path`` that holds the file (no deletion) made at or before ``publish``."""
        rows = self.db.rows("SELECT MAX(version) FROM files WHERE path = ? AND publish <= ? AND digest IS NOT NULL",
                            path, publish)
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def path_of(self, prompt: str) -> str:
        """The file a prompt name (or a path) stands for."""
        rows = self.db.rows("SELECT path FROM files WHERE prompt = ? OR path = ? ORDER BY publish DESC LIMIT 1",
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
            rows = self.db.rows("SELECT version, digest FROM files WHERE path = ? ORDER BY version DESC LIMIT 1", path)
        else:
            rows = self.db.rows("SELECT version, digest FROM files WHERE path = ? AND version = ?", path, version)
        if not rows:
            raise no_version(prompt, version)
        found, digest = int(rows[0][0]), rows[0][1]
        if digest is None:
            return found, None
        data = self.db.rows("SELECT CASE WHEN length(data) <= ? THEN data END FROM blobs WHERE digest = ?",
                            MAX_FILE_BYTES, digest)[0][0]
        if data is None:
            raise StoreError(f"the store holds {path!r} larger than {MAX_FILE_BYTES} bytes")
        return found, bytes(data)

    def labels_at(self, path: str) -> dict[int, list[str]]:
        """The labels pointing at each version of ``path`` now: version -> labels, sorted."""
        rows = self.db.rows("SELECT p.label, pf.version FROM positions p JOIN position_files pf ON pf.position = p.id "
                            "WHERE p.id IN (SELECT MAX(id) FROM positions GROUP BY label) AND pf.path = ? "
                            "ORDER BY p.label", path)
        out: dict[int, list[str]] = {}
        for label, version in rows:
            out.setdefault(int(version), []).append(label)
        return out

    def label_moves(self) -> list[tuple[Move, Move | None]]:
        """Every label, sorted: where it points now and where it pointed before (what a rollback restores)."""
        rows = self.db.rows("SELECT id, label, reason, author, created FROM (SELECT id, label, reason, author, "
                            "created, ROW_NUMBER() OVER (PARTITION BY label ORDER BY id DESC) AS back "
                            "FROM positions) recent WHERE back <= 2 ORDER BY label, id DESC")
        moves: dict[str, list[Move]] = {}
        for position_id, label, reason, author, created in rows:
            moves.setdefault(label, []).append(Move(int(position_id), label, reason, author, float(created)))
        return [(now[0], now[1] if len(now) > 1 else None) for now in moves.values()]

    # -- skills (docs/skills.md) --------------------------------------------------------------------

    def skill_files(self, position_id: int) -> list[tuple[str, int, str]]:
        """Every file of a position that lies in a skill's folder (``model.in_skill``): (path, version, its
        digest: 64 hex digits of SHA-256), in path order. No bytes: a skill is listed by these."""
        rows = self.db.rows("SELECT pf.path, pf.version, f.digest FROM position_files pf JOIN files f "
                            "ON f.path = pf.path AND f.version = pf.version "
                            "WHERE pf.position = ? AND pf.skill IS NOT NULL AND f.digest IS NOT NULL", position_id)
        return sorted((path, int(version), digest) for path, version, digest in rows
                      if is_safe_path(path) and in_skill(path) and isinstance(digest, str))

    def skill_target(self, name: str) -> tuple[str, bool] | None:
        """Where the store keeps what ``name`` names, if it names a skill or a file of one: a ``skill://`` URI
        (``skill://git``, ``skill://git/SKILL.md``, ``skill://pdf/forms/fill.md``) or a skill's folder
        (``skills/git``, ``.claude/skills/git``). (the path of a file, False) or (a folder, True); None when
        the store has nothing there. A skill-path given by two skill folders is the first one's, as served."""
        if name.startswith(SCHEME):
            parts = parse_skill_uri(name)
            if parts is None:
                return None
            candidates = [folder + "/".join(parts) for folder, _ in SKILL_FOLDERS]
        elif skill_folder_of(name) is not None and is_safe_path(name.rstrip("/") + "/SKILL.md"):
            candidates = [name.rstrip("/")]
        else:
            return None
        for path in candidates:
            if self.db.rows("SELECT 1 FROM files WHERE path = ? LIMIT 1", path):
                return path, False
            if self.db.rows("SELECT 1 FROM files WHERE substr(path, 1, ?) = ? LIMIT 1", len(path) + 1, path + "/"):
                return path, True
        return None

    def history_below(self, folder: str) -> list[FileVersion]:
        """The versions of every file below ``folder`` (a skill's), newest first."""
        rows = self.db.rows("SELECT f.path, f.version, f.publish, f.prompt, f.digest, p.author, p.message, p.created, "
                            "f.scopes, p.git_commit, p.git_branch, p.git_dirty FROM files f JOIN publishes p "
                            "ON p.id = f.publish WHERE substr(f.path, 1, ?) = ? "
                            "ORDER BY f.publish DESC, f.path", len(folder) + 1, folder + "/")
        return [FileVersion(r[0], int(r[1]), int(r[2]), r[3], r[4], r[5], r[6], float(r[7]), r[8],
                            None if r[9] is None else Provenance(r[9], r[10], bool(r[11]))) for r in rows]

    def skill_markers(self) -> set[str]:
        """The paths of every ``SKILL.md`` in a skill folder the store has ever held: where its skills are."""
        rows = self.db.rows("SELECT DISTINCT path FROM files WHERE substr(path, length(path) - 8, 9) = '/SKILL.md'")
        return {row[0] for row in rows if in_skill(row[0])}

    def contents_of(self, position_id: int, paths: Sequence[str]) -> list[tuple[str, int, bytes]]:
        """The files at ``paths`` of a position, those it has: (path, version, bytes)."""
        out = []
        for start in range(0, len(paths), 500):
            chunk = list(paths[start:start + 500])
            rows = self.db.rows("SELECT pf.path, pf.version, CASE WHEN length(b.data) <= ? THEN b.data END "
                                "FROM position_files pf JOIN files f ON f.path = pf.path AND f.version = pf.version "
                                "JOIN blobs b ON b.digest = f.digest WHERE pf.position = ? AND pf.path IN "
                                f"({', '.join('?' * len(chunk))})", MAX_FILE_BYTES, position_id, *chunk)
            out += [(path, version, data) for path, (version, data) in _usable(rows)]
        return out

    def blob(self, digest: str) -> bytes:
        """The bytes the store keeps under ``digest`` (64 hex digits of their SHA-256, as recorded)."""
        rows = self.db.rows("SELECT CASE WHEN length(data) <= ? THEN data END FROM blobs WHERE digest = ?",
                            MAX_FILE_BYTES, digest)
        if not rows or rows[0][0] is None:
            raise StoreMissing(f"the store holds no file of digest {digest[:16]}… (or one too large)")
        return bytes(rows[0][0])


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
