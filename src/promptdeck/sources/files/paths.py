"""Reading files of a prompt library without ever leaving its root.

Every path a template or an argument names goes through ``LibraryRoot.resolve``:
relative only, no ``..``, and after symlinks are followed it must still lie
below the root. Every read, of a prompt file or of material, goes through
``read_confined``: the file is opened once, and the open descriptor is checked
to be a regular file within the size limit before a byte is read, so a symlink
to ``/proc/self/environ``, a device or a FIFO is refused, never read or waited on.

The read gate (``LibraryRoot.gate``) is the one rule every file a render, ``read()``, an include, a role
line, a resource read or a completion reaches passes, by where its path came from (``Origin``):

- ``LITERAL``: written in the library's own file (``read("_m/x.txt")``, ``{image: shot.png}``, a literal
  include): the author chose it; any file of the library, a prompt source only as the access rule allows;
- ``TYPED``: the value of a ``path`` argument, already held to its pattern: never a hidden file nor a
  prompt source, by its name or where its links lead; without a pattern, material folders only;
- ``EXPRESSION``: anything else a template works out (``read(n)``, ``{resource: "{{ n }}"}``, an include
  by an expression): as ``TYPED`` without a pattern (material folders only), unless it is the very value
  of a ``path`` argument this render held to its rules (``typed_values``).

The access rule (``guard``: the scopes of the prompt a file is, or of the skill it belongs to) applies to
every origin.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from contextvars import ContextVar
from enum import Enum
from pathlib import Path
from typing import NamedTuple

from ...protocol.errors import InvalidParams
from .formats import FORMATS, folder_formats, in_folders, in_library

MAX_EMBED_BYTES = 10 * 1024 * 1024
_ANYTHING = re.compile(".*", re.DOTALL)


class Origin(Enum):
    """Where a path that a read names came from: it decides which files the read gate lets it reach."""

    LITERAL = "literal"
    TYPED = "typed"
    EXPRESSION = "expression"


#: The values of the ``path`` arguments the render running here held to their rules (``typed_values``): an
#: expression that names one of them names what the client was allowed to name already.
_typed: ContextVar[frozenset[str]] = ContextVar("promptdeck_typed_paths", default=frozenset())


class typed_values:  # lower case: used as a function, ``with typed_values(paths):``
    """Inside, an expression that names one of ``paths`` (values of ``path`` arguments, each already through
    the gate as ``TYPED``) reads it as that argument would."""

    __slots__ = ("paths", "token")

    def __init__(self, paths: frozenset[str]) -> None:
        self.paths = paths

    def __enter__(self) -> None:
        self.token = _typed.set(self.paths)

    def __exit__(self, *exc: object) -> None:
        _typed.reset(self.token)

_EXTRA_TYPES = {
    ".md": "text/markdown", ".log": "text/plain", ".txt": "text/plain", ".py": "text/x-python",
    ".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".flac": "audio/flac",
    ".m4a": "audio/mp4", ".webp": "image/webp", ".svg": "image/svg+xml", ".json": "application/json",
    ".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
    ".ts": "text/x-typescript", ".go": "text/x-go", ".rs": "text/x-rust", ".sh": "text/x-shellscript",
    ".csv": "text/csv", ".html": "text/html", ".css": "text/css", ".js": "text/javascript",
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".pdf": "application/pdf",
}


def guess_mime(path: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    known = _EXTRA_TYPES.get(ext)
    if known is not None:
        return known
    import mimetypes  # reads the system's type tables: only for extensions we do not know

    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def is_text_mime(mime: str) -> bool:
    return mime.startswith("text/") or mime in (
        "application/json", "application/yaml", "application/toml", "application/xml", "image/svg+xml")


def file_contents(rel: str, data: bytes) -> tuple[str, str | None]:
    """(MIME type, text) of the library file ``rel`` holding ``data``, as it is embedded and read as a resource:
    text when its type is text, or it has no NUL in its first 8 KiB, and it is UTF-8 (sent as ``text/plain``
    when its own type is not text); otherwise its text is None and it goes as a base64 blob of its type."""
    mime = guess_mime(rel)
    if is_text_mime(mime) or b"\x00" not in data[:8192]:
        try:
            return (mime if is_text_mime(mime) else "text/plain"), data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return mime, None


#: Library files are named ``promptdeck:///PATH`` on the wire (``file_uri``).
URI_PREFIX = "promptdeck:///"
#: What a path keeps as it is in a URI; anything else is percent-encoded (a space, ``%``, ``#``, ``?``, non-ASCII).
_URI_PLAIN = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@/-]*\Z")


def file_uri(rel: str) -> str:
    """The URI of the library file at ``rel`` (relative, '/'-separated): one canonical spelling per path."""
    path = _posix(rel)
    if not _URI_PLAIN.match(path):
        from urllib.parse import quote  # only for names a URI cannot carry as they are

        path = quote(path, safe="/!$&'()*+,;=:@~")
    return URI_PREFIX + path


def uri_path(uri: str) -> str | None:
    """The relative path ``uri`` names, if ``uri`` is a library file's canonical URI (``file_uri``); None
    otherwise. Only the spelling ``file_uri`` gives is taken: an escape that spells a ``..`` or a ``/``
    (``%2e%2e``, ``%2f``), or any other second spelling of a path, names nothing."""
    if not uri.startswith(URI_PREFIX):
        return None
    path = uri[len(URI_PREFIX):]
    if "%" in path:
        from urllib.parse import unquote

        path = unquote(path, errors="strict") if _escapes_ok(path) else ""
    if not path or file_uri(path) != uri:
        return None
    return path


def _escapes_ok(path: str) -> bool:
    """Every ``%`` starts an escape of two hex digits, and what they spell is UTF-8."""
    try:
        from urllib.parse import unquote_to_bytes

        if re.search(r"%(?![0-9A-Fa-f]{2})", path):
            return False
        unquote_to_bytes(path).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


#: The hidden folders (at the library root) where other tools keep prompts (``formats.in_folders``): (folder
#: before any ``*``, the rest of it, ending, format, whether subfolders count). ``*`` is one folder of any
#: name: a skill's.
_IN_FOLDERS = in_folders(FORMATS)
#: (ending, format) of the formats read anywhere promptdeck's own files may be, the longest ending first
_IN_LIBRARY = in_library(FORMATS)
#: The folders (below a library root) whose subfolders are Agent Skills, one skill per subfolder holding a
#: ``SKILL.md`` (docs/skills.md), in the order a skill's name is claimed when two of them give it; each with
#: the tools that document it as a project's skill folder (checked in their documentation, 2026).
SKILL_FOLDERS: tuple[tuple[str, str], ...] = (
    (".agents/skills/", "Codex, GitHub Copilot, Gemini CLI, OpenCode, Cursor: the folder tools share"),
    (".claude/skills/", "Claude Code (and read by GitHub Copilot, Cursor, OpenCode)"),
    (".codex/skills/", "Codex before .agents/skills (and read by Cursor)"),
    (".cursor/skills/", "Cursor"),
    (".gemini/skills/", "Gemini CLI"),
    (".github/skills/", "GitHub Copilot"),
    (".opencode/skills/", "OpenCode"),
    ("skills/", "a library's own skills, as skill repositories keep them"),
)
#: The skill folder ``skills/`` holds no promptdeck prompts: its ``NAME/SKILL.md`` is read as Claude Code
#: reads ``.claude/skills/NAME/SKILL.md``, and every other file below a ``NAME/`` is the skill's.
_TOP_SKILLS = "skills/"
#: Every folder a scan must enter to reach the native folders: ``.claude``, ``.claude/commands``, ...
_NATIVE_PARENTS = frozenset(
    "/".join(folder.rstrip("/").split("/")[:i]) for folder in (head + rest for head, rest, *_ in _IN_FOLDERS)
    for i in range(1, folder.count("/") + 1) if "*" not in folder.split("/")[i - 1])


#: ``--format``: each format a folder may be read in, with where its files would be below a library root
#: (``promptdeck``: the folder is a library root itself, holding promptdeck's files and the others' folders).
FOLDER_FORMATS: dict[str, str] = folder_formats(FORMATS)
_TOOL_FOLDERS = frozenset(head.split("/")[0] for head, *_ in _IN_FOLDERS) | frozenset(
    folder.split("/")[0] for folder, _ in SKILL_FOLDERS if folder.startswith("."))


def folder_prefix(folder: str | os.PathLike[str], kind: str | None = None) -> str:
    """Where the files of ``folder`` lie below a library root, as ``prompt_format`` sees paths: ``""`` for a
    library root; for a folder that is, or lies inside, or holds one of the tools' folders (``~/.claude/commands``,
    ``proj/.gemini/commands/git``, ``~/.claude``), its path from the tool's hidden folder, with ``/`` at the end
    (``.claude/commands/``), so its files are read in that tool's format with that tool's nesting rules.

    Decided by the folder's own path (as given, else where its links lead); ``kind`` (a ``FOLDER_FORMATS``
    key) says instead: ``claude-command`` reads any folder as ``.claude/commands/``.
    """
    if kind is not None:
        return FOLDER_FORMATS[kind]
    for path in (os.path.abspath(folder), os.path.realpath(folder)):
        parts = Path(path).parts
        for at in range(len(parts) - 1, -1, -1):  # the innermost tool folder decides
            if parts[at] in _TOOL_FOLDERS:
                tail = "/".join(parts[at:])
                if may_hold_prompts(tail) or _in_skill_folder(tail + "/"):
                    return tail + "/"
    return ""


def _in_skill_folder(rel_dir: str) -> bool:
    """Whether ``rel_dir`` (with ``/`` at the end) is a hidden skill folder of ``SKILL_FOLDERS``, lies in one,
    or holds one (``.agents/``)."""
    return any(rel_dir.startswith(folder) or folder.startswith(rel_dir)
               for folder, _ in SKILL_FOLDERS if folder.startswith("."))


def skill_folder_of(rel: str) -> tuple[str, str] | None:
    """(the skill folder of ``SKILL_FOLDERS``, a folder name in it) when ``rel`` (relative to a library root,
    ``/``-separated) is, or lies below, ``<skill folder><name>``: where a skill would be, by path alone (the
    caller looks for its ``SKILL.md``); None elsewhere, and for a name starting with ``.`` or ``_``."""
    for folder, _ in SKILL_FOLDERS:
        if rel.startswith(folder):
            name = rel[len(folder):].split("/", 1)[0]
            return (folder, name) if name and name[0] not in (".", "_") else None
    return None


def in_top_skill(rel_dir: str) -> bool:
    """Whether the folder ``rel_dir`` lies inside a skill of the top-level ``skills/`` folder
    (``skills/git/references``), where no prompt is: a scan need not enter it."""
    return rel_dir.startswith(_TOP_SKILLS) and rel_dir.count("/") >= 2


def prompt_format(rel: str) -> str | None:
    """The format of the prompt file at ``rel`` (relative, '/'-separated), or None if it is no prompt file.

    ``promptdeck``: a ``.md`` outside hidden and ``_`` folders; ``copilot``: a ``.prompt.md`` there or in
    ``.github/prompts/``; ``prompty``: a ``.prompty`` there;
    ``dotprompt``: a ``.prompt`` there; and the other tools' files in their own folders
    (``formats.FORMATS``). Below those, a hidden or ``_`` part still hides a file.
    """
    # Substring tests rather than a split: this runs for every file of a library, and a store's label.
    if rel[:1] not in ("", ".", "_") and "/." not in rel:
        if "/_" in rel:
            return None
        if rel.startswith(_TOP_SKILLS) and rel.find("/", len(_TOP_SKILLS)) > 0:  # a skill's file
            return "claude-skill" if rel.count("/") == 2 and rel.endswith("/SKILL.md") else None
        for ending, kind in _IN_LIBRARY:
            if rel.endswith(ending):
                return kind
        return None
    if rel[:1] != ".":
        return None
    for head, star, ending, kind, nested in _IN_FOLDERS:
        if not rel.startswith(head):
            continue
        rest = rel[len(head):]
        if star:  # one folder of any name, then exactly the ending: ``.claude/skills/NAME/SKILL.md``
            cut = rest.find("/")
            if cut <= 0 or rest[cut:] != ending or rest[:1] in (".", "_"):
                return None
            return kind
        if (rest.endswith(ending) and rest[:1] not in ("", ".", "_") and "/." not in rest and "/_" not in rest
                and (nested or "/" not in rest)):
            return kind
        return None
    return None


def is_prompt_path(rel: str) -> bool:
    """Whether ``rel`` (relative, '/'-separated) is where a prompt file lives, in any format it reads."""
    return prompt_format(rel) is not None


def may_hold_prompts(rel_dir: str) -> bool:
    """Whether a scan must enter the folder ``rel_dir`` (relative, '/'-separated): not hidden nor ``_``,
    or on the way to or inside a native folder (``formats.FORMATS``)."""
    if rel_dir[:1] not in (".", "_") and "/." not in rel_dir and "/_" not in rel_dir:
        return not in_top_skill(rel_dir)
    if rel_dir in _NATIVE_PARENTS:
        return True
    probe = rel_dir + "/x"
    for head, star, _ending, _kind, nested in _IN_FOLDERS:
        if star:
            rest = probe[len(head):] if probe.startswith(head) else ""
            if rest.count("/") == 1 and rest[:1] not in (".", "_"):
                return True
        elif probe.startswith(head):
            rest = probe[len(head):]
            if (nested or "/" not in rest) and rest[:1] not in (".", "_") and "/." not in rest \
                    and "/_" not in rest:
                return True
    return False


def _is_hidden(rel: str) -> bool:
    return any(p.startswith(".") for p in rel.split("/"))


def read_confined(root: str, rel: str, limit: int) -> bytes:
    """The bytes of ``root/rel``: a regular file, inside ``root`` once symlinks are followed, of at
    most ``limit`` bytes. ``InvalidParams`` otherwise, saying which."""
    real = os.path.realpath(os.path.join(root, rel))
    if not real.startswith(root.rstrip(os.sep) + os.sep):
        raise InvalidParams(f"file {rel!r} is a link that leads out of the library")
    return read_real(real, rel, limit)


def read_confined_all(root: str, rels: list[str], limit: int) -> list[bytes | InvalidParams]:
    """``read_confined`` of each of ``rels`` (its ``InvalidParams`` in place of a file it refuses), confinement
    checked once per folder, not per file (~13% of a large load resolved every file's path; issue 42). Same
    guarantee: a folder resolved, checked inside ``root`` and opened; each file opened in that open folder with
    ``O_NOFOLLOW``, so it is the folder's own entry, never a link. A link, or any file not opened so, goes
    through ``read_confined``, which follows it and refuses one that leads out."""
    out: list[bytes | InvalidParams] = []
    folder_fd: int | None = None
    folder: str | None = None
    try:
        for rel in rels:
            parent, _, name = rel.rpartition("/")
            if parent != folder:
                if folder_fd is not None:
                    os.close(folder_fd)
                folder, folder_fd = parent, _open_folder(root, parent)
            try:  # a link (ELOOP under O_NOFOLLOW) or a failure: read_confined follows, checks and says
                fd = -1 if folder_fd is None else os.open(name, READ_FLAGS, dir_fd=folder_fd)
            except OSError:
                fd = -1
            try:
                out.append(read_opened(fd, rel, limit) if fd >= 0 else read_confined(root, rel, limit))
            except InvalidParams as exc:
                out.append(exc)
    finally:
        if folder_fd is not None:
            os.close(folder_fd)
    return out


def _open_folder(root: str, parent: str) -> int | None:
    """The folder ``root/parent`` opened, if it resolves to ``root`` or a folder below it; else None."""
    real, top = os.path.realpath(os.path.join(root, parent)), root.rstrip(os.sep)
    if real != top and not real.startswith(top + os.sep):
        return None
    try:
        return os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


def read_real(real: str, rel: str, limit: int) -> bytes:
    """The bytes of ``real``, a path ``os.path.realpath`` gave and that was found inside the library (by
    ``read_confined``, or ``LibraryRoot.readable``), named ``rel`` in errors: opened without following a
    link there, and read only if it is a regular file of at most ``limit`` bytes."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the checked path is the one opened.
        fd = os.open(real, READ_FLAGS)
    except OSError as exc:
        raise InvalidParams(f"file {rel!r} cannot be read: {exc.strerror}") from None
    return read_opened(fd, rel, limit)


#: How library files are opened: never following a symlink, never waiting on a FIFO.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_opened(fd: int, rel: str, limit: int) -> bytes:
    """The bytes of the file open at ``fd`` (closed here), named ``rel`` in errors: a regular file of at
    most ``limit`` bytes, or ``InvalidParams``. Read with ``os.read``: a file object costs more than the read."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidParams(f"file {rel!r} is not a regular file")
        if info.st_size > limit:
            raise InvalidParams(f"file {rel!r} is larger than {limit} bytes")
        # Ask for what fstat said, not for ``limit``: a buffer of ``limit`` bytes per read is mapped
        # and then shrunk, and 100,000 small files left 100,000 mappings, past the kernel's cap.
        data = _read(fd, info.st_size + 1)
        if len(data) > info.st_size:  # it grew after fstat: read on, up to just past the limit
            data += _read(fd, limit + 1 - len(data))
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InvalidParams(f"file {rel!r} is larger than {limit} bytes")
    return data


def _read(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``, or fewer at its end."""
    chunks = []
    while size > 0 and (chunk := os.read(fd, size)):
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _posix(rel: str) -> str:
    """``Path(rel).as_posix()``: at once for a path already in that form (the usual case), which this runs
    for on every path a request names."""
    if rel and rel != "." and "//" not in rel and "/./" not in rel and not rel.startswith("./") \
            and not rel.endswith(("/", "/.")):
        return rel
    return Path(rel).as_posix()


class LibraryRoot:
    """The folder a library lives in; the only way templates reach files."""

    def __init__(self, root: str | os.PathLike[str], missing: Callable[[str], bool] | None = None,
                 guard: Callable[[str, str, bytes], None] | None = None) -> None:
        self.root = Path(root).resolve()
        # The checks below run on every path a request names: on strings (os.path), not pathlib objects.
        self._root = str(self.root)
        self._inside = self._root.rstrip(os.sep) + os.sep
        #: asked for a file that is not there (its relative path): whether it has put it there now. A
        #: stored library writes its prompt files on first need (``sources.stored``).
        self.missing = missing
        #: shown every prompt file a template or a block touches, before its bytes are used: (the name
        #: given, the prompt path it is, its bytes); it raises ``InvalidParams`` to refuse it. The
        #: library's access rule (``sources._library``): another prompt's source may be restricted.
        self.guard = guard

    def gate(self, rel: str, origin: Origin, pattern: re.Pattern[str] | None = None) -> Path:
        """THE read gate: the real path of ``rel``, named from ``origin`` (with ``pattern``, a ``TYPED``
        argument's), if the library's one rule lets it be read; ``InvalidParams`` otherwise (module doc).
        Every read of a library file for a prompt, a resource or a completion passes here
        (tests/attack/test_read_gate.py lists them)."""
        real = self._named(rel, origin, pattern)
        if self.guard is not None:
            for source in self._guarded(rel, real):
                self.guard(rel, source, read_confined(str(self.root), source, MAX_EMBED_BYTES))
        return real

    def _named(self, rel: str, origin: Origin, pattern: re.Pattern[str] | None) -> Path:
        """The gate's rule on names (both ``rel`` and where its links lead); the access rule aside."""
        if origin is Origin.LITERAL:
            return self._resolve(rel)
        if origin is Origin.EXPRESSION:
            pattern = _ANYTHING if isinstance(rel, str) and rel in _typed.get() else None
        return self._readable(rel, pattern)

    def resolve(self, rel: str) -> Path:
        """The real path of ``rel`` named literally (``gate`` with ``Origin.LITERAL``)."""
        return self.gate(rel, Origin.LITERAL)

    def _guarded(self, rel: str, real: Path) -> list[str]:
        """The files whose scopes a read of ``rel`` (leading to ``real``) must pass: the prompt file it is, if
        it is one (``_prompt_path``), and the ``SKILL.md`` of every skill it lies in, by its name and by where
        its links lead (a skill's files are seen only by those who may see the skill, docs/skills.md)."""
        found = [source] if (source := self._prompt_path(rel, real)) is not None else []
        target = real.relative_to(self.root).as_posix() if real != self.root else ""
        for name in dict.fromkeys((Path(rel).as_posix(), target)):
            found += self._skill_files(name)
        return list(dict.fromkeys(found))

    def _skill_files(self, rel: str) -> list[str]:
        """The ``SKILL.md`` of the skill ``rel`` lies in (by path: ``paths.skill_folder_of``) and of each skill
        nested in it on the way down to ``rel``, those that exist."""
        at = skill_folder_of(rel)
        if at is None:
            return []
        folder = at[0] + at[1]
        below = rel[len(folder) + 1:].split("/")[:-1] if rel.startswith(folder + "/") else []
        found: list[str] = []
        for part in ["", *below]:
            folder = f"{folder}/{part}" if part else folder
            if os.path.lexists(self.root / folder / "SKILL.md"):
                found.append(f"{folder}/SKILL.md")
        return found

    def _prompt_path(self, rel: str, real: Path) -> str | None:
        """The prompt file that reading ``rel`` (which leads to ``real``) reads, if it is one: where a
        symlink leads decides, and a prompt path that links to material is the prompt path."""
        target = self.below(real)
        if is_prompt_path(target):
            return target
        name = _posix(rel)
        return name if is_prompt_path(name) else None

    def below(self, real: Path) -> str:
        """``real`` (a real path inside the root) as a path below the root, '/'-separated."""
        return str(real)[len(self._inside):] if real != self.root else "."

    def _resolve(self, rel: str) -> Path:
        if not isinstance(rel, str) or not rel or "\x00" in rel:
            raise InvalidParams(f"file path {rel!r} is not valid")
        if rel.startswith("/") or ".." in rel.split("/"):
            raise InvalidParams(f"file path {rel!r} must be relative and stay inside the library")
        real = os.path.realpath(os.path.join(self._root, rel))
        if real != self._root and not real.startswith(self._inside):
            raise InvalidParams(f"file path {rel!r} leaves the library")
        if not os.path.exists(real) and not (self.missing is not None and self.missing(real[len(self._inside):])
                                             and os.path.exists(real)):
            raise InvalidParams(f"file {rel!r} does not exist in the library")
        if not os.path.isfile(real):
            raise InvalidParams(f"file {rel!r} is not a regular file")
        return Path(real)

    def readable(self, rel: str, pattern: re.Pattern[str] | None = None) -> Path:
        """The real path of ``rel`` if a ``path`` argument with ``pattern`` may name it (``gate`` with
        ``Origin.TYPED``), else ``InvalidParams``."""
        return self.gate(rel, Origin.TYPED, pattern)

    def _readable(self, rel: str, pattern: re.Pattern[str] | None = None) -> Path:
        """The real path of ``rel`` if a ``path`` argument may name it, else ``InvalidParams``.

        Never a hidden file or a prompt file (another prompt's source may be restricted by
        ``scopes``). Without a ``pattern`` on the argument, only files in material folders (whose
        names start with ``_``); with one, any other file the pattern matches (the argument's own
        validation applies it). Both the name given and where its symlinks lead are held to this.
        """
        self._may_name(rel, pattern)
        real = self._resolve(rel)  # no prompt file passes _may_name; a skill's file is the guard's (``gate``)
        if real != self.root:
            try:
                self._may_name(self.below(real), pattern)
            except InvalidParams:
                raise InvalidParams(f"file {rel!r} leads to a file that arguments may not name") from None
        return real

    @staticmethod
    def _may_name(rel: str, pattern: re.Pattern[str] | None) -> None:
        name = _posix(rel) if isinstance(rel, str) else rel
        if _is_hidden(name):
            raise InvalidParams(f"file {rel!r} is hidden; arguments may not name hidden files")
        if is_prompt_path(name):
            raise InvalidParams(f"file {rel!r} is a prompt file; arguments may name material only")
        if pattern is None and not any(p.startswith("_") for p in name.split("/")[:-1]):
            raise InvalidParams(f"file {rel!r} is not in a material folder (one whose name starts with '_'); "
                                f"a pattern on the argument can allow other files")

    def read_bytes(self, rel: str, limit: int = MAX_EMBED_BYTES, origin: Origin = Origin.LITERAL,
                   pattern: re.Pattern[str] | None = None) -> bytes:
        """The bytes of ``rel``, through the gate (``gate``); a prompt file's own bytes, read here, are the
        version whose scopes the access rule sees."""
        real = self._named(rel, origin, pattern)  # the clear messages: relative, no '..', exists, may be named
        data = read_confined(str(self.root), rel, limit)
        if self.guard is not None:
            prompt = self._prompt_path(rel, real)
            for source in self._guarded(rel, real):
                # A prompt file's own bytes, read here, are the version whose scopes count.
                self.guard(rel, source, data if source == prompt else read_confined(str(self.root), source,
                                                                                     MAX_EMBED_BYTES))
        return data

    def read_text(self, rel: str, limit: int = MAX_EMBED_BYTES, origin: Origin = Origin.LITERAL) -> str:
        data = self.read_bytes(rel, limit, origin)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidParams(f"file {rel!r} is not UTF-8 text") from None

    def _may_offer(self, rel: str) -> bool:
        """Whether completion may offer ``rel``, a file of a skill: only if the guard lets it be read here."""
        try:
            self.gate(rel, Origin.TYPED, _ANYTHING)
        except InvalidParams:
            return False
        return True

    def uri(self, rel: str) -> str:
        return file_uri(rel)

    def files(self, prefix: str = "", limit: int = 1000, *, material_only: bool = False) -> list[str]:
        """Library files (not prompts, not hidden) whose relative path starts with ``prefix``; with
        ``material_only``, only those in material (``_``) folders."""
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel_dir = os.path.relpath(dirpath, self.root)
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                rel = name if rel_dir == "." else f"{Path(rel_dir).as_posix()}/{name}"
                if material_only and not any(p.startswith("_") for p in rel.split("/")[:-1]):
                    continue
                if rel.startswith(prefix) and not is_prompt_path(rel):
                    if skill_folder_of(rel) is not None and not self._may_offer(rel):
                        continue
                    if os.path.islink(os.path.join(dirpath, name)):
                        try:  # offer a link only if where it leads could be named too
                            self.gate(rel, Origin.TYPED, _ANYTHING)
                        except InvalidParams:
                            continue
                    out.append(rel)
                    if len(out) >= limit:
                        return out
        return out


class SkillLimits(NamedTuple):
    """What one skill may hold (``SKILL.md`` and nested skills' files counted): its files, their bytes in all,
    one file's bytes, and how deep its folders go. The defaults of the first two are the SEP's (512
    resources, 16 MiB): what every host must accept, and what a server should not go past. Here rather than
    in ``skills``, so that a library without skills never imports the skill reader."""

    max_files: int = 512
    max_total_bytes: int = 16 * 1024 * 1024
    max_file_bytes: int = 10 * 1024 * 1024
    max_depth: int = 16
