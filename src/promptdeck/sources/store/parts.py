"""The parts of stored prompts: which prompts a publish changes through their parts, and which parts (and
their versions) a stored version of a prompt was rendered with (docs/store.md, Parts).

A part is a library file a prompt pulls in by a literal target (a partial, a partial's partial, a ``read()``
file) or a prompt it composes by literal name, transitively (``prompts.graph``). A publish that changes a
part records a new version of every prompt using it, its bytes unchanged (``users_of_changes``), so a
prompt's version says when what it renders changed. ``parts_at`` finds a version's parts again from the
store alone: the prompt file is compiled over a private folder that the store fills, as the compile asks
for them, with each file as the library had it right after that version's publish; ``diff`` compares two.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ...prompts.graph import Graph
from ...prompts.spec import Prompt
from ..files.library import TemplateFolder
from ..files.paths import folder_prefix, is_prompt_path
from ..files.source import FileSource, build_prompt, stage_file
from .model import Latest, is_safe_path
from .reads import Reads


def users_of_changes(folder: str, folder_format: str | None, content: Mapping[str, bytes],
                     latest: Mapping[str, Latest], checked: Mapping[str, Prompt], *,
                     complete: bool) -> dict[str, list[str]]:
    """The prompt files of ``folder`` whose bytes match the store's newest (``latest``) but some of whose parts
    changed in ``content`` (the folder as publish read it): path -> those parts, sorted (paths of files, and
    of prompt files for prompts). ``checked``: the prompts publish compiled, by name: every prompt of the
    folder when ``complete`` (the whole folder was checked); else only the changed prompt files, and the
    folder is loaded here, only when some other prompt file names a changed prompt at all, as a composition
    must."""
    changed = {path for path, data in content.items()
               if (known := latest.get(path)) is None or known.digest != hashlib.sha256(data).hexdigest()}
    changed |= {path for path, known in latest.items() if known.digest is not None and path not in content}
    if not changed:
        return {}
    prefix = folder_prefix(folder, folder_format)
    material = {path[len(prefix):] for path in changed if not is_prompt_path(path) and path.startswith(prefix)}
    old_names = {name for path in changed if path in latest and (name := latest[path].prompt)}
    if not complete:
        if material:
            raise ValueError("a change to a file that is not a prompt checks the whole folder")
        names = old_names | set(checked)
        if not any(name.encode() in data for path, data in content.items()
                   if path not in changed and is_prompt_path(path) for name in names if name):
            return {}
        source = FileSource(folder, format=folder_format)
        source.load(compile_all=True)
        checked = {prompt.name: prompt for prompt in source.prompts()}
    by_path = {prompt.source: prompt for prompt in checked.values()}
    names_changed = old_names | {by_path[path].name for path in changed if path in by_path}
    graph = Graph(checked.values())
    out: dict[str, list[str]] = {}
    for name in sorted(graph.users(files=material, prompts=names_changed)):
        path = checked[name].source
        if path in changed:
            continue
        files, prompts = graph.parts(name)
        out[path] = sorted({prefix + f for f in files & material}
                           | {checked[p].source for p in prompts if p in checked and checked[p].source in changed})
    return out


def parts_at(store: Reads, path: str, version: int) -> dict[str, int]:
    """The parts of the prompt file ``path`` at ``version``, each with its version as the library had it right
    after that version's publish: part path -> version. Empty for a deletion or a file that does not compile."""
    publish = store.publish_of(path, version)
    found: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="promptdeck-parts-") as folder:
        root = Path(folder).resolve()

        def missing(rel: str) -> bool:
            """The compile asked for ``rel``: write it as of ``publish``, if the library had it then."""
            at = store.as_of(rel, publish) if is_safe_path(rel) else None
            if at is None:
                return False
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(store.content(rel, at))
            return True

        library = TemplateFolder(root, missing)
        todo, seen = [(path, version)], {path}
        while todo:
            rel, at = todo.pop()
            data = store.file_version(rel, at)[1]
            parsed = None if data is None else build_prompt(library, rel, stage_file(rel, data), compile_now=True)
            if parsed is None or parsed.prompt is None:
                continue
            uses = parsed.prompt.uses
            for file in uses.files:
                if (part := store.as_of(file, publish)) is not None:
                    found[file] = part
            for name in sorted(uses.prompts):
                other = store.named_as_of(name, publish)
                if other is None or other in seen or (part := store.as_of(other, publish)) is None:
                    continue
                seen.add(other)
                found[other] = part
                todo.append((other, part))
    return found


__all__ = ["parts_at", "users_of_changes"]
