"""A kind of webhook event that no promptdeck declares, registered for one test: what a later promptdeck
adding a kind looks like to a store and its webhooks made before it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from promptdeck.sources.store.event_kinds import REGISTRY, ChangedPrompt, EventKind, Payload, register


class Deployed(Payload, frozen=True, kw_only=True):
    """The payload of the test's kind ``deploy``."""

    label: str
    prompts: tuple[ChangedPrompt, ...] = ()


@contextmanager
def registered(name: str = "deploy", payload: type[Payload] = Deployed) -> Iterator[EventKind]:
    """The kind ``name`` registered while the block runs."""
    kind = register(name, payload)
    try:
        yield kind
    finally:
        del REGISTRY[name]
