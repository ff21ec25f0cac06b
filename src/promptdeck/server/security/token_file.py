"""A bearer token file that is re-read when it changes (or on SIGHUP), without a restart.

``TokenFile`` is the ``Authenticator`` ``serve --token-file`` uses. It holds one ``BearerTokens``; a request
takes that one reference, so it sees either the whole old set or the whole new one. At most once every
``CHECK_SECONDS`` a request ``stat``s the file (one system call); only a changed file (device, inode, size,
times) is read again. ``reload_soon`` (the SIGHUP handler) makes the next request read it whatever it stats.

A file that cannot be used keeps the tokens in force and logs one line naming the file and the fault (never
a token: the messages name a line number, a token's name at most, both escaped); the same bad file is not
reported again until it changes. A bad file is one unreadable, not a regular file (a FIFO would block the
request reading it), larger than ``MAX_BYTES``, not UTF-8, unparseable, with a token twice, or without a
newline at its end: a file caught half-written by an editor or ``echo >`` (write the new file beside it and
rename it over, which is atomic). The path is followed like ``open`` follows it (a symlink is read through,
as at startup), so a symlink swapped to another file (a Kubernetes secret's update) is a change.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Callable

from ...protocol.errors import AuthError, LibraryError
from .principals import Principal
from .tokens import BearerTokens

log = logging.getLogger("promptdeck.tokens")

#: How often a request may look at the file: a ``stat`` a second costs nothing measurable.
CHECK_SECONDS = 1.0
#: The largest token file read: 10,000 tokens of 100 bytes; a bigger one is refused, never read whole.
MAX_BYTES = 1 << 20

#: What tells one version of the file from another (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns).
Signature = tuple[int, int, int, int, int]


def read_tokens(path: str, *, whole: bool) -> tuple[BearerTokens, Signature]:
    """The tokens of the file at ``path`` and the signature of what was read; ``LibraryError`` naming the file
    and the fault otherwise. ``whole``: refuse a last line without its newline (a half-written file)."""
    where = repr(path)  # escaped: a newline in the path cannot start a line of the log
    try:
        # O_NONBLOCK: opening a FIFO put in the file's place must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise LibraryError(f"cannot read token file {where}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise LibraryError(f"token file {where} is not a regular file")
        try:
            data = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise LibraryError(f"cannot read token file {where}: {exc.strerror}") from None
    if len(data) > MAX_BYTES:
        raise LibraryError(f"token file {where} is larger than {MAX_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LibraryError(f"token file {where} is not UTF-8 text") from None
    if whole and text and not text.endswith("\n"):
        raise LibraryError(f"{where}:{text.count(chr(10)) + 1}: no newline at the end: the file may be "
                           "half-written (write a new file and rename it over this one)")
    return BearerTokens.parse(text, where), _signature(info)


def _signature(info: os.stat_result) -> Signature:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class TokenFile:
    """Bearer tokens from a file, re-read when it changes; see the module's docstring."""

    def __init__(self, path: str, *, check_seconds: float = CHECK_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self._tokens, self._seen = read_tokens(path, whole=False)  # at startup a bad file is an error
        self._check_seconds = check_seconds
        self._clock = clock
        self._checked = clock()
        self._forced = False
        #: the signature and fault of the bad file last reported, so that it is reported once
        self._refused: tuple[Signature | None, str] | None = None

    @property
    def tokens(self) -> BearerTokens:
        """The tokens in force now, after looking at the file if it is time to."""
        if self._forced or self._clock() - self._checked >= self._check_seconds:
            self.check()
        return self._tokens

    def reload_soon(self) -> None:
        """Read the file on the next request whatever it stats (SIGHUP). Safe in a signal handler: it only
        sets a flag."""
        self._forced = True

    def check(self) -> bool:
        """Look at the file now; read it if it changed (or a reload was asked for). True if the tokens changed."""
        forced, self._forced = self._forced, False
        self._checked = self._clock()
        try:
            signature: Signature | None = _signature(os.stat(self.path))
        except OSError:
            signature = None
        if not forced and (signature == self._seen or (self._refused and self._refused[0] == signature)):
            return False
        try:
            tokens, signature = read_tokens(self.path, whole=True)
        except LibraryError as exc:
            if self._refused != (signature, str(exc)):
                log.warning("%s; still using the %d tokens read before", str(exc), len(self._tokens))
            self._refused = (signature, str(exc))
            return False
        self._tokens, self._seen, self._refused = tokens, signature, None  # one reference: the swap is atomic
        log.info("token file %r read again: %d tokens", self.path, len(tokens))
        return True

    def principal(self, authorization: str | None) -> Principal | None:
        return self.tokens.principal(authorization)

    async def authenticate(self, authorization: str | None) -> Principal:
        return await self.tokens.authenticate(authorization)

    def challenge(self, error: AuthError) -> bytes:
        return self._tokens.challenge(error)
