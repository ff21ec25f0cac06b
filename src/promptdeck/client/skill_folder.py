"""A skill fetched from a server, checked file by file, and written as a folder a tool loads.

``fetch_skill`` asks ``skills/get`` for the skill's file list, reads every file
with ``resources/read``, and compares each one's bytes with the digest the list
gave. Only a skill whose every file checks out is written, first into a hidden
folder beside the destination and then moved into place in one rename, so a
failure half-way leaves nothing behind and an interrupted fetch never leaves
half a skill where a tool would load it.

The server is not trusted with the file system: its names and file paths are
held to the rules a promptdeck server serves skills by (``prompts.skills``:
``name_problem`` for the skill's name, ``parse_skill_uri`` for each file's URI,
``hidden_path``), so a path that could leave the destination (``..``, an
absolute path, a backslash, a percent-encoded separator), a hidden file or
folder (``.git/hooks/post-checkout``, ``.envrc``), or a name holding a control,
format or BiDi character is refused, as are more files or bytes than the caps
allow. Each file is read by its URI exactly as listed (``my%20notes.md``), never
decoded and encoded again.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..prompts.skills import hidden_path, name_problem, parse_skill_uri
from ..protocol.errors import ClientError, ProtocolViolation

if TYPE_CHECKING:
    from .resources import ResourceMethods, SkillInfo

__all__ = ["MAX_FILES", "MAX_FILE_BYTES", "MAX_TOTAL_BYTES", "fetch_skill", "skill_files"]

MAX_FILES = 1_000
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_TOTAL_BYTES = 100 * 1024 * 1024
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def skill_files(skill: SkillInfo, *, max_files: int = MAX_FILES, max_file_bytes: int = MAX_FILE_BYTES,
                ) -> dict[str, tuple[str, str]]:
    """The skill's files as {relative path: (its URI as listed, its digest)}, each held to the server's rules."""
    name = skill.name
    problem = name_problem(name)
    if problem is not None:
        raise ProtocolViolation(f"skill {skill.uri!r}: {problem}")
    root = skill.root
    root_segments = parse_skill_uri(root)
    if skill.uri != root + "/SKILL.md" or root_segments is None or root.rpartition("/")[2] != name:
        raise ProtocolViolation(f"skill {skill.uri!r}: its URI does not end in /{name}/SKILL.md")
    if skill.resources is None or isinstance(skill.resources, str):
        raise ClientError(f"skill {name}: the server lists no files for it (a skill made on the fly)")
    if len(skill.resources) > max_files:
        raise ClientError(f"skill {name}: {len(skill.resources)} files, more than the {max_files} allowed")
    files: dict[str, tuple[str, str]] = {}
    for entry in skill.resources:
        if not entry.uri.startswith(root + "/"):
            raise ProtocolViolation(f"skill {name}: the file {entry.uri!r} is outside the skill")
        segments = parse_skill_uri(entry.uri)
        if segments is None:
            raise ProtocolViolation(f"skill {name}: the file {entry.uri!r} has a path that cannot be written safely")
        rel = "/".join(segments[len(root_segments):])
        if hidden_path(rel):
            raise ProtocolViolation(f"skill {name}: the file {entry.uri!r} is hidden (or in a hidden folder), which "
                                    "a skill does not hold: not written")
        if rel in files:
            raise ProtocolViolation(f"skill {name}: the file {rel} is listed twice")
        if not _DIGEST.fullmatch(entry.digest):
            raise ProtocolViolation(f"skill {name}: the digest of {rel} is not sha256:<64 hex digits>")
        if entry.size is not None and entry.size > max_file_bytes:
            raise ClientError(f"skill {name}: {rel} is {entry.size} bytes, more than the {max_file_bytes} allowed")
        files[rel] = (entry.uri, entry.digest)
    if "SKILL.md" not in files:
        raise ProtocolViolation(f"skill {name}: its file list lacks SKILL.md")
    return files


async def fetch_skill(client: ResourceMethods, uri: str, into: Path, *, replace: bool = False,
                      max_files: int = MAX_FILES, max_file_bytes: int = MAX_FILE_BYTES,
                      max_total_bytes: int = MAX_TOTAL_BYTES) -> Path:
    """Fetch the skill whose ``SKILL.md`` is ``uri`` into ``into/NAME`` and return that folder.

    An existing ``into/NAME`` is refused unless ``replace``; then it is swapped for the new one at once.
    """
    skill = await client.get_skill(uri)
    files = skill_files(skill, max_files=max_files, max_file_bytes=max_file_bytes)
    into.mkdir(parents=True, exist_ok=True)
    dest = into / skill.name
    if (dest.exists() or dest.is_symlink()) and not replace:
        raise ClientError(f"{dest} already exists (--replace to overwrite it)")
    staging = Path(tempfile.mkdtemp(prefix=f".{skill.name}.", dir=into))
    try:
        total = 0
        for rel, (uri, digest) in files.items():
            data = await _read_file(client, uri, max_file_bytes)
            total += len(data)
            if total > max_total_bytes:
                raise ClientError(f"skill {skill.name}: more than {max_total_bytes} bytes in all")
            if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
                raise ClientError(f"skill {skill.name}: {rel} does not match its digest (changed while fetched, "
                                  "or altered on the way)")
            _write_new(staging, rel, data)
        _move_into_place(staging, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


async def _read_file(client: ResourceMethods, uri: str, max_bytes: int) -> bytes:
    contents = await client.read_resource(uri)
    if len(contents) != 1 or contents[0].uri != uri:
        raise ProtocolViolation(f"resources/read {uri!r}: expected one content for that URI, got "
                                f"{[c.uri for c in contents]!r:.200}")
    content = contents[0]
    data = content.blob if content.blob is not None else (content.text or "").encode("utf-8")
    if len(data) > max_bytes:
        raise ClientError(f"{uri}: {len(data)} bytes, more than the {max_bytes} allowed for one file")
    return data


def _write_new(root: Path, rel: str, data: bytes) -> None:
    path = root.joinpath(*rel.split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    # O_EXCL and O_NOFOLLOW: a path already taken (a file where a folder is needed, two names that
    # differ only in how they were encoded) fails instead of writing through it.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _move_into_place(staging: Path, dest: Path) -> None:
    if not (dest.exists() or dest.is_symlink()):
        staging.rename(dest)
        return
    old = staging.with_name(staging.name + ".old")
    dest.rename(old)
    try:
        staging.rename(dest)
    except OSError:
        old.rename(dest)
        raise
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old)
    else:
        old.unlink()
