"""The last good copy of a remote's prompts, kept in a folder for when the remote cannot be reached.

An MCP server gives a client listings and rendered results, not its prompt files, so that is what the
cache holds; it cannot render arguments it has not seen rendered. The folder::

    CACHE/
      promptdeck-cache.json   {"format": 2, "server": URL, "principal": a digest of the token, or null}
      listing.json            {"server", "principal", "entries"}: the prompts/list entries of the last
                              listing that succeeded
      renders/<key>.json      {"server", "principal", "name", "arguments", "result"}: the last prompts/get
                              result for those arguments, key = sha256 of the canonical JSON of [name, arguments]

Everything is written to a temporary file and renamed into place, so a reader never sees half a file,
with 0600 permissions in a 0700 folder (rendered prompts may hold what only the token may read). A folder
that another user owns, or that others may write to, is refused (``own_folder``): what is read back from
it is served as the server's. A cache made for another server or another token is not read (each token
sees its own prompts: one folder per token), and since two processes may share a folder by mistake, every
file read is checked for the server and principal it was written for, not only the marker when the cache
is opened: a token never gets a render or listing written for another. At most ``MAX_RENDERS`` renders
are kept; past that the oldest written are removed. A render the same as the one kept is not written again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from ..protocol.errors import LibraryError
from .own_folder import check_own_folder, make_own_folder

log = logging.getLogger("promptdeck.client")

FORMAT = 2
MARKER = "promptdeck-cache.json"
MAX_RENDERS = 10_000
#: A cached file larger than this is not read (a render is bounded by the server at far less).
MAX_FILE = 64 * 1024 * 1024


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def render_key(name: str, arguments: dict[str, Any], key: str | None = None) -> str:
    """The file a render is kept in. ``key``: the rollout key it was asked with, as two keys may be given two
    versions during a rollout (a render asked with none keeps the name it had before keys were kept)."""
    asked: list[Any] = [name, arguments] if key is None else [name, arguments, key]
    return _digest(json.dumps(asked, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


class RenderCache:
    """The cache folder at ``path`` for the server at ``server``, as seen with ``token``."""

    def __init__(self, path: str | os.PathLike[str], server: str, token: str | None) -> None:
        self.path = Path(path)
        self.server = server
        self.principal = None if token is None else _digest("promptdeck-cache\0" + token)[:32]
        self._renders = self.path / "renders"
        #: what was last written per render key (a digest), and how many render files there are (None: not
        #: counted yet), so that a render the same as before costs no write and the bound no scan per write
        self._written: dict[str, bytes] = {}
        self._count: int | None = None
        self._check()
        marker = self._read(self.path / MARKER)
        #: whether what is in the folder was written for this server and token (and may be read)
        self.usable = isinstance(marker, dict) and marker.get("format") == FORMAT \
            and marker.get("server") == server and marker.get("principal") == self.principal
        if marker is not None and not self.usable:
            log.warning("the prompt cache %s was written for another server or token: not read, written anew",
                        self.path)

    def _check(self) -> None:
        """Refuse the folder (LibraryError) if it is not this user's alone; its renders folder too."""
        check_own_folder(self.path, "the prompt cache", LibraryError)
        check_own_folder(self._renders, "the prompt cache", LibraryError)

    def _mark(self) -> dict[str, Any]:
        return {"server": self.server, "principal": self.principal}

    def _mine(self, found: Any) -> bool:
        """Whether a file read back was written for this server and principal."""
        return isinstance(found, dict) and found.get("server") == self.server \
            and found.get("principal") == self.principal

    def _read(self, path: Path) -> Any:
        try:
            if path.is_symlink() or path.stat().st_size > MAX_FILE:
                return None
            return json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None

    def _write(self, path: Path, value: Any) -> None:
        self._write_bytes(path, json.dumps(value, ensure_ascii=False).encode())

    def _write_bytes(self, path: Path, body: bytes) -> None:
        # The store's whole-file write (mkstemp: 0600, O_EXCL; renamed over; nothing left when it fails), imported
        # on the first write: a cache that is only read never loads the store's modules.
        from ..sources.store.private import replace_whole

        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        replace_whole(path, body, ".tmp-")

    def _ready(self) -> None:
        make_own_folder(self.path, "the prompt cache", LibraryError)
        check_own_folder(self._renders, "the prompt cache", LibraryError)
        if not self.usable:
            for old in (self.path / "listing.json", *self._renders.glob("*.json")):
                with contextlib.suppress(OSError):
                    old.unlink()
            self._count = 0
            self._write(self.path / MARKER, {"format": FORMAT, **self._mark()})
            self.usable = True

    # -- writing (after a success; a failure to write is logged, never raised) -------------------

    def put_listing(self, entries: list[dict[str, Any]]) -> None:
        try:
            self._ready()
            self._write(self.path / "listing.json", {**self._mark(), "entries": entries})
        except (OSError, LibraryError) as exc:
            log.warning("the prompt cache %s cannot be written: %s", self.path, exc)

    def put_render(self, name: str, arguments: dict[str, Any], result: dict[str, Any],
                   rollout_key: str | None = None) -> None:
        """Keep ``result``; a render the same as the one kept is not written again (no disk write per render)."""
        key = render_key(name, arguments, rollout_key)
        body = json.dumps({**self._mark(), "name": name, "arguments": arguments, "key": rollout_key, "result": result},
                          ensure_ascii=False).encode()
        digest = hashlib.sha256(body).digest()
        if self._written.get(key) == digest:
            return
        try:
            self._ready()
            path = self._renders / f"{key}.json"
            new = not path.exists()
            self._write_bytes(path, body)
        except (OSError, LibraryError) as exc:
            log.warning("the prompt cache %s cannot be written: %s", self.path, exc)
            return
        if len(self._written) >= MAX_RENDERS:
            self._written.clear()
        self._written[key] = digest
        if new:
            self._count = (self._count if self._count is not None else self._counted()) + 1
            if self._count > MAX_RENDERS:
                self._bound()

    def _counted(self) -> int:
        return sum(1 for _ in self._renders.glob("*.json"))

    def _bound(self) -> None:
        """Remove the oldest renders past ``MAX_RENDERS`` (one directory scan per that many new files at most)."""
        files: list[tuple[float, Path]] = []
        for found in self._renders.glob("*.json"):
            with contextlib.suppress(OSError):  # removed meanwhile by another writer
                files.append((found.stat().st_mtime, found))
        files.sort()
        for _, old in files[:max(len(files) - MAX_RENDERS, 0)]:
            with contextlib.suppress(OSError):
                old.unlink()
        self._count = min(len(files), MAX_RENDERS)

    # -- reading (when the server cannot be reached) ---------------------------------------------

    # Each read checks the folder again and the file's own mark: the marker was read when the cache was
    # opened, and another process (another token, by mistake) may have written the folder since.

    def listing(self) -> list[dict[str, Any]] | None:
        """The cached listing's entries, or None; raises LibraryError for a folder that is not ours alone."""
        if not self.usable:
            return None
        self._check()
        found = self._read(self.path / "listing.json")
        entries = found.get("entries") if self._mine(found) else None
        return [e for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)] \
            if isinstance(entries, list) else None

    def render(self, name: str, arguments: dict[str, Any], rollout_key: str | None = None) -> dict[str, Any] | None:
        """The cached result of exactly these arguments and rollout key, or None; raises LibraryError for a folder
        that is not ours alone."""
        if not self.usable:
            return None
        self._check()
        found = self._read(self._renders / f"{render_key(name, arguments, rollout_key)}.json")
        if not self._mine(found) or found.get("name") != name or found.get("arguments") != arguments \
                or found.get("key") != rollout_key:
            return None
        result = found.get("result")
        return result if isinstance(result, dict) and isinstance(result.get("messages"), list) else None

