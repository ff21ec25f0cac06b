"""Used ``requestState`` nonces and the states' signing key, kept in a PostgreSQL store for replicas."""

from __future__ import annotations

import logging
import threading
from typing import Any

from .model import StoreError, first_line
from .urls import shown_url, without_secrets

log = logging.getLogger("promptdeck.store")

class StateLedger:
    """requestState single use across every replica of a PostgreSQL store (see ``server.request_state``).

    A redeemed state's nonce is one row; the primary key makes the first replica to insert it the only
    one to accept it. The rows are bounded per principal (``per_principal`` unexpired ones; past that,
    that principal's states are refused until some expire) and expired rows are deleted as redemptions
    go on. Redemption is rare (the retry of an ``input_required``), so one connection serves it, behind
    a lock, with short timeouts: an unreachable store refuses the state rather than risk a second use.
    """

    TIMEOUT_SECONDS = 2

    def __init__(self, url: str, per_principal: int) -> None:
        self.url = url
        self.per_principal = per_principal
        self._conn: Any = None
        self._lock = threading.Lock()
        self._uses = 0
        self._key: bytes | None = None

    def key(self) -> bytes:
        """The key every replica of this store signs states with (read once, then kept)."""
        with self._lock:
            if self._key is None:
                try:
                    rows = self._execute("SELECT key FROM state_key LIMIT 1").fetchall()
                except Exception as exc:  # the driver's: one line naming the store, its secrets masked
                    raise StoreError(f"cannot read the state key of the store {shown_url(self.url)}: "
                                     f"{without_secrets(first_line(exc), self.url)}") from None
                if not rows:
                    raise StoreError(f"the store {shown_url(self.url)} has no state key: run `promptdeck store "
                                     "upgrade`")
                self._key = str(rows[0][0]).encode()
            return self._key

    def use(self, nonce: str, principal: str, expires: float, now: float) -> str | None:
        """Record ``nonce`` as used: None the first time; otherwise why the state is refused."""
        try:
            with self._lock:
                live = self._execute("SELECT count(*) FROM used_states WHERE principal = %s AND expires >= %s",
                                     principal, now).fetchone()[0]
                if live >= self.per_principal:
                    return "is no longer accepted (too many were redeemed); send the request again without it"
                inserted = self._execute("INSERT INTO used_states (nonce, principal, expires) VALUES (%s, %s, %s) "
                                         "ON CONFLICT (nonce) DO NOTHING", nonce, principal, expires).rowcount
                self._uses += 1
                if self._uses % 256 == 0:
                    self._execute("DELETE FROM used_states WHERE expires < %s", now)
        except Exception as exc:  # the driver's errors, or a lost connection: refuse, never accept twice
            log.warning("requestState not checked: the store %s is not reachable (%s)", shown_url(self.url),
                        without_secrets(first_line(exc), self.url))
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            return "cannot be checked now (the store is unreachable); send the request again without it"
        return None if inserted == 1 else "was already used"

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _execute(self, statement: str, *args: Any) -> Any:
        if self._conn is None or self._conn.closed:
            import psycopg

            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=self.TIMEOUT_SECONDS,
                                         options=f"-c statement_timeout={self.TIMEOUT_SECONDS * 1000}")
        return self._conn.execute(statement, args)
