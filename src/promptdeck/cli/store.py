"""The store commands of the ``promptdeck`` command: publish, label, rollback, history, diff, export, store.

Part of the cli layer (``cli.py`` registers them). Each is one transaction in
the store, and every failure is one line naming what is at fault, exit 1,
nothing changed.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..export.writers import TARGETS
from ..protocol.errors import PromptdeckError, PromptFileError
from .common import AUTHOR_OPTION, STORE_OPTION, author_of, fail, open_store, utc_time, valid_label
from .folder_format import FORMAT_OPTION
from .library import check_library, library_problems
from .library_folder import LIBRARY_FOLDER
from .program import command_line
from .sync import SYNC_OPTIONS, keep_base, refused, sync_checks
from .terminal import echo, shown

if TYPE_CHECKING:
    from ..prompts.spec import Prompt
    from ..sources.files.source import FileSource
    from ..sources.store.database import Store
    from ..sources.store.model import Latest, Move, RolloutEvent

@click.command()
@click.argument("folder", type=LIBRARY_FOLDER)
@STORE_OPTION
@click.option("--label", default=None, metavar="LABEL", help="Move this label to the published library.")
@click.option("--propose", default=None, is_flag=False, flag_value="new", metavar="[=ID]",
              help="With --label: propose the published versions for LABEL (a new proposal, or --propose=ID to "
                   "push them to proposal ID) instead of moving it; reviewers approve, `merge` serves them.")
@click.option("-m", "--message", default="", help="What changed and why.")
@AUTHOR_OPTION
@click.option("--skip-tests", is_flag=True, help="Publish even if the prompts' tests fail (not run; the "
              "version's message says so).")
@SYNC_OPTIONS
@FORMAT_OPTION
def publish(folder: str, url: str, label: str | None, propose: str | None, message: str, author: str | None,
            skip_tests: bool, base: int | None, force: bool, delete: bool, folder_format: str | None) -> None:
    """Record a new version of every prompt, skill file and other file in FOLDER that changed, deletions
    included.

    FOLDER is read as `serve` reads it; a folder with any problem `check` finds, or whose prompts' tests fail
    (`promptdeck test`), publishes nothing. From a git work tree, the commit, branch and whether the folder
    had uncommitted changes are recorded. With --label, a publish is refused (exit 3, nothing changed) when
    the label moved since FOLDER's base (FOLDER/.promptdeck-base, else the store's) in prompts the publish
    would change again, or when it would delete more than half of the label's prompts.
    """
    from ..sources.files.paths import folder_prefix, is_prompt_path
    from ..sources.store.database import Store
    from ..sources.store.folder import read_library
    from ..sources.store.model import Listed, listing_of, to_check

    if label is not None:
        valid_label(label)
    if propose is not None and label is None:
        fail("--propose needs --label: the label the proposal is aimed at", 2)
    # A proposal moves no label: its merge goes through the gate, so only the label's publishes keep a base.
    moves = None if propose is not None else label
    checks = sync_checks(folder, moves, base, force, delete)
    left_out: list[str] = []  # skill folders with a problem: check says which
    try:
        # The files of ~/.claude/commands are kept as .claude/commands/..., so the store reads them as served.
        content = read_library(folder, folder_prefix(folder, folder_format), left_out=left_out)
    except PromptdeckError as exc:
        fail(str(exc))
    # What the store has was checked when it was published: only what changed is checked again (see
    # ``to_check``), the slow part of a large publish. A store that does not exist yet has nothing, and
    # is made only after the check.
    latest: dict[str, Latest] = {}
    with suppress(PromptdeckError):
        with Store(url) as existing:
            latest = existing.reads.latest()
    some = None if left_out else to_check(content, latest)
    if some is None:
        problems, prompts, files = library_problems((folder,), folder_format, skills=True)
    elif some:
        problems, prompts, files = _check_some(folder, some, content, latest, folder_format)
    else:
        problems, prompts, files = [], {}, 0
    if problems:
        for problem in problems:
            echo(problem)
        fail(f"nothing published: {len(problems)} problem{'s' * (len(problems) != 1)} in {files} "
             f"file{'s' * (files != 1)}")
    if left_out:  # check found nothing wrong where reading did: changed meanwhile
        fail(f"nothing published: the skill folder {left_out[0]} changed while it was read; publish again")
    if skip_tests:
        message = f"{message} [tests skipped: --skip-tests]".lstrip()
    else:
        _tests_pass(folder, content, folder_format)
    if some == set() and label is None:
        # The store's newest versions are these bytes, listed: a publish would record nothing. (One made
        # meanwhile by someone else comes after this one, which changed nothing when it looked.)
        echo(f"nothing changed in {len(content)} files")
        return
    from ..sources.store.parts import users_of_changes

    # Prompts whose own bytes are as stored but whose parts (partials, read files, composed prompts) changed.
    # (A check of only some files may have read them all: a changed prompt composing others is checked whole.)
    complete = some is None or {p.source for p in prompts.values()} >= {p for p in content if is_prompt_path(p)}
    inputs = users_of_changes(folder, folder_format, content, latest, prompts, complete=complete)
    listed: dict[str, Listed] = {prompt.source: listing_of(prompt) for prompt in prompts.values()}
    from ..sources.store.provenance import provenance

    with open_store(url, create=True) as opened:
        try:
            number, changed = opened.publish(content, listed, author=author_of(author), message=message,
                                             label=moves, inputs=inputs, checks=checks,
                                             provenance=provenance(folder))
            if propose is not None and label is not None:
                from .proposals import propose_published

                proposal = propose_published(opened, propose, label, content, author_of(author), message)
        except PromptdeckError as exc:
            refused(exc, folder, label)
        if moves is not None:
            keep_base(folder, moves, opened)
    moved = f"; label {label} points at it" if label else ""
    if propose is not None:
        moved = f"; proposal {proposal.id} proposes {len(proposal.files)} file{'s' * (len(proposal.files) != 1)} " \
                f"for label {label}, which does not move until it is merged"
    if number is None:
        echo(f"nothing changed in {len(content)} files{moved}")
        return
    deleted = [path for path in changed if path not in content]
    kept = [path for path in changed if path in content]
    echo(f"publish {number}: {len(changed)} file{'s' * (len(changed) != 1)} changed{moved}"
         + (f" ({len(deleted)} deleted)" if deleted else ""))
    for path in kept[:20]:
        echo(f"  {shown(path)}" + (f" (its parts changed: {', '.join(inputs[path])})" if path in inputs else ""))
    if len(kept) > 20:
        echo(f"  … and {len(kept) - 20} more")
    for path in deleted:  # every one, however many: a deletion is never hidden in a count
        echo(f"  deleted: {shown(path)}")


def _tests_pass(folder: str, content: dict[str, bytes], folder_format: str | None) -> None:
    """Run the tests of the prompts of ``folder`` that have any (``content``: its files, as the store keeps
    them); exit 1 with the failures if one fails. Only files that may hold tests are read again: a
    promptdeck file whose bytes name ``tests:``, another tool's file with a sidecar."""
    from ..prompts.testing import run_tests
    from ..sources.files.paths import is_prompt_path, prompt_format
    from ..sources.files.source import FileSource
    from ..sources.files.tests import sidecar_of
    from .prompt_tests import show

    tested = sorted(path for path, data in content.items() if is_prompt_path(path) and (
        b"tests:" in data if prompt_format(path) == "promptdeck" else sidecar_of(path) in content))
    if not tested:
        return
    source = FileSource(folder, format=folder_format)
    source.load_paths(tested)
    if any(prompt.uses.prompts or prompt.uses.dynamic for prompt in source.prompts()):
        # A tested prompt that composes others renders them: the whole library is read, as `test` reads it.
        source = FileSource(folder, format=folder_format)
        source.load(compile_all=True)
    report = run_tests(source.prompts())
    if not report.passed:
        show(report, False)
        fail(f"nothing published: {report.failed_cases} test case{'s' * (report.failed_cases != 1)} failed "
             f"({command_line('test', folder)}); --skip-tests publishes anyway")


