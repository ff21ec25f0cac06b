"""The composition graph of a catalog: which prompts use which parts, and which prompts each part is used by.

Built from every prompt's ``Prompt.uses`` (``composition.Uses``): an edge from a prompt to each library file
it pulls in by a literal target (partials, the partials those include, ``read()`` files) and to each prompt
it composes by literal name. "Used by" is the reverse, followed transitively: when ``a`` composes ``b`` and
``b`` includes ``_p.md``, a change to ``_p.md`` changes what both render, so both are its users. Targets
named by an expression are not edges (nobody knows them before a render); such a prompt is ``dynamic``.

The watcher reloads a changed part's users, ``publish`` records a new version of them, ``check --graph``
prints this, and the web page shows a prompt's part of it (``visible`` cuts it to what a principal sees).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .composition import NO_USES, Uses
from .spec import Offered


class Graph:
    """Who uses what among ``prompts`` (one per name: as served, the first of two with one name wins)."""

    __slots__ = ("_uses", "_by_file", "_by_prompt")

    def __init__(self, prompts: Iterable[Offered]) -> None:
        self._uses: dict[str, Uses] = {}
        for prompt in prompts:
            self._uses.setdefault(prompt.name, prompt.parsed().uses)
        #: direct users: a file -> the prompts pulling it in; a prompt -> the prompts composing it
        self._by_file: dict[str, set[str]] = {}
        self._by_prompt: dict[str, set[str]] = {}
        for name, uses in self._uses.items():
            for path in uses.files:
                self._by_file.setdefault(path, set()).add(name)
            for used in uses.prompts:
                self._by_prompt.setdefault(used, set()).add(name)

    def names(self) -> list[str]:
        return sorted(self._uses)

    def uses(self, name: str) -> Uses:
        """What the prompt ``name`` composes directly (its files: every partial and read file, transitively)."""
        return self._uses.get(name, NO_USES)

    def files(self) -> list[str]:
        """Every library file some prompt uses, sorted."""
        return sorted(self._by_file)

    def direct_users_of_file(self, path: str) -> set[str]:
        return set(self._by_file.get(path, ()))

    def direct_users_of_prompt(self, name: str) -> set[str]:
        return set(self._by_prompt.get(name, ()))

    def users(self, *, files: Iterable[str] = (), prompts: Iterable[str] = ()) -> set[str]:
        """Every prompt whose render a change to ``files`` or to the prompts ``prompts`` may change: those
        using them, those composing those, and so on (the prompts changed themselves not counted unless
        they use one another). Bounded by the catalog: each prompt is visited once, so a cycle ends."""
        found: set[str] = set()
        todo = [user for path in files for user in self._by_file.get(path, ())]
        todo += [user for name in prompts for user in self._by_prompt.get(name, ())]
        while todo:
            name = todo.pop()
            if name in found:
                continue
            found.add(name)
            todo.extend(self._by_prompt.get(name, ()))
        return found

    def parts(self, name: str) -> tuple[set[str], set[str]]:
        """Every file and every prompt the render of ``name`` may pull in, transitively: (files, prompts)."""
        files: set[str] = set()
        prompts: set[str] = set()
        todo = [name]
        while todo:
            current = todo.pop()
            uses = self._uses.get(current, NO_USES)
            files |= uses.files
            for used in uses.prompts:
                if used not in prompts and used != name:
                    prompts.add(used)
                    todo.append(used)
        return files, prompts

    def entry(self, name: str, may_see: Callable[[str], bool] = lambda _: True) -> dict[str, Any]:
        """The prompt ``name``'s place in the graph as JSON: what it uses (directly, and all parts it may
        pull in) and what uses it, cut to the prompts ``may_see`` allows. A file shows only where some
        prompt the viewer may see uses it, so a file only hidden prompts use is never named."""
        uses = self.uses(name)
        files, prompts = self.parts(name)
        return {
            "uses": {"files": sorted(uses.files), "prompts": sorted(p for p in uses.prompts if may_see(p)),
                     "dynamic": uses.dynamic},
            "parts": {"files": sorted(files), "prompts": sorted(p for p in prompts if may_see(p))},
            "usedBy": sorted(p for p in self.direct_users_of_prompt(name) if may_see(p)),
            "affects": sorted(p for p in self.users(prompts=(name,)) if may_see(p)),
        }

    def file_entry(self, path: str, may_see: Callable[[str], bool] = lambda _: True) -> dict[str, Any] | None:
        """The file ``path``'s users as JSON, or None when no prompt ``may_see`` allows uses it."""
        direct = sorted(p for p in self.direct_users_of_file(path) if may_see(p))
        if not direct:
            return None
        return {"usedBy": direct, "affects": sorted(p for p in self.users(files=(path,)) if may_see(p))}

    def as_json(self, may_see: Callable[[str], bool] = lambda _: True) -> dict[str, Any]:
        """The whole graph as JSON (``check --graph --json``): each prompt's entry, each file's users."""
        prompts = {name: self.entry(name, may_see) for name in self.names() if may_see(name)}
        files = {path: found for path in self.files() if (found := self.file_entry(path, may_see)) is not None}
        return {"prompts": prompts, "files": files}


__all__ = ["Graph"]
