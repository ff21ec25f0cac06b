"""``requestState`` for 2026-07-28 ``input_required`` round trips: signed, expiring, bound, single-use.

The state goes to the client and comes back, so it is attacker-controlled. It
is ``base64url(payload).base64url(HMAC-SHA256(key, payload))`` where the
payload names the principal, the method, a digest of the original request
(prompt name and arguments), an expiry and a random nonce. ``redeem`` checks
all of them and remembers the nonce until the state expires, so a state is
accepted once.

The memory of used nonces is bounded per principal (``MAX_PER_PRINCIPAL``) and
in total (``MAX_REMEMBERED``), and one principal's flood costs only that
principal: when its share is full, its oldest half is forgotten, and from then
on every state of that principal expiring no later than the ones forgotten is
refused (a "floor"), so forgetting never lets a state be used twice. When the
total is full of live states, the principal holding the most loses its oldest
half the same way. Another principal's valid state is always accepted.

Replicas that should accept each other's states share a key through
``$PROMPTDECK_STATE_KEY``; without it each process makes a random one. Replicas
serving one PostgreSQL store need neither: a ``Ledger`` (``store.StateLedger``)
holds the used nonces in the database, so a state is accepted once by all of
them together, and the store keeps the key they sign with (the environment's
key still wins when set).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Any, Protocol

from ..protocol.errors import InvalidParams, LibraryError

STATE_KEY_ENV = "PROMPTDECK_STATE_KEY"
TTL_SECONDS = 600.0
MAX_REMEMBERED = 100_000
MAX_PER_PRINCIPAL = 1_000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_digest(method: str, name: str, arguments: dict[str, Any] | None) -> str:
    """What the state is bound to: the method, the prompt and the arguments already given."""
    canonical = json.dumps([method, name, arguments or {}], sort_keys=True, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode()).digest()[:16])


class Ledger(Protocol):
    """Used nonces kept outside this process, shared by replicas."""

    def key(self) -> bytes: ...

    def use(self, nonce: str, principal: str, expires: float, now: float) -> str | None:
        """Record a nonce as used: None the first time, otherwise why its state is refused."""


class RequestStates:
    def __init__(self, key: bytes | None = None, ttl_seconds: float = TTL_SECONDS,
                 ledger: Ledger | None = None) -> None:
        if key is None:
            shared = os.environ.get(STATE_KEY_ENV)
            if shared is not None and len(shared) < 32:
                raise LibraryError(f"${STATE_KEY_ENV} must be at least 32 characters")
            key = shared.encode() if shared else ledger.key() if ledger else secrets.token_bytes(32)
        self._key = key
        self.ledger = ledger
        self.ttl = ttl_seconds
        #: used nonces and their states' expiry, by principal
        self._used: dict[str, dict[str, float]] = {}
        #: by principal: its states expiring at or before this moment were forgotten, so they are refused
        self._floor: dict[str, float] = {}
        self._count = 0

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
        if self.ledger is not None:
            refused = self.ledger.use(fields["n"], principal, fields["e"], now)
            if refused is not None:
                raise _bad(refused)
            return
        if fields["n"] in self._used.get(principal, ()):
            raise _bad("was already used")
        if fields["e"] <= self._floor.get(principal, float("-inf")):
            raise _bad("is no longer accepted (too many were redeemed); send the request again without it")
        if len(self._used.get(principal, ())) >= MAX_PER_PRINCIPAL:
            self._shed(principal, now, force=False)
        if self._count >= MAX_REMEMBERED:
            self._sweep(now)
            if self._count >= MAX_REMEMBERED:
                self._shed(max(self._used, key=lambda p: len(self._used[p])), now, force=True)
        self._used.setdefault(principal, {})[fields["n"]] = fields["e"]
        self._count += 1

    def _shed(self, principal: str, now: float, *, force: bool) -> None:
        """Forget ``principal``'s expired nonces, and its oldest half if that is not enough or ``force``.

        Its floor rises to the newest expiry forgotten, so none of those states can come back.
        """
        mine = self._used[principal]
        live = {n: e for n, e in mine.items() if e >= now}
        if live and (force or len(live) >= MAX_PER_PRINCIPAL // 2):
            by_expiry = sorted(live.items(), key=lambda item: item[1])
            cut = max(1, len(by_expiry) // 2)
            self._floor[principal] = max(self._floor.get(principal, float("-inf")), by_expiry[cut - 1][1])
            live = dict(by_expiry[cut:])
        self._count -= len(mine) - len(live)
        self._used[principal] = live

    def _sweep(self, now: float) -> None:
        """Forget every expired nonce, and floors that no longer refuse anything unexpired."""
        for principal in list(self._used):
            mine = self._used[principal]
            live = {n: e for n, e in mine.items() if e >= now}
            self._count -= len(mine) - len(live)
            if live:
                self._used[principal] = live
            else:
                del self._used[principal]
        self._floor = {p: floor for p, floor in self._floor.items() if floor >= now}

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()


def _bad(why: str) -> InvalidParams:
    return InvalidParams(f"requestState {why}")
