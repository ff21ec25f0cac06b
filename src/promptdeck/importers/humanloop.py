"""Humanloop ``.prompt`` files: YAML front matter (model, provider, endpoint, parameters, tools), then the
template, its chat messages in ``<system>``, ``<user>`` and ``<assistant>`` tags (a completion's text as it
is), with ``{{ variable }}`` holes.

An input is one file or a folder of them (as Humanloop's CLI pulled them); a file's path below the folder,
without ``.prompt``, is its name. A file is one version with no labels (Humanloop kept its versions and
environments on its servers, which closed in 2025). The front matter is kept as the model settings; a
``{{ tool(...) }}`` call and any other syntax but a variable are named, not translated.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from .build import make_version
from .model import MAX_INPUT_BYTES, MAX_PROMPTS, MAX_TEXT_BYTES, Imported, bounded, refuse

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.DOTALL | re.MULTILINE)
_TAG = re.compile(r"<(system|user|assistant|developer|tool)(?:\s[^>]*)?>(.*?)</\1\s*>", re.DOTALL)


def read(path: str, where: str) -> list[Imported]:
    """``path``: a ``.prompt`` file, or a folder whose ``.prompt`` files (not below hidden folders, not through
    symbolic links) are read."""
    root = Path(path)
    if root.is_symlink() or not root.exists():
        raise refuse(where, "no such file or folder (or a symbolic link)")
    if root.is_file():
        return bounded([_file(root, root.name[:-len(".prompt")] if root.name.endswith(".prompt") else root.stem,
                              where)], where)
    files: list[tuple[str, Path]] = []
    total = 0
    for file in sorted(root.rglob("*.prompt")):
        rel = file.relative_to(root)
        if any(part.startswith(".") for part in rel.parts) or _linked(root, file):
            continue
        total += file.lstat().st_size
        if len(files) >= MAX_PROMPTS or total > MAX_INPUT_BYTES:
            raise refuse(where, f"more than {MAX_PROMPTS} files or {MAX_INPUT_BYTES} bytes")
        files.append((rel.as_posix()[:-len(".prompt")], file))
    return bounded([_file(file, name, f"{where}/{name}.prompt") for name, file in files], where)


def _linked(root: Path, file: Path) -> bool:
    """Whether ``file`` or a folder between it and ``root`` is a symbolic link (never followed out)."""
    here = file
    while here != root:
        if here.is_symlink():
            return True
        here = here.parent
    return not file.is_file()


def _file(file: Path, name: str, where: str) -> Imported:
    import yaml

    if file.stat().st_size > MAX_TEXT_BYTES:
        raise refuse(where, f"larger than {MAX_TEXT_BYTES} bytes")
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise refuse(where, "not UTF-8 text") from None
    front = _FRONT.match(text)
    settings: Any = {}
    if front is not None:
        try:
            settings = yaml.safe_load(front.group(1)) or {}
        except RecursionError:
            raise refuse(where, "its front matter is nested too deeply") from None
        except yaml.YAMLError as exc:
            raise refuse(where, f"its front matter is not YAML ({exc})") from None
        if not isinstance(settings, dict):
            raise refuse(where, "its front matter is not a mapping")
        text = text[front.end():]
    tags = list(_TAG.finditer(text))
    if tags:
        messages = [(m.group(1), textwrap.dedent(m.group(2)).strip("\n")) for m in tags]
    else:
        messages = [("user", text.strip("\n"))]
    model = {str(k): v for k, v in settings.items() if isinstance(v, str | int | float | bool | list | dict)}
    return Imported(name, [make_version("1", messages, "mustache", model=model, message="Humanloop .prompt file")])
