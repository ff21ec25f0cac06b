"""The skills a server serves, for one snapshot of its sources: the MCP skills extension (SEP-2640).

``SkillCatalog`` is to skills what ``Catalog`` is to prompts: made from every source's ``skills()`` snapshot
(the first source wins a skill-path, as it wins a prompt name), never changed, replaced when a source's
snapshot is. It answers what the extension's methods ask, for one principal (``held``; None: trusted):

- ``page``: one ``skills/list`` page, encoded once per listing, cursor and era; a listing is the skills the
  principal may see in byte order of their URIs, and a cursor names the last URI of the page before it, so
  a skill added or removed between pages neither repeats nor skips one. An entry is never split: a page
  holds at most ``page_size`` skills and ``MAX_PAGE_FILES`` files, and always at least one skill;
- ``get``: ``{"skill": entry}`` for a skill's ``SKILL.md`` URI;
- ``directory``: the direct children of a folder of a skill (``resources/directory/read``), paged by name;
- ``read``/``stamp``/``resources``: the files as resources (``SkillResources``, the provider the server adds
  to its ``ResourceCatalog``): exactly the bytes whose digest the listing gives, read by the source.

Whatever a principal may not see answers exactly as what nobody serves: a hidden skill, an unknown one and a
malformed URI all resolve to None (``skills.resolve_skill_uri``), and each method has one refusal for all of
them, in the same words. Nothing here touches a file: reading is the source's (``Source.read_skill_file``).
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..protocol.content import ResourceContents
from ..protocol.errors import InvalidParams
from ..protocol.jsonrpc import encode_json
from .catalog import DEFAULT_PAGE_SIZE, decode_cursor, encode_cursor
from .read_budget import spend
from .resources import MAX_URI_CHARS, Resource, ResourceProvider, Sight, listed_entry
from .skills import DIRECTORY_MIME, SKILL_FILE, Skill, SkillFile, SkillTarget, resolve_skill_uri

if TYPE_CHECKING:
    from ..protocol.revisions import Revision

log = logging.getLogger("promptdeck.skills")

#: How a source reads one file of one of its skills: the exact bytes listed, or ``InvalidParams``.
SkillReader = Callable[[Skill, str], bytes]
#: The files one ``skills/list`` page lists at most (each skill whole; a page always holds one skill).
MAX_PAGE_FILES = 2_000
#: Where a ``SKILL.md`` resource carries the front matter fields other than ``name`` and ``description``.
META_PREFIX = "io.modelcontextprotocol.skills/"
#: Listings kept at once (one per set of scopes seen, when skills are restricted), and pages per listing.
MAX_LISTINGS = 256
MAX_PAGES = 1024
_TEXT_TYPES = frozenset({"application/json", "application/yaml", "application/toml", "application/xml",
                         "image/svg+xml"})


def _refusal(kind: str, uri: object) -> InvalidParams:
    """The one answer for anything that is not a served ``kind`` to the asker: unknown, hidden or malformed."""
    text = uri if isinstance(uri, str) else ""
    shown = repr(text if len(text) <= 200 else text[:200] + "...")
    data = {"uri": text} if isinstance(uri, str) and len(uri) <= MAX_URI_CHARS else None
    return InvalidParams(f"{kind} not found: {shown}", data)


def not_a_skill(uri: object) -> InvalidParams:
    """``skills/get`` of anything but the ``SKILL.md`` of a skill the asker may see."""
    return _refusal("Skill", uri)


def not_a_directory(uri: object) -> InvalidParams:
    """``resources/directory/read`` of anything but a folder of a skill the asker may see."""
    return _refusal("Directory", uri)


class SkillListing:
    """The skills one principal may see, in byte order of their URIs, with its pages encoded on first use."""

    __slots__ = ("skills", "uris", "page_size", "_pages")

    def __init__(self, skills: list[Skill], page_size: int) -> None:
        self.skills = skills
        self.uris = [skill.uri for skill in skills]
        self.page_size = page_size
        self._pages: dict[tuple[int, str], bytes] = {}

    def page(self, cursor: object, extra: dict[str, Any] | None, extra_key: str) -> bytes:
        """One encoded ``skills/list`` result from ``cursor`` on, with ``extra`` fields (named by ``extra_key``)."""
        start = 0 if cursor is None else bisect_right(self.uris, decode_cursor(cursor))
        key = (start, extra_key)
        cached = self._pages.get(key)
        if cached is None:
            shown: list[Skill] = []
            files = 0
            for skill in self.skills[start:start + self.page_size]:
                if shown and files + len(skill.files) > MAX_PAGE_FILES:
                    break
                shown.append(skill)
                files += len(skill.files)
            result: dict[str, Any] = {"skills": [skill.entry() for skill in shown]}
            if start + len(shown) < len(self.skills):
                result["nextCursor"] = encode_cursor(shown[-1].uri)
            if len(self._pages) >= MAX_PAGES:
                self._pages.clear()
            cached = self._pages[key] = encode_json({**result, **(extra or {})})
        return cached


class SkillCatalog:
    """Every skill a server serves, for one snapshot of its sources (``PromptServer.skills``)."""

    __slots__ = ("skills", "readers", "snapshots", "page_size", "restricted", "_listings", "_files")

    def __init__(self, sources: Iterable[tuple[Mapping[tuple[str, ...], Skill], SkillReader]],
                 page_size: int = DEFAULT_PAGE_SIZE, snapshots: tuple[object, ...] = ()) -> None:
        skills: dict[tuple[str, ...], Skill] = {}
        readers: dict[tuple[str, ...], SkillReader] = {}
        #: every folder an earlier source's skills lie in: a later source's skill there would mix two sources'
        #: files under one URI
        enclosing: set[tuple[str, ...]] = set()
        for mapping, reader in sources:
            mine: list[tuple[str, ...]] = []
            for path, skill in mapping.items():
                if path in skills or path in enclosing or any(
                        path[:cut] in skills and readers[path[:cut]] is not reader for cut in range(1, len(path))):
                    log.error("skill %s from %s is hidden by another source's", "/".join(path), skill.origin)
                    continue
                skills[path] = skill
                readers[path] = reader
                mine.append(path)
            enclosing.update(path[:cut] for path in mine for cut in range(1, len(path)))
        self.skills = skills
        self.readers = readers
        #: what it was made of (``PromptServer.skills`` makes a new one when a source's snapshot changes)
        self.snapshots = snapshots
        self.page_size = page_size
        #: whether what is listed depends on who asks
        self.restricted = any(skill.scopes for skill in skills.values())
        self._listings: dict[object, SkillListing] = {}
        self._files: dict[object, list[Resource]] = {}

    def __len__(self) -> int:
        return len(self.skills)

    def _key(self, held: frozenset[str] | None) -> object:
        return held if self.restricted else None  # one listing for everybody when no skill is restricted

    def listing(self, held: frozenset[str] | None) -> SkillListing:
        key = self._key(held)
        listing = self._listings.get(key)
        if listing is None:
            if len(self._listings) >= MAX_LISTINGS:
                self._listings.clear()
            visible = sorted((s for s in self.skills.values() if s.visible_to(held)), key=lambda s: s.uri)
            listing = self._listings[key] = SkillListing(visible, self.page_size)
        return listing

    def page(self, held: frozenset[str] | None, cursor: object = None, extra: dict[str, Any] | None = None,
             extra_key: str = "") -> bytes:
        """One encoded ``skills/list`` page for a principal holding ``held``."""
        return self.listing(held).page(cursor, extra, extra_key)

    def resolve(self, uri: object, held: frozenset[str] | None) -> SkillTarget | None:
        """What ``uri`` names for ``held``: a file or folder of a skill it may see, or None."""
        if not isinstance(uri, str) or len(uri) > MAX_URI_CHARS:
            return None
        return resolve_skill_uri(uri, self.skills, held)

    def get(self, uri: object, held: frozenset[str] | None) -> dict[str, Any]:
        """The ``skills/get`` result: ``{"skill": entry}``; ``not_a_skill`` for anything else."""
        target = self.resolve(uri, held)
        if target is None or not target.is_skill:
            raise not_a_skill(uri)
        return {"skill": target.skill.entry()}

    def directory(self, uri: object, held: frozenset[str] | None, rev: Revision,
                  cursor: object = None) -> dict[str, Any]:
        """The ``resources/directory/read`` result: the folder's direct children, files with their resource
        metadata and folders as ``inode/directory``, a page in byte order of their names."""
        target = self.resolve(uri, held)
        children = None if target is None or not target.directory else target.skill.children(target.rel)
        if target is None or children is None:
            raise not_a_directory(uri)
        start = 0
        if cursor is not None:
            after = decode_cursor(cursor)
            start = bisect_right([child.name for child in children], after)
        shown = children[start:start + self.page_size]
        entries = [Resource(child.uri, child.name, mime_type=DIRECTORY_MIME) if child.file is None
                   else self.file_resource(target.skill, child.file) for child in shown]
        result: dict[str, Any] = {"resources": [listed_entry(entry, rev) for entry in entries]}
        if start + len(shown) < len(children):
            result["nextCursor"] = encode_cursor(shown[-1].name)
        return result

    def file_resource(self, skill: Skill, file: SkillFile) -> Resource:
        """A file's resource metadata: a skill's ``SKILL.md`` (its own, or a nested skill's) is named and
        described by its front matter, whose other fields go in ``_meta``; any other file by its name."""
        folder, _, name = file.path.rpartition("/")
        # A nested skill is seen by whoever sees the skill around it (a check problem otherwise).
        owner = self.skills.get(skill.path + tuple(folder.split("/"))) if folder else skill
        if name != SKILL_FILE or owner is None:
            return Resource(skill.file_uri(file.path), name, mime_type=file.mime_type, size=file.size)
        front = owner.frontmatter
        description = front.get("description")
        meta = {META_PREFIX + key: value for key, value in front.items() if key not in ("name", "description")}
        return Resource(owner.uri, owner.name, description=description if isinstance(description, str) else None,
                        mime_type=file.mime_type, size=file.size, meta=meta or None)

    def resources(self, held: frozenset[str] | None) -> list[Resource]:
        """Every file of every skill ``held`` may see, once each (a nested skill's files are its enclosing
        skill's too), for ``resources/list``."""
        key = self._key(held)
        listed = self._files.get(key)
        if listed is None:
            if len(self._files) >= MAX_LISTINGS:
                self._files.clear()
            seen: set[str] = set()
            listed = []
            for skill in self.listing(held).skills:
                for file in skill.files:
                    uri = skill.file_uri(file.path)
                    if uri not in seen:
                        seen.add(uri)
                        listed.append(self.file_resource(skill, file))
            self._files[key] = listed
        return listed

    def _file(self, uri: str, held: frozenset[str] | None) -> tuple[SkillTarget, SkillFile] | None:
        target = self.resolve(uri, held)
        file = None if target is None else target.file
        return None if target is None or file is None else (target, file)

    def read(self, uri: str, held: frozenset[str] | None) -> ResourceContents | None:
        """The contents of a skill file ``held`` may see: text when its type is text and its bytes UTF-8, else
        a blob; exactly the bytes its digest was taken of. None for anything else, or a file changed since
        its skill was listed (the source refuses it until a reload lists it anew)."""
        found = self._file(uri, held)
        if found is None:
            return None
        target, file = found
        spend(file.size, uri)  # before a byte is read (``read_budget``)
        try:
            data = self.readers[target.skill.path](target.skill, target.rel)
        except InvalidParams as exc:
            log.warning("skill file %s is not served: %s", uri, exc.message)
            return None
        if file.mime_type.startswith("text/") or file.mime_type in _TEXT_TYPES:
            try:
                return ResourceContents(uri, file.mime_type, text=data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
        return ResourceContents(uri, file.mime_type, blob=data)

    def stamp(self, uri: str, held: frozenset[str] | None) -> Hashable | None:
        """The digest of a skill file ``held`` may see (None: not served to it)."""
        found = self._file(uri, held)
        return None if found is None else found[1].digest


class SkillResources(ResourceProvider):
    """A ``SkillCatalog``'s files as resources, ``skill://<skill-path>/<file>``, for a ``ResourceCatalog``."""

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    def resources(self, sight: Sight) -> Iterator[Resource]:
        return iter(self.catalog.resources(sight.held))

    def read(self, uri: str, sight: Sight) -> ResourceContents | None:
        return self.catalog.read(uri, sight.held)

    def stamp(self, uri: str, sight: Sight) -> Hashable | None:
        return self.catalog.stamp(uri, sight.held)
