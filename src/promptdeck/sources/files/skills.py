"""Finding and checking the skills of one skill folder (``.claude/skills/git-workflow``): docs/skills.md.

``find_skills`` walks the folder once, by ``lstat`` only, and refuses what must not be served before a byte
is read: a link that leads out of the skill (or to a hidden file), a FIFO or device, a file name that is no
URI text, more files or folders than ``SkillLimits`` allows, a file over its size cap or a skill over its
total. Then it reads each ``SKILL.md`` (the folder's own and any nested below it, each a skill of its own)
and checks its front matter against the Agent Skills format; only a skill with no problem at all is hashed
and made a ``Skill``. Every read goes through ``paths.read_confined`` against the skill's real folder, so a
link swapped in after the walk is refused there too.

What a skill holds: every file below its folder but hidden ones (a name starting with ``.``, at any depth:
``.git``, ``.env``, editor and OS litter) and ``__pycache__``; a link to a file inside the skill is served
with that file's bytes; a link to a folder inside it is not followed (its files are served at their own
paths already).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from ...prompts.access import covers, shown_scopes
from ...prompts.skills import (
    SKILL_FILE,
    SKILL_MIME,
    Skill,
    SkillFile,
    SkillSpecError,
    check_front_matter,
    hidden_path,
    skill_scopes,
    unsafe_name,
)
from ...protocol.errors import InvalidParams, LineError, PromptFileError
from .frontmatter import key_line, read_json_front_matter, split_front_matter
from .paths import SkillLimits, guess_mime, read_confined

MiB = 1024 * 1024
#: A ``SKILL.md`` is parsed whole: at most this much of it (a prompt file's cap).
MAX_SKILL_MD_BYTES = 1 * MiB
#: Problems kept per skill folder: a folder of 10,000 bad files says so in a few lines, not 10,000.
MAX_PROBLEMS = 20
_HEX_RE = re.compile(r"[0-9a-f]{64}\Z")


def _sha256(data: bytes) -> str:
    # hashlib here, not at the top: OpenSSL's ~4 MiB are loaded only by a library that has skills.
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


class _Entry(NamedTuple):
    rel: str  # below the walked folder
    size: int


@dataclass
class _Walk:
    """What one walk of a skill folder found, by ``lstat`` alone."""

    files: list[_Entry] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    #: (path below the folder, "" for the folder itself; message)
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: folders below with a SKILL.md of their own
    nested: list[str] = field(default_factory=list)
    complete: bool = True


class Found(NamedTuple):
    """What ``find_skills`` found in one skill folder: the skills with no problem, and the problems of the
    others (or of the folder), each with its path below the library root."""

    skills: list[Skill]
    problems: list[PromptFileError]
    #: the skill-paths (``("git-workflow",)``, ``("outer", "inner")``) that have a SKILL.md here, good or not
    claimed: list[tuple[str, ...]]


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _bad_name(name: str) -> str | None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not UTF-8 text, which a URI cannot carry"
    if "\\" in name or unsafe_name(name):
        return "its name holds a backslash or a control, format or BiDi character"
    return None


def walk(top: str, limits: SkillLimits) -> _Walk:
    """Every file and folder below the real folder ``top`` a skill holds, with what is wrong on the way. It
    stops as soon as the caps are passed: entries are counted as they are listed, by their type from the
    listing alone (no ``stat``), so a folder of 10,000 files costs 513 entries' worth of work."""
    out = _Walk()
    skipped = 0  # hidden entries: not the skill's, but a flood of them must end the walk too
    files = folders = 0
    stack: list[tuple[str, str, int]] = [("", top, 0)]

    def problem(rel: str, message: str) -> None:
        out.problems.append((rel, message))

    def stop(message: str) -> None:
        problem("", message)
        out.complete = False

    while stack and out.complete:
        rel_dir, path, depth = stack.pop()
        entries = []
        try:
            with os.scandir(path) as listing:
                for entry in listing:
                    if hidden_path(entry.name):
                        skipped += 1
                        if skipped > 10 * limits.max_files:
                            stop(f"holds more than {10 * limits.max_files} hidden files and folders")
                            break
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        folders += 1
                    else:
                        files += 1
                    if files > limits.max_files or folders > limits.max_files:
                        stop(f"holds more than {limits.max_files} {'files' if files > limits.max_files else 'folders'}")
                        break
                    entries.append(entry)
        except OSError as exc:
            problem(rel_dir, f"its folder cannot be read: {exc.strerror}")
            continue
        if not out.complete:
            break
        below: list[tuple[str, str, int]] = []
        for entry in sorted(entries, key=lambda e: e.name):
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            wrong = _bad_name(entry.name)
            if wrong is not None:
                problem(rel.encode("utf-8", "backslashreplace").decode(), f"cannot be served: {wrong}")
                continue
            try:
                if entry.is_symlink():
                    _link(out, top, rel, entry.path, limits)
                elif entry.is_dir(follow_symlinks=False):
                    if depth + 1 > limits.max_depth:
                        problem(rel, f"lies deeper than {limits.max_depth} folders below the skill")
                        continue
                    out.folders.append(rel)
                    below.append((rel, entry.path, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    _file(out, rel, entry.stat(follow_symlinks=False).st_size, limits)
                else:
                    problem(rel, "is not a regular file (a FIFO, socket or device)")
            except OSError as exc:
                problem(rel, f"cannot be read: {exc.strerror}")
        stack.extend(reversed(below))  # popped in byte order
    out.folders.sort()
    out.files.sort()
    out.problems.sort()
    return out


def _link(out: _Walk, top: str, rel: str, path: str, limits: SkillLimits) -> None:
    """A symlink at ``rel``: served as the file it leads to when that is a file of the skill (held at both
    ends: where it leads must be no hidden file either); a link to a folder of the skill is not followed."""
    target = os.path.realpath(path)
    if not _within(target, top):
        out.problems.append((rel, "is a link that leads out of the skill"))
        return
    if target == top:
        return  # a link to the skill's own folder: a loop, not followed
    if hidden_path(os.path.relpath(target, top).replace(os.sep, "/")):
        out.problems.append((rel, "is a link to a hidden file, which a skill does not serve"))
        return
    try:
        info = os.stat(target)
    except OSError:
        out.problems.append((rel, "is a link to nothing"))
        return
    if stat.S_ISDIR(info.st_mode):
        return
    if not stat.S_ISREG(info.st_mode):
        out.problems.append((rel, "is a link to something that is not a regular file"))
        return
    _file(out, rel, info.st_size, limits)


def _file(out: _Walk, rel: str, size: int, limits: SkillLimits) -> None:
    if size > limits.max_file_bytes:
        out.problems.append((rel, f"is larger than {limits.max_file_bytes} bytes (the limit for one file of a "
                                  f"skill)"))
        return
    out.files.append(_Entry(rel, size))
    name = rel.rpartition("/")[2]
    if name == SKILL_FILE and "/" in rel:
        out.nested.append(rel.rpartition("/")[0])


def _below(rel: str, folder: str) -> bool:
    return not folder or rel == folder or rel.startswith(folder + "/")


def _sub(rel: str, folder: str) -> str:
    return rel[len(folder) + 1:] if folder else rel


class _Front(NamedTuple):
    front: dict[str, object] | None
    data: bytes  # the SKILL.md's bytes: its digest is taken of the very bytes whose front matter is served
    problems: list[tuple[str, int | None]]


def _read_front(top: str, rel: str, folder_name: str) -> _Front:
    """The front matter of the SKILL.md at ``rel`` and what breaks the format in it, each at its line."""
    try:
        data = read_confined(top, rel, MAX_SKILL_MD_BYTES)
    except InvalidParams as exc:
        reason = exc.message.replace(f"file {rel!r} ", "", 1)
        return _Front(None, b"", [(f"SKILL.md {reason}", None)])
    return skill_md_front(data, folder_name)


def skill_md_front(data: bytes, folder_name: str) -> _Front:
    """The front matter of a SKILL.md holding ``data``, in the folder named ``folder_name``, and what breaks
    the format in it, each at its line (None: the whole file)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _Front(None, data, [(f"SKILL.md is not UTF-8 text ({exc.reason} at byte {exc.start})", None)])
    try:
        front_text, _, _ = split_front_matter(text)
        if front_text is None:
            return _Front(None, data, [("SKILL.md has no front matter: it must begin with a '---' line, then "
                                        "name and description, then '---'", 1)])
        front = read_json_front_matter(front_text)
    except LineError as exc:
        return _Front(None, data, [(str(exc), exc.line)])
    found: list[tuple[str, int | None]] = [(str(p), key_line(front_text, p.key) or 1)
                                           for p in check_front_matter(front, folder_name)]
    return _Front(front, data, found)


#: What a source already knows of a file's bytes: given its path below the library root, the SHA-256 (64
#: lowercase hex digits) of the bytes it holds now, or None. A store wrote each file from a blob it keeps by
#: that digest, so its skills are listed without hashing their files again.
KnownDigest = Callable[[str], str | None]


def find_skills(top: str, origin: str, limits: SkillLimits, *, name: str | None = None,
                known: KnownDigest | None = None) -> Found:
    """The skills in the folder ``top`` (real, absolute), found at ``origin`` (its path below the library
    root, ``.claude/skills/git-workflow``) and named ``name`` (by default, its last part): the folder's own
    skill and every one nested in it. Problems name files by their path below the library root. ``known``:
    digests the caller vouches for (see ``KnownDigest``); a file it knows is not read unless its MIME type
    depends on its bytes."""
    name = name or origin.rstrip("/").rpartition("/")[2]
    if not os.path.lexists(os.path.join(top, SKILL_FILE)):
        hint = "; skill.md must be named SKILL.md" if os.path.lexists(os.path.join(top, "skill.md")) else ""
        return Found([], [PromptFileError(origin, f"is no skill: it has no {SKILL_FILE}{hint}")], [])

    def at(rel: str) -> str:
        return f"{origin}/{rel}" if rel else origin

    walked = walk(top, limits)
    roots = [""] + (walked.nested if walked.complete else [])
    paths = {folder: (name, *folder.split("/")) if folder else (name,) for folder in roots}
    fronts = {folder: _read_front(top, f"{folder}/{SKILL_FILE}" if folder else SKILL_FILE,
                                  paths[folder][-1]) for folder in roots}
    problems: dict[str, list[PromptFileError]] = {folder: [] for folder in roots}
    for folder in roots:
        for message, line in fronts[folder].problems:
            problems[folder].append(PromptFileError(at(f"{folder}/{SKILL_FILE}" if folder else SKILL_FILE),
                                                    message, line))
    for rel, message in walked.problems[:MAX_PROBLEMS]:
        error = PromptFileError(at(rel), message)
        for folder in roots:  # a file's problem is every skill's that holds it
            if _below(rel, folder):
                problems[folder].append(error)
    if len(walked.problems) > MAX_PROBLEMS:
        problems[""].append(PromptFileError(origin, f"and {len(walked.problems) - MAX_PROBLEMS} more problems "
                                                    f"like these"))
    for folder in roots if walked.complete else ():
        entries = [e for e in walked.files if _below(e.rel, folder)]
        total = sum(e.size for e in entries)
        if len(entries) > limits.max_files:
            problems[folder].append(PromptFileError(at(folder), f"holds more than {limits.max_files} files"))
        if total > limits.max_total_bytes:
            problems[folder].append(PromptFileError(
                at(folder), f"holds {total} bytes, more than {limits.max_total_bytes} (the limit for one skill)"))
    _check_nesting(roots, fronts, problems, at, paths)
    digests: dict[str, tuple[str, str]] = {}
    skills: list[Skill] = []
    for folder in roots:
        if problems[folder]:
            continue
        try:
            skills.append(_make(top, folder, paths[folder], at(folder), fronts, walked, limits, digests,
                                (lambda rel: known(at(rel))) if known is not None else None))
        except InvalidParams as exc:  # changed under us since the walk
            problems[folder].append(PromptFileError(at(folder), exc.message))
    shown = [error for folder in roots for error in problems[folder]]
    return Found(skills, list(dict.fromkeys(shown)), [paths[f] for f in roots])


def _check_nesting(roots: list[str], fronts: dict[str, _Front], problems: dict[str, list[PromptFileError]],
                   at: Callable[[str], str], paths: dict[str, tuple[str, ...]]) -> None:
    """A skill serves the files of the skills nested in it, so it may be seen only by those who may see
    them: an outer skill seen more widely than one inside it is not served (it would show the inner one's
    files), nor one inside which a nested SKILL.md says nothing readable about who may see it."""
    for outer in roots:
        front = fronts[outer].front
        if front is None:
            continue
        try:
            seen_by = skill_scopes(front)
        except SkillSpecError:
            continue  # the outer skill has that problem already
        for inner in roots:
            if inner == outer or not _below(inner, outer):
                continue
            inner_front = fronts[inner].front
            where = "/".join(paths[inner])
            try:
                if inner_front is None:
                    raise SkillSpecError("no front matter")
                scopes = skill_scopes(inner_front)
            except SkillSpecError:
                problems[outer].append(PromptFileError(
                    at(outer), f"holds the skill {where}, whose SKILL.md does not say readably who may see it; "
                               "not served until it does"))
                continue
            if not covers(seen_by, scopes):
                problems[outer].append(PromptFileError(
                    at(outer), f"is seen by {shown_scopes(seen_by)} but holds the skill {where}, restricted to "
                               f"{shown_scopes(scopes)}, whose files it would show: restrict it as much"))


def _mime(rel: str, data: bytes) -> str:
    if rel.rpartition("/")[2] == SKILL_FILE:
        return SKILL_MIME
    guessed = guess_mime(rel)
    if guessed == "application/octet-stream" and b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return guessed
        return "text/plain"  # LICENSE, Makefile, a script without an ending: text, by its content
    return guessed


def _make(top: str, folder: str, path: tuple[str, ...], origin: str, fronts: dict[str, _Front], walked: _Walk,
          limits: SkillLimits, digests: dict[str, tuple[str, str]], known: KnownDigest | None) -> Skill:
    """The ``Skill`` at ``folder`` (below ``top``): every file read (confined) and hashed, once per walk, but
    those whose digest is ``known`` (by their path below ``top``); a SKILL.md from the bytes its front matter
    was read from."""
    for inner, read in fronts.items():
        rel = f"{inner}/{SKILL_FILE}" if inner else SKILL_FILE
        if rel not in digests and read.front is not None:
            digests[rel] = (_sha256(read.data), SKILL_MIME)
    files: list[SkillFile] = []
    sizes = {rel: len(read.data) for rel, read in ((f"{i}/{SKILL_FILE}" if i else SKILL_FILE, r)
                                                     for i, r in fronts.items()) if read.front is not None}
    for entry in walked.files:
        if not _below(entry.rel, folder):
            continue
        hinted = known(entry.rel) if known is not None and entry.rel not in digests else None
        if hinted is not None and _HEX_RE.match(hinted) and guess_mime(entry.rel) != "application/octet-stream":
            digests[entry.rel] = ("sha256:" + hinted, guess_mime(entry.rel))
        elif entry.rel not in digests:
            data = read_confined(top, entry.rel, limits.max_file_bytes)
            if len(data) != entry.size:
                raise InvalidParams(f"{entry.rel} changed while it was read: check again")
            digests[entry.rel] = (_sha256(data), _mime(entry.rel, data))
        digest, mime = digests[entry.rel]
        files.append(SkillFile(_sub(entry.rel, folder), sizes.get(entry.rel, entry.size), mime, digest))
    files.sort(key=lambda f: (f.path != SKILL_FILE, f.path))
    folders = tuple(_sub(f, folder) for f in walked.folders if _below(f, folder) and f != folder)
    front = fronts[folder].front
    assert front is not None
    return Skill(path, front, tuple(files), folders, skill_scopes(front), origin)


def read_skill_bytes(top: str, rel: str, file: SkillFile, limit: int) -> bytes:
    """The bytes of ``file``, at ``rel`` below the real folder ``top``, read confined to it: exactly the bytes
    its digest was taken of, or ``InvalidParams`` (it changed since the skill was read, and a reload will
    list it anew; until then, what is served always matches what was listed)."""
    data = read_confined(top, rel, limit)
    if len(data) != file.size or _sha256(data) != file.digest:
        raise InvalidParams(f"file {rel!r} has changed since its skill was listed")
    return data
