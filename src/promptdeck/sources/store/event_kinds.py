"""The kinds of event a store tells its webhooks of, each a name and the type of its payload: the one table.

A kind is declared here once (``register``). Everything else reads this table: ``events.emit`` checks a
payload against it, ``webhooks.add`` and the CLI's ``webhook add --event`` check and list its names, and
tests/docs/test_webhook_docs.py holds docs/store.md to it. The database keeps a kind as plain text, with no
table of kinds to add a row to, so a new kind needs no migration; and a webhook made for every kind is
stored as ``EVERY`` (``*``), so it is sent the kinds added after it too.

A payload's fields, in the order declared, are the ``data`` of the JSON body a receiver gets (docs/store.md
#webhooks): changing their order or their names changes what receivers parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

#: What a webhook's ``kinds`` holds when it asks for every kind, those registered after it was made included.
EVERY = "*"
#: A kind's name: what ``--event`` takes and a body's ``type`` says.
_NAME = re.compile(r"[a-z][a-z0-9_.-]{0,63}\Z")


class ChangedPrompt(msgspec.Struct, frozen=True, kw_only=True):
    """A prompt an event is about (``events.changed_prompts``)."""

    name: str
    path: str
    #: its version after the change; None: the label no longer has it
    version: int | None
    #: its version before; None: it is new
    previous: int | None
    deleted: bool
    #: who may see it (empty: anyone): decides which webhooks are told of it; never sent
    scopes: tuple[str, ...] = ()


class Payload(msgspec.Struct, frozen=True):
    """What every kind's payload is: a frozen struct whose fields are the body's ``data``. A ``prompts`` field
    (``ChangedPrompt``s) names each prompt only to a webhook that may see it; a ``files`` field counts only
    the changed files it may see (``events._visible``)."""


class GitProvenance(msgspec.Struct, frozen=True, kw_only=True):
    """Where a publish came from, when its folder was a git work tree (``provenance``)."""

    commit: str
    #: None: a detached HEAD
    branch: str | None
    #: whether the folder had uncommitted changes
    dirty: bool


class Published(Payload, frozen=True, kw_only=True, omit_defaults=True):
    """``publish``: new versions of files (``publish``, the editor's save). ``git`` is left out when there is
    none, so a body is byte for byte what receivers were sent before it was added."""

    publish: int
    author: str
    message: str
    #: the label ``publish --label`` moved, else None
    label: str | None
    #: how many files changed
    files: int
    prompts: tuple[ChangedPrompt, ...]
    #: whether more prompts changed than are named (``events.MAX_EVENT_PROMPTS``)
    truncated: bool
    #: the git commit, branch and dirtiness of the folder published; left out when not from git
    git: GitProvenance | None = None


class LabelMoved(Payload, frozen=True, kw_only=True):
    """``label`` and ``rollback``: a label points at other versions (``Governance.release``)."""

    label: str
    author: str
    #: the mover's ``-m``, else what the move did
    message: str
    #: what the move did
    reason: str
    position: int
    previous_position: int | None
    files: int
    prompts: tuple[ChangedPrompt, ...]
    truncated: bool


class RolloutChanged(Payload, frozen=True, kw_only=True):
    """``rollout``: a rollout's start, new share or end (``Governance._rollout_event``)."""

    label: str
    rollout: int
    #: ``start``, ``percent``, ``promote``, ``abort`` or ``superseded``
    change: str
    percent: float
    author: str
    message: str
    #: the position of the label move that ended it (``superseded``), else None
    position: int | None
    prompts: tuple[ChangedPrompt, ...]


class LabelPromoted(LabelMoved, frozen=True, kw_only=True):
    """``promote``: a label points at what another label holds, all of it or the prompts named
    (``promotion.promote``, through ``Governance.release``): a move's fields, then where it came from."""

    #: the label whose versions it now serves, and that label's position promoted
    source: str
    source_position: int
    #: whether only some of the source's prompts were promoted (named): the label's other files stayed
    partial: bool
class ProposalChanged(Payload, frozen=True, kw_only=True):
    """``proposal``: a proposal opened, given new versions, commented on, approved, rejected, withdrawn or
    merged (``proposals``)."""

    proposal: int
    label: str
    #: ``opened``, ``pushed``, ``commented``, ``approved``, ``rejected``, ``withdrawn`` or ``merged``
    change: str
    #: who made the change (the approver of an approval)
    author: str
    #: the comment, the reason, or the proposal's message
    message: str
    #: the position a merge moved the label to, else None
    position: int | None
    #: the proposal's prompts, against what the label serves
    prompts: tuple[ChangedPrompt, ...]
    truncated: bool


@dataclass(frozen=True, slots=True)
class EventKind:
    name: str
    payload: type[Payload]


#: The kinds, by name (``register``).
REGISTRY: dict[str, EventKind] = {}


def register(name: str, payload: type[Payload]) -> EventKind:
    """Declare the kind ``name``, whose events carry a ``payload``; the kind."""
    if not _NAME.match(name):
        raise ValueError(f"an event kind is 1-64 small letters, digits, '_', '.' and '-', not {name!r}")
    if name in REGISTRY:
        raise ValueError(f"the event kind {name!r} is registered already")
    REGISTRY[name] = kind = EventKind(name, payload)
    return kind


register("publish", Published)
register("label", LabelMoved)
register("rollback", LabelMoved)
register("rollout", RolloutChanged)
register("promote", LabelPromoted)
register("proposal", ProposalChanged)


def names() -> list[str]:
    """The kinds' names, sorted."""
    return sorted(REGISTRY)


def checked(name: str, payload: Payload) -> EventKind:
    """The kind ``name``, if ``payload`` is its type; ``StoreError`` (a bug to see at once) if not."""
    from .model import StoreError  # here: the CLI imports this table for its help, and the store only to run

    kind = REGISTRY.get(name)
    if kind is None:
        raise StoreError(f"no event kind {name!r} (the kinds: {', '.join(names())})")
    if not isinstance(payload, kind.payload):
        raise StoreError(f"a {name!r} event carries a {kind.payload.__name__}, not a {type(payload).__name__}")
    return kind


def stored(kinds: Iterable[str]) -> str:
    """What a webhook asking for ``kinds`` keeps in ``webhooks.kinds``: their names, sorted, or ``EVERY``
    for none; ``StoreError`` naming an unknown one."""
    from .model import StoreError

    asked = sorted(set(kinds))
    unknown = [kind for kind in asked if kind not in REGISTRY]
    if unknown:
        raise StoreError(f"no event kind {unknown[0]!r}; the kinds are {', '.join(names())}")
    return " ".join(asked) or EVERY


def wants(kinds: str, name: str) -> bool:
    """Whether a webhook whose ``webhooks.kinds`` is ``kinds`` asks for the kind ``name``."""
    asked = kinds.split()
    return EVERY in asked or name in asked


def encoded(payload: Payload) -> dict[str, Any]:
    """``payload`` as JSON reads back (objects, lists, strings, numbers), its fields in their declared order
    (the body's). Through JSON rather than ``to_builtins``, which keeps tuples: a tuple of prompts would not
    be the list ``events._visible`` filters."""
    data: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(payload))
    return data
