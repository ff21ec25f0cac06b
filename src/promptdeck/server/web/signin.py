"""How ``promptdeck ui`` signs its page in without putting a token on any command line.

127.0.0.1 is every local user's, so the ui's ``/mcp`` asks for a bearer token. The browser it opens must
get one, but a browser's command line (the address opened) is readable by every local user through
``ps``. So the address carries a one-time *code* instead (``#code=…``), which the page exchanges for a
token by ``POST /signin``:

- a code is valid once, and for ``CODE_SECONDS``; what the exchange gives is a token minted for that
  exchange, never the run's own token;
- the POST must be ``application/json`` from the page's own origin (``Origin`` equal to this server's,
  ``Sec-Fetch-Site: same-origin`` when the browser sends it). A page of another site cannot make it
  without a CORS preflight, which this server never grants, and a form cannot send JSON;
- a code presented again is refused *and* the token its first exchange gave is revoked (as RFC 6749
  section 4.1.2 asks of an authorization code): one of the two was someone else who read the code from
  ``ps``, and which one cannot be told, so neither keeps it. A warning in the log says so.

The page never takes a token from its address (app.js): any site may open
``http://127.0.0.1:PORT/#token=ATTACKER``, and the tab must not be signed in as someone else. A person
without a graphical browser signs in on the page's form, with the run's token (``$PROMPTDECK_UI_TOKEN``, or
the one ``ui`` prints on its terminal then).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from dataclasses import dataclass

import msgspec

from ...protocol.errors import AuthError, HttpError, LibraryError
from ..asgi import (
    Disconnected,
    Receive,
    Scope,
    Send,
    header,
    headers_of,
    media_type,
    read_body,
    respond,
)
from ..security.principals import Principal
from ..security.tokens import bearer, bearer_challenge

log = logging.getLogger("promptdeck.ui")

#: Where the page exchanges its code, beside ``/`` (relative to the page, as its other requests are).
PATH = "/signin"
#: How long a code is valid: long enough for a browser to start cold on a busy machine, short enough
#: that a code which never reached its page is soon worth nothing. Single use is the real protection.
CODE_SECONDS = 30.0
#: What an exchange's body may weigh: ``{"code": "…"}``.
MAX_BODY_BYTES = 1024
#: The principal every token of the run names (the page's rights are the run's).
PRINCIPAL = Principal("ui")


class _Exchange(msgspec.Struct, forbid_unknown_fields=True):
    code: str


@dataclass(slots=True)
class _Code:
    expires: float
    #: the digest of the token its exchange gave; None while unused
    token: bytes | None = None


def _digest(value: str) -> bytes:
    # Codes and tokens are kept by digest: a lookup by digest tells a timing observer nothing about the
    # value, and the values themselves are never held after they are handed out.
    return hashlib.sha256(value.encode()).digest()


class SignIn:
    """The run's token, the one-time codes that stand for it on a command line, and the tokens they gave.

    An ``Authenticator`` (``http.Authenticator``) for the ui's endpoints, and the ASGI handler of
    ``POST /signin`` (``StreamableHttpApp`` routes it there after its Host and Origin checks)."""

    def __init__(self, secret: str, *, code_seconds: float = CODE_SECONDS) -> None:
        if len(secret) < 16:
            raise LibraryError("the page's token is shorter than 16 characters")
        #: the run's own token, which a person types into the page's form when no browser was opened
        self.secret = secret
        self._secret = secret.encode()
        self.code_seconds = code_seconds
        self._codes: dict[bytes, _Code] = {}
        #: digests of the tokens exchanges gave and that still hold
        self._tokens: set[bytes] = set()

    def code(self) -> str:
        """A new one-time code, valid for ``code_seconds``."""
        value = secrets.token_urlsafe(32)
        self._codes[_digest(value)] = _Code(time.monotonic() + self.code_seconds)
        return value

    def exchange(self, code: str) -> str:
        """A token for ``code``, which is used up; ``AuthError`` for a code unknown, expired or used before,
        and in that last case the token its first exchange gave is revoked."""
        now = time.monotonic()
        for key in [key for key, held in self._codes.items() if held.token is None and held.expires < now]:
            del self._codes[key]  # expired unused codes are forgotten; used ones are kept to catch a replay
        held = self._codes.get(_digest(code))
        if held is None:
            raise AuthError("this sign-in code is not valid (codes last a few seconds)")
        if held.token is not None:
            self._tokens.discard(held.token)
            log.warning("the page's sign-in code was used twice, so the page it signed in is signed out: someone "
                        "on this machine may have read it from the browser's command line. Sign in with the "
                        "run's token, or start promptdeck ui again")
            raise AuthError("this sign-in code was already used")
        token = secrets.token_urlsafe(32)
        held.token = _digest(token)
        self._tokens.add(held.token)
        return token

    async def authenticate(self, authorization: str | None) -> Principal:
        presented = bearer(authorization)
        if presented is None:
            raise AuthError("a bearer token is required", error=None)
        # Both checks always run: the time taken says nothing about which token it was.
        is_secret = hmac.compare_digest(presented.encode(), self._secret)
        if _digest(presented) in self._tokens or is_secret:
            return PRINCIPAL
        raise AuthError("the bearer token is not valid")

    def challenge(self, error: AuthError) -> bytes:
        return bearer_challenge(error, b"")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /signin`` with ``{"code": …}``: 200 ``{"token": …}``; a refusal is an ``HttpError``, which
        the endpoint answers as ``{"error": …}``."""
        if scope["method"] != "POST":
            raise HttpError(405, "POST a sign-in code here", headers=[(b"allow", b"POST")])
        problem = _cross_site(scope)
        if problem is not None:
            raise HttpError(403, problem)
        if media_type(headers_of(scope).get(b"content-type")) != b"application/json":
            raise HttpError(415, "send the code as application/json")
        try:
            body = await read_body(receive, MAX_BODY_BYTES, headers_of(scope).get(b"content-length"), 10)
            code = msgspec.json.decode(body, type=_Exchange).code
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise HttpError(400, 'send {"code": "…"}') from None
        except Disconnected:
            return
        try:
            token = self.exchange(code)
        except AuthError as exc:
            raise HttpError(403, exc.message) from None
        # no-store: the answer holds a token, which no cache may keep.
        await respond(send, 200, msgspec.json.encode({"token": token}), headers=[(b"cache-control", b"no-store")])


def _cross_site(scope: Scope) -> str | None:
    """Why this request is not the page's own, or None. The general Origin check lets any loopback origin
    in (any port: another local site); an exchange comes only from this very origin."""
    origin = header(scope, b"origin")
    own = f"{scope.get('scheme', 'http')}://{header(scope, b'host')}"
    if origin is None or origin != own:
        return "a sign-in code is exchanged only by the page of this server"
    site = header(scope, b"sec-fetch-site")
    if site is not None and site != "same-origin":
        return "a sign-in code is exchanged only by the page of this server"
    return None
