"""A version as a promptdeck prompt file, and where a source's prompt name puts it in a library.

A name is split at ``/`` into folders (Langfuse's and LangSmith's folders); each part must be safe as a
path part. A part with other characters (spaces, ``:``) is mapped to one of letters, digits, ``_``, ``-``
and ``.`` (and said so); a part that cannot be (empty, ``.``/``..``, a leading ``.`` or ``_``, which
promptdeck does not read as a prompt, a control character) refuses the import, naming the prompt.
"""

from __future__ import annotations

import re
from typing import Any

from .model import ImportRefused, Version

_SAFE_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\Z")
_MAPPED = re.compile(r"[^A-Za-z0-9_.-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


def path_for(name: str, where: str) -> tuple[str, str | None]:
    """(the prompt file's path in the library, a note when the name had to be mapped)."""
    if _CONTROL.search(name) or name.startswith("/") or len(name) > 200:
        raise ImportRefused(f"{where}: prompt name {name!r} is not safe as a path; nothing was written")
    parts = name.split("/")
    mapped = []
    for part in parts:
        if part in ("", ".", "..") or part[0] in "._":
            raise ImportRefused(f"{where}: prompt name {name!r} is not safe as a path (its part {part!r}); "
                                "nothing was written")
        safe = _MAPPED.sub("-", part).strip("-")
        if not _SAFE_PART.match(safe) or safe.endswith("."):
            raise ImportRefused(f"{where}: prompt name {name!r} cannot be made a path (its part {part!r}); "
                                "nothing was written")
        mapped.append(safe)
    path = "/".join(mapped) + ".md"
    return path, None if mapped == parts else f"its name is mapped to {path[:-3].replace('/', '.')!r}"


def file_text(version: Version) -> str:
    """The promptdeck file of ``version``: front matter (description, tags, model, arguments), then its
    messages, a role line before each but a first user message."""
    import yaml

    front: dict[str, Any] = {}
    if version.description:
        front["description"] = version.description
    if version.tags:
        front["tags"] = list(version.tags)
    if version.model:
        front["model"] = version.model
    if version.arguments:
        front["arguments"] = version.arguments
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000) if front else ""
    body = [("" if index == 0 and message.role == "user" else f"{message.role}:\n") + message.text.strip("\n")
            for index, message in enumerate(version.messages)]
    return "---\n" + head + "---\n" + "\n\n".join(body) + "\n"