def _check_some(folder: str, paths: set[str], content: dict[str, bytes], latest: dict[str, Latest],
                folder_format: str | None) -> tuple[list[str], dict[str, Prompt], int]:
    """``library_problems`` for a folder of which only ``paths`` (prompt files) differ from what the store
    checked: those are parsed, every other prompt file's name comes from its listing, and a name used
    twice is a problem of the later path, as ``check`` has it."""
    from ..sources.files.paths import is_prompt_path
    from ..sources.files.source import FileSource

    source = FileSource(folder, format=folder_format)
    source.load_paths(sorted(paths))
    parsed = {prompt.source: prompt for prompt in source.prompts()}
    if any(prompt.uses.calls for prompt in parsed.values()):
        # A prompt that composes others is checked against them (``compose.composition_problems``): the
        # whole library is read for that, as ``check`` reads it.
        return library_problems((folder,), folder_format, skills=True)
    errors = {rel: [str(e) for e in found] for rel, found in source.errors.items()}
    owner: dict[str, str] = {}
    for path in sorted(p for p in content if is_prompt_path(p)):
        name = parsed[path].name if path in parsed else None if path in paths else latest[path].prompt
        if name is None:
            continue
        if name in owner:
            clash = PromptFileError(source.shown(path), f"prompt name {name!r} is already used by "
                                    f"{source.shown(owner[name])}")
            errors.setdefault(path, []).append(str(clash))
            parsed.pop(path, None)
        else:
            owner[name] = path
    problems = [problem for rel in sorted(errors) for problem in errors[rel]]
    return problems, {prompt.name: prompt for prompt in parsed.values()}, len(errors)


