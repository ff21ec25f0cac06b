"""``requestState`` for 2026-07-28 ``input_required`` round trips: signed, expiring, bound, single-use.

The state goes to the client and comes back, so it is attacker-controlled. It
is ``base64url(payload).base64url(HMAC-SHA256(key, payload))`` where the
payload names the principal, the method, a digest of the original request
(prompt name and arguments), an expiry and a random nonce. ``redeem`` checks
all of them and remembers the nonce until the state expires, so a state is
accepted once.

Replicas that should accept each other's states share a key through
``$PROMPTDECK_STATE_KEY``; without it each process makes a random one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Any

from ..protocol.errors import InvalidParams, LibraryError

STATE_KEY_ENV = "PROMPTDECK_STATE_KEY"
TTL_SECONDS = 600.0
MAX_REMEMBERED = 100_000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_digest(method: str, name: str, arguments: dict[str, Any] | None) -> str:
    """What the state is bound to: the method, the prompt and the arguments already given."""
    canonical = json.dumps([method, name, arguments or {}], sort_keys=True, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode()).digest()[:16])


class RequestStates:
    def __init__(self, key: bytes | None = None, ttl_seconds: float = TTL_SECONDS) -> None:
        if key is None:
            shared = os.environ.get(STATE_KEY_ENV)
            if shared is not None and len(shared) < 32:
                raise LibraryError(f"${STATE_KEY_ENV} must be at least 32 characters")
            key = shared.encode() if shared else secrets.token_bytes(32)
        self._key = key
        self.ttl = ttl_seconds
        self._used: dict[str, float] = {}

    def issue(self, principal: str, digest: str, now: float | None = None) -> str:
        now = time.time() if now is None else now
        payload = json.dumps({"p": principal, "d": digest, "e": round(now + self.ttl, 3),
                              "n": secrets.token_urlsafe(12)}, separators=(",", ":")).encode()
        return _b64(payload) + "." + _b64(self._sign(payload))

    def redeem(self, state: object, principal: str, digest: str, now: float | None = None) -> None:
        """Accept ``state`` once, for this principal and request; ``InvalidParams`` otherwise."""
        now = time.time() if now is None else now
        if not isinstance(state, str) or state.count(".") != 1 or len(state) > 4096:
            raise _bad("is not one this server issued")
        body, _, mac = state.partition(".")
        try:
            payload = _unb64(body)
            signature = _unb64(mac)
        except (ValueError, TypeError):
            raise _bad("is not one this server issued") from None
        # The decoder skips stray characters and ignores spare bits: only our exact encoding is ours.
        if _b64(payload) != body or _b64(signature) != mac:
            raise _bad("is not one this server issued")
        if not hmac.compare_digest(signature, self._sign(payload)):
            raise _bad("is not one this server issued")
        fields = json.loads(payload)
        if fields["e"] < now:
            raise _bad("has expired; send the request again without it")
        if fields["p"] != principal or fields["d"] != digest:
            raise _bad("belongs to another request")
        if fields["n"] in self._used:
            raise _bad("was already used")
        self._forget(now)
        self._used[fields["n"]] = fields["e"]

    def _forget(self, now: float) -> None:
        if len(self._used) >= MAX_REMEMBERED:
            self._used = {n: e for n, e in self._used.items() if e >= now}
            if len(self._used) >= MAX_REMEMBERED:
                # Still full of live states: refuse new ones rather than forget (and allow replays).
                raise _bad("cannot be accepted now; too many requests are waiting for input")

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()


def _bad(why: str) -> InvalidParams:
    return InvalidParams(f"requestState {why}")
