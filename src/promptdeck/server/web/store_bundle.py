"""``/api/store/bundle``: the label this server serves, as one bundle (``sources.store.bundle``) cut to the asker.

What ``promptdeck bundle --server URL`` fetches, so that an application talking to this server can ship a
bundle without a connection to the store behind it. The cut is ``bundle.visible``'s, the one access rule applied
to each file's own scopes, as ``promptdeck bundle --token`` cuts it (and the bundle names the principal). The
bundle carries no source of its own worth keeping: this server does not know the URL its clients use, so the
CLI stamps the one it asked (``bundle.restamp``) after checking every file against its digest. It is never
signed here: the signing key is the bundle maker's, not the server's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ...protocol.errors import HttpError
from ...sources.store import bundle as bundles

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..security.principals import Principal

ROUTE = "/bundle"
#: What a bundle made here names as its source until the CLI stamps the URL it was fetched from.
UNSTAMPED = "promptdeck-server"


class Runs(Protocol):
    """What this reads of ``StoreApi``: how it runs a store call (in a thread, within the quota)."""

    async def _run(self, principal: Principal, call: Callable[..., Any], *args: Any) -> Any: ...


async def get(api: Runs, principal: Principal, label: str) -> dict[str, Any]:
    """The bundle of ``label`` as ``principal`` may see it: ``{"bundle": <the bundle's JSON>}``."""
    cut = None if principal.scopes is None else (principal.name, principal.scopes)

    def made(sight: Any) -> bytes:
        try:
            position, versions, files = bundles.label_files(sight.store.reads, label)
            return bundles.make(files, source=UNSTAMPED, label=label, position=position, versions=versions, cut=cut)
        except bundles.BundleError as exc:
            raise HttpError(422, str(exc)) from None

    data: bytes = await api._run(principal, made)
    return {"bundle": msgspec.Raw(data)}
