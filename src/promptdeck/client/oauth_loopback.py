"""The loopback redirect of a native app's sign-in (RFC 8252 7.3): a one-shot listener on 127.0.0.1.

The authorization server sends the browser to ``http://127.0.0.1:<port>/callback?code=...&state=...``;
this listener takes the first request there whose ``state`` is the one we sent (any other is answered
400 and ignored: another local process could guess the port, but not the state), answers the browser
with a short page, and closes. It listens on 127.0.0.1 only (not ``localhost``, which may resolve to
another interface), on aiohttp's server, which bounds the request head.

The answer must also come from the authorization server the sign-in was sent to (RFC 9207, a MUST in the
2026-07-28 authorization rules, against mix-up attacks: another server the client also signs in with could
have its code sent here): its ``iss`` is compared, exactly, with the issuer of the metadata the client
discovered (``check_response_issuer``). An answer without ``iss`` is refused where that metadata says the
server sends one (``authorization_response_iss_parameter_supported``); one with another ``iss`` always.
A refused answer ends the sign-in before any token request, and the browser is told it failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import TYPE_CHECKING

from ..protocol.errors import OAuthError

if TYPE_CHECKING:
    from aiohttp import web

CALLBACK = "/callback"
_DONE = "<!doctype html><title>promptdeck</title><p>Signed in. You can close this window.</p>"
_FAILED = "<!doctype html><title>promptdeck</title><p>Sign-in failed: the terminal says why.</p>"


def check_response_issuer(given: str | None, issuer: str | None, required: bool) -> None:
    """Refuse an authorization response whose ``iss`` (``given``) is not ``issuer``, the issuer identifier of
    the metadata the sign-in was started from, compared as strings (RFC 9207 2.4: no normalization);
    ``required``: that metadata advertises ``authorization_response_iss_parameter_supported``."""
    if issuer is None:
        return
    if given is None:
        if required:
            raise OAuthError(f"the sign-in answer names no issuer (iss), yet {issuer} says it always does "
                             "(authorization_response_iss_parameter_supported); refused, no token was asked for "
                             "(RFC 9207: it may be another server's answer, a mix-up attack)")
        return
    if given != issuer:
        raise OAuthError(f"the sign-in answer comes from issuer {given[:200]!r}, not from {issuer}, where the "
                         "sign-in was sent; refused, no token was asked for (RFC 9207: a mix-up attack)")


class Loopback:
    """Listen for one redirect; use as ``async with Loopback(port) as loop: ... await loop.code()``.

    ``issuer``: the issuer identifier of the authorization server's metadata, which the answer's ``iss`` must
    be (``check_response_issuer``; None: not checked); ``iss_required``: that metadata says it sends one."""

    def __init__(self, port: int = 0, *, issuer: str | None = None, iss_required: bool = False) -> None:
        self.port = port
        self.issuer = issuer
        self.iss_required = iss_required
        self.state = secrets.token_urlsafe(32)
        self._result: asyncio.Future[str] | None = None
        self._runner: web.AppRunner | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK}"

    async def __aenter__(self) -> Loopback:
        from aiohttp import web

        self._result = asyncio.get_running_loop().create_future()
        app = web.Application(client_max_size=64 * 1024)
        app.router.add_get(CALLBACK, self._callback)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=False)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            raise OAuthError(f"cannot listen on 127.0.0.1:{self.port} for the sign-in redirect: "
                             f"{exc.strerror}") from None
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = int(sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._result is not None and not self._result.done():
            self._result.cancel()

    async def code(self, timeout: float) -> str:
        """The authorization code, once the browser comes back (an ``OAuthError`` if it does not in time)."""
        assert self._result is not None
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._result)
        except TimeoutError:
            raise OAuthError(f"no sign-in came back to {self.redirect_uri} within {timeout:g} s") from None

    async def _callback(self, request: web.Request) -> web.Response:
        from aiohttp import web

        query = request.query
        if not secrets.compare_digest(query.get("state", ""), self.state):
            # Not our browser's answer: ignored, so a local process that found the port cannot end the sign-in.
            return web.Response(status=400, text="unknown state")
        assert self._result is not None
        if self._result.done():
            return web.Response(status=400, text="this sign-in is over")
        try:  # before the code or the error is read: an answer from another server says nothing of ours
            check_response_issuer(query.get("iss"), self.issuer, self.iss_required)
        except OAuthError as exc:
            return self._fail(exc)
        error = query.get("error")
        if error is not None:
            described = query.get("error_description", "")
            return self._fail(OAuthError(f"the authorization server refused the sign-in: {error[:100]}"
                                         + (f" ({described[:300]})" if described else "")))
        code = query.get("code")
        if not code:
            return web.Response(status=400, text="no code")
        self._result.set_result(code)
        return web.Response(text=_DONE, content_type="text/html")

    def _fail(self, error: OAuthError) -> web.Response:
        """End the sign-in with ``error``, and tell the browser it failed."""
        from aiohttp import web

        assert self._result is not None
        self._result.set_exception(error)
        with contextlib.suppress(asyncio.InvalidStateError):
            self._result.exception()  # retrieved: no "never retrieved" warning if nobody awaits it
        return web.Response(status=400, text=_FAILED, content_type="text/html")
