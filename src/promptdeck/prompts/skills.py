"""Agent Skills as promptdeck serves them: the ``Skill`` value, its ``skill://`` URIs, and the rules of its
front matter (docs/skills.md).

A skill is a folder with a ``SKILL.md`` whose YAML front matter gives at least ``name`` and ``description``
(the Agent Skills format, agentskills.io), and every other file below it. The MCP skills extension
(SEP-2640) serves each file as the resource ``skill://<skill-path>/<file>``: ``<skill-path>`` is one or more
segments, the last one the skill's ``name``, the ones before it a prefix the server chooses (here, the
folders of the skills it is nested in). Its listing entry is ``{uri, frontmatter, resources}``, each resource
``{uri, digest, size}`` with the SHA-256 of the exact bytes served.

Nothing here touches a file: a source finds skills and reads their bytes (``sources.files.skills``); this
module is what every layer above agrees a skill is. Who may see one is ``prompts.access``, as for prompts:
``scopes`` (from ``metadata.promptdeck-scopes``, or a top-level ``scopes``) hide the whole skill, and a URI
of a hidden skill resolves exactly as one of no skill at all (``resolve_skill_uri``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import quote, unquote

from .access import may_see

SKILL_FILE = "SKILL.md"
SCHEME = "skill://"
DIRECTORY_MIME = "inode/directory"
SKILL_MIME = "text/markdown"
#: The key of ``metadata`` that carries promptdeck's scopes (``metadata.promptdeck-scopes: "hr hr:pay"``):
#: the Agent Skills format keeps tools' own settings in ``metadata``, a map of text to text.
SCOPES_KEY = "promptdeck-scopes"

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
#: A skill name: lowercase ASCII letters and digits in runs joined by single hyphens. The format allows
#: Unicode lowercase letters too; the name is a URI segment (the first one in the authority), so ASCII only.
NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_DIGEST_RE = re.compile(r"sha256:[0-9a-f]{64}\Z")


class SkillSpecError(ValueError):
    """A front matter that breaks a rule of the format; ``key`` names where (``name``, ``metadata``, ...,
    ``metadata.promptdeck-scopes``), for its line."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def name_problem(name: object) -> str | None:
    """What is wrong with ``name`` as a skill's name, or None when it is a valid one."""
    if not isinstance(name, str):
        return f"name must be text, not {type(name).__name__}"
    if not name:
        return "name is empty"
    if len(name) > MAX_NAME:
        return f"name {name!r} is longer than {MAX_NAME} characters"
    if not NAME_RE.match(name):
        return (f"name {name!r} is not a valid skill name: use lowercase letters a-z, digits and single hyphens, "
                f"neither first nor last")
    return None


def check_front_matter(front: Mapping[str, Any], folder: str) -> list[SkillSpecError]:
    """Every rule of the Agent Skills format that ``front`` (a ``SKILL.md``'s front matter) breaks, for the
    skill in the folder named ``folder``. Keys the format does not name pass through unchecked: tools add
    their own (``argument-hint``, ``model``, ...), and the SEP serves every field the author wrote."""
    problems: list[SkillSpecError] = []
    if "name" not in front:
        problems.append(SkillSpecError("SKILL.md gives no name: the front matter needs `name:` (the folder's "
                                       f"name, {folder!r})"))
    else:
        wrong = name_problem(front["name"])
        if wrong is not None:
            problems.append(SkillSpecError(wrong, "name"))
        elif front["name"] != folder:
            problems.append(SkillSpecError(f"name {front['name']!r} does not match the skill's folder {folder!r}",
                                           "name"))
    description = front.get("description")
    if "description" not in front:
        problems.append(SkillSpecError("SKILL.md gives no description: the front matter needs `description:` "
                                       "(what the skill does and when to use it)"))
    elif not isinstance(description, str):
        problems.append(SkillSpecError("description must be text", "description"))
    elif not description.strip():
        problems.append(SkillSpecError("description is empty", "description"))
    elif len(description) > MAX_DESCRIPTION:
        problems.append(SkillSpecError(f"description is longer than {MAX_DESCRIPTION} characters "
                                       f"({len(description)})", "description"))
    if "license" in front and not isinstance(front["license"], str):
        problems.append(SkillSpecError("license must be text", "license"))
    if "compatibility" in front:
        compatibility = front["compatibility"]
        if not isinstance(compatibility, str) or not compatibility.strip():
            problems.append(SkillSpecError("compatibility must be text", "compatibility"))
        elif len(compatibility) > MAX_COMPATIBILITY:
            problems.append(SkillSpecError(f"compatibility is longer than {MAX_COMPATIBILITY} characters",
                                           "compatibility"))
    if "metadata" in front and not isinstance(front["metadata"], dict):
        problems.append(SkillSpecError("metadata must be a mapping of keys to values", "metadata"))
    tools = front.get("allowed-tools")
    if tools is not None and not isinstance(tools, str) and not (
            isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
        problems.append(SkillSpecError("allowed-tools must be text (tools separated by spaces) or a list of tools",
                                       "allowed-tools"))
    try:
        skill_scopes(front)
    except SkillSpecError as exc:
        problems.append(exc)
    return problems


def _scope_names(value: object, key: str) -> frozenset[str]:
    names = value.split() if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(s, str) and s and not any(c.isspace() for c in s)
                                              for s in names):
        raise SkillSpecError(f"{key} must be scope names: one line of names separated by spaces, or a list", key)
    return frozenset(names)


