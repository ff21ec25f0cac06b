"""Who sends a request, and what it may do: principals, their scopes, and how a transport learns them.

A principal is the name the authenticator gives (a token's name, an OAuth subject) or, without
authentication, the client's address; its scopes decide which prompts it sees (``prompts.access``).
Scopes are hierarchical on ``:``: holding ``prompts`` grants ``prompts:hr`` and ``prompts:hr:payroll``,
never the reverse.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ...prompts.access import grants
from ...protocol.errors import AuthError

#: The scope that lets a principal write to the store through ``/api/store`` (``serve --write-scope``).
DEFAULT_WRITE_SCOPE = "store:write"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who sent a request. ``scopes`` None means trusted with every prompt (a local stdio client)."""

    name: str
    scopes: frozenset[str] | None = frozenset()
    #: named by credentials (a token, an OAuth subject), not by the client's address or the transport: only
    #: then is the name a rollout key (docs/store.md#rollouts)
    authenticated: bool = True

    @property
    def rollout_key(self) -> str | None:
        """What keeps this principal's renders on one version of a rollout: its name, if authenticated."""
        return f"principal:{self.name}" if self.authenticated else None


def missing_scopes(held: frozenset[str] | None, needed: Iterable[str]) -> tuple[str, ...]:
    return tuple(scope for scope in needed if not grants(held, scope))


def may_write(held: frozenset[str] | None, write_scope: str) -> bool:
    """The one rule of who writes to the store from a server (``/api/store``'s writes and the MCP write tools):
    a principal holding ``write_scope``. Anonymous principals (no authentication) hold no scope, so they never
    write; ``None`` (trusted with everything) is a local stdio client's, the user who started the server, which
    never reaches HTTP."""
    return held is None or not missing_scopes(held, (write_scope,))


class Authenticator(Protocol):
    """Names the principal behind a request's ``Authorization`` header, or raises ``AuthError``."""

    async def authenticate(self, authorization: str | None) -> Principal: ...

    def challenge(self, error: AuthError) -> bytes:
        """The ``WWW-Authenticate`` value for a 401 or 403."""
        ...
