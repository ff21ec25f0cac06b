"""Prompts from a folder of Markdown files with YAML front matter (format: docs/prompt-files.md), and of
other tools' prompt files, which ``stage_file`` hands to ``sources.native`` (docs/native-formats.md).

``FileSource`` keeps the last good version of every file: reloading a file that
no longer parses records its errors and goes on serving the old prompt.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...prompts.access import reading_as
from ...prompts.catalog import close_names
from ...prompts.composition import NO_USES, Uses
from ...prompts.execution import LIGHT
from ...prompts.spec import NAME_RE, NO_NAMES, Prompt, Reach
from ...protocol.errors import InvalidParams, LibraryError, LineError, PromptFileError
from .. import Source
from . import native
from .blocks import (
    Block,
    build_block,
    compiled_uses,
    plain_messages,
    render_blocks,
    uncompiled_simple,
    validate_icons,
    work_of,
)
from .declared import declared_arguments, declared_of
from .frontmatter import EMPTY_PROMPT, line_of_key, read_front_matter, scopes_in, split_front_matter
from .library import TemplateFolder
from .native import Native
from .paths import (
    SkillLimits,
    folder_prefix,
    in_top_skill,
    is_prompt_path,
    may_hold_prompts,
    prompt_format,
    read_confined_all,
)
from .skillset import FolderSkills

if TYPE_CHECKING:
    from ...prompts.graph import Graph
    from ...prompts.skills import Skill

if TYPE_CHECKING:
    from ...prompts.resources import ResourceProvider

log = logging.getLogger("promptdeck.files")

MAX_PROMPT_FILE_BYTES = 1024 * 1024
#: Above this many files, templates compile on first use instead of at start-up (``check`` always compiles).
EAGER_COMPILE_LIMIT = 2000
#: From this many files on, reading and front matter run in worker processes.
PARALLEL_MIN_FILES = 5000
#: from how many files a load freezes its catalog out of the collector's full collections (``load``)
FREEZE_MIN_FILES = 5000
PARALLEL_BATCH = 1000
_KEYS = ("name", "title", "description", "icons", "tags", "scopes", "arguments", "model", "tests")
_ROLE_LINE = re.compile(r"^(user|assistant):[ \t]*(\{.*\})?[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")


@dataclass
class ParsedFile:
    prompt: Prompt | None
    errors: list[PromptFileError] = field(default_factory=list)


def prompt_name_for(rel: str) -> str:
    return rel[:-3].replace("/", ".")


def _segments(body: str, first_line: int) -> Iterable[tuple[str, str | None, str, int, int]]:
    """Split a body at role lines outside code fences: (role, spec text, text, role line, text line)."""
    role, spec, start, spec_line = "user", None, first_line, first_line
    lines: list[str] = []
    fence: str | None = None
    for offset, line in enumerate(body.split("\n")):
        number = first_line + offset
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not line[fence_match.end():].strip():
                # A closing fence carries no info string: "```python" inside a block is text.
                fence = None
        match = _ROLE_LINE.match(line.rstrip("\r")) if fence is None else None
        if match:
            text = "\n".join(lines)
            if text.strip() or spec is not None or start != first_line:
                yield role, spec, text, spec_line, start
            role, spec, spec_line, start, lines = match.group(1), match.group(2), number, number + 1, []
        else:
            lines.append(line)
    text = "\n".join(lines)
    if text.strip() or spec is not None or start != first_line:
        yield role, spec, text, spec_line, start


#: What the first stage of parsing gives: (front matter text, meta, body segments), or problems as
#: (message, line). Plain data, so worker processes can produce it for large libraries.
Staged = tuple[str, dict[str, Any], list[tuple[str, str | None, str, int, int]]] | list[tuple[str, int | None]] \
    | Native


def stage_file(rel: str, data: bytes) -> Staged:
    """Decode, split and read the front matter of one file; no templates, no arguments yet."""
    if len(data) > MAX_PROMPT_FILE_BYTES:
        return [(f"file is larger than {MAX_PROMPT_FILE_BYTES} bytes", None)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [(f"not UTF-8 text ({exc.reason} at byte {exc.start})", None)]
    kind = prompt_format(rel)
    if kind in native.READERS:
        # As promptdeck's own files: a byte order mark is no text, and a Windows line end is one line end
        # (a BOM made a Gemini TOML file "not valid TOML"; CRLF reached clients from Claude commands).
        return Native(kind, text.removeprefix("\ufeff").replace("\r\n", "\n"))
    try:
        front, body, body_line = split_front_matter(text)
        meta = read_front_matter(front) if front is not None else {}
    except LineError as exc:
        return [(str(exc), exc.line)]
    if not body.strip():
        return [(EMPTY_PROMPT, None)]
    if "user:" not in body and "assistant:" not in body:  # no role line: one user message, as ``_segments`` says
        return front or "", meta, [("user", None, body, body_line, body_line)]
    return front or "", meta, list(_segments(body, body_line))


def _plain_signals() -> None:
    """A staging worker's signals as a fresh process has them: a parent serving until stopped turns SIGTERM
    into KeyboardInterrupt (``cli.stopping``), and a worker that inherited that, told to stop by the pool's
    ``terminate``, raised it inside the pool's own machinery and was never reaped: the load hung for good."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stage_files(job: tuple[str, list[str], str]) -> list[Staged]:
    """Worker: read and stage a batch of files below ``root``, whose paths start with its ``prefix``; what each
    gave, in their order (the parent knows their paths: they are not sent back)."""
    root, rels, prefix = job
    out: list[Staged] = []
    reals = [rel[len(prefix):] for rel in rels]
    for rel, real, data in zip(rels, reals, read_confined_all(root, reals, MAX_PROMPT_FILE_BYTES), strict=True):
        if isinstance(data, InvalidParams):
            out.append([(data.message.replace(f"file {real!r} ", "file ", 1), None)])
            continue
        out.append(stage_file(rel, data))
    return out