def skill_scopes(front: Mapping[str, Any]) -> frozenset[str]:
    """Who may see the skill of ``front`` (``prompts.access``): ``metadata.promptdeck-scopes``, or a top-level
    ``scopes`` as promptdeck's own files and other tools' prompt files have it; empty for everyone.
    ``SkillSpecError`` for a value that is not scope names, or for the two keys naming different scopes (one
    of them is a mistake, and either reading would be a guess about who may see it)."""
    found: list[tuple[str, frozenset[str]]] = []
    if front.get("scopes") is not None:
        found.append(("scopes", _scope_names(front["scopes"], "scopes")))
    metadata = front.get("metadata")
    if isinstance(metadata, dict) and metadata.get(SCOPES_KEY) is not None:
        key = f"metadata.{SCOPES_KEY}"
        found.append((key, _scope_names(metadata[SCOPES_KEY], key)))
    if len(found) == 2 and found[0][1] != found[1][1]:
        raise SkillSpecError(f"scopes and metadata.{SCOPES_KEY} name different scopes: keep one of them", "scopes")
    return found[0][1] if found else frozenset()


#: Unicode categories no name of a skill's file may hold: controls (C0, DEL, C1), format characters (the BiDi
#: overrides and marks, zero-width characters), line and paragraph separators, and lone surrogates. Each one
#: shows a name other than it is, or drives a terminal that prints it.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
#: Folders a skill never serves, besides hidden ones.
_SKIPPED = frozenset({"__pycache__"})


def unsafe_name(text: str) -> bool:
    """Whether ``text`` holds a character no skill file's name may hold (``_UNSAFE_CATEGORIES``)."""
    return any(unicodedata.category(c) in _UNSAFE_CATEGORIES for c in text)


def hidden_path(rel: str) -> bool:
    """Whether a path below a skill (``/`` between folders) is, or is in, a hidden file or folder
    (``.git/hooks/…``, ``.envrc``) or ``__pycache__``: not the skill's, never served nor written."""
    return any(part.startswith(".") or part in _SKIPPED for part in rel.split("/"))


