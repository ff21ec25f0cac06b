"""The per-user OAuth token file: who we registered as with each authorization server, and the tokens
each server granted us.

One JSON file (``$XDG_CONFIG_HOME/promptdeck/tokens.json``, else ``~/.config/promptdeck/tokens.json``)
holding refresh tokens is a credential like ``~/.ssh/id_*``, and is treated as one:

- it is written only as 0600, in a 0700 folder, through a temporary file renamed over the old one
  (a reader never sees half a file, a crash never leaves one);
- it is refused when other users may read or write it, or when it is a symbolic link (which could
  point the writes anywhere), with the command that fixes it; so is its folder when it belongs to
  another user or others may write to it (``own_folder``: they could swap the file between our check
  and our read), and a lock file that is a link;
- concurrent promptdeck processes take an ``fcntl`` lock around each read-change-write, so two
  sign-ins at once do not lose each other's tokens.

Tokens are keyed by the protected resource (RFC 9728 ``resource``) and the issuer that granted them
(one server may accept several authorization servers, and a token from one is no use to another);
client registrations are keyed by issuer alone (RFC 6749 2.2: a client id belongs to its server).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..protocol.errors import OAuthError
from .own_folder import check_own_folder, make_own_folder

#: A token file larger than this is not ours (a few hundred servers' tokens fit in well under it).
MAX_FILE = 4 * 1024 * 1024
_VERSION = 1


def default_path() -> Path:
    """Where the token file lives: ``$XDG_CONFIG_HOME/promptdeck/tokens.json`` or under ``~/.config``."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "promptdeck" / "tokens.json"


def _empty() -> dict[str, Any]:
    return {"version": _VERSION, "clients": {}, "tokens": {}, "servers": {}}


def token_key(resource: str, issuer: str) -> str:
    return f"{resource} {issuer}"


class TokenStore:
    """The token file at ``path`` (``default_path()`` if None); every method reads it afresh."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()

    # -- reading -------------------------------------------------------------------------------

    def _check(self) -> bool:
        """False if there is no file yet; raises for one we must not use, or a folder not ours alone."""
        check_own_folder(self.path.parent, "the token folder", OAuthError)
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return False
        if stat.S_ISLNK(info.st_mode):
            raise OAuthError(f"the token file {self.path} is a symbolic link; promptdeck writes tokens only to a "
                             f"plain file: remove the link ({self.path})")
        if not stat.S_ISREG(info.st_mode):
            raise OAuthError(f"the token file {self.path} is not a regular file")
        if info.st_mode & 0o077:
            raise OAuthError(f"the token file {self.path} may be read by other users (mode "
                             f"{stat.S_IMODE(info.st_mode):04o}); it holds credentials: chmod 600 {self.path}")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise OAuthError(f"the token file {self.path} belongs to another user (uid {info.st_uid})")
        return True

    def read(self) -> dict[str, Any]:
        """The whole document (an empty one if there is no file)."""
        if not self._check():
            return _empty()
        try:
            with open(self.path, "rb") as file:
                data = file.read(MAX_FILE + 1)
        except OSError as exc:
            raise OAuthError(f"cannot read the token file {self.path}: {exc.strerror}") from None
        if len(data) > MAX_FILE:
            raise OAuthError(f"the token file {self.path} is over {MAX_FILE} bytes; it is not promptdeck's")
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            raise OAuthError(f"the token file {self.path} is not JSON; remove it to sign in again") from None
        if not isinstance(doc, dict) or doc.get("version") != _VERSION:
            raise OAuthError(f"the token file {self.path} is not a version-{_VERSION} promptdeck token file; "
                             "remove it to sign in again")
        for part in ("clients", "tokens", "servers"):
            if not isinstance(doc.get(part), dict):
                doc[part] = {}
        return doc

    def tokens(self, resource: str, issuer: str) -> dict[str, Any] | None:
        found = self.read()["tokens"].get(token_key(resource, issuer))
        return found if isinstance(found, dict) else None

    def client(self, issuer: str) -> dict[str, Any] | None:
        found = self.read()["clients"].get(issuer)
        return found if isinstance(found, dict) else None

    def server(self, url: str) -> dict[str, Any] | None:
        """What an earlier sign-in learned about the MCP server at ``url``: its resource and issuer."""
        found = self.read()["servers"].get(url)
        return found if isinstance(found, dict) else None

    # -- writing -------------------------------------------------------------------------------

    def update(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the document and write it back, atomically and under the file lock."""
        import tempfile

        folder = self.path.parent
        make_own_folder(folder, "the token folder", OAuthError)
        with self._locked():
            doc = self.read()
            change(doc)
            data = json.dumps(doc, indent=1, sort_keys=True).encode()
            # mkstemp creates the file 0600 from the start: there is no moment when it is readable by others.
            handle, temporary = tempfile.mkstemp(prefix=".tokens-", suffix=".tmp", dir=folder)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: one process at a time is the user's business
            yield
            return
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:  # O_NOFOLLOW: a link planted there is ELOOP, not followed
            why = "is a symbolic link" if os.path.islink(lock) else f"cannot be opened ({exc.strerror})"
            raise OAuthError(f"the token file's lock {lock} {why}; promptdeck locks only a plain file of its own: "
                             f"remove it ({lock})") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def save_tokens(self, url: str, resource: str, issuer: str, tokens: dict[str, Any]) -> None:
        def change(doc: dict[str, Any]) -> None:
            doc["tokens"][token_key(resource, issuer)] = tokens
            doc["servers"][url] = {"resource": resource, "issuer": issuer}
        self.update(change)

    def save_client(self, issuer: str, client: dict[str, Any]) -> None:
        def change(doc: dict[str, Any]) -> None:
            doc["clients"][issuer] = client
        self.update(change)

    def forget(self, url: str) -> bool:
        """Remove the tokens kept for the MCP server at ``url`` (the client registration stays); True if any."""
        if not self._check():
            return False
        removed = False

        def change(doc: dict[str, Any]) -> None:
            nonlocal removed
            known = doc["servers"].pop(url, None)
            if isinstance(known, dict):
                doc["tokens"].pop(token_key(str(known.get("resource")), str(known.get("issuer"))), None)
                removed = True
        self.update(change)
        return removed