def stage_workers() -> int:
    """How many worker processes stage a large library: a core is left to this process, which builds the
    prompts as the workers send them and is the slower side (~30 us a file against their ~20): with a worker
    on every core, it shared one with them and the load took longer. Up to 8; 0 on one core (no workers)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores - 1, 8)


def build_prompt(library: TemplateFolder, rel: str, staged: Staged, *, compile_now: bool = True,
                 prefix: str = "") -> ParsedFile:
    """The second stage: arguments, templates, tests and the ``Prompt``. ``prefix``: where the library's
    folder lies below a library root (``FileSource.prefix``), which ``rel`` starts with."""
    errors: list[PromptFileError] = []

    def fail(message: str, line: int | None = None) -> None:
        errors.append(PromptFileError(rel, message, line))

    if isinstance(staged, list):
        return ParsedFile(None, [PromptFileError(rel, message, line) for message, line in staged])
    if isinstance(staged, Native):
        return ParsedFile(*native.build(library, rel, staged, prefix))
    front, meta, segments = staged
    # Every independent mistake at once, each at its line: a file is fixed in one round, not one per run.
    for key in meta:
        if key not in _KEYS:
            errors.append(PromptFileError(rel, f"unknown front matter key {key!r}{_did_you_mean(key, _KEYS)} "
                                               f"(known: {', '.join(_KEYS)})", line_of_key(front, key)))
    name = meta.get("name", prompt_name_for(rel))
    if not isinstance(name, str) or not NAME_RE.match(name):
        hint = "" if "name" in meta else "; set a valid `name:` in the front matter"
        fail(f"prompt name {name!r} is not valid: use letters, digits, '_', '-' and '.'{hint}",
             line_of_key(front, "name"))
    for key in ("title", "description"):
        if key in meta and not isinstance(meta[key], str):
            fail(f"{key} must be text", line_of_key(front, key))
    tags = meta.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        fail("tags must be a list of words", line_of_key(front, "tags"))
    scopes = scopes_in(meta) if meta.get("scopes") else NO_NAMES  # none given: no scopes, nothing to check
    if scopes is None:
        fail("scopes must be a list of scope names", line_of_key(front, "scopes"))
    icons: tuple[dict[str, Any], ...] = ()
    try:
        icons = validate_icons(meta.get("icons"))
    except LineError as exc:
        fail(str(exc), line_of_key(front, "icons"))
    model = meta.get("model")
    if model is not None and not isinstance(model, dict):
        fail("model must be a mapping of settings for the model (model, temperature, tools, ...)",
             line_of_key(front, "model"))
    arguments, parsed = declared_arguments(front, meta.get("arguments"), rel, errors)
    if arguments is None:  # the templates are checked against the arguments' names: not without them
        return ParsedFile(None, errors)
    scopes = scopes or NO_NAMES
    declared = declared_of(arguments)

    blocks: list[Block] = []
    # The files its blocks name are checked as this prompt's reads. Nothing is read when no role line names
    # anything and no template compiles now: a large library's messages are mostly just that.
    with reading_as(scopes) if compile_now or any(segment[1] is not None for segment in segments) else nullcontext():
        for role, spec_text, body_text, spec_line, text_line in segments:
            try:
                blocks.append(build_block(library, role, spec_text, body_text, spec_line, text_line,
                                          arguments, compile_now=compile_now, known=declared.known))
            except LineError as exc:
                errors.append(PromptFileError(rel, str(exc), exc.line))
    tests = None
    if "tests" in meta and parsed:  # a test's values are checked by its arguments' types
        from .tests import front_matter_tests

        tests, problems = front_matter_tests(front, meta["tests"], arguments, rel)
        errors += problems
    if errors:
        return ParsedFile(None, errors)
    path_args = declared.path_args
    built = tuple(blocks)
    work = work_of(built, path_args)
    files: frozenset[str] = NO_NAMES
    uses: Uses | Callable[[], Uses] = NO_USES  # text that only substitutes names names no file, composes nothing
    if work != LIGHT:
        files = frozenset(block.file for block in built if block.file is not None)
        # Templates not compiled yet (a large library) are read for what they compose on first ask; a template
        # that only substitutes names composes nothing, so most prompts hold no callable.
        uses = (lambda: compiled_uses(library, built)) \
            if not compile_now and not all(uncompiled_simple(block) for block in built) \
            else Uses.union(block.uses for block in built)
    prompt = Prompt(
        name,
        render_blocks(library, built, path_args, declared.optional, scopes),
        title=meta.get("title"),
        description=meta.get("description"),
        arguments=arguments,
        icons=icons,
        tags=frozenset(tags) if tags else NO_NAMES,
        scopes=scopes,
        source=rel,
        completers=library.path_completers(arguments) if path_args else None,
        work=work,
        meta={native.META_MODEL: native.json_safe(model)} if model else None,
        reach=Reach(library.root, files, declared.paths) if files or declared.paths else None,
        plain=plain_messages(built, work),
        tests=tests,
        composes=uses,
    )
    return ParsedFile(prompt)


def _did_you_mean(key: str, known: Sequence[str]) -> str:
    close = close_names(key, known, limit=1)
    return f"; did you mean {close[0]!r}?" if close else ""


class FileSource(Source):
    """A folder of prompt files, loaded once and then updated file by file.

    ``compile_all``: compile every template at load (the default for small libraries) or on first use.
    ``format``: the format its files are in (a ``formats.Format`` that is an ``option``); by default, as its path says
    (``paths.folder_prefix``): a folder such as ``~/.claude/commands`` holds Claude Code commands.
    ``skills``: also read the Agent Skills in its skill folders (``paths.SKILL_FOLDERS``, docs/skills.md),
    each within ``skill_limits``; ``skills()`` and ``read_skill_file`` serve them.

    Paths (the keys of ``errors``, a prompt's ``source``) are as ``prompt_format`` sees them, below a
    library root: ``.claude/commands/review.md`` for ``review.md`` of a served ``~/.claude/commands``, as a
    store keeps it when the folder is published. Problems name the file by its path below the folder.
    """

    def __init__(self, root: str | os.PathLike[str], *, compile_all: bool | None = None,
                 format: str | None = None, skills: bool = True, skill_limits: SkillLimits | None = None) -> None:
        self.compile_all = compile_all
        path = Path(root)
        if not path.is_dir():
            raise LibraryError(f"prompt library {str(root)!r} is not a folder")
        self.library = TemplateFolder(path)
        self.library.lookup = self.named
        #: problems in how its prompts compose each other (``compose.composition_problems``), found at ``load``
        self.composition: list[PromptFileError] = []
        #: whether ``composition`` is kept current (a library compiled at load): then a reload finds it again
        self.composition_checked = False
        self._names: dict[str, Prompt] | None = None
        self.root = self.library.root.root
        #: where this folder's files lie below a library root (``.claude/commands/``), or "" for a library root
        self.prefix = folder_prefix(root, format)
        self._prompts: dict[str, Prompt] = {}
        self.errors: dict[str, list[PromptFileError]] = {}
        self._duplicates: set[str] = set()
        #: when the last full load began (time.time_ns()), or None before one
        self.loaded_ns: int | None = None
        #: the folder's skills (docs/skills.md), or None when skills are not read (``skills=False``)
        self.skill_set = FolderSkills(self.root, self.prefix, skill_limits or SkillLimits()) if skills else None

    def scan(self) -> list[str]:
        """Relative paths of every prompt file, sorted."""
        found: list[str] = []
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
            prefix = self.prefix if rel_dir == "." else f"{self.prefix}{rel_dir}/"
            # Hidden and "_" folders hold no prompts, but for the other tools' own (.claude/commands, ...);
            # in those, only what their tool reads (not ~/.claude/projects, of a served ~/.claude).
            dirnames[:] = [d for d in dirnames if (not self.prefix and not d.startswith((".", "_"))
                                                   and not in_top_skill(prefix + d)) or may_hold_prompts(prefix + d)]
            found.extend(prefix + f for f in filenames if is_prompt_path(prefix + f))
        found.sort()
        return found

    def load(self, *, compile_all: bool | None = None) -> list[PromptFileError]:
        """Read every file; the problems found. ``compile_all`` overrides the one given at construction."""
        compile_all = self.compile_all if compile_all is None else compile_all
        self.loaded_ns = time.time_ns()
        paths = self.scan()
        compile_now = len(paths) <= EAGER_COMPILE_LIMIT if compile_all is None else compile_all
        if not compile_now:
            log.info("%d prompt files: templates compile on first use (`promptdeck check` compiles all)",
                     len(paths))
        self._prompts.clear()
        self._names = None
        self.errors.clear()
        # A frozen catalog from an earlier load goes back to the collector, so what of it is now garbage
        # (a cycle of a replaced prompt) can be freed.
        gc.unfreeze()
        self.load_paths(paths, compile_now=compile_now)
        # The catalog lives as long as this load: frozen (gc.freeze), the collector's full collections skip
        # its objects, else the first one after a 100,000-file load scans them all (a ~1-3 s pause in the
        # first prompts/list). Only after a large load: a small library's collections are cheap anyway.
        if len(paths) >= FREEZE_MIN_FILES:
            gc.freeze()
        self.composition_checked = compile_now
        self.composition = self.composition_problems() if compile_now else []
        found = self.skill_set.load() if self.skill_set is not None else []
        return [error for errors in self.errors.values() for error in errors] + self.composition + found

    def composition_problems(self) -> list[PromptFileError]:
        """What ``check`` refuses in how this folder's prompts compose each other (``compose``)."""
        if not any(prompt.uses.calls for prompt in self._prompts.values()):
            return []
        from .compose import composition_problems  # only for a library whose prompts compose others

        self.named("")  # builds the index: of two files with one name, the first path's prompt is served
        assert self._names is not None
        prompts = list(self._names.values())
        return composition_problems(prompts, {prompt.source: self.shown(prompt.source) for prompt in prompts})

    def named(self, name: str) -> Prompt | None:
        """The prompt served under ``name`` (the first file's, of two with one name), for ``prompt(NAME)``."""
        names = self._names
        if names is None:
            names = {}
            held = self._prompts
            for rel in sorted(held):  # a render thread may ask while the watcher reloads a file
                prompt = held.get(rel)
                if prompt is not None:
                    names.setdefault(prompt.name, prompt)
            self._names = names
        return names.get(name)

    def load_paths(self, paths: list[str], *, compile_now: bool = True) -> None:
        """Read the prompt files at ``paths`` (relative), as ``load`` reads all of them: in worker processes
        when there are many. A publish reads only the files that changed this way."""
        # Loading only adds objects that live as long as the catalog; the cyclic collector would
        # re-scan the growing heap again and again (half the time of a 100,000-file load) for nothing.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for rel, staged in self._staged(paths):
                self._keep(rel, build_prompt(self.library, rel, staged, compile_now=compile_now, prefix=self.prefix))
        finally:
            if collecting:
                gc.enable()

    def watch_roots(self) -> list[str]:
        return [str(self.root)]

    def resources(self) -> list[ResourceProvider]:
        """The library files its prompts send, readable by their URIs (``files.resources``)."""
        from .resources import FolderResources  # on the first resources request: not on a first get's path

        return [FolderResources(self.library)]

    def reload(self, paths: Sequence[str]) -> list[PromptFileError]:
        """``update`` with the paths below this folder; the problems in them."""
        root = str(self.root)
        mine = {os.path.abspath(p) for p in paths if _below(p, root)}
        done = self.update(mine)
        # Every path, not only those below the folder: a linked skill folder's files lie elsewhere.
        found = self.skill_set.reload(paths) if self.skill_set is not None else []
        shown = {self.shown(rel) for rel in done}
        return [error for rel, errors in self.errors.items() if rel in done for error in errors] \
            + [error for error in self.composition if error.path in shown] + found

    def real(self, rel: str) -> Path:
        """The file at ``rel`` (a path as ``prompt_format`` sees it)."""
        return self.root / rel[len(self.prefix):]

    def shown(self, rel: str) -> str:
        """``rel`` as the user knows it: below the folder served."""
        return rel[len(self.prefix):]

    def _staged(self, paths: list[str]) -> Iterable[tuple[str, Staged]]:
        """Read and stage files; a large library is staged by worker processes, one per core but the one this
        process builds prompts on (``stage_workers``)."""
        root = str(self.root)
        workers = stage_workers() if len(paths) >= PARALLEL_MIN_FILES else 0
        if workers:
            import multiprocessing as mp  # only for a large library

            if "fork" not in mp.get_all_start_methods():
                workers = 0
        batches = [(root, paths[i:i + PARALLEL_BATCH], self.prefix) for i in range(0, len(paths), PARALLEL_BATCH)]
        if not workers:  # a batch at a time: the whole library's bytes and staged files at once took ~500 MiB
            for job in batches:
                yield from zip(job[1], _stage_files(job), strict=True)
            return
        # fork: the workers need nothing but this module, which the parent has already imported.
        with mp.get_context("fork").Pool(workers, initializer=_plain_signals) as pool:
            for (_, rels, _), staged in zip(batches, pool.imap(_stage_files, batches), strict=True):
                yield from zip(rels, staged, strict=True)

    def _keep(self, rel: str, parsed: ParsedFile) -> None:
        if self.prefix:  # problems name the file as the user knows it
            parsed.errors = [PromptFileError(self.shown(e.path), e.reason, e.line) for e in parsed.errors]
        self._names = None
        if parsed.prompt is None and not parsed.errors:  # a file its own tool offers as no prompt
            self._prompts.pop(rel, None)
            self.errors.pop(rel, None)
        elif parsed.prompt is None:
            self.errors[rel] = parsed.errors
            if rel in self._prompts:
                log.error("%s; still serving its last good version", parsed.errors[0])
        else:
            self.errors.pop(rel, None)
            self._prompts[rel] = parsed.prompt

    def _load_one(self, rel: str, compile_now: bool) -> None:
        (staged,) = _stage_files((str(self.root), [rel], self.prefix))
        self._keep(rel, build_prompt(self.library, rel, staged, compile_now=compile_now, prefix=self.prefix))

    def update(self, changed: Iterable[str]) -> set[str]:
        """Re-read the given files (absolute paths, or paths as ``prompt_format`` sees them); a deleted file
        drops its prompt. Then every prompt using what changed (``graph.Graph.users``: through a partial or
        a ``read()`` file, or by composing a changed prompt, transitively) is built again, so what it
        composes is found afresh and a problem in a part is logged at its users. The paths re-read."""
        before = self._graph()
        done: set[str] = set()
        files: set[str] = set()  # material files changed, relative to the root
        names: set[str] = set()  # prompts changed: by their names before and after
        for path in changed:
            rel = path
            if os.path.isabs(path):
                rel = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
                if rel.startswith("../"):
                    continue
                files.add(rel)
                rel = self.prefix + rel
            if rel.endswith(".tests.yaml"):  # a prompt's tests changed (``tests.sidecar_of``): read it again
                from .tests import sidecar_of

                for prompt_rel in [p for p in {*self._prompts, *self.errors} if sidecar_of(p) == rel]:
                    if self.real(prompt_rel).is_file():
                        self._load_one(prompt_rel, compile_now=True)
                        done.add(prompt_rel)  # its problems are the reload's to report
                continue
            if not is_prompt_path(rel):
                continue
            old = self._prompts.get(rel)
            if old is not None:
                names.add(old.name)
            self._reread(rel)
            done.add(rel)
            new = self._prompts.get(rel)
            if new is not None:
                names.add(new.name)
        if before is not None and (files or names):
            users = before.users(files=files, prompts=names)
            for rel, prompt in sorted(self._prompts.items()):
                if prompt.name in users and rel not in done:
                    self._reread(rel)
                    done.add(rel)
        if done and self.composition_checked:
            self.composition = self.composition_problems()
        return done

    def _reread(self, rel: str) -> None:
        if self.real(rel).is_file():
            self._load_one(rel, compile_now=True)
        else:
            self._prompts.pop(rel, None)
            self.errors.pop(rel, None)
            self._names = None

    def _graph(self) -> Graph | None:
        """The graph of the prompts whose templates are compiled (one not yet compiled reads its parts
        afresh when it is), or None when none compose anything."""
        from ...prompts.graph import Graph

        known = [prompt for prompt in self._prompts.values() if prompt.known_uses()]
        return Graph(known) if known else None

    def changed_since_load(self) -> list[str]:
        """Absolute paths of prompt files added, removed or written since the last full load began.

        A file watcher only sees changes made after it starts watching; this finds the ones made
        while the library was loading or the watcher was starting.
        """
        if self.loaded_ns is None:
            return []
        # The file system stamps mtimes from a coarse clock that can lag the one read at load time.
        since = self.loaded_ns - 100_000_000
        present = set(self.scan())
        changed = present.symmetric_difference({*self._prompts, *self.errors})
        for rel in present - changed:
            try:
                if self.real(rel).stat().st_mtime_ns >= since:
                    changed.add(rel)
            except OSError:
                changed.add(rel)
        skills = self.skill_set.changed_since(since) if self.skill_set is not None else []
        return [str(self.real(rel)) for rel in sorted(changed)] + skills

    def skills(self) -> Mapping[tuple[str, ...], Skill]:
        """The folder's skills: skill-path -> ``Skill``, a snapshot (see ``skillset.FolderSkills``)."""
        return self.skill_set.skills() if self.skill_set is not None else {}

    def read_skill_file(self, skill: Skill, rel: str) -> bytes:
        """The bytes of ``skill``'s file at ``rel``: confined to the skill's folder, within the size cap, and
        exactly the bytes its digest promises; ``InvalidParams`` otherwise."""
        if self.skill_set is None:
            raise InvalidParams(f"skill {'/'.join(skill.path)} has no file {rel!r}")
        return self.skill_set.read(skill, rel)

    def prompts(self) -> list[Prompt]:
        """Current prompts; of two files with one name, the first path wins and the other is an error."""
        out: list[Prompt] = []
        owner: dict[str, str] = {}
        for rel in self._duplicates:  # recomputed below: the other file may be gone by now
            self.errors.pop(rel, None)
        self._duplicates = set()
        for rel in sorted(self._prompts):
            prompt = self._prompts[rel]
            first = owner.get(prompt.name)
            if first is not None:
                self.errors[rel] = [PromptFileError(self.shown(rel), f"prompt name {prompt.name!r} is already used by "
                                                    f"{self.shown(first)}")]
                self._duplicates.add(rel)
                continue
            owner[prompt.name] = rel
            out.append(prompt)
        return out


def _below(path: str, root: str) -> bool:
    absolute = os.path.abspath(path)
    return absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep)
