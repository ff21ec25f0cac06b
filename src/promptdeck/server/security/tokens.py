"""Static bearer tokens, and reading a bearer token from a request.

Tokens are compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable

from ...protocol.errors import AuthError, LibraryError
from .principals import Principal

TOKENS_ENV = "PROMPTDECK_TOKENS"


class BearerTokens:
    """Static bearer tokens: ``name:token [scope ...]`` lines from a file (``#`` comments) or the environment."""

    def __init__(self, entries: Iterable[tuple[str, str] | tuple[str, str, Iterable[str]]]) -> None:
        self._tokens: list[tuple[Principal, bytes]] = []
        for entry in entries:
            scopes: frozenset[str] = frozenset(entry[2]) if len(entry) > 2 else frozenset()
            self._tokens.append((Principal(entry[0], scopes), entry[1].encode()))
        if not self._tokens:
            raise LibraryError("no bearer tokens given")
        for principal, secret in self._tokens:
            if len(secret) < 16:
                raise LibraryError(f"bearer token {principal.name!r} is shorter than 16 characters")

    @classmethod
    def parse(cls, text: str, where: str) -> BearerTokens:
        entries: list[tuple[str, str, list[str]]] = []
        lines: dict[str, int] = {}
        for number, raw in enumerate(text.replace(",", "\n").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, rest = line.partition(":")
            words = rest.split()
            if not sep or not name.strip() or not words:
                raise LibraryError(f"{where}:{number}: expected name:token [scope ...]")
            if words[0] in lines:  # which name would it be? Refused rather than guessed
                raise LibraryError(f"{where}:{number}: the same token as line {lines[words[0]]}")
            lines[words[0]] = number
            entries.append((name.strip(), words[0], words[1:]))
        try:
            return cls(entries)
        except LibraryError as exc:  # none at all, or one too short: still say which file
            raise LibraryError(f"{where}: {exc}") from None

    @classmethod
    def load(cls, path: str | None) -> BearerTokens | None:
        """Tokens from ``path``, else from $PROMPTDECK_TOKENS, else None (no authentication)."""
        if path is not None:
            try:
                with open(path, encoding="utf-8") as fh:
                    return cls.parse(fh.read(), path)
            except OSError as exc:
                raise LibraryError(f"cannot read token file {path!r}: {exc.strerror}") from None
        value = os.environ.get(TOKENS_ENV)
        return cls.parse(value, f"${TOKENS_ENV}") if value else None

    def __len__(self) -> int:
        return len(self._tokens)

    def principal(self, authorization: str | None) -> Principal | None:
        """The principal whose token is in an ``Authorization: Bearer`` header, or None."""
        presented = bearer(authorization)
        if presented is None:
            return None
        candidate = presented.encode()
        found = None
        for principal, token in self._tokens:  # check them all: the time taken says nothing about which matched
            if hmac.compare_digest(candidate, token):
                found = principal
        return found

    async def authenticate(self, authorization: str | None) -> Principal:
        principal = self.principal(authorization)
        if principal is None:
            if bearer(authorization) is None:
                raise AuthError("a bearer token is required", error=None)
            raise AuthError("the bearer token is not valid")
        return principal

    def challenge(self, error: AuthError) -> bytes:
        return bearer_challenge(error, b"")


def bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if authorization is None:
        return None
    scheme, _, presented = authorization.partition(" ")
    presented = presented.strip()
    return presented if scheme.lower() == "bearer" and presented else None


def bearer_challenge(error: AuthError, extra: bytes) -> bytes:
    """A ``WWW-Authenticate`` value (RFC 6750 section 3) for ``error``."""
    parts = [b'Bearer realm="promptdeck"']
    if error.error is not None:
        parts.append(b'error="%s"' % error.error.encode())
        parts.append(b'error_description="%s"' % error.message.replace('"', "'").encode("ascii", "replace"))
    if error.scopes:
        parts.append(b'scope="%s"' % " ".join(error.scopes).encode("ascii", "replace"))
    if extra:
        parts.append(extra)
    return b", ".join(parts)
