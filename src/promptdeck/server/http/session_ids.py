"""Streamable HTTP session ids that carry what a session needs, signed, so any replica can take one up.

A 2025-era session is negotiated once, on ``initialize``; what the rest of the session depends on is
small and fixed from then on: the revision, whether the client may be asked to fill in forms, the
client's name, and who it belongs to. The id says all of it::

    base64url(payload) "." base64url(HMAC-SHA256(key, payload)[:16])
    payload = JSON [1, revision, elicits, client name, issued (unix seconds), nonce, principal tag]

The principal tag is an HMAC of the principal's name (the name itself is not in the id, and the tag
cannot be matched against guessed names without the key). A replica that does not hold a session in
memory but is given its id checks the MAC, the principal tag against the request's principal, and the
age, and rebuilds the session from the payload (``SessionTable.session_for``). A forged id, another
principal's, or one older than the lifetime is refused like an unknown one: 404, which the spec tells
a client to answer with a new ``initialize``.

The key is shared by every replica that should take up each other's sessions (``session_key``): the
store's signing key, or ``$PROMPTDECK_STATE_KEY``. A server with neither (a folder library) makes a
random key per process, and then takes up no id it does not hold: nothing else could have issued it,
and a session it dropped (idle, or ended) stays ended, as before ids were signed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from typing import TYPE_CHECKING, NamedTuple

from ...protocol.revisions import REVISIONS, negotiate

if TYPE_CHECKING:
    from ..app import PromptServer

log = logging.getLogger("promptdeck.http")

#: What the key a store or the environment holds is turned into for session ids (a key of their own,
#: so that nothing else signed with the shared key can pass for a session id, or the reverse).
_PURPOSE = b"promptdeck mcp-session-id 1"
_FORMAT = 1
#: The longest client name an id carries (the rest is cut): ids travel in every request's headers.
MAX_CLIENT_NAME = 64
#: How far in the future an issue time may be (replicas' clocks differ a little).
CLOCK_SKEW_SECONDS = 60.0
#: The longest id accepted for checking; a longer header is refused before any work.
MAX_ID_LENGTH = 512


class Claims(NamedTuple):
    """What a session id says."""

    revision: str
    elicits: bool
    client: str
    issued: float


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionIds:
    """Mints and checks session ids (see the module docstring).

    ``shared``: whether other processes hold the same key (a store's, or the environment's); only then
    is an id this process does not hold taken up. ``lifetime``: how long after its ``initialize`` an id
    may be taken up, in seconds.
    """

    def __init__(self, key: bytes, *, shared: bool, lifetime: float, serves: str = "") -> None:
        # ``serves`` (the labels the endpoint serves) is part of the key: an id an endpoint issued is not
        # genuine at another endpoint of the same store (``/mcp/staging`` beside ``/mcp``), in this process
        # or another, while every replica serving the same label takes it up.
        self._key = hmac.new(key, _PURPOSE + b"\0" + serves.encode(), hashlib.sha256).digest()
        self.shared = shared
        self.lifetime = lifetime

    def _tag(self, principal: str) -> str:
        return _b64(hmac.new(self._key, b"principal\0" + principal.encode(), hashlib.sha256).digest()[:12])

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:16]

    def mint(self, principal: str, revision: str, elicits: bool, client: str, now: float | None = None) -> str:
        """A new session's id."""
        issued = int(time.time() if now is None else now)
        payload = json.dumps([_FORMAT, revision, elicits, client[:MAX_CLIENT_NAME], issued,
                              secrets.token_urlsafe(12), self._tag(principal)], separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def for_initialize(self, principal: str, params: object) -> tuple[str, Claims]:
        """The id of the session ``principal`` begins with an ``initialize`` of ``params``, and what it says:
        what ``legacy.LegacyTurn.begin`` makes of the same params (``negotiate``, ``elicits_forms``)."""
        given = params if isinstance(params, dict) else {}
        revision = negotiate(given.get("protocolVersion"))
        info = given.get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        now = time.time()
        claims = Claims(revision.version, revision.elicits_forms(given.get("capabilities")),
                        name[:MAX_CLIENT_NAME] if isinstance(name, str) else "", float(int(now)))
        return self.mint(principal, claims.revision, claims.elicits, claims.client, now), claims

    def check(self, session_id: str, principal: str, now: float | None = None) -> Claims | str:
        """What ``session_id`` says, when it is genuine, ``principal``'s, and not too old; else why not
        (a line for the log, never for the client: all of them answer alike)."""
        if len(session_id) > MAX_ID_LENGTH or session_id.count(".") != 1:
            return "not a session id of this server"
        body, mac = session_id.split(".")
        try:
            payload, given = _unb64(body), _unb64(mac)
        except ValueError:
            return "not a session id of this server"
        if not hmac.compare_digest(given, self._mac(payload)):
            return "its signature does not match (forged, or signed with another key)"
        try:
            fmt, revision, elicits, client, issued, _nonce, tag = json.loads(payload)
        except ValueError:  # signed by us, so only an older format could get here
            return "its format is not this server's"
        if fmt != _FORMAT or revision not in REVISIONS or type(issued) is not int:
            return "its format is not this server's"
        if not hmac.compare_digest(str(tag), self._tag(principal)):
            return "it belongs to another principal"
        now = time.time() if now is None else now
        if issued > now + CLOCK_SKEW_SECONDS:
            return "it was issued in the future (clocks too far apart?)"
        if now - issued > self.lifetime:
            return f"it expired (sessions last {self.lifetime:g} s from initialize)"
        return Claims(revision, bool(elicits), str(client), float(issued))


def session_key(explicit: bytes | None, store_key: bytes | None) -> tuple[bytes, bool]:
    """The key session ids are signed with, and whether other processes share it: ``explicit``
    (``$PROMPTDECK_STATE_KEY``), else the store's, else a random one of this process's."""
    if explicit is not None:
        return explicit, True
    if store_key is not None:
        return store_key, True
    return secrets.token_bytes(32), False


def session_ids(server: PromptServer, lifetime: float) -> SessionIds:
    """The session ids of an endpoint serving ``server``, keyed as ``session_key`` says: the first store it
    serves gives its key (read now, while the store is known to be reachable)."""
    from ..request_state import STATE_KEY_ENV

    env = os.environ.get(STATE_KEY_ENV)
    # A shorter one is refused where requestState reads it; here it is only not taken as shared.
    explicit = env.encode() if env is not None and len(env) >= 32 else None
    store_key = None
    from ...sources.store.source import StoreSource

    serves = "\0".join(sorted(source.label for source in server.sources if isinstance(source, StoreSource)))
    if explicit is None:
        from ...sources.store.model import StoreError

        for source in server.sources:
            if isinstance(source, StoreSource):
                try:
                    store_key = source.read(lambda store: store.reads.state_key())
                except StoreError as exc:
                    log.warning("sessions will not survive this replica: the store's key cannot be read (%s)", exc)
                break
    key, shared = session_key(explicit, store_key)
    if shared:
        log.info("sessions are answered by every replica that shares this key (%s)",
                 f"${STATE_KEY_ENV}" if explicit is not None else "the store's")
    return SessionIds(key, shared=shared, lifetime=lifetime, serves=serves)