def _named(opened: Store, name: str) -> tuple[str, bool]:
    """The path of what ``name`` names in the store: a prompt (by name), a file (by path), a skill's file
    (``skill://git/references/a.md``) or a skill (``skill://git``, or its folder ``skills/git``), the last
    two as (its folder, True)."""
    from ..sources.store.model import StoreMissing

    if name.startswith("skill://"):
        target = opened.reads.skill_target(name)
        if target is None:
            raise StoreMissing(f"no skill or skill file {name!r} in the store")
        return target
    try:
        return opened.reads.path_of(name), False
    except StoreMissing:
        target = opened.reads.skill_target(name)
        if target is None or not target[1]:
            raise
        return target


def _one_file(opened: Store, name: str, command: str) -> str:
    """The path of the one file ``name`` names (``_named``); a skill's folder is refused, naming its files."""
    path, folder = _named(opened, name)
    if folder:
        fail(f"{name} is a skill's folder of several files: {command} takes one of them "
             f"({command_line('history', name)} lists them)")
    return path


@click.command(name="label")
@click.argument("prompt", metavar="NAME[@VERSION]")
@click.argument("label")
@STORE_OPTION
@click.option("-m", "--message", default="", help="Why (kept in the label's history).")
@AUTHOR_OPTION
def label_command(prompt: str, label: str, url: str, message: str, author: str | None) -> None:
    """Point LABEL at one version of one prompt or file (a skill's: skill://SKILL/FILE, or its path) (its newest
    without @VERSION); the rest stay."""
    name, _, version_text = prompt.partition("@")
    if version_text and not version_text.isdigit():
        fail(f"{prompt!r}: the version after @ is a number", 2)
    from ..sources.store.model import StoreMissing
    from .promote import label_hint

    with open_store(url) as opened:
        try:
            path = _one_file(opened, name, "label") if name.startswith("skill://") else name
            version = opened.label(path, int(version_text) if version_text else None, valid_label(label),
                                   author=author_of(author), message=message)
        except StoreMissing as exc:  # `label staging production`: a label where the prompt goes
            from_env = click.get_current_context().get_parameter_source("url") is click.core.ParameterSource.ENVIRONMENT
            fail(str(exc) + ("" if version_text else label_hint(opened.reads.labels(), name, label, url, from_env)))
        except PromptdeckError as exc:
            fail(str(exc))
    echo(f"label {label}: {name} is at version {version}")


