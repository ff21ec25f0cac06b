"""The HTTP routes as a table, and the guards that wrap them.

A ``Route`` is a record in the shape of starlette's ``Route`` and ``Mount`` (we do not depend on starlette):
exact paths and/or a path prefix, the methods it answers (any other is a 405 naming them in ``Allow``; an
empty tuple leaves the method to the endpoint), the endpoint, the shape its refusals are answered in, and
its guards. The guards are declared on every route, never implied, so a route added to the table cannot
go round them by accident: ``Route`` has no default for them and refuses a set without ``HOST``.

- ``HOST``: the request is HTTP/1.x with exactly one Host, and its Host and Origin are allowed (DNS
  rebinding; by default loopback names, any port). Every route has it.
- ``AUTH``: the ``Authenticator`` names the principal (401/403 when the credentials say nobody). A route
  without it, or an app without an authenticator, knows the principal by the client's address only.
- ``LIMIT``: the principal's rate limit (429 with ``Retry-After``); needs ``AUTH``, as the limit counts
  by the principal it names.

``guarded`` wraps an endpoint in its route's guards, in that order, once when the ``Router`` is built;
the method check comes after them. The ``Router`` gives a path to the first route of the table that
takes it (an exact path is one dictionary lookup: the MCP endpoint's requests, the most by far, pay
nothing for the routes beside it) and a path no route takes to the fallback route, a 404 behind ``HOST``.
A refusal is an ``HttpError`` any of these raises; the app's one error boundary answers it in the shape
of the route it came from (``Route.errors``).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from ...protocol.errors import AuthError, HttpError
from ..asgi import Receive, Scope, Send, header, headers_of, respond
from ..security.principals import Authenticator, Principal
from ..security.ratelimit import RateLimiter, retry_after, too_many

#: Host names every endpoint accepts, any port
LOOPBACK = ("localhost", "127.0.0.1", "[::1]", "::1")

#: What a route serves once its guards have passed: the request, and who is asking.
Endpoint = Callable[[Scope, Receive, Send, Principal], Awaitable[None]]
#: A guarded route, as the router hands it out: a plain ASGI callable.
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard(enum.Enum):
    """A check a route declares it runs before its endpoint; see the module docstring."""

    HOST = "host"
    AUTH = "auth"
    LIMIT = "limit"


class Errors(enum.Enum):
    """The shape a route's refusals are answered in (``asgi.respond_refusal``)."""

    RPC = "rpc"  #: an id-less JSON-RPC error (the MCP paths, and the pages and files beside them)
    JSON = "json"  #: ``{"error": message}``, and a fault of ours a 500 in the same shape (the page's APIs)


HOST, AUTH, LIMIT = Guard.HOST, Guard.AUTH, Guard.LIMIT


@dataclass(frozen=True, slots=True)
class Route:
    """One entry of the table: what it serves (``paths``, ``prefix``), how (``endpoint``, ``methods``),
    behind which ``guards``, and in which shape it refuses (``errors``)."""

    name: str
    endpoint: Endpoint
    guards: frozenset[Guard]
    paths: tuple[str, ...] = ()
    prefix: str | None = None
    methods: tuple[str, ...] = ()
    errors: Errors = Errors.RPC

    def __post_init__(self) -> None:
        if HOST not in self.guards:
            raise ValueError(f"route {self.name!r} must declare the Host and Origin guard")
        if LIMIT in self.guards and AUTH not in self.guards:
            raise ValueError(f"route {self.name!r}: the rate limit counts by principal, so it needs AUTH")

    def matches(self, path: str) -> bool:
        return path in self.paths or (self.prefix is not None and path.startswith(self.prefix))


#: the name of the route that takes the paths no other route takes
NOT_FOUND = "not found"


async def _not_found(scope: Scope, receive: Receive, send: Send, principal: Principal) -> None:
    await respond(send, 404, b"not found", b"text/plain")


def not_found() -> Route:
    """The fallback: a 404, after the Host and Origin checks as everything else."""
    return Route(NOT_FOUND, _not_found, frozenset({HOST}))


def host_allowed(host: str | None, allowed: frozenset[str]) -> bool:
    if host is None:
        return False
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return host in allowed or name in allowed


