"""What one principal may hold at once, counted per principal and in total, and why a request is refused.

Both caps apply: one principal filling its own share leaves the rest to everyone else. Past its own share
a principal gets 429, past the total 503; ``Retry-After`` tells the truth or is left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from ...protocol.errors import HttpError


class Refusal(HttpError):
    """Why a request may not go on: the HTTP status, what to say, and when to retry.

    ``retry_after`` is the seconds until a slot really frees (an idle session's expiry), or None when
    nothing says when (a slot held by an open stream frees when its client closes it): then no
    ``Retry-After`` is sent at all rather than a guess.
    """

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        headers = [] if retry_after is None else [(b"retry-after", b"%d" % max(1, math.ceil(retry_after)))]
        super().__init__(status, message, headers=headers)
        self.retry_after = retry_after


class Quota:
    """Things held while a response lasts (open streams), counted per principal and in total.

    Both caps apply: one principal filling its own share leaves the rest to everyone else.
    """

    def __init__(self, what: str, total: int, per_principal: int) -> None:
        self.what = what
        self.total = total
        self.per_principal = per_principal
        self.count = 0
        self._held: dict[str, int] = {}

    def held(self, principal: str) -> int:
        return self._held.get(principal, 0)

    def refusal(self, principal: str, adding: int = 1, *, also_held: int = 0, also_total: int = 0) -> Refusal | None:
        """None when ``principal`` may hold ``adding`` more; ``also_*`` count what is held outside this quota."""
        if self.held(principal) + also_held + adding > self.per_principal:
            return Refusal(429, f"too many open {self.what} for this principal (at most {self.per_principal}); "
                                "close one first")
        if self.count + also_total + adding > self.total:
            return Refusal(503, f"too many open {self.what} (at most {self.total}); try again later")
        return None

    @contextmanager
    def hold(self, principal: str) -> Iterator[None]:
        """Count one for ``principal`` while the block runs."""
        self.count += 1
        self._held[principal] = self.held(principal) + 1
        try:
            yield
        finally:
            self.count -= 1
            left = self._held[principal] - 1
            if left:
                self._held[principal] = left
            else:
                del self._held[principal]
