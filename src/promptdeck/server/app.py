"""``PromptServer``: the prompts a server offers, from its sources, and the sessions it serves.

The server holds one immutable ``Catalog`` built from every ``Source`` (folders,
Python functions, any other kind: see ``promptdeck.sources``) and replaces it
whole when a source changes; sessions read ``server.catalog`` on every request
and never lock.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._version import __version__
from ..prompts.catalog import DEFAULT_PAGE_SIZE, Catalog
from ..prompts.execution import CODE_SECONDS
from ..prompts.spec import Completer, Offered, Prompt
from ..prompts.usage import Usage
from ..protocol.errors import LibraryError, PromptdeckError
from ..protocol.revisions import Revision
from ..sources import Source
from ..sources.python import PythonSource

if TYPE_CHECKING:
    from ..prompts.resources import ResourceCatalog, ResourceProvider
    from ..prompts.skill_catalog import SkillCatalog
    from .modern import ModernEndpoint
    from .request_state import Ledger
    from .resources import Follows
    from .served import Listener
    from .tools import PromptTools, ToolOptions, WriteTools

log = logging.getLogger("promptdeck.server")
F = TypeVar("F", bound=Callable[..., Any])
#: How long a legacy session waits for its client to fill in a form for a prompt's missing arguments.
ELICIT_SECONDS = 300.0


#: what ``rolling_out`` answers when no source can split
_NO_ROLLOUTS: frozenset[str] = frozenset()

class PromptServer:
    """A prompt library served over MCP.

    >>> server = PromptServer("team-prompts")
    >>> server.add_folder("prompts")            # doctest: +SKIP
    >>> @server.prompt()
    ... def hello(name: str) -> str:
    ...     return f"Say hello to {name}."
    >>> server.serve()                          # doctest: +SKIP
    """

    def __init__(self, name: str = "promptdeck", *, version: str | None = None,
                 instructions: str | None = None, page_size: int = DEFAULT_PAGE_SIZE,
                 list_ttl_ms: int = 60_000, prompt_seconds: float = CODE_SECONDS,
                 tools: bool | ToolOptions = False, text_resources: bool = False,
                 elicit_seconds: float = ELICIT_SECONDS, skills: bool = True) -> None:
        self.name = name
        #: serve the library's Agent Skills (the MCP skills extension, docs/skills.md); ``serve --no-skills``
        #: turns it off, and folders are then read without them
        self.serve_skills = skills
        #: the prompts offered as tools too (``tools/list``, ``tools/call``), for clients that show no prompts
        self.tools: PromptTools | None = None
        if tools:
            # Imported only when tools are served: `serve` over stdio starts without it (issue 29).
            from .tools import PromptTools, ToolOptions

            self.tools = PromptTools(tools if isinstance(tools, ToolOptions) else ToolOptions())
        #: the store's tools for agents, shown to writers only (``offer_write_tools``; ``serve --write-tools``)
        self.write_tools: WriteTools | None = None
        #: how long a Python prompt may run before its request is answered with an error
        self.prompt_seconds = prompt_seconds
        #: send embedded text resources and links as text blocks, for clients that take only text (docs/protocol.md)
        self.text_resources = text_resources
        if elicit_seconds <= 0:
            raise ValueError("elicit_seconds must be positive")
        #: how long a legacy session waits for its client to fill in a form for a prompt's missing arguments
        self.elicit_seconds = elicit_seconds
        self.version = version or __version__
        self.instructions = instructions
        self.page_size = page_size
        #: how long 2026-07-28 clients may cache prompts/list pages and server/discover
        self.list_ttl_ms = list_ttl_ms
        #: the sources loaded, in the order added; on a name clash the earlier one wins
        self.sources: list[Source] = []
        #: prompts made with ``prompt`` and ``add_prompt``: after every other source
        self.python = PythonSource()
        #: open legacy sessions and 2026-07-28 subscriptions (stdio and HTTP), told when the list changes
        self.listeners: set[Listener] = set()
        #: renders counted by prompt, version, label, arm and client (``handlers.chosen``); a store source
        #: drains it into the store (``sources.store.usage``), else it keeps every hour in memory
        self.usage = Usage()
        self._modern: ModernEndpoint | None = None
        #: where used requestStates are kept when replicas share them (a PostgreSQL store); None: in memory
        self.ledger: Ledger | None = None
        self._catalog = Catalog(page_size=page_size)
        #: resources served besides the sources' own (``add_resources``)
        self.resource_providers: list[ResourceProvider] = []
        self._resources: ResourceCatalog | None = None
        #: the skills of the sources' current snapshots, and those the resources were made with
        self._skills: SkillCatalog | None = None
        self._resources_skills: SkillCatalog | None = None
        #: the sources that may split renders between versions (a store's rollouts): asked on every get
        self._splitting: list[Source] = []
        #: sources to load when the catalog is first read: (the folder it watches, how to make it)
        self.pending: list[tuple[str, Callable[[], Source]]] = []

    # -- building the library ------------------------------------------------------------------

    def add_folder(self, path: str | os.PathLike[str], *, compile_all: bool | None = None,
                   defer: bool = False, format: str | None = None) -> None:
        """Serve every prompt file below ``path``; files that fail to load are logged and skipped. ``format``:
        the format of its files (``FileSource``), when its path does not say it.

        With ``defer``, only the folder's existence is checked now and its files are read when a
        request first needs the catalog, so a stdio server answers ``initialize`` before it has
        parsed a large library.
        """
        if not os.path.isdir(path):
            raise LibraryError(f"prompt library {str(path)!r} is not a folder")

        def make() -> Source:
            from ..sources.files.source import FileSource  # parsing and templates: imported once prompts are read

            return FileSource(path, compile_all=compile_all, format=format, skills=self.serve_skills)

        self.pending.append((os.path.realpath(path), make))
        if not defer:
            self._load_pending()

    def offer_write_tools(self, write_tools: WriteTools) -> None:
        """Offer the store's write tools (``server.web.store_tools``) through ``tools/list`` and ``tools/call``,
        without the prompt tools unless ``tools`` asked for them too."""
        if self.tools is None:
            from .tools import PromptTools

            self.tools = PromptTools(None)
        self.write_tools = write_tools

    def add_store(self, url: str, *, label: str = "production") -> None:
        """Serve the prompts ``label`` points at in the versioned store at ``url`` (``sqlite:///path.db``,
        a path ending in ``.db``, or ``postgresql://…``), following the label as it moves."""
        from ..sources.store.ledger import StateLedger
        from ..sources.store.source import StoreSource
        from ..sources.store.urls import is_postgres_url
        from .request_state import MAX_PER_PRINCIPAL, RequestStates

        self.add_source(StoreSource(url, label, skills=self.serve_skills))
        if self.ledger is None and is_postgres_url(url):
            # Replicas on one PostgreSQL store accept each requestState once among them all.
            self.ledger = StateLedger(url, MAX_PER_PRINCIPAL)
            # Read now, while the store is known to be reachable: the first 2026-07-28 request, which
            # needs it, may come during an outage.
            self.ledger.key()
            if self._modern is not None:
                self._modern.states = RequestStates(ledger=self.ledger)

    def add_source(self, source: Source) -> None:
        """Serve the prompts of ``source`` (after those added before it): loaded now, problems logged."""
        self._take(source)
        self.refresh()

    def _take(self, source: Source) -> None:
        _log_problems(source.load())
        source.attach(self.refresh)
        self.sources.append(source)
        take_usage = getattr(source, "take_usage", None)
        if take_usage is not None:  # a store keeps the renders counted (``sources.store.usage``)
            take_usage(self.usage)
        if type(source).rolling_out is not Source.rolling_out:
            self._splitting.append(source)

    def _load_pending(self) -> None:
        pending, self.pending = self.pending, []
        for _, make in pending:
            self._take(make())
        # No session has seen a list that lacked these prompts: reading the catalog is what loads them.
        self.refresh(notify=False)
        log.info("serving %d prompts", len(self._catalog))

    def watch_roots(self) -> list[str]:
        """Absolute paths of every folder served, loaded or not yet."""
        return [root for source in self.sources for root in source.watch_roots()] + [root for root, _ in self.pending]

    @property
    def loaded(self) -> bool:
        """Whether every folder has been read: none is left deferred (``add_folder(defer=True)``)."""
        return not self.pending

    @property
    def catalog(self) -> Catalog:
        """The current snapshot; reading it first loads any deferred folder."""
        if self.pending:
            self._load_pending()
        return self._catalog

    def add_resources(self, provider: ResourceProvider) -> None:
        """Serve the resources of ``provider`` too (after those of the sources): ``resources/list`` and
        ``resources/read`` answer for it, as the principal asking sees it (``prompts.resources``)."""
        self.resource_providers.append(provider)
        self._resources = None
        self.refresh()

    @property
    def offers_resources(self) -> bool:
        """Whether any source or provider may serve resources (a folder not read yet will)."""
        return bool(self.pending or self.resource_providers or self.offers_skills
                    or any(source.resources() for source in self.sources))

    @property
    def offers_skills(self) -> bool:
        """Whether skills are served (the skills extension is declared): unless turned off, when a folder (read
        or not yet) or any other source that has skills is served. Its listing may be empty (SEP-2640 allows
        it): a library's first skill may come with a reload."""
        return self.serve_skills and bool(self.pending or any(type(source).skills is not Source.skills
                                                              for source in self.sources))

    @property
    def skills(self) -> SkillCatalog:
        """The skills of every source's current snapshot, the first source winning a skill-path; made anew when
        a source's snapshot changes (``prompts.skill_catalog``). Empty when skills are not served."""
        self.catalog  # noqa: B018  (reading the catalog loads a deferred folder, and with it its skills)
        sources = self.sources if self.serve_skills else []
        snapshots = tuple(source.skills() for source in sources)
        held = self._skills
        if held is None or len(held.snapshots) != len(snapshots) or any(
                old is not new for old, new in zip(held.snapshots, snapshots, strict=True)):
            from ..prompts.skill_catalog import SkillCatalog

            held = self._skills = SkillCatalog(
                zip(snapshots, [source.read_skill_file for source in sources], strict=True), self.page_size, snapshots)
        return held

    @property
    def resources(self) -> ResourceCatalog:
        """The resources of the current catalog snapshot, from every source and provider (made on first need),
        the skills' files among them."""
        catalog = self.catalog
        skills = self.skills if self.offers_skills else None
        held = self._resources
        if held is None or held.prompts is not catalog or self._resources_skills is not skills:
            from ..prompts.resources import ResourceCatalog

            providers = [provider for source in self.sources for provider in source.resources()]
            if skills is not None:
                from ..prompts.skill_catalog import SkillResources

                providers.append(SkillResources(skills))
            held = self._resources = ResourceCatalog([*providers, *self.resource_providers], catalog, self.page_size)
            self._resources_skills = skills
        return held

    def prompt(self, name: str | None = None, *, title: str | None = None, description: str | None = None,
               tags: Iterable[str] = (), icons: Iterable[dict[str, Any]] = (),
               scopes: Iterable[str] = ()) -> Callable[[F], F]:
        """Decorator: serve a function as a prompt (see ``promptdeck.sources.python``).

        With ``scopes``, only HTTP principals holding one of them see and may get it.
        """
        inner = self.python.prompt(name, title=title, description=description, tags=tags, icons=icons,
                                   scopes=scopes)

        def register(fn: F) -> F:
            inner(fn)
            self.refresh()
            return fn

        return register

    def add_prompt(self, prompt: Prompt) -> None:
        self.python.add(prompt)
        self.refresh()

    def completer(self, prompt: str, argument: str) -> Callable[[Completer], Completer]:
        """Decorator: suggest values for ``argument`` of ``prompt`` (any source)."""
        return self.python.completer(prompt, argument)

    @property
    def completers(self) -> dict[tuple[str, str], Completer]:
        return self.python.completers

    @property
    def modern(self) -> ModernEndpoint:
        """What answers 2026-07-28 requests (made on first use: legacy-only clients never pay for it)."""
        if self._modern is None:
            from .modern import ModernEndpoint
            from .request_state import RequestStates

            self._modern = ModernEndpoint(self, ttl_ms=self.list_ttl_ms, states=RequestStates(ledger=self.ledger))
        return self._modern

    def server_info(self, rev: Revision) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    def rolling_out(self) -> frozenset[str]:
        """The names of prompts under a rollout now (``sources.store.splits``): their renders need the request's
        rollout key. Empty at once when no source can split (no store is served)."""
        if not self._splitting:  # every render asks: answered without a call or a new set
            return _NO_ROLLOUTS
        names: frozenset[str] = _NO_ROLLOUTS
        for source in self._splitting:
            more = source.rolling_out()
            names = (names | more if names else more) if more else names
        return names

    def split(self, prompt: Offered, key: str | None) -> Offered:
        """The version of ``prompt`` a rollout gives ``key`` (``handlers.chosen``), or ``prompt``."""
        for source in self._splitting:
            chosen = source.split(prompt, key)
            if chosen is not None:
                return chosen
        return prompt

    # -- catalog swaps -------------------------------------------------------------------------

    def build_catalog(self) -> Catalog:
        """A new snapshot of every source; on a name clash the earlier source wins and it is logged."""
        if len(self.sources) == 1 and not self.python.has_prompts():
            whole = self.sources[0].catalog(self.page_size)
            if whole is not None:
                return whole
        seen: dict[str, Offered] = {}
        for source in [*self.sources, self.python]:
            for prompt in source.prompts():
                first = seen.get(prompt.name)
                if first is not None:
                    log.error("prompt %r from %s is hidden by %s", prompt.name, prompt.source, first.source)
                    continue
                seen[prompt.name] = prompt
        return Catalog(seen.values(), page_size=self.page_size)

    def refresh(self, *, notify: bool = True) -> bool:
        """Rebuild the catalog; tell every session if what ``prompts/list`` shows has changed.

        Returns whether sessions were told (False when nobody listens or nothing changed).
        """
        new = self.build_catalog()
        old, self._catalog = self._catalog, new
        if not notify or not self.listeners:
            return False
        following = [follows for listener in list(self.listeners) if (follows := listener.follows) is not None]
        if following:
            self._tell_resources(following)
        # Comparing signatures encodes every prompt: only worth it when someone is listening.
        if new.signature() == old.signature():
            return False
        # Tools are made of prompts: their list can change only when the prompts' does.
        tools = self.tools is not None and self.tools.changed(old, new)
        for listener in list(self.listeners):
            listener.list_changed(tools)
        return True

    def _tell_resources(self, following: list[Follows]) -> None:
        """Tell those who follow resources what changed (``server.resources``); a failure is logged."""
        try:
            resources = self.resources
            for follows in following:
                follows.check(resources)
        except Exception:
            log.exception("telling clients of changed resources failed")

    def reload_paths(self, paths: Iterable[str]) -> bool:
        """Hand changed paths to every source (from the watcher) and swap the catalog; see ``refresh``."""
        changed: Sequence[str] = list(paths)
        for source in self.sources:
            _log_problems(source.reload(changed))
        return self.refresh()

    def catch_up(self) -> bool:
        """Reload what changed while the library loaded, before a watcher could see it; see ``refresh``."""
        changed = [path for source in self.sources for path in source.changed_since_load()]
        return self.reload_paths(changed) if changed else False

    def serve(self, *, watch: bool = True) -> None:
        """Serve over stdio until the client closes stdin."""
        from .stdio import serve_stdio

        serve_stdio(self, watch=watch)


def _log_problems(problems: Sequence[PromptdeckError]) -> None:
    for problem in problems:
        log.error("%s", problem)
