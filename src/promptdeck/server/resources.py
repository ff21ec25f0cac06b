"""The resource methods, written once for both eras, and how a change reaches those who follow resources.

``resources/list``, ``resources/read`` and ``resources/templates/list`` answer from the server's
``ResourceCatalog`` (``prompts.resources``) as one principal sees it (a ``Sight``); whatever a provider
serves is answered here unchanged, so a new kind of resource is a provider, not a new handler. Work that
may block (reading a file, parsing a stored prompt to learn what it reaches) runs in the render threads
when an event loop runs here (``execution.off_loop``); over stdio it runs inline. The methods are
declared in ``methods.py``; each era wraps them: a legacy session follows what ``resources/subscribe`` and
``unsubscribe`` name, the 2026-07-28 endpoint adds ``resultType``, ``ttlMs`` and ``cacheScope``, and
``resourceSubscriptions`` on ``subscriptions/listen``. (``resources/templates/list`` is one page, whatever
the cursor: there are only a few.)

A listener (a legacy session, a 2026-07-28 subscription) that follows resources holds a ``Follows``: the
list it has seen and the URIs it subscribed to, each with the stamp it had. After every change of the
library (``PromptServer.refresh``: a file changed, a label moved) each ``Follows`` is checked against the
new snapshot, as its principal sees it, and tells its client ``notifications/resources/list_changed``
when the URIs it may read changed, and ``notifications/resources/updated`` for each subscribed URI whose
stamp changed. A URI it may not read has no stamp, so a hidden resource is never reported.
"""

from __future__ import annotations

from collections.abc import Awaitable, Hashable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..prompts.execution import off_loop
from ..prompts.read_budget import READS, answer_held, spending
from ..prompts.resources import ResourceCatalog, Sight
from ..protocol import jsonrpc
from ..protocol.content import contents_to_wire
from ..protocol.revisions import Revision

if TYPE_CHECKING:
    from .handlers import Send

#: URIs one listener may subscribe to at once; past that a subscription is refused (legacy) or dropped (listen).
MAX_SUBSCRIBED = 1000


def list_resources(resources: ResourceCatalog, sight: Sight, rev: Revision, cursor: str | None,
                   extra: dict[str, Any] | None = None, extra_key: str = "",
                   follows: Follows | None = None) -> bytes | Awaitable[bytes]:
    """One ``resources/list`` page, encoded (pages are cached per snapshot and view, like prompt pages).
    ``follows``: the listener that reads it, told of changes from what a first page shows on."""
    def page() -> bytes:
        if follows is not None and cursor is None:
            follows.listing, follows.listed = True, resources.signature(sight)
        return resources.page(sight, rev, cursor, extra, extra_key)

    return off_loop(page)


def read_resource(resources: ResourceCatalog, sight: Sight, rev: Revision, uri: str,
                  principal: str = "local") -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The ``resources/read`` result; -32602 "Resource not found" for anything it does not read. Its bytes are
    taken from ``principal``'s read budget while it is read and put on the wire (``prompts.read_budget``)."""
    held = answer_held()  # here, on the request's task: the read itself runs in the render threads

    def read() -> dict[str, Any]:
        with spending(READS, principal, held):
            return {"contents": [contents_to_wire(resources.read(uri, sight), rev)]}

    return off_loop(read)


def notification(method: str, meta: dict[str, Any] | None, **params: Any) -> bytes:
    if meta is not None:
        params["_meta"] = meta
    return jsonrpc.encode_notification(method, params or None)


class Follows:
    """What one listener follows of the resources, as its principal (``held``) sees them.

    ``listing``: whether it follows the list, and ``listed`` the URIs it could read when it last saw it
    (None: not known yet); ``uris``: each subscribed URI and its stamp then (None: not readable then).
    ``meta``: what every notification carries (a 2026-07-28 subscription's id).
    """

    __slots__ = ("held", "send", "meta", "listing", "listed", "uris")

    def __init__(self, held: frozenset[str] | None, send: Send, meta: dict[str, Any] | None = None, *,
                 listing: bool = False, uris: Iterable[str] = ()) -> None:
        self.held = held
        self.send = send
        self.meta = meta
        self.listing = listing
        self.listed: tuple[str, ...] | None = None
        self.uris: dict[str, Hashable | None] = dict.fromkeys(islice(uris, MAX_SUBSCRIBED))

    def settle(self, resources: ResourceCatalog) -> None:
        """Take what it follows as it is now in ``resources``: the list, and each URI's stamp. It may block
        (a walk, a parse): on an event loop, run it in the render threads (``execution.off_loop``)."""
        sight = resources.sight(self.held)
        if self.listing:
            self.listed = resources.signature(sight)
        for uri in self.uris:
            self.uris[uri] = resources.stamp(uri, sight)

    def subscribe(self, uri: str, resources: ResourceCatalog) -> bool:
        """Follow ``uri`` (readable or not: a hidden URI is accepted as an unknown one is); False when too
        many are followed already."""
        if uri not in self.uris and len(self.uris) >= MAX_SUBSCRIBED:
            return False
        self.uris[uri] = resources.stamp(uri, resources.sight(self.held))
        return True

    def check(self, resources: ResourceCatalog) -> None:
        """Tell the client what changed since it last heard, in ``resources`` (the new snapshot)."""
        sight = resources.sight(self.held)
        if self.listing and self.listed is not None:
            now = resources.signature(sight)
            if now != self.listed:
                self.listed = now
                self.send(notification("notifications/resources/list_changed", self.meta))
        for uri, was in list(self.uris.items()):
            stamp = resources.stamp(uri, sight)
            if stamp != was and uri in self.uris:
                self.uris[uri] = stamp
                self.send(notification("notifications/resources/updated", self.meta, uri=uri))
