"""Finding a server's authorization server, as the MCP authorization spec (2025-11-25) orders it.

1. Protected-resource metadata (RFC 9728): the URL in the 401's ``WWW-Authenticate: Bearer
   resource_metadata="..."`` if there is one, else the well-known URL with the server's path inserted
   (``/.well-known/oauth-protected-resource/mcp``), then the root one. Its ``resource`` must name the
   server we asked (RFC 9728 3.3), or a token minted for it could be replayed to another.
   A 2025-03-26 server publishes none: then its own origin may be the authorization server.
2. Authorization-server metadata for its first authorization server: RFC 8414 with path insertion, then
   OpenID Connect discovery with path insertion, then OIDC with the path appended (an issuer without a
   path: RFC 8414, then OIDC). The document's ``issuer`` must be the issuer we asked about (RFC 8414
   3.3), and it must advertise PKCE with S256 (the spec: otherwise the client must refuse).

Every document is fetched without following redirects, at most ``MAX_METADATA`` bytes, and every URL in
it that receives our credentials must be https (http only on this machine's loopback, for tests and
local servers): metadata is attacker-supplied until these checks pass.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ..protocol.errors import OAuthError

if TYPE_CHECKING:
    import httpx  # imported when a server first asks for a token, not with the client

#: The most one metadata document (or any OAuth JSON answer read here) may hold.
MAX_METADATA = 256 * 1024
_PARAM = re.compile(r'\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*,?')


def bearer_params(challenge: str) -> dict[str, str]:
    """The auth-params of the Bearer challenge in a WWW-Authenticate value (lower-cased names)."""
    match = re.search(r"(?:^|,)\s*bearer(?:\s+|$)", challenge, re.IGNORECASE)
    if match is None:
        return {}
    params: dict[str, str] = {}
    rest = challenge[match.end():]
    position = 0
    while position < len(rest):
        found = _PARAM.match(rest, position)
        if found is None or found.end() == position:
            break
        name, quoted, plain = found.groups()
        params.setdefault(name.lower(), re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else plain)
        position = found.end()
    return params


def is_loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: object, what: str) -> str:
    """``url`` if it is an absolute https URL (http only for loopback hosts), else an ``OAuthError``."""
    if not isinstance(url, str) or not url:
        raise OAuthError(f"{what} is missing or not a string")
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and is_loopback(parts.hostname):
        return url
    if parts.scheme == "http":
        raise OAuthError(f"{what} {url} is plain http on another machine; OAuth needs https there")
    raise OAuthError(f"{what} {url!r} is not an https URL")


def _insert(url: str, suffix: str) -> str:
    """RFC 8414/9728: the well-known segment between the host and the URL's path."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{suffix}{path}", "", ""))


