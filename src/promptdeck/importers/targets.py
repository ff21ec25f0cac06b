"""Imported prompts into a library folder (``--to``) or a store (``--store``), and the report of it.

Everything is prepared first: each prompt's path (``files.path_for``), each version's file, each checked as
``check`` checks a prompt file. A version whose translation does not check is written with its text
literal, and that is named; a clash of two names on one path refuses the import. Only then is anything
written, so a refused input writes nothing.

- Into a folder: the latest labelled version of each prompt (its ``production`` version if it has one,
  else its newest labelled one, else its newest) is written, confined below the folder; a file already
  holding those bytes is left alone, and one holding other bytes is refused unless ``force``.
- Into a store: the versions a prompt's file does not have yet are published in order (``publish_file``),
  then each label is pointed at its version through ``Store.label``, the store's one way to move a label
  (protections and required reviews apply as to any move). A version whose bytes are the file's newest
  already is not published again, and a label already there does not move: importing twice changes nothing.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .files import file_text, path_for
from .model import Imported, ImportRefused, Message, Version
from .syntax import literal, no_role_lines

if TYPE_CHECKING:
    from ..sources.store.database import Store
    from ..sources.store.model import Listed

#: The label whose version a folder gets, when a prompt has it.
SERVED_LABEL = "production"


@dataclass
class Report:
    prompts: int = 0
    #: versions published (a store) or files written (a folder), and those already there
    versions: int = 0
    unchanged: int = 0
    labels: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class Prepared:
    prompt: Imported
    path: str
    #: each version's file bytes and listing, in the prompt's order
    files: list[tuple[Version, bytes, Listed]]


def prepare(prompts: list[Imported], where: str, report: Report) -> list[Prepared]:
    from ..sources.files.library import TemplateFolder
    from ..sources.files.source import build_prompt, stage_file
    from ..sources.store.model import listing_of

    out: list[Prepared] = []
    owners: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="promptdeck-import-") as empty:
        library = TemplateFolder(Path(empty))  # a library of nothing: an imported prompt reads no file
        for prompt in prompts:
            path, mapped = path_for(prompt.name, where)
            if path.lower() in owners:
                raise ImportRefused(f"{where}: prompts {owners[path.lower()]!r} and {prompt.name!r} would both be "
                                    f"{path}; nothing was written")
            owners[path.lower()] = prompt.name
            if mapped:
                report.warnings.append(f"prompt {prompt.name!r}: {mapped}")
            notes: list[str] = []
            files = []
            for version in prompt.versions:
                data = file_text(version).encode("utf-8")
                parsed = build_prompt(library, path, stage_file(path, data), compile_now=True)
                if parsed.prompt is None:
                    problem = str(parsed.errors[0]) if parsed.errors else "it does not check"
                    version = _as_literal(version, problem)
                    data = file_text(version).encode("utf-8")
                    parsed = build_prompt(library, path, stage_file(path, data), compile_now=True)
                    if parsed.prompt is None:
                        raise ImportRefused(f"{where}: prompt {prompt.name!r} version {version.number}: "
                                            f"{parsed.errors[0] if parsed.errors else 'it does not check'}")
                files.append((version, data, listing_of(parsed.prompt)))
                notes += [n for n in version.untranslated if n not in notes]
            if notes:
                report.warnings.append(f"prompt {prompt.name!r}: not translated: {'; '.join(notes)}")
            out.append(Prepared(prompt, path, files))
    report.prompts = len(out)
    return out


def _as_literal(version: Version, problem: str) -> Version:
    """``version`` with its messages as the source wrote them, literal, and without arguments."""
    messages = [Message(m.role, no_role_lines(literal(m.original or m.text)), m.original) for m in version.messages]
    return Version(version.number, messages, [], version.model, version.labels, version.tags, version.description,
                   version.message, [*version.untranslated, f"the whole text, kept literal ({problem})"])


def served_version(prepared: Prepared) -> tuple[Version, bytes]:
    """The version a folder gets: its ``production`` one, else its newest labelled one, else its newest."""
    labelled = [(v, data) for v, data, _ in prepared.files if v.labels]
    chosen = next(((v, data) for v, data in labelled if SERVED_LABEL in v.labels), None)
    if chosen is None:
        chosen = labelled[-1] if labelled else (prepared.files[-1][0], prepared.files[-1][1])
    return chosen


def into_folder(prepared: list[Prepared], folder: str, force: bool, report: Report) -> None:
    root = Path(folder).resolve()
    writes: list[tuple[Path, bytes]] = []
    for item in prepared:
        target = (root / item.path).resolve()
        if not target.is_relative_to(root):  # path_for makes none; a symlinked folder inside still cannot lead out
            raise ImportRefused(f"{item.path!r} would be written outside {folder}; nothing was written")
        _, data = served_version(item)
        if target.is_file() and target.read_bytes() == data:
            report.unchanged += 1
            continue
        if target.exists() and not force:
            raise ImportRefused(f"{target} exists with other text; nothing was written (--force replaces it)")
        writes.append((target, data))
    for target, data in writes:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        report.versions += 1


def into_store(prepared: list[Prepared], store: Store, author: str, report: Report) -> None:
    from ..sources.store.model import is_label

    history = _digests(store)
    for item in prepared:
        stored = history.setdefault(item.path, {})
        if stored and not {hashlib.sha256(data).hexdigest() for _, data, _ in item.files} & set(stored.values()):
            report.warnings.append(f"prompt {item.prompt.name!r}: the store's {item.path} has versions that are not "
                                   "this source's; the imported ones come after them")
        versions: dict[int, int] = {}  # the source's version (index) -> the store's
        for index, (version, data, listed) in enumerate(item.files):
            digest = hashlib.sha256(data).hexdigest()
            if digest in stored.values():  # imported before: the store's version of these bytes, its newest
                versions[index] = max(n for n, d in stored.items() if d == digest)
                report.unchanged += 1
                continue
            number, publish = store.publish_file(item.path, data, listed, author=author,
                                                 message=version.message or f"import of version {version.number}")
            stored[number] = digest
            versions[index] = number
            report.versions += publish is not None
        for index, (version, _, _) in enumerate(item.files):
            for label in version.labels:
                if not is_label(label):
                    report.warnings.append(f"prompt {item.prompt.name!r}: label {label!r} is not a valid label "
                                           "name; left out")
                    continue
                now = store.reads.position(label)
                if now is not None and now.files.get(item.path) == versions[index]:
                    continue
                store.label(item.path, versions[index], label, author=author,
                            message=f"import: {item.prompt.name} version {version.number}")
                report.labels += 1


def _digests(store: Store) -> dict[str, dict[int, str]]:
    """Every file's versions in the store and their digests (deletions left out)."""
    out: dict[str, dict[int, str]] = {}
    for path, version, digest in store.db.rows("SELECT path, version, digest FROM files WHERE digest IS NOT NULL"):
        out.setdefault(path, {})[int(version)] = digest
    return out
