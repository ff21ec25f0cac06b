"""The live rollouts of a served label (``governance``), and which version one request's render gets.

``StoreSource`` follows them as it follows the label: read again whenever the store says something changed
(PostgreSQL's notification, SQLite's commit counter), so every replica holds the same rollouts. Each
rollout's version is parsed once, in the follower's thread, beside the label's material; a version that no
longer shows clients what the label's version shows (another tool wrote the store) is not served.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...prompts.spec import Offered, Prompt
from ..files.library import TemplateFolder
from ..files.source import build_prompt, stage_file
from .catalog import META_LABEL, META_VERSION
from .governance import bucket
from .model import Rollout, StoreError

if TYPE_CHECKING:
    from .database import Store

log = logging.getLogger("promptdeck.store")
#: In a prompt's ``_meta`` (and a ``prompts/get`` result's): the rollout that chose its version.
META_ROLLOUT = "promptdeck.dev/rollout"


class LiveRollouts:
    """The rollouts of one label: prompt name -> (the rollout, its version's prompt)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._held: dict[str, tuple[Rollout, Prompt]] = {}
        self._seen: tuple[tuple[int, int, int], ...] = ()
        #: the prompts under rollout, kept as one set: every ``prompts/get`` asks
        self._names: frozenset[str] = frozenset()
        #: renders per (prompt, arm) since start, for /metrics: "rollout" (its version) or "label" (the label's).
        #: A plain dict increment on the render path (no lock: a lost count in a race is tolerable there); keys
        #: are prompts that had a live rollout, so they are few and come from the store, never from a client.
        self.renders: dict[tuple[str, str], int] = {}
        #: the scopes of each prompt that had a rollout (who may see its series in /metrics)
        self.scopes: dict[str, frozenset[str]] = {}

    def names(self) -> frozenset[str]:
        return self._names

    def shares(self) -> list[tuple[str, int]]:
        """(prompt, basis points) of each live rollout served, by prompt name."""
        return sorted((name, rollout.basis_points) for name, (rollout, _) in self._held.items())

    def follow(self, store: Store, library: Callable[[], TemplateFolder | None]) -> bool:
        """Read the label's live rollouts again; whether they changed. A version not parsed yet is parsed now."""
        try:
            live = store.governance.live_rollouts(self.label)
        except StoreError as exc:  # a store of schema 4 (being upgraded) has no rollouts yet
            log.debug("rollouts of label %s not read: %s", self.label, exc)
            return False
        seen = tuple((r.id, r.version, r.basis_points) for r in live)
        if seen == self._seen:
            return False
        held: dict[str, tuple[Rollout, Prompt]] = {}
        old = {rollout.id: prompt for rollout, prompt in self._held.values()}
        unread: list[Rollout] = []
        for rollout in live:
            prompt = old.get(rollout.id) or self._parse(store, rollout, library(), unread)
            if prompt is not None:
                held[rollout.prompt] = (rollout, prompt)
                self.scopes[rollout.prompt] = prompt.scopes
        # A version the store could not give now (an outage) is asked for again on the next follow, as the
        # follower's after it reconnects: seen as settled, it would stay unserved here while other replicas serve it.
        self._held, self._seen, self._names = held, () if unread else seen, frozenset(held)
        log.info("label %s: %d rollout%s live", self.label, len(held), "s" * (len(held) != 1))
        return True

    def _parse(self, store: Store, rollout: Rollout, library: TemplateFolder | None,
               unread: list[Rollout]) -> Prompt | None:
        """The rollout's version as a prompt; None when it is not served (added to ``unread`` when that may
        change with no change to the rollouts: no library yet, or a store that could not be read)."""
        if library is None:
            unread.append(rollout)
            return None
        try:
            data = store.reads.content(rollout.path, rollout.version)
        except StoreError as exc:
            log.error("rollout %d (label %s) cannot be read: %s", rollout.id, self.label, exc)
            unread.append(rollout)
            return None
        parsed = build_prompt(library, rollout.path, stage_file(rollout.path, data), compile_now=True)
        if parsed.prompt is None or parsed.prompt.name != rollout.prompt:
            log.error("rollout %d of %s (label %s): version %d does not parse as that prompt; not served",
                      rollout.id, rollout.prompt, self.label, rollout.version)
            return None
        return parsed.prompt.with_meta({META_VERSION: rollout.version, META_LABEL: self.label,
                                        META_ROLLOUT: rollout.id})

    def choose(self, prompt: Offered, key: str | None) -> Prompt | None:
        """The rollout's version of ``prompt`` when ``key`` falls in its share; None: the label's version.
        Without a key no render is split (docs/store.md#rollouts)."""
        held = self._held.get(prompt.name)
        if held is None:
            return None
        rollout, chosen = held
        if prompt.source != rollout.path or prompt.meta.get(META_LABEL) != self.label \
                or prompt.meta.get(META_VERSION) != rollout.base or chosen.scopes != prompt.scopes:
            return None  # a folder's prompt of that name, a label that moved on, or a version seen by others
        arm = "rollout" if key is not None and bucket(rollout.id, key) < rollout.basis_points else "label"
        counted = (prompt.name, arm)
        self.renders[counted] = self.renders.get(counted, 0) + 1
        return chosen if arm == "rollout" else None
