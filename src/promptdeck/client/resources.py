"""A server's resources and skills, as the client reads them.

Resources are read with ``resources/read`` in every revision; skills are the
``io.modelcontextprotocol/skills`` extension (SEP-2640): ``skills/list`` and
``skills/get`` name a skill's files with their ``sha256:`` digests, and each
file is an ordinary resource. ``ResourceMethods`` is mixed into ``Client``;
writing a fetched skill to a folder is ``skill_folder.py``'s.

The server is not trusted: every listing is bounded in pages, and a digest,
URI or size it sends is checked before it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from ..protocol.content import ResourceContents
from ..protocol.errors import ClientError, ProtocolViolation

if TYPE_CHECKING:
    from .channel import RequestId

__all__ = ["SKILLS_EXTENSION", "ResourceInfo", "ResourceMethods", "SkillFile", "SkillInfo"]

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
_DEFAULT: Any = object()
W = TypeVar("W")


class _Wire(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel", gc=False):
    pass


class ResourceInfo(_Wire, frozen=True):
    """One entry of ``resources/list`` or ``resources/directory/read``."""

    uri: str
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")

    @property
    def is_directory(self) -> bool:
        return self.mime_type == "inode/directory"


class SkillFile(_Wire, frozen=True):
    """One file of a skill: its resource URI and the digest of its exact bytes."""

    uri: str
    digest: str
    size: int | None = None


class SkillInfo(_Wire, frozen=True):
    """One skill of ``skills/list`` or ``skills/get``: its ``SKILL.md`` URI, its front matter as the
    author wrote it, and every file it holds (None, or ``"dynamic"`` as some servers write it, for a skill
    made on the fly whose files cannot be listed ahead)."""

    uri: str
    frontmatter: dict[str, Any]
    resources: tuple[SkillFile, ...] | Literal["dynamic"] | None = None

    @property
    def name(self) -> str:
        name = self.frontmatter.get("name")
        return name if isinstance(name, str) else self.root.rpartition("/")[2]

    @property
    def files(self) -> tuple[SkillFile, ...]:
        """The files listed (none for a skill made on the fly)."""
        return self.resources if isinstance(self.resources, tuple) else ()

    @property
    def description(self) -> str:
        description = self.frontmatter.get("description")
        return description if isinstance(description, str) else ""

    @property
    def root(self) -> str:
        """The skill's directory URI (``skill://…/NAME``, no trailing slash)."""
        return self.uri.removesuffix("/SKILL.md")


class _ResourcePage(_Wire, frozen=True):
    resources: tuple[ResourceInfo, ...] = ()
    next_cursor: str | None = None


class _SkillPage(_Wire, frozen=True):
    skills: tuple[SkillInfo, ...] = ()
    next_cursor: str | None = None


class _Read(_Wire, frozen=True):
    contents: tuple[ResourceContents, ...]


class _Got(_Wire, frozen=True):
    skill: SkillInfo


def _decode(kind: type[W], raw: msgspec.Raw, method: str) -> W:
    try:
        return msgspec.json.decode(raw, type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ProtocolViolation(f"{method}: the server's result does not fit the MCP schema: {exc}") from None


class ResourceMethods:
    """The resource and skill requests of ``Client`` (which provides ``_call`` and ``max_pages``)."""

    max_pages: int
    capabilities: dict[str, Any]

    async def _call(self, method: str, params: dict[str, Any], *, name: str | None = None,
                    timeout: float | None = _DEFAULT, id: RequestId | None = None) -> msgspec.Raw:
        raise NotImplementedError  # pragma: no cover - Client's

    async def list_resources(self) -> tuple[ResourceInfo, ...]:
        """Every resource the server lists, walking all pages."""
        return await self._walk("resources/list", {}, _ResourcePage, "resources")

    async def read_resource(self, uri: str) -> tuple[ResourceContents, ...]:
        """The contents of one resource (``text`` or ``blob`` bytes)."""
        return _decode(_Read, await self._call("resources/read", {"uri": uri}, name=uri), "resources/read").contents

    async def read_directory(self, uri: str) -> tuple[ResourceInfo, ...]:
        """The direct children of a directory resource (skills extension, ``directoryRead``)."""
        if not self._skills_features().get("directoryRead"):
            raise ClientError("the server does not offer resources/directory/read (no directoryRead in its "
                              f"{SKILLS_EXTENSION} extension)")
        return await self._walk("resources/directory/read", {"uri": uri}, _ResourcePage, "resources")

    async def list_skills(self) -> tuple[SkillInfo, ...]:
        """Every skill the server lists, walking all pages."""
        self._skills_features()
        return await self._walk("skills/list", {}, _SkillPage, "skills")

    async def get_skill(self, uri: str) -> SkillInfo:
        """One skill by the URI of its ``SKILL.md`` (listed or not)."""
        self._skills_features()
        return _decode(_Got, await self._call("skills/get", {"uri": uri}), "skills/get").skill

    def _skills_features(self) -> dict[str, Any]:
        extensions = self.capabilities.get("extensions")
        features = extensions.get(SKILLS_EXTENSION) if isinstance(extensions, dict) else None
        if not isinstance(features, dict):
            raise ClientError(f"the server does not serve skills (no {SKILLS_EXTENSION} extension in its capabilities)")
        return features

    async def _walk(self, method: str, params: dict[str, Any], page_type: type[Any], field: str) -> tuple[Any, ...]:
        items: list[Any] = []
        seen: set[str] = set()
        cursor: str | None = None
        for pages in range(1, self.max_pages + 1):
            asked = params if cursor is None else {**params, "cursor": cursor}
            page = _decode(page_type, await self._call(method, asked), method)
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if cursor is None:
                return tuple(items)
            if cursor in seen:
                raise ProtocolViolation(f"{method}: the server sent the cursor {cursor!r:.60} twice "
                                        f"(a loop, after {pages} pages)")
            seen.add(cursor)
        raise ProtocolViolation(f"{method}: still more pages after {self.max_pages}; giving up")
