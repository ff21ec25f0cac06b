"""``/api/store/usage``: the renders counted in the store (``sources.store.usage``), of the prompts the asker
may read only: each prompt named passes the store API's read gate (``StoreApi._visible``) before any of its
rows is shown; the rows of a prompt it may not read, or no longer served, are left out as if never counted.
``/api/usage`` (``usage_api``) answers the same for every server with the page, a folder's from ``kept``.

Query: ``prompt`` (one prompt; 404 as for any hidden one), ``since`` (``usage.since_seconds``: ``7d``, ``24h``
or epoch seconds; default 30 days). The answer: each prompt's renders since then, hour by hour by version,
label, arm and client, and the last hour it was ever rendered in (for "not rendered in N days").
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...prompts.usage import Key, Usage, since_seconds
from ...protocol.errors import HttpError
from ...sources.store.database import Store
from ...sources.store.usage import last_rendered, read

if TYPE_CHECKING:
    from ...prompts.spec import Offered
    from ..security.principals import Principal


class Gated(Protocol):
    """What this reads of ``StoreApi``: its read gate, and how it runs a store call."""

    def _visible(self, principal: Principal, name: str) -> Offered: ...

    async def _run(self, principal: Principal, call: Callable[..., Any], *args: Any) -> Any: ...


DEFAULT_SINCE = "30d"
ROUTE = "/usage"


async def get(api: Gated, query: dict[str, str], principal: Principal) -> dict[str, Any]:
    """Answer ``/api/store/usage`` for ``principal``: every prompt through ``api._visible``, the read gate."""
    name = query.get("prompt")
    if name is not None:
        api._visible(principal, name)  # 404 for a prompt hidden from it, as every other read answers
    since = since_of(query)

    def may_read(prompt: str) -> bool:
        try:
            api._visible(principal, prompt)
        except HttpError:
            return False
        return True

    shown: dict[str, Any] = await api._run(principal, lambda sight: answer(sight.store, since, may_read, name))
    return shown


def since_of(query: dict[str, str]) -> float:
    try:
        return since_seconds(query.get("since", DEFAULT_SINCE), time.time())
    except ValueError as exc:
        raise HttpError(400, str(exc)) from None


def answer(store: Store, since: float, may_read: Callable[[str], bool], prompt: str | None) -> dict[str, Any]:
    """What ``/api/store/usage`` answers (see the module)."""
    rows = read(store.db, since, None if prompt is None else [prompt])
    last = last_rendered(store.db)
    if prompt is not None:
        last = {prompt: last[prompt]} if prompt in last else {}
    return shown(rows, last, since, may_read)


def kept(usage: Usage, since: float, may_read: Callable[[str], bool], prompt: str | None) -> dict[str, Any]:
    """What ``answer`` gives of a store, of the counts ``usage`` keeps in memory (a folder's: ``Usage.kept``,
    its window drained first)."""
    rows, last = usage.kept(since)
    if prompt is not None:
        rows = [row for row in rows if row[0].prompt == prompt]
        last = {prompt: last[prompt]} if prompt in last else {}
    return shown(rows, last, since, may_read)


def shown(rows: list[tuple[Key, int]], last: dict[str, int], since: float,
          may_read: Callable[[str], bool]) -> dict[str, Any]:
    """The answer of ``rows`` and ``last`` (a store's, or a folder's counts in memory), each prompt asked of
    ``may_read`` first."""
    readable: dict[str, bool] = {}

    def allowed(name: str) -> bool:
        if name not in readable:
            readable[name] = may_read(name)
        return readable[name]

    prompts: dict[str, dict[str, Any]] = {}
    for key, n in rows:
        if not allowed(key.prompt):
            continue
        entry = prompts.setdefault(key.prompt, {"prompt": key.prompt, "renders": 0, "last": last.get(key.prompt),
                                                "hours": []})
        entry["renders"] += n
        entry["hours"].append({"hour": key.hour, "version": key.version, "label": key.label, "arm": key.arm,
                               "client": key.client, "renders": n})
    never = {name: hour for name, hour in last.items() if name not in prompts and allowed(name)}
    for name, hour in never.items():  # rendered before ``since`` only: listed with no renders since
        prompts[name] = {"prompt": name, "renders": 0, "last": hour, "hours": []}
    return {"since": int(since) // 3600 * 3600, "prompts": sorted(prompts.values(), key=lambda e: e["prompt"])}
