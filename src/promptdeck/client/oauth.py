"""OAuth for promptdeck's client: reach MCP servers that want an access token (the MCP authorization spec).

``OAuth`` is what ``connect(url, auth=OAuth(...))`` takes. The HTTP client asks it for the token of
each request to the server (``token``), and tells it when the server refuses one (``unauthorized``):

- a 401 starts discovery (``oauth_discovery``), then registration, then a grant; a 401 to a token we
  hold first tries its refresh token; a 403 ``insufficient_scope`` signs in again asking for the scopes
  the server named (step-up);
- registration: a configured client id (and secret), else the one registered earlier with that issuer
  (kept in the token file), else dynamic client registration (RFC 7591) where the issuer offers it, as a
  ``native`` application (its redirect is this machine's loopback; the 2026-07-28 rules ask for an
  ``application_type``);
- the sign-in's answer must come from the issuer it was sent to (RFC 9207, ``oauth_loopback``);
- people: authorization code with PKCE S256 and a loopback redirect (RFC 8252), the ``resource``
  (RFC 8707) sent with both requests; the browser is opened by ``open_url`` (``webbrowser.open`` by
  default, in a thread: it may block until the browser exits);
- services (``client_credentials=True``): the client credentials grant, no browser;
- a token close to its expiry is refreshed before it is sent.

Protocol requests (token, refresh, client credentials) go through authlib's httpx client (its PKCE,
token parsing and client authentication); discovery and registration are plain bounded httpx requests.
The code exchange and the refresh name the ``client_id`` in the body even when a secret authenticates
the client (RFC 6749 4.1.3 asks it of public clients only): some servers, the MCP SDK's among them,
look a client up by it before reading the Basic credentials.
Tokens are never logged, and never put into an error message.

Client ID Metadata Documents (preferred since 2025-11-25) need an https URL serving the client's document,
which a command on a laptop does not have: promptdeck registers dynamically then. An application that
publishes one gives its URL as ``client_id``: it is used with an authorization server that advertises
``client_id_metadata_document_supported``, and registration is the fallback with one that does not.

Every credential is an issuer's (SEP-2352): a registered client is kept per issuer (the token file's
``clients``), tokens per resource and issuer, and a grant's tokens name the client they were got with, so
that a refresh sends them with that client only (``_client_of``). A configured client id (and secret) was
registered with one authorization server: it is bound to the first issuer it signs in with, and a server
that names another is refused before anything is sent there (``_bind``); a Client ID Metadata Document's
URL is the same client everywhere, and is not bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..protocol.errors import OAuthError
from .oauth_discovery import (
    MAX_METADATA,
    authorization_server,
    bearer_params,
    check_url,
    json_object,
    legacy_resource,
    protected_resource,
    read_bounded,
)
from .oauth_store import TokenStore

if TYPE_CHECKING:
    from .oauth_loopback import Loopback

log = logging.getLogger("promptdeck.client.oauth")

#: A token this close to its expiry (seconds) is refreshed before it is sent.
REFRESH_MARGIN = 60.0
#: How long a person has to sign in in the browser.
LOGIN_TIMEOUT = 300.0
_GRANT_TYPES = ["authorization_code", "refresh_token"]
#: What dynamic registration says the client is: a program on the user's machine with a loopback redirect.
APPLICATION_TYPE = "native"


class _Grant:
    """What we hold for one MCP server URL: where its tokens come from, and the tokens."""

    def __init__(self, resource: str, issuer: str, tokens: dict[str, Any]) -> None:
        self.resource = resource
        self.issuer = issuer
        self.tokens = tokens
        #: expired and could not be refreshed: only a new sign-in helps
        self.dead = False

    @property
    def access_token(self) -> str | None:
        value = self.tokens.get("access_token")
        return value if isinstance(value, str) else None

    def expiring(self) -> bool:
        expires = self.tokens.get("expires_at")
        if not isinstance(expires, int | float):
            return False
        # A token that lives less than two margins is refreshed in the second half of its life, not at once.
        lifetime = self.tokens.get("expires_in")
        margin = min(REFRESH_MARGIN, lifetime / 2) if isinstance(lifetime, int | float) else REFRESH_MARGIN
        return time.time() > expires - margin


class OAuth:
    """Sign in to OAuth-protected MCP servers; pass it as ``connect(url, auth=OAuth())``.

    ``client_id``/``client_secret``: a client registered with the authorization server beforehand (else
    dynamic registration is used); a ``client_id`` that is an https URL with a path, without a secret, is the
    application's Client ID Metadata Document, used where the authorization server reads them (else dynamic
    registration is used); ``client_credentials``: a service signing in as itself (needs both);
    ``scopes``: what to ask for (default: what the server's 401 or metadata names); ``open_url``: shows
    the sign-in page to a person (``webbrowser.open`` by default; may return an awaitable); ``store``:
    the token file (a ``TokenStore``, a path, or None for the default; ``False`` keeps tokens in memory).
    """

    def __init__(self, *, client_id: str | None = None, client_secret: str | None = None,
                 client_credentials: bool = False, scopes: Iterable[str] = (),
                 open_url: Callable[[str], object] | None = None, store: TokenStore | str | os.PathLike[str]
                 | None | bool = None, client_name: str = "promptdeck", login_timeout: float = LOGIN_TIMEOUT,
                 timeout: float = 30.0) -> None:
        # Fail when configured, not on the first 401; imported only then (a server that never asks for a
        # token costs no import of authlib or httpx).
        if importlib.util.find_spec("authlib") is None or importlib.util.find_spec("httpx") is None:
            from ..extras import needs  # the command that works from a clone: not on PyPI

            raise OAuthError(needs("OAuth (authlib, httpx)", "oauth"))
        if client_credentials and (client_id is None or client_secret is None):
            raise OAuthError("the client credentials grant needs a client id and its secret")
        if client_secret is not None and client_id is None:
            raise OAuthError("a client secret goes with a client id")
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_credentials = client_credentials
        self.scopes = tuple(scopes)
        self.open_url = open_url
        self.client_name = client_name
        self.login_timeout = login_timeout
        self.timeout = timeout
        self.store: TokenStore | None = (None if store is False else store if isinstance(store, TokenStore)
                                         else TokenStore(None if store is None or store is True else store))
        self._grants: dict[str, _Grant] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        #: servers that answered 401 without publishing OAuth metadata
        self._plain: set[str] = set()
        #: servers whose entry in the token file has been looked for
        self._looked_up: set[str] = set()
        #: clients registered dynamically, by issuer (kept in the token file too, if there is one)
        self._clients: dict[str, dict[str, Any]] = {}
        #: the issuer the configured client signed in with first: the only one it is sent to
        self._bound: str | None = None

    # -- what the HTTP client calls ------------------------------------------------------------

    async def token(self, url: str) -> str | None:
        """The access token to send to the MCP server at ``url`` (refreshed first if about to expire)."""
        grant = self._grant(url)
        if grant is None or grant.dead:
            return None
        if not grant.expiring():
            return grant.access_token
        async with self._lock(url):
            grant = self._grants.get(url, grant)  # another request may have refreshed it meanwhile
            if grant.dead:
                return None
            if grant.expiring():
                if await self._refresh(url, grant):
                    grant = self._grants[url]
                elif self.client_credentials:
                    return await self._sign_in_again(url, grant)
                else:
                    grant.dead = True
                    return None  # the server's 401 starts a new sign-in
            return grant.access_token

    async def unauthorized(self, url: str, status: int, challenge: str, sent: str | None) -> bool:
        """The server at ``url`` refused the token ``sent`` with ``status`` (401/403) and ``challenge`` (its
        WWW-Authenticate). True if there is now a token worth trying; False if OAuth cannot help."""
        params = bearer_params(challenge)
        async with self._lock(url):
            grant = self._grant(url, reload=True)
            if grant is not None and grant.dead:
                grant = None
            if grant is not None and grant.access_token != sent:
                return True  # another request got a new token meanwhile
            if status == 403:
                if params.get("error") != "insufficient_scope" or grant is None:
                    return False
                wanted = set((params.get("scope") or "").split()) | set(str(grant.tokens.get("scope", "")).split())
                granted = set(str(grant.tokens.get("scope", "")).split())
                if wanted <= granted:
                    return False  # asking again for what we have would loop
                return await self._authorize(url, params, sorted(wanted))
            if grant is not None and await self._refresh(url, grant):
                return True
            if url in self._plain:
                return False
            if await self._authorize(url, params, None):
                return True
            self._plain.add(url)  # no OAuth metadata: the 401 stands, and is not looked into again
            return False

    # -- state ---------------------------------------------------------------------------------

    def _lock(self, url: str) -> asyncio.Lock:
        return self._locks.setdefault(url, asyncio.Lock())

    def _grant(self, url: str, *, reload: bool = False) -> _Grant | None:
        """The grant held for ``url``; the token file is read for it once (and again on ``reload``, after a
        401: another process may have signed in since), not on every request."""
        grant = self._grants.get(url)
        if grant is None and self.store is not None and (reload or url not in self._looked_up):
            self._looked_up.add(url)
            known = self.store.server(url)
            if known is not None:
                resource, issuer = str(known.get("resource")), str(known.get("issuer"))
                tokens = self.store.tokens(resource, issuer)
                if tokens is not None and isinstance(tokens.get("access_token"), str):
                    grant = self._grants[url] = _Grant(resource, issuer, tokens)
        return grant

    def _keep(self, url: str, grant: _Grant) -> None:
        self._grants[url] = grant
        if self.store is not None:
            self.store.save_tokens(url, grant.resource, grant.issuer, grant.tokens)

    def forget(self, url: str) -> bool:
        """Drop the tokens held for ``url`` (in memory and in the token file); True if there were any."""
        held = self._grants.pop(url, None) is not None
        return (self.store.forget(url) if self.store is not None else False) or held

    # -- flows ---------------------------------------------------------------------------------

    def _http(self) -> Any:
        import httpx

        return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, trust_env=True)

    async def _authorize(self, url: str, params: dict[str, str], scopes: list[str] | None) -> bool:
        """Discovery, registration and a grant; False if the server publishes no OAuth metadata."""
        async with self._http() as http:
            resource_doc = await protected_resource(http, url, params.get("resource_metadata"))
            metadata: dict[str, Any] | None = None
            if resource_doc is None:
                legacy = await legacy_resource(http, url)
                if legacy is None:
                    return False
                resource_doc, metadata = legacy
            issuer = resource_doc["authorization_servers"][0]
            self._bind(url, issuer)
            metadata = metadata or await authorization_server(http, issuer)
            if scopes is None:
                named = self.scopes or tuple((params.get("scope") or "").split()) or tuple(
                    s for s in resource_doc.get("scopes_supported") or () if isinstance(s, str))
                scopes = list(named)
            resource = str(resource_doc["resource"])
            if self.client_credentials:
                tokens = await self._client_credentials(metadata, resource, scopes)
            else:
                tokens = await self._authorization_code(http, metadata, issuer, resource, scopes)
        tokens["token_endpoint"] = metadata["token_endpoint"]
        self._keep(url, _Grant(resource, issuer, tokens))
        log.info("signed in to %s with %s", url, issuer)
        return True

    async def _sign_in_again(self, url: str, grant: _Grant) -> str | None:
        """A service's token ran out: the client credentials grant again (it has no refresh token)."""
        async with self._http() as http:
            metadata = await authorization_server(http, grant.issuer)
        scopes = str(grant.tokens.get("scope", "")).split()
        tokens = await self._client_credentials(metadata, grant.resource, scopes)
        tokens["token_endpoint"] = metadata["token_endpoint"]
        self._keep(url, _Grant(grant.resource, grant.issuer, tokens))
        return self._grants[url].access_token

    def _oauth_client(self, client: dict[str, Any], scopes: list[str] | None, **options: Any) -> Any:
        from authlib.integrations.httpx_client import AsyncOAuth2Client

        secret = client.get("client_secret")
        method = client.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none")
        return AsyncOAuth2Client(client_id=client["client_id"], client_secret=secret, token_endpoint_auth_method=method,
                                 scope=" ".join(scopes) if scopes else None, timeout=self.timeout,
                                 follow_redirects=False, event_hooks={"response": [_bounded]}, **options)

    async def _token_request(self, what: str, call: Callable[[], Any]) -> dict[str, Any]:
        """Run one authlib token request; its failures become an ``OAuthError`` (without any token in it)."""
        from authlib.integrations.base_client import OAuthError as AuthlibError

        try:
            token = await call()
        except AuthlibError as exc:
            said = f" ({str(exc.description)[:300]})" if exc.description else ""
            raise OAuthError(f"{what} refused: {str(exc.error)[:100]}{said}") from None
        except OAuthError:
            raise
        except Exception as exc:  # httpx errors, a body that is not JSON: name the kind, not the content
            raise OAuthError(f"{what} failed: {type(exc).__name__}") from None
        tokens = dict(token)
        if not isinstance(tokens.get("access_token"), str) or str(tokens.get("token_type", "")).lower() != "bearer":
            raise OAuthError(f"{what}: the answer holds no bearer access token")
        if "expires_at" not in tokens and isinstance(tokens.get("expires_in"), int | float):
            tokens["expires_at"] = int(time.time() + tokens["expires_in"])
        return tokens

    async def _refresh(self, url: str, grant: _Grant) -> bool:
        """The refresh_token grant; True if it gave a new access token."""
        refresh_token = grant.tokens.get("refresh_token")
        endpoint = grant.tokens.get("token_endpoint")
        client = self._client_of(grant)
        if not isinstance(refresh_token, str) or not isinstance(endpoint, str) or client is None:
            return False
        async with self._oauth_client(client, None) as session:
            try:
                tokens = await self._token_request(
                    "the token refresh", lambda: session.refresh_token(check_url(endpoint, "the token endpoint"),
                                                                       refresh_token=refresh_token,
                                                                       resource=grant.resource,
                                                                       **_named(client)))
            except OAuthError as exc:
                log.info("refreshing the token for %s failed (%s); signing in again", url, exc)
                return False
        tokens.setdefault("refresh_token", refresh_token)
        tokens.setdefault("scope", grant.tokens.get("scope"))
        tokens["token_endpoint"] = endpoint
        tokens["client_id"] = client["client_id"]
        self._keep(url, _Grant(grant.resource, grant.issuer, tokens))
        return True

    def _bind(self, url: str, issuer: str) -> None:
        """Hold the configured client to the issuer it first signs in with (a Client ID Metadata Document's URL
        excepted): its id, and any secret, belong to the authorization server it was registered with."""
        if self.client_id is None or (self.client_secret is None and is_metadata_document(self.client_id)):
            return
        if self._bound is None:
            self._bound = issuer
        elif self._bound != issuer:
            raise OAuthError(f"{url} signs in with the authorization server {issuer}, but the client id "
                             f"{self.client_id!r} is {self._bound}'s; refused, nothing was sent there: a client "
                             "registered with one authorization server is not sent to another (give this server "
                             "an OAuth of its own, with the client id registered there)")

    def _client_of(self, grant: _Grant) -> dict[str, Any] | None:
        """The client ``grant``'s tokens were got with: the configured one or the one registered with its issuer
        (tokens kept before they named their client: whichever of those there is)."""
        used = grant.tokens.get("client_id")
        for client in (self._configured(), self._registered(grant.issuer)):
            if client is not None and (used is None or client["client_id"] == used):
                return client
        return None

    def _configured_for(self, metadata: dict[str, Any]) -> dict[str, Any] | None:
        """The configured client, for an authorization server with ``metadata``; None when it is a Client ID
        Metadata Document that server does not read, and it offers registration instead."""
        client = self._configured()
        if client is not None and is_metadata_document(client["client_id"]) and "client_secret" not in client \
                and metadata.get("client_id_metadata_document_supported") is not True \
                and isinstance(metadata.get("registration_endpoint"), str):
            return None
        return client

    def _configured(self) -> dict[str, Any] | None:
        if self.client_id is None:
            return None
        found: dict[str, Any] = {"client_id": self.client_id}
        if self.client_secret is not None:
            found["client_secret"] = self.client_secret
        return found

    async def _client_credentials(self, metadata: dict[str, Any], resource: str,
                                  scopes: list[str]) -> dict[str, Any]:
        client = self._configured()
        assert client is not None
        methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        client["token_endpoint_auth_method"] = ("client_secret_basic" if "client_secret_basic" in methods
                                                else "client_secret_post")
        async with self._oauth_client(client, scopes) as session:
            return await self._token_request(
                "the client credentials grant",
                lambda: session.fetch_token(metadata["token_endpoint"], grant_type="client_credentials",
                                            resource=resource))

    async def _authorization_code(self, http: Any, metadata: dict[str, Any], issuer: str, resource: str,
                                  scopes: list[str]) -> dict[str, Any]:
        from authlib.common.security import generate_token

        from .oauth_loopback import Loopback

        configured = self._configured_for(metadata)
        stored = None if configured is not None else self._registered(issuer)
        # The answer's iss is compared with the issuer the metadata names (and was checked to be ``issuer``).
        answers = {"issuer": metadata["issuer"],
                   "iss_required": metadata.get("authorization_response_iss_parameter_supported") is True}
        # A registered client's redirect URI is exact at many servers: listen on its port again if free.
        port = _port_of(stored) if stored is not None else 0
        try:
            listener = await Loopback(port, **answers).__aenter__()
        except OAuthError:
            if port == 0:
                raise
            stored, listener = None, await Loopback(0, **answers).__aenter__()
        try:
            client = configured or stored
            if client is None or (configured is None and not _fits(client, listener.redirect_uri, scopes)):
                client = await self._register(http, metadata, issuer, listener.redirect_uri, scopes)
            session = self._oauth_client(client, scopes, redirect_uri=listener.redirect_uri,
                                         code_challenge_method="S256")
            async with session:
                verifier = generate_token(64)
                address, _ = session.create_authorization_url(metadata["authorization_endpoint"], state=listener.state,
                                                              code_verifier=verifier, resource=resource)
                code = await self._sign_in_page(address, listener)
                tokens = await self._token_request(
                    "the authorization code exchange",
                    lambda: session.fetch_token(metadata["token_endpoint"], grant_type="authorization_code",
                                                code=code, code_verifier=verifier, resource=resource,
                                                **_named(client)))
                tokens["client_id"] = client["client_id"]
                return tokens
        finally:
            await listener.__aexit__(None, None, None)

    async def _sign_in_page(self, address: str, listener: Loopback) -> str:
        """Show the sign-in page and wait for the code; a failure to show it (a test's browser) ends the wait."""
        shown = self._show(address)
        waiting = asyncio.ensure_future(listener.code(self.login_timeout))
        try:
            await asyncio.wait((waiting, shown), return_when=asyncio.FIRST_COMPLETED)
            if not waiting.done() and shown.done() and shown.exception() is not None:
                raise shown.exception()  # type: ignore[misc]
            return await waiting
        finally:
            waiting.cancel()

    def _show(self, address: str) -> asyncio.Future[None]:
        """Call ``open_url`` (default ``webbrowser.open``) in a thread of its own; the future ends with it.

        A browser command may block until the browser exits (``webbrowser`` waits for a ``$BROWSER``
        command), so the sign-in goes on without it, and the thread is a daemon: the command ends when
        the sign-in does, not when the browser is closed.
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        done.add_done_callback(lambda future: future.cancelled() or future.exception())  # never "unretrieved"

        def finish(task: asyncio.Future[Any]) -> None:
            if done.done():
                return
            error = None if task.cancelled() else task.exception()
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(None)

        def settle(shown: object, error: BaseException | None) -> None:
            if done.done():
                return
            if error is not None:
                done.set_exception(error)
            elif inspect.isawaitable(shown):
                asyncio.ensure_future(shown).add_done_callback(finish)
            else:
                done.set_result(None)

        def run() -> None:
            opener = self.open_url
            if opener is None:
                import webbrowser

                opener = webbrowser.open
            try:
                shown, error = opener(address), None
            except Exception as exc:
                shown, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
                loop.call_soon_threadsafe(settle, shown, error)

        threading.Thread(target=run, name="promptdeck-sign-in-page", daemon=True).start()
        return done

    async def _register(self, http: Any, metadata: dict[str, Any], issuer: str, redirect_uri: str,
                        scopes: list[str]) -> dict[str, Any]:
        """Dynamic client registration (RFC 7591) as a public client with this loopback redirect."""
        import httpx

        endpoint = metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise OAuthError(f"the authorization server {issuer} offers no dynamic client registration: register "
                             "promptdeck there and pass its client id (--client-id)")
        asked: dict[str, Any] = {"client_name": self.client_name, "redirect_uris": [redirect_uri],
                                 "grant_types": _GRANT_TYPES, "response_types": ["code"],
                                 "token_endpoint_auth_method": "none", "application_type": APPLICATION_TYPE}
        if scopes:
            asked["scope"] = " ".join(scopes)
        try:
            async with http.stream("POST", endpoint, json=asked) as response:
                body = await read_bounded(response, endpoint, "the registration answer")
        except httpx.HTTPError as exc:
            raise OAuthError(f"cannot register with {endpoint}: {exc}") from None
        if response.status_code not in (200, 201):
            raise OAuthError(f"the client registration at {endpoint} was refused: HTTP {response.status_code} "
                             f"{body[:200].decode(errors='replace')}")
        client = json_object(body, endpoint, "the registration answer")
        if not isinstance(client.get("client_id"), str):
            raise OAuthError(f"the registration answer from {endpoint} holds no client_id")
        client.setdefault("redirect_uris", [redirect_uri])
        self._clients[issuer] = client
        if self.store is not None:
            self.store.save_client(issuer, client)
        return client

    def _registered(self, issuer: str) -> dict[str, Any] | None:
        """The client registered dynamically with ``issuer``: in this process, else in the token file."""
        found = self._clients.get(issuer)
        if found is None and self.store is not None:
            found = self.store.client(issuer)
        return found


async def _bounded(response: Any) -> None:
    """Cap a token endpoint's answer at ``MAX_METADATA`` bytes, as every other OAuth document is.

    An httpx response hook runs once the head is in, before the body is read: a declared length over the
    cap is refused there, and the body stream is wrapped so that an undeclared one stops at the cap.
    authlib runs on httpx or on its successor httpx2, so the stream class is taken from the response's
    own package.
    """
    url = str(response.request.url)
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_METADATA:
        raise OAuthError(f"the answer from {url} is over {MAX_METADATA} bytes")
    package = sys.modules[type(response).__module__.partition(".")[0]]
    inner = response.stream

    class Bounded(package.AsyncByteStream):  # type: ignore[name-defined,misc]
        async def __aiter__(self) -> AsyncIterator[bytes]:
            size = 0
            async for chunk in inner:
                size += len(chunk)
                if size > MAX_METADATA:
                    raise OAuthError(f"the answer from {url} is over {MAX_METADATA} bytes")
                yield chunk

        async def aclose(self) -> None:
            await inner.aclose()

    response.stream = Bounded()


def _named(client: dict[str, Any]) -> dict[str, str]:
    """The ``client_id`` body parameter for a client that authenticates with a secret (authlib adds it
    itself for a public one, and a parameter must not appear twice)."""
    return {"client_id": client["client_id"]} if client.get("client_secret") else {}


def _fits(client: dict[str, Any], redirect_uri: str, scopes: list[str]) -> bool:
    """May a registered client sign in with this redirect and these scopes? (Else register anew: many servers
    hold a client to the exact redirect URIs, and the scopes, it registered.)"""
    uris = client.get("redirect_uris")
    if not isinstance(uris, list) or redirect_uri not in uris:
        return False
    registered = client.get("scope")
    return not isinstance(registered, str) or set(scopes) <= set(registered.split())


def is_metadata_document(client_id: str) -> bool:
    """Is ``client_id`` a Client ID Metadata Document's URL (https, with a path)?"""
    parts = urlsplit(client_id)
    return parts.scheme == "https" and bool(parts.hostname) and parts.path not in ("", "/")


def _port_of(client: dict[str, Any]) -> int:
    uris = client.get("redirect_uris")
    with contextlib.suppress(TypeError, ValueError, IndexError):
        port = urlsplit(str(uris[0])).port if isinstance(uris, list) else None
        return port or 0
    return 0