@click.command()
@click.argument("label")
@STORE_OPTION
@click.option("-m", "--message", default="", help="Why (kept in the label's history).")
@AUTHOR_OPTION
def rollback(label: str, url: str, message: str, author: str | None) -> None:
    """Point LABEL back where it pointed before its last move."""
    with open_store(url) as opened:
        try:
            before = opened.rollback(label, author=author_of(author), message=message)
        except PromptdeckError as exc:
            fail(str(exc))
    echo(f"label {label} is back at position {before.id} ({before.reason}, {utc_time(before.created)})")


@click.command()
@click.argument("prompt", required=False, metavar="[NAME]")
@STORE_OPTION
@click.option("--label", default=None, metavar="LABEL", help="Show LABEL's moves and rollouts instead: who moved it, "
              "when, from which position to which, and why.")
def history(prompt: str | None, url: str, label: str | None) -> None:
    """Versions, newest first: of one prompt or file, of every file of a skill (skill://NAME, or its folder), or
    of every file in the store; or a label's moves and rollouts (--label)."""
    from ..sources.store.model import in_skill, skill_of

    if label is not None and prompt is not None:
        fail("history takes NAME or --label LABEL, not both", 2)
    with open_store(url) as opened:
        if label is not None:
            try:
                lines = label_history(opened, valid_label(label))
            except PromptdeckError as exc:
                fail(str(exc))
            for line in lines:
                echo(line)
            return
        try:
            path, folder = _named(opened, prompt) if prompt is not None else ("", False)
            versions = opened.reads.history_below(path) if folder else opened.reads.history(path or None)
        except PromptdeckError as exc:
            fail(str(exc))
        labels = {label: opened.reads.position(label) for label in opened.reads.labels()}
        markers = opened.reads.skill_markers() if any(in_skill(v.path) for v in versions) else set()
    for v in versions:
        at = sorted(name for name, p in labels.items() if p is not None and p.files.get(v.path) == v.version)
        skill = skill_of(v.path, markers)
        what = "deleted" if v.digest is None else (v.prompt or "file")
        if skill is not None:  # a skill's file, its SKILL.md too: named by its skill
            what = f"skill {skill}" + (", deleted" if v.digest is None else "")
        tags = f"  [{', '.join(at)}]" if at else ""
        message = f"  {shown(v.message)}" if v.message else ""
        git = f"  {shown(v.git.text())}" if v.git is not None else ""
        echo(f"{shown(v.path)} v{v.version}  {shown(what)}  publish {v.publish}  {utc_time(v.created)}  "
             f"{shown(v.author)}{git}{message}{tags}")


@click.command()
@click.argument("words", nargs=-1, required=True, metavar="NAME V1 [V2] | FOLDER")
@STORE_OPTION
@click.option("--label", default=None, metavar="LABEL", help="Compare FOLDER with LABEL three ways instead: for each "
              "prompt a publish of FOLDER would change after LABEL moved since FOLDER's base, the base against the "
              "store and against the folder.")
@click.option("--base", type=click.IntRange(min=1), default=None, metavar="POSITION",
              help="With --label: the base (default: FOLDER/.promptdeck-base, else the store's).")
