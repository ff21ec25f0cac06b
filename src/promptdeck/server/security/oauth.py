"""OAuth 2.1 resource-server mode: JWT access tokens checked against the issuer's JWKS.

promptdeck never issues tokens. It publishes RFC 9728 protected-resource
metadata (which authorization server to ask, which scopes exist), answers 401
with ``WWW-Authenticate: Bearer resource_metadata=...`` so clients can find it,
and accepts a token only when PyJWT verifies its signature with a key from the
issuer's JWKS and its ``iss``, ``aud`` (this resource, RFC 8707) and ``exp``
claims hold. Only asymmetric algorithms are accepted: a JWKS holds public keys,
and letting ``HS256`` through would turn a public key into a shared secret.

Keys are fetched when first needed and cached; a token signed with an unknown
``kid`` triggers one refetch (key rotation), at most every ``REFETCH_SECONDS``,
so a flood of forged ``kid`` values cannot hammer the issuer.

A token's ``alg`` header is attacker-controlled: before PyJWT sees the token,
the algorithm must belong to the key's family (``RS*``/``PS*`` for RSA, the
curve's own ``ES*`` for EC, ``EdDSA`` for OKP) and match the ``alg`` the JWKS
declares for that key, if any. PyJWT otherwise fails with a ``TypeError`` on
such a mismatch, which used to escape as a 500 with a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...protocol.errors import AuthError, LibraryError
from .principals import Principal, missing_scopes
from .tokens import bearer, bearer_challenge

log = logging.getLogger("promptdeck.oauth")

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
KEYS_TTL_SECONDS = 300.0
REFETCH_SECONDS = 30.0
CACHE_TOKENS = 10_000
METADATA_PREFIX = "/.well-known/oauth-protected-resource"


def _well_known(base: str, suffix: str) -> str:
    """RFC 8414 section 3.1: the well-known segment goes between the host and the issuer's path."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{suffix}{parts.path.rstrip('/')}", "", ""))


