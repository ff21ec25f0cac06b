"""What the protocol core needs of the server it answers for, and how it hears of changes.

The eras (``legacy``, ``modern``), the handlers and the tools answer for a server without knowing
``PromptServer``: they read the few things below, which ``PromptServer`` has. So the core's modules type
against these protocols, ``app`` sits above them all, and no import runs back up to it.

A change of what ``prompts/list`` shows reaches whoever listens: a legacy session and a 2026-07-28
subscription each add themselves to ``listeners`` while they are open, and the server tells each one
(``Listener.list_changed``) rather than keeping tables of sessions of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..prompts.catalog import Catalog
    from ..prompts.resources import ResourceCatalog
    from ..prompts.skill_catalog import SkillCatalog
    from ..prompts.spec import Completer, Offered
    from ..prompts.usage import Usage
    from ..protocol.revisions import Revision
    from .resources import Follows
    from .tools import PromptTools, WriteTools


class Listener(Protocol):
    """Told when what ``prompts/list`` shows has changed (``tools``: and the tools may have too), and, when it
    ``follows`` resources, of changed resources (``resources.Follows.check``)."""

    #: what it follows of the resources (None: nothing)
    follows: Follows | None

    def list_changed(self, tools: bool) -> None: ...


class Served(Protocol):
    """The server a request is answered for, as the handlers and both eras read it."""

    @property
    def catalog(self) -> Catalog: ...

    @property
    def completers(self) -> dict[tuple[str, str], Completer]: ...

    #: the prompts offered as tools too, or None
    tools: PromptTools | None
    #: the store's write tools (``serve --write-tools``), or None
    write_tools: WriteTools | None
    instructions: str | None
    #: how long a Python prompt may run
    prompt_seconds: float
    #: send embedded text resources and links as text blocks
    text_resources: bool
    #: open legacy sessions and 2026-07-28 subscriptions, told of list changes
    listeners: set[Listener]
    #: renders counted (``handlers.chosen``)
    usage: Usage

    @property
    def resources(self) -> ResourceCatalog: ...

    @property
    def offers_resources(self) -> bool: ...

    @property
    def skills(self) -> SkillCatalog: ...

    @property
    def offers_skills(self) -> bool:
        """Whether the skills extension is declared (``skills``, ``resources/directory/read``)."""
        ...

    def server_info(self, rev: Revision) -> dict[str, Any]: ...

    def rolling_out(self) -> frozenset[str]: ...

    def split(self, prompt: Offered, key: str | None) -> Offered: ...


class Watched(Protocol):
    """A server whose folders a file watcher follows (``watch``)."""

    def watch_roots(self) -> list[str]: ...

    @property
    def loaded(self) -> bool:
        """Whether every folder has been read (none deferred until a request needs the catalog)."""
        ...

    def reload_paths(self, paths: Iterable[str]) -> bool: ...

    def catch_up(self) -> bool: ...