def diff(words: tuple[str, ...], url: str, label: str | None, base: int | None) -> None:
    """Unified diff of a prompt or file (a skill's: skill://SKILL/FILE, or its path) between two versions (V2:
    its newest): of its text, of a prompt's arguments, and of each of its parts (partials, read files,
    composed prompts) that changed between them. With --label LABEL FOLDER: the three-way diff of what a
    publish of FOLDER would undo (see `publish`)."""
    from .sync import three_way

    if label is not None:
        if len(words) != 1:
            fail("diff --label LABEL takes one FOLDER", 2)
        three_way(url, label, words[0], base)
        return
    if base is not None or not 2 <= len(words) <= 3 or not all(w.isdigit() for w in words[1:]):
        fail("diff takes NAME V1 [V2] (versions are numbers), or --label LABEL FOLDER", 2)
    prompt, first, second = words[0], int(words[1]), int(words[2]) if len(words) == 3 else None
    from ..sources.files.paths import is_prompt_path
    from ..sources.store.parts import parts_at

    with open_store(url) as opened:
        try:
            path = _one_file(opened, prompt, "diff")
            older, old_data = opened.reads.file_version(path, first, prompt)
            newer, new_data = opened.reads.file_version(path, second, prompt)
            parts: list[tuple[str, int | None, bytes | None, int | None, bytes | None]] = []
            if is_prompt_path(path):
                old_parts, new_parts = parts_at(opened.reads, path, older), parts_at(opened.reads, path, newer)
                for part in sorted(old_parts.keys() | new_parts.keys()):
                    was, now = old_parts.get(part), new_parts.get(part)
                    if was == now:
                        continue
                    old_part = None if was is None else opened.reads.content(part, was)
                    new_part = None if now is None else opened.reads.content(part, now)
                    if old_part != new_part:  # a composed prompt versioned for its own parts alone is not shown
                        parts.append((part, was, old_part, now, new_part))
        except PromptdeckError as exc:
            fail(str(exc))
    from ..sources.store.versions import argument_schema, is_text, schema_text, text_of, unified

    if not (is_text(old_data) and is_text(new_data)):  # an image, an archive: no lines to compare
        if old_data != new_data:
            echo(f"Binary files {path}@{older} and {path}@{newer} differ")
        return
    if not is_prompt_path(path):
        echo("".join(unified(text_of(old_data), text_of(new_data), f"{path}@{older}", f"{path}@{newer}")),
             nl=False)
        return

    def arguments(data: bytes | None) -> str:
        if data is None:
            return ""
        return schema_text(argument_schema(path, data)) or "(the file does not parse on its own)\n"

    lines = unified(text_of(old_data), text_of(new_data), f"{path}@{older}", f"{path}@{newer}")
    old_args, new_args = arguments(old_data), arguments(new_data)
    lines += unified(old_args, new_args, f"{path}@{older} arguments", f"{path}@{newer} arguments")
    for part, was, old_part, now, new_part in parts:
        change = "used from" if was is None else "no longer used after" if now is None else f"{was} →"
        lines.append(f"part {part}: version {change} {now if now is not None else was}\n")
        if is_text(old_part) and is_text(new_part):
            lines += unified(text_of(old_part), text_of(new_part), f"{part}@{was or 0}", f"{part}@{now or 0}")
        else:
            lines.append(f"Binary files {part}@{was or 0} and {part}@{now or 0} differ\n")
    echo("".join(lines), nl=False)


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="[LIBRARY] OUTDIR")
@click.option("--store", "url", envvar="PROMPTDECK_STORE", metavar="URL",
              help="Export a label of this store (sqlite:///path.db, a path ending in .db, or postgresql://…; "
              "default: $PROMPTDECK_STORE) instead of a LIBRARY folder.")
@click.option("--label", default=None, metavar="LABEL", help="With --store: the label whose library to write.")
@click.option("--to", "target", type=click.Choice(TARGETS), default=None,
              help="Write the prompts in this tool's format (default, from a store: the files as published).")
@click.option("--force", is_flag=True, help="Write into OUTDIR even if it is not empty (files of the same "
              "name are replaced; others are left alone).")