def _root(url: str, suffix: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{suffix}", "", ""))


async def fetch_json(http: httpx.AsyncClient, url: str, what: str) -> dict[str, Any] | None:
    """The JSON object at ``url``; None if it answers 404 or 4xx (not there), an ``OAuthError`` for the rest."""
    import httpx

    try:
        async with http.stream("GET", url, headers={"accept": "application/json"}) as response:
            if response.is_redirect:
                raise OAuthError(f"{what} at {url} redirects to {response.headers.get('location')!r}; "
                                 "promptdeck does not follow redirects for OAuth metadata")
            if 400 <= response.status_code < 500:
                return None
            if response.status_code != 200:
                raise OAuthError(f"{what} at {url}: HTTP {response.status_code}")
            body = await read_bounded(response, url, what)
    except httpx.HTTPError as exc:
        raise OAuthError(f"cannot fetch {what} from {url}: {exc}") from None
    return json_object(body, url, what)


async def read_bounded(response: httpx.Response, url: str, what: str) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_METADATA:
        raise OAuthError(f"{what} at {url} is over {MAX_METADATA} bytes")
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > MAX_METADATA:
            raise OAuthError(f"{what} at {url} is over {MAX_METADATA} bytes")
        parts.append(chunk)
    return b"".join(parts)


def json_object(body: bytes, url: str, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        raise OAuthError(f"{what} at {url} is not JSON") from None
    if not isinstance(doc, dict):
        raise OAuthError(f"{what} at {url} is not a JSON object")
    return doc


def resource_allowed(server_url: str, resource: str) -> bool:
    """Does the metadata's ``resource`` name the server at ``server_url`` (the same URL, or a path above it)?"""
    server, named = urlsplit(server_url), urlsplit(resource)
    if (server.scheme.lower(), server.netloc.lower()) != (named.scheme.lower(), named.netloc.lower()):
        return False
    base = named.path.rstrip("/")
    return server.path.rstrip("/") == base or server.path.startswith(base + "/")


async def protected_resource(http: httpx.AsyncClient, server_url: str, metadata_url: str | None,
                             ) -> dict[str, Any] | None:
    """The server's RFC 9728 metadata, validated; None if it publishes none (not an OAuth server)."""
    what = "the protected-resource metadata"
    if metadata_url is not None:
        candidates = [check_url(metadata_url, "the resource_metadata URL in the server's WWW-Authenticate")]
    else:
        candidates = list(dict.fromkeys((_insert(server_url, "oauth-protected-resource"),
                                         _root(server_url, "oauth-protected-resource"))))
    for url in candidates:
        doc = await fetch_json(http, url, what)
        if doc is None:
            if metadata_url is not None:
                raise OAuthError(f"the server named {url} for its {what}, which is not there")
            continue
        resource = doc.get("resource")
        if not isinstance(resource, str) or not resource_allowed(server_url, resource):
            raise OAuthError(f"{what} at {url} is for resource {resource!r}, not for {server_url}; refused "
                             "(a token for another resource must not be sent here)")
        servers = doc.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
            raise OAuthError(f"{what} at {url} names no authorization_servers")
        for server in servers:
            check_url(server, f"the authorization server named by {url}")
        return doc
    return None


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order the MCP spec (2025-11-25) says to try them."""
    parts = urlsplit(issuer)
    if parts.path.strip("/"):
        appended = issuer.rstrip("/") + "/.well-known/openid-configuration"
        return [_insert(issuer, "oauth-authorization-server"), _insert(issuer, "openid-configuration"), appended]
    return [_root(issuer, "oauth-authorization-server"), _root(issuer, "openid-configuration")]


async def authorization_server(http: httpx.AsyncClient, issuer: str) -> dict[str, Any]:
    """The issuer's RFC 8414 / OIDC metadata, validated (issuer, PKCE S256, https endpoints)."""
    found = await find_authorization_server(http, issuer)
    if found is None:
        raise OAuthError(f"no authorization server metadata for {issuer} (tried {', '.join(metadata_urls(issuer))})")
    return found


async def find_authorization_server(http: httpx.AsyncClient, issuer: str, *,
                                    same_origin: bool = False) -> dict[str, Any] | None:
    """``authorization_server``, or None when the issuer publishes no metadata at all. ``same_origin``
    accepts a document naming any issuer on the issuer's origin (2025-03-26 servers, below)."""
    for url in metadata_urls(issuer):
        doc = await fetch_json(http, url, "the authorization server metadata")
        if doc is None:
            continue
        named = doc.get("issuer")
        # A trailing slash is the only difference tolerated: URL libraries add one to an empty path.
        exact = isinstance(named, str) and named.rstrip("/") == issuer.rstrip("/")
        if not exact and not (same_origin and isinstance(named, str) and _same_origin(named, issuer)):
            raise OAuthError(f"the authorization server metadata at {url} names issuer {doc.get('issuer')!r}, "
                             f"not {issuer}; refused (RFC 8414 3.3)")
        methods = doc.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            raise OAuthError(f"the authorization server {issuer} does not advertise PKCE with S256 "
                             "(code_challenge_methods_supported); MCP clients must refuse it")
        for field in ("authorization_endpoint", "token_endpoint"):
            check_url(doc.get(field), f"the {field} of {issuer}")
        if doc.get("registration_endpoint") is not None:
            check_url(doc["registration_endpoint"], f"the registration_endpoint of {issuer}")
        return doc
    return None


def _same_origin(one: str, other: str) -> bool:
    a, b = urlsplit(one), urlsplit(other)
    return (a.scheme.lower(), a.netloc.lower()) == (b.scheme.lower(), b.netloc.lower())


async def legacy_resource(http: httpx.AsyncClient,
                          server_url: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A 2025-03-26 server, which publishes no resource metadata: its own origin may be its authorization
    server, with RFC 8414 metadata at the origin's well-known URL (whose ``issuer`` that spec's servers
    put anywhere on the origin: the origin is the server's own, so nothing is trusted that was not
    already). (A resource document standing for it, the metadata), or None.

    The older spec's fallback to guessed endpoints (/authorize, /token) is not followed: a server that
    publishes nothing is taken not to do OAuth, rather than a person sent to a page that may not exist.
    """
    parts = urlsplit(server_url)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    try:
        check_url(origin, "the server")
    except OAuthError:
        return None  # plain http elsewhere: no credentials for it
    metadata = await find_authorization_server(http, origin, same_origin=True)
    if metadata is None:
        return None
    return {"resource": server_url, "authorization_servers": [metadata["issuer"]]}, metadata