class OAuthResource:
    """Authenticate requests by JWT; see the module docstring.

    ``resource`` is this endpoint's public URL (what clients connect to, and the
    audience tokens must carry unless ``audience`` says otherwise).
    ``required_scopes`` must all be granted for any request (403 otherwise).
    """

    def __init__(self, *, issuer: str, resource: str, jwks_url: str | None = None, audience: str | None = None,
                 required_scopes: Iterable[str] = (), scopes_supported: Iterable[str] = (),
                 algorithms: Iterable[str] = ALGORITHMS, leeway_seconds: float = 30.0,
                 name: str | None = None) -> None:
        try:
            import jwt  # noqa: F401 - fail at start-up, not on the first request
        except ImportError as exc:  # pragma: no cover - the oauth extra is missing
            from ...extras import needs  # the command that works from a clone: not on PyPI

            raise LibraryError(needs("OAuth (PyJWT)", "oauth")) from exc
        for url, what in ((issuer, "issuer"), (resource, "resource URL"), (jwks_url, "JWKS URL")):
            if url is not None and urlsplit(url).scheme not in ("http", "https"):
                raise LibraryError(f"the OAuth {what} must be an http(s) URL, got {url!r}")
        unsafe = set(algorithms) - set(ALGORITHMS)
        if unsafe:
            raise LibraryError(f"unsupported JWT algorithms {sorted(unsafe)}: "
                               f"use asymmetric ones ({', '.join(ALGORITHMS)})")
        self.issuer = issuer
        self.resource = resource
        self.jwks_url = jwks_url
        self.audience = audience or resource
        self.required_scopes = tuple(required_scopes)
        self.scopes_supported = tuple(dict.fromkeys([*self.required_scopes, *scopes_supported]))
        self.algorithms = tuple(algorithms)
        self.leeway = leeway_seconds
        self.name = name
        self.metadata_path = METADATA_PREFIX + urlsplit(resource).path.rstrip("/")
        self.metadata_url = urlunsplit((*urlsplit(resource)[:2], self.metadata_path, "", ""))
        #: the issuer's signing keys by ``kid``: each PyJWK with the ``alg`` its JWK declares (or None)
        self._keys: dict[str | None, tuple[Any, str | None]] = {}
        self._keys_at = float("-inf")
        self._lock = asyncio.Lock()
        self._verified: dict[str, tuple[Principal, float]] = {}

    # -- what clients read ---------------------------------------------------------------------

    def metadata(self) -> bytes:
        """The RFC 9728 protected-resource metadata document."""
        doc: dict[str, Any] = {"resource": self.resource, "authorization_servers": [self.issuer],
                               "bearer_methods_supported": ["header"]}
        if self.scopes_supported:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.name:
            doc["resource_name"] = self.name
        return json.dumps(doc).encode()

    def challenge(self, error: AuthError) -> bytes:
        if error.status == 401 and not error.scopes and self.required_scopes:
            error.scopes = self.required_scopes  # tell the client up front what to ask for
        return bearer_challenge(error, b'resource_metadata="%s"' % self.metadata_url.encode())

    # -- checking a request --------------------------------------------------------------------

    async def authenticate(self, authorization: str | None) -> Principal:
        token = bearer(authorization)
        if token is None:
            raise AuthError("a bearer token is required", error=None)
        now = time.time()
        cached = self._verified.get(token)
        if cached is not None and cached[1] > now:
            principal = cached[0]
        else:
            principal, expires = await self._verify(token)
            if len(self._verified) >= CACHE_TOKENS:
                self._verified.clear()
            self._verified[token] = (principal, expires)
        missing = missing_scopes(principal.scopes, self.required_scopes)
        if missing:
            raise AuthError(f"the token lacks the scope {' '.join(missing)}", status=403,
                            error="insufficient_scope", scopes=self.required_scopes)
        return principal

    async def _verify(self, token: str) -> tuple[Principal, float]:
        import jwt

        try:
            head = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise AuthError("the bearer token is not a JWT") from None
        alg = head.get("alg")
        if alg not in self.algorithms:
            raise AuthError(f"JWT algorithm {alg!r} is not accepted")
        found = await self._key(head.get("kid"))
        if found is None:
            raise AuthError("the JWT was signed with a key the issuer does not publish")
        key, declared = found
        if not _key_fits(key.key_type, key.algorithm_name, declared, alg):
            raise AuthError(f"JWT algorithm {alg!r} does not match the issuer's {key.key_type} key")
        try:
            claims = jwt.decode(token, key.key, algorithms=[alg], audience=self.audience, issuer=self.issuer,
                                leeway=self.leeway, options={"require": ["exp", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise AuthError("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise AuthError("the token was not issued for this resource (audience)") from None
        except jwt.InvalidIssuerError:
            raise AuthError("the token was not issued by the trusted issuer") from None
        except (jwt.PyJWTError, TypeError, ValueError):
            # PyJWT's messages can carry reprs of internals; the client learns only that it failed.
            # (TypeError/ValueError: a key/algorithm pairing the check above did not foresee.)
            raise AuthError("the token's signature or claims are not valid") from None
        subject = claims.get("sub") or claims.get("client_id")
        if not isinstance(subject, str) or not subject:
            raise AuthError("the token names no subject")
        return Principal(subject, _scopes_of(claims)), float(claims["exp"])

    async def _key(self, kid: object) -> tuple[Any, str | None] | None:
        if not isinstance(kid, str | None):
            return None
        await self._refresh(KEYS_TTL_SECONDS)
        if kid not in self._keys:
            await self._refresh(REFETCH_SECONDS)  # maybe the issuer rotated its keys
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))  # one key and a token without kid: unambiguous
        return self._keys.get(kid)

    async def _refresh(self, min_age: float) -> None:
        """Refetch the keys if the ones held are older than ``min_age`` seconds."""
        if time.monotonic() - self._keys_at < min_age:
            return
        async with self._lock:
            if time.monotonic() - self._keys_at < min_age:
                return  # another request refreshed them while this one waited
            self._keys_at = time.monotonic()
            try:
                self._keys = await self._fetch_keys()
            except (OSError, ValueError, LibraryError) as exc:
                # Keep the keys we had: an issuer outage must not lock out holders of valid tokens.
                log.error("cannot fetch the issuer's keys: %s", exc)

    async def _fetch_keys(self) -> dict[str | None, tuple[Any, str | None]]:
        import httpx
        import jwt

        url = self.jwks_url or self.issuer
        try:
            async with httpx.AsyncClient(timeout=10, follow_redirects=False) as client:
                url = self.jwks_url or await self._discover(client)
                response = await client.get(url)
                if response.status_code != 200:
                    raise LibraryError(f"{url} answered HTTP {response.status_code}")
                doc = response.json()
        except httpx.HTTPError as exc:  # not an OSError: it would escape _refresh as a 500
            raise LibraryError(f"cannot reach {url}: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("keys"), list):
            raise LibraryError(f"{url} is not a JWKS (an object with a list of keys)")
        try:
            keys = jwt.PyJWKSet.from_dict(doc).keys
        except jwt.PyJWTError as exc:
            raise LibraryError(f"{url} is not a usable JWKS: {exc}") from None
        # PyJWK does not say whether its algorithm was declared or guessed from the key type.
        declared = {jwk.get("kid"): jwk.get("alg") for jwk in doc["keys"] if isinstance(jwk, dict)}
        usable = {key.key_id: (key, _text_or_none(declared.get(key.key_id))) for key in keys
                  if key.public_key_use in (None, "sig")}
        log.info("fetched %d signing keys from %s", len(usable), url)
        return usable

    async def _discover(self, client: Any) -> str:
        """The JWKS URL from the issuer's RFC 8414 (or OpenID) metadata."""
        for url in (_well_known(self.issuer, "oauth-authorization-server"),
                    self.issuer.rstrip("/") + "/.well-known/openid-configuration"):
            response = await client.get(url)
            if response.status_code != 200:
                continue
            doc = response.json()
            if not isinstance(doc, dict):
                continue
            if doc.get("issuer") != self.issuer:
                raise LibraryError(f"{url} describes issuer {doc.get('issuer')!r}, not {self.issuer!r}")
            jwks_uri = doc.get("jwks_uri")
            if isinstance(jwks_uri, str):
                return jwks_uri
        raise LibraryError(f"no authorization server metadata with a jwks_uri found for {self.issuer}")


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _key_fits(key_type: str | None, key_alg: str, declared: str | None, alg: str) -> bool:
    """May a key of this type (and declared ``alg``) verify a token whose header says ``alg``?"""
    if declared is not None and declared != alg:
        return False
    if key_type == "RSA":
        return alg[:2] in ("RS", "PS")
    if key_type in ("EC", "OKP"):
        return alg == key_alg  # PyJWK names the one algorithm of the key's curve
    return False  # "oct" and anything newer: never with the asymmetric algorithms accepted here


def _scopes_of(claims: dict[str, Any]) -> frozenset[str]:
    """Granted scopes: the ``scope`` claim (RFC 8693/9068, space-separated) or ``scp`` (string or list)."""
    raw = claims.get("scope", claims.get("scp", ""))
    if isinstance(raw, str):
        return frozenset(raw.split())
    if isinstance(raw, list):
        return frozenset(s for s in raw if isinstance(s, str))
    return frozenset()