@FORMAT_OPTION
def export(paths: tuple[str, ...], url: str | None, label: str | None, target: str | None, force: bool,
           folder_format: str | None) -> None:
    """Write a library to OUTDIR: a store's LABEL byte for byte as published, or a LIBRARY folder or a
    label in another tool's format (--to)."""
    context = click.get_current_context()
    store_given = context.get_parameter_source("url") is not click.core.ParameterSource.DEFAULT
    if len(paths) == 2:
        library, outdir = paths
        if store_given or label is not None:
            fail("give a LIBRARY folder or --store with --label, not both", 2)
        if target is None:
            fail("exporting a folder needs --to FORMAT (a folder is already a folder)", 2)
    elif len(paths) == 1:
        library, outdir = None, paths[0]
        if url is None or label is None:
            fail("export takes LIBRARY OUTDIR, or OUTDIR with --store URL and --label LABEL", 2)
    else:
        fail("export takes LIBRARY OUTDIR, or OUTDIR with --store URL and --label LABEL", 2)
    if os.path.exists(outdir) and (not os.path.isdir(outdir) or (os.listdir(outdir) and not force)):
        fail(f"{outdir!r} is not an empty folder; export writes into a new or empty one (or use --force)")
    if library is not None:
        assert target is not None
        _export_as(library, target, outdir, f"library {library}", folder_format)
        return
    assert url is not None and label is not None
    with open_store(url) as opened:
        try:
            files = opened.reads.snapshot(label)
        except PromptdeckError as exc:
            fail(str(exc))
    if target is not None:
        with tempfile.TemporaryDirectory(prefix="promptdeck-export-") as staged:
            _write_files(files, Path(staged), label)
            _export_as(staged, target, outdir, f"label {label}")
        return
    _write_files(files, Path(outdir), label)
    echo(f"wrote {len(files)} files of label {label} to {outdir}")