class Checks:
    """What the guards check against: the allowed Host and Origin values, the authenticator, the limiter."""

    def __init__(self, allowed_hosts: frozenset[str], allowed_origins: frozenset[str],
                 auth: Authenticator | None, limiter: RateLimiter | None) -> None:
        self.allowed_hosts = frozenset(LOOPBACK) | allowed_hosts
        self.allowed_origins = allowed_origins
        self.auth = auth
        self.limiter = limiter
        #: the Host and Origin checks' verdicts by the headers' values ("" when both pass, else the refusal)
        self._verdicts: dict[tuple[bytes, bytes | None], str] = {}
        #: principals by client address, kept because most requests come from a few
        self._peers: dict[str, Principal] = {}

    def host(self, scope: Scope) -> None:
        """``HOST``: refuse (505, 400, 403) unless HTTP/1.x with one Host, and Host and Origin allowed."""
        if scope.get("http_version") not in ("1.1", "1.0"):
            raise HttpError(505, "only HTTP/1.1 is served here")
        headers = headers_of(scope)
        host = headers.get(b"host")
        if host is None or (len(headers) != len(scope["headers"])
                            and sum(name == b"host" for name, _ in scope["headers"]) > 1):
            # RFC 9112 section 3.2: exactly one Host; which of two a proxy would route by is anyone's guess.
            raise HttpError(400, "a request needs exactly one Host header")
        origin = headers.get(b"origin")
        refusal = self._verdicts.get((host, origin))
        if refusal is None:
            refusal = self._verdict(host, origin)
        if refusal:
            raise HttpError(403, refusal)

    def _verdict(self, host: bytes, origin: bytes | None) -> str:
        """The Host and Origin checks for these values: "" when both pass, else the refusal's message. Kept
        for the next request (a client sends the same values every time) unless the values are long."""
        if not host_allowed(host.decode("latin-1"), self.allowed_hosts):
            refusal = "Host not allowed"
        elif origin is not None and not self._origin_ok(origin.decode("latin-1")):
            refusal = "Origin not allowed"
        else:
            refusal = ""
        if len(host) + len(origin or b"") <= 512:
            if len(self._verdicts) >= 1024:
                self._verdicts.clear()
            self._verdicts[(host, origin)] = refusal
        return refusal

    def _origin_ok(self, origin: str) -> bool:
        if origin in self.allowed_origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and (parts.hostname or "") in ("localhost", "127.0.0.1", "::1")

    def peer(self, scope: Scope) -> Principal:
        """Without authentication, who is asking is the client's address."""
        client = scope.get("client")
        address = str(client[0]) if client else "local"
        principal = self._peers.get(address)
        if principal is None:
            if len(self._peers) >= 1024:
                self._peers.clear()
            principal = self._peers[address] = Principal(address, authenticated=False)
        return principal

    async def authenticated(self, scope: Scope) -> Principal:
        """``AUTH``: who is asking, by the request's credentials (401/403 when they say nobody)."""
        assert self.auth is not None
        try:
            return await self.auth.authenticate(header(scope, b"authorization"))
        except AuthError as exc:
            raise HttpError(exc.status, exc.message, headers=[(b"www-authenticate", self.auth.challenge(exc))]) \
                from None

    def limit(self, principal: Principal) -> None:
        """``LIMIT``: refuse (429) a principal past its rate."""
        if self.limiter is not None:
            wait = self.limiter.check(principal.name)
            if wait > 0:
                raise HttpError(429, "too many requests; slow down", error=too_many(wait),
                                headers=[(b"retry-after", b"%d" % retry_after(wait))])


def guarded(route: Route, checks: Checks) -> Asgi:
    """``route``'s endpoint wrapped in the guards it declares (in the order HOST, AUTH, LIMIT), then its
    method check."""
    endpoint, methods = route.endpoint, route.methods
    authenticates, limits = AUTH in route.guards, LIMIT in route.guards
    allow = [(b"allow", ", ".join(methods).encode())]

    async def run(scope: Scope, receive: Receive, send: Send) -> None:
        checks.host(scope)
        principal = checks.peer(scope) if checks.auth is None or not authenticates \
            else await checks.authenticated(scope)
        if limits:
            checks.limit(principal)
        if methods and scope["method"] not in methods:
            await respond(send, 405, b"", None, allow)
            return
        await endpoint(scope, receive, send, principal)

    return run


class Router:
    """Which route serves a path: the first of the table that takes it, else the fallback."""

    def __init__(self, routes: Iterable[Route], checks: Checks, fallback: Route | None = None) -> None:
        self.routes = tuple(routes)
        self.fallback = fallback or not_found()
        bound = [(route, guarded(route, checks)) for route in self.routes]
        self._fallback = (self.fallback, guarded(self.fallback, checks))
        #: each exact path to its route: the first that takes it, which may be a prefix before it
        self._exact = {path: next(pair for pair in bound if pair[0].matches(path))
                       for route in self.routes for path in route.paths}
        #: a path not in ``_exact`` can only be a prefix route's
        self._prefixed = [(pair[0].prefix, pair) for pair in bound if pair[0].prefix is not None]

    def resolve(self, path: str) -> tuple[Route, Asgi]:
        """The route serving ``path``, and its guarded endpoint."""
        found = self._exact.get(path)
        if found is not None:
            return found
        for prefix, pair in self._prefixed:
            if path.startswith(prefix):
                return pair
        return self._fallback