def segment(text: str) -> str:
    """One path segment of a ``skill://`` URI: every character but letters, digits and ``-._~`` encoded."""
    return quote(text, safe="")


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill: ``path`` below the skill's folder (``/`` between folders), its ``size`` in bytes,
    its ``mime_type``, and ``digest`` (``sha256:`` and 64 lowercase hex digits of its bytes)."""

    path: str
    size: int
    mime_type: str
    digest: str

    def __post_init__(self) -> None:
        if not _DIGEST_RE.match(self.digest):
            raise ValueError(f"digest {self.digest!r} is not sha256: and 64 lowercase hex digits")


class Child(NamedTuple):
    """A direct child of a skill's directory: its ``name``, its ``uri``, and its file (None for a folder)."""

    name: str
    uri: str
    file: SkillFile | None


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill as served: immutable once made, as a catalog snapshot is.

    ``path``: the skill-path segments, the last one its ``name`` (``("git-workflow",)``; a skill nested in
    another has the enclosing ones' before it). ``frontmatter``: its ``SKILL.md``'s front matter as JSON,
    every field as the author wrote it; shared, never to be changed. ``files``: every file, ``SKILL.md``
    first, the others in byte order of their paths, nested skills' files among them. ``folders``: every folder
    below the skill's own (``references``, ``references/deep``), empty ones too. ``origin``: where the source
    found it (``.claude/skills/git-workflow``), for problems and logs, never sent.
    """

    path: tuple[str, ...]
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]
    folders: tuple[str, ...] = ()
    scopes: frozenset[str] = frozenset()
    origin: str = ""
    _by_path: dict[str, SkillFile] = field(init=False, repr=False, compare=False)
    _children: dict[str, tuple[Child, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.path or any(not s for s in self.path):
            raise ValueError(f"skill path {self.path!r} has an empty segment")
        by_path = {f.path: f for f in self.files}
        if SKILL_FILE not in by_path:
            raise ValueError(f"skill {'/'.join(self.path)} has no {SKILL_FILE}")
        object.__setattr__(self, "_by_path", by_path)
        object.__setattr__(self, "_children", self._make_children())

    def _make_children(self) -> dict[str, tuple[Child, ...]]:
        found: dict[str, dict[str, Child]] = {"": {}}
        for folder in self.folders:
            found.setdefault(folder, {})
        for folder in self.folders:
            parent, _, name = folder.rpartition("/")
            found.setdefault(parent, {})[name] = Child(name, self.directory_uri_of(folder), None)
        for item in self.files:
            parent, _, name = item.path.rpartition("/")
            found.setdefault(parent, {})[name] = Child(name, self.file_uri(item.path), item)
        for folder in list(found):  # folders named only by the files in them
            while folder:
                parent, _, name = folder.rpartition("/")
                found.setdefault(parent, {}).setdefault(name, Child(name, self.directory_uri_of(folder), None))
                folder = parent
        return {folder: tuple(children[n] for n in sorted(children)) for folder, children in found.items()}

    @property
    def name(self) -> str:
        return self.path[-1]

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def directory_uri(self) -> str:
        """``skill://<skill-path>``: the skill's folder, no trailing slash."""
        return SCHEME + "/".join(segment(s) for s in self.path)

    @property
    def uri(self) -> str:
        """``skill://<skill-path>/SKILL.md``: the skill's URI in listings and ``skills/get``."""
        return self.file_uri(SKILL_FILE)

    def file_uri(self, rel: str) -> str:
        """``skill://<skill-path>/<rel>`` for the file at ``rel`` (``/``-separated, below the skill's folder)."""
        return self.directory_uri + "/" + "/".join(segment(s) for s in rel.split("/"))

    def directory_uri_of(self, rel: str) -> str:
        """The URI of the folder at ``rel`` below the skill's (``""``: the skill's own)."""
        return self.file_uri(rel) if rel else self.directory_uri

    def file(self, rel: str) -> SkillFile | None:
        return self._by_path.get(rel)

    def is_directory(self, rel: str) -> bool:
        return rel in self._children

    def children(self, rel: str = "") -> tuple[Child, ...] | None:
        """The direct children of the folder at ``rel`` (``""``: the skill's own), files and folders in byte
        order of their names; None when ``rel`` is no folder of this skill."""
        return self._children.get(rel)

    @property
    def size(self) -> int:
        """The bytes of every file together."""
        return sum(f.size for f in self.files)

    def visible_to(self, held: frozenset[str] | None) -> bool:
        """Whether a principal holding ``held`` (None: trusted, a local client) may see this skill."""
        return may_see(held, self.scopes)

    def entry(self) -> dict[str, Any]:
        """The skill's entry in ``skills/list`` and ``skills/get`` (SEP-2640): ``uri``, ``frontmatter`` (shared:
        never change it) and ``resources``, every file exactly once as ``{uri, digest, size}``."""
        return {"uri": self.uri, "frontmatter": self.frontmatter,
                "resources": [{"uri": self.file_uri(f.path), "digest": f.digest, "size": f.size}
                              for f in self.files]}


class SkillTarget(NamedTuple):
    """What a ``skill://`` URI names: a file (``rel`` its path below the skill's folder) or a folder
    (``directory``; ``rel`` is ``""`` for the skill's own)."""

    skill: Skill
    rel: str
    directory: bool

    @property
    def file(self) -> SkillFile | None:
        return None if self.directory else self.skill.file(self.rel)

    @property
    def is_skill(self) -> bool:
        """Whether the URI is the skill's own ``SKILL.md``: what ``skills/get`` answers for."""
        return not self.directory and self.rel == SKILL_FILE


def parse_skill_uri(uri: object) -> tuple[str, ...] | None:
    """The decoded path segments of a ``skill://`` URI, or None for anything that is not one exactly as
    promptdeck writes them: another scheme, a query or fragment, an empty, ``.`` or ``..`` segment (a
    trailing slash is an empty one), a segment that decodes to one holding ``/``, ``\\``, NUL or another
    control, format or BiDi character (``unsafe_name``), bad or needless percent-encoding (``%2e``, ``%41``:
    only the one spelling each name has in listings is served), or text that is not UTF-8."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME) or len(uri) > 8192:
        return None
    rest = uri[len(SCHEME):]
    if not rest or "?" in rest or "#" in rest:
        return None
    decoded: list[str] = []
    for raw in rest.split("/"):
        try:
            text = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return None
        if (not text or text in (".", "..") or "/" in text or "\\" in text or unsafe_name(text)
                or segment(text) != raw):
            return None
        decoded.append(text)
    return tuple(decoded)


def resolve_skill_uri(uri: object, skills: Mapping[tuple[str, ...], Skill],
                      held: frozenset[str] | None = None) -> SkillTarget | None:
    """What ``uri`` names among ``skills`` (skill-path -> skill), as seen by a principal holding ``held``
    (None: trusted): a file or a folder of a skill it may see, or None, the same None for a malformed URI,
    an unknown one and one of a hidden skill, so that a caller answers all of them in the same words.

    Nested skills share URIs: ``skill://outer/inner/SKILL.md`` is a file of ``outer`` and the ``SKILL.md``
    of ``outer/inner``. The innermost skill served that holds it answers, and none is seen past it.
    """
    parts = parse_skill_uri(uri)
    if parts is None:
        return None
    for cut in range(len(parts), 0, -1):
        skill = skills.get(parts[:cut])
        if skill is None:
            continue
        if not skill.visible_to(held):
            return None  # an outer skill is never more visible than one nested in it (see docs/skills.md)
        rel = "/".join(parts[cut:])
        if skill.file(rel) is not None:
            return SkillTarget(skill, rel, False)
        if skill.is_directory(rel):
            return SkillTarget(skill, rel, True)
        return None
    return None