def _write_files(files: dict[str, tuple[int, bytes]], root: Path, label: str) -> None:
    root = root.resolve()
    left_out = 0
    for path, (_, data) in sorted(files.items()):
        target = (root / path).resolve()
        if not target.is_relative_to(root):  # a stored path is never trusted to stay inside
            fail(f"the store holds a path that leads outside the folder: {path!r}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as exc:  # the store names "a" as a file and "a/b" too: written by another tool
            echo(f"promptdeck: cannot write {path!r}: {exc.strerror}", err=True)
            left_out += 1
    if left_out:
        fail(f"wrote {len(files) - left_out} of the {len(files)} files of label {label} to {root}; "
             f"{left_out} could not be written")


def _export_as(library: str, target: str, outdir: str, what: str, folder_format: str | None = None) -> None:
    """Write the prompts of the folder ``library`` in ``target``'s format, and its skills into the target's
    skill folder; a library with problems is refused whole, as a half-exported library would pass for a
    whole one."""
    from ..export.shapes import ShapeError
    from ..export.writers import export as export_prompts
    from ..export.writers import project_files
    from .export_warnings import warn

    problems, prompts, _, _, (source,) = check_library((library,), folder_format, skills=True)
    if problems:
        for problem in problems:
            echo(problem, err=True)
        fail(f"{what} has {len(problems)} problem{'s' * (len(problems) != 1)}; fix them first "
             f"({command_line('check', library)})")
    skills, skill_files, left_out = _skills_for(source, target)
    # A SKILL.md is served as a prompt too; where the target has a skill folder it goes there, once, not
    # also as a command beside it.
    as_skills = {f"{skill.origin}/SKILL.md" for skill in source.skills().values()} if skill_files else set()
    try:
        written = export_prompts([p for p in prompts.values() if p.source not in as_skills], target)
    except ShapeError as exc:
        fail(str(exc))
    root = Path(outdir).resolve()
    paths = [w.path for w in written]  # skills go to a folder of their own, each to its name (export_skills)
    for path in {p for p in paths if paths.count(p) > 1}:
        clashing = ", ".join(repr(w.prompt) for w in written if w.path == path)
        fail(f"prompts {clashing} would all be written to {path}; nothing was written")
    files: list[tuple[str, bytes]] = [(w.path, w.text.encode("utf-8")) for w in written] + skill_files
    files += [(path, text.encode("utf-8")) for path, text in project_files(target, written)]
    for path, _ in files:
        if not (root / path).resolve().is_relative_to(root):
            fail(f"{path!r} would be written outside {outdir}; nothing was written")
    for path, data in files:
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    warn(written)
    if left_out:
        echo(f"warning: {target} has no skill folder; {left_out} skill{'s' * (left_out != 1)} not written",
             err=True)
    warned = sum(1 for w in written if w.warnings)
    also = f" and {skills} skill{'s' * (skills != 1)}" if skills else ""
    echo(f"wrote {len(written)} prompt{'s' * (len(written) != 1)}{also} of {what} as {target} to {outdir}"
         + (f" ({warned} with warnings)" if warned else ""))


def _skills_for(source: FileSource, target: str) -> tuple[int, list[tuple[str, bytes]], int]:
    """(skills written, their files, skills a target without a skill folder leaves out) of the folder ``source``,
    as ``check`` loaded it."""
    from ..export.skills import SKILL_FOLDERS, export_skills, outermost

    found = source.skills()
    if target not in SKILL_FOLDERS:
        return 0, [], len(outermost(found))
    try:
        exported = export_skills(found, source.read_skill_file, target)
    except (ValueError, PromptdeckError) as exc:  # a clash, or a file changed since it was checked
        fail(str(exc))
    return len(exported), [file for skill in exported for file in skill.files], 0


@click.group()
def store() -> None:
    """Look after a store itself."""


@store.command()
@click.argument("url")
def upgrade(url: str) -> None:
    """Create the store's schema, or bring it to this promptdeck's version."""
    from ..sources.store.schema import SCHEMA_VERSION

    with open_store(url, create=True) as opened:
        found = opened.db.upgraded_from
    if found is None:
        echo(f"the store is at schema {SCHEMA_VERSION} already")
    elif found == 0:
        echo(f"created the store's schema (version {SCHEMA_VERSION})")
    else:
        echo(f"upgraded the store from schema {found} to {SCHEMA_VERSION}")


#: The moves (and rollout events) ``history --label`` shows: the newest, enough for an audit at a terminal.
HISTORY_MOVES = 200


def label_history(opened: Store, label: str) -> list[str]:
    """The lines of ``history --label``: the label's moves and rollout events, newest first, with what each
    move changed."""
    opened.reads.require_position(label)
    moves = opened.governance.moves(label, HISTORY_MOVES)
    events = opened.governance.rollout_events(label, HISTORY_MOVES)
    protection = opened.governance.protection(label)
    lines = []
    if protection is not None:
        count = protection.approvals
        reviews = f"; every move, the merge of a proposal with {count} approval{'s' * (count != 1)}" if count else ""
        lines.append(f"label {label} is protected: moves through /api/store need {shown(protection.scope)} "
                     f"(since {utc_time(protection.created)}, by {shown(protection.author)}){reviews}")
    entries: list[tuple[float, int, str]] = []
    for move in moves:
        entries.append((move.created, 1, _move_line(opened, move)))
    for event in events:
        entries.append((event.created, 0, _event_line(event)))
    lines += [line for _, _, line in sorted(entries, key=lambda e: (e[0], e[1]), reverse=True)]
    return lines


def _move_line(opened: Store, move: Move) -> str:
    changes = opened.governance.changes_between(move.previous, move.position, 1000)
    changed = [f"{shown(path)} v{old}->v{new}" if old is not None and new is not None else
               f"{shown(path)} +v{new}" if new is not None else f"{shown(path)} -v{old}"
               for path, (old, new) in changes.items()]
    listed = ", ".join(changed[:10]) + (f", … and {len(changed) - 10} more" if len(changed) > 10 else "")
    whence = f"position {move.previous} -> {move.position}" if move.previous is not None else \
        f"-> position {move.position}"
    why = f"  {shown(move.message)}" if move.message else ""
    return (f"{utc_time(move.created)}  {shown(move.author)}  {whence}  {shown(move.reason)}{why}"
            + (f"  [{listed}]" if listed else ""))


def _event_line(event: RolloutEvent) -> str:
    r = event.rollout
    what = {"start": f"started: {event.basis_points / 100:g}% to v{r.version}",
            "percent": f"now {event.basis_points / 100:g}% to v{r.version}",
            "promote": f"promoted: v{r.version}", "abort": f"aborted: back to v{r.base} alone",
            "superseded": "ended: the label moved the prompt"}.get(event.kind, event.kind)
    why = f"  {shown(event.message)}" if event.message else ""
    return (f"{utc_time(event.created)}  {shown(event.author)}  rollout {r.id} of {shown(r.prompt)} ({shown(r.path)} "
            f"v{r.base}): {what}{why}")


#: The store's commands, as ``main`` registers them.
COMMANDS = (publish, label_command, rollback, history, diff, export, store)
