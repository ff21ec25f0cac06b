"""A prompt file's tests as written: ``tests:`` in promptdeck's front matter, or a sidecar ``NAME.tests.yaml``
beside another tool's prompt file (docs/prompt-files.md, "Tests"). The cases themselves are the domain's
(``prompts.testing``); this module reads them from YAML and puts every problem at its line in the file.

A promptdeck file takes its tests from its front matter only: one place to look, and no second file to stat
for each of a 100,000-file library. Other tools' formats have no room for them, so their sidecar is read.
"""

from __future__ import annotations

from typing import Any

from ...prompts.arguments import Argument
from ...prompts.testcases import PromptTests, Where, parse_tests
from ...protocol.errors import InvalidParams, LineError, PromptFileError
from .frontmatter import line_of_key, load_yaml_file

SIDECAR_SUFFIX = ".tests.yaml"
#: Largest sidecar file read.
MAX_SIDECAR_BYTES = 256 * 1024


def sidecar_of(rel: str) -> str:
    """The sidecar of the prompt file ``rel``: its name without the format's ending, then ``.tests.yaml``
    (``.claude/commands/review.md`` -> ``.claude/commands/review.tests.yaml``, ``a.prompt.md`` -> ``a.tests.yaml``)."""
    folder, _, name = rel.rpartition("/")
    stem = name[:-len(".prompt.md")] if name.endswith(".prompt.md") else name.rpartition(".")[0] or name
    return f"{folder}/{stem}{SIDECAR_SUFFIX}" if folder else f"{stem}{SIDECAR_SUFFIX}"


def front_matter_tests(front: str, raw: object, arguments: tuple[Argument, ...], rel: str) \
        -> tuple[PromptTests | None, list[PromptFileError]]:
    """The tests of a promptdeck file whose front matter (text ``front``) gives ``tests: raw``."""
    tests, problems = parse_tests(raw, arguments)
    if not problems:
        return tests, []
    base = line_of_key(front, "tests")
    lines = _lines(front, [where for _, where in problems], 2, base)
    return None, [PromptFileError(rel, message, line) for (message, _), line in zip(problems, lines, strict=True)]


def sidecar_tests(text: str, arguments: tuple[Argument, ...], path: str) \
        -> tuple[PromptTests | None, list[PromptFileError]]:
    """The tests of the sidecar file ``path`` holding ``text`` (a YAML list of cases)."""
    try:
        raw = load_yaml_file(text, "tests file") if text.strip() else []
    except LineError as exc:
        return None, [PromptFileError(path, str(exc), exc.line)]
    tests, problems = parse_tests(raw, arguments, origin=path)
    if not problems:
        return tests, []
    lines = _lines(text, [where for _, where in problems], 1, 1, top=True)
    return None, [PromptFileError(path, message, line) for (message, _), line in zip(problems, lines, strict=True)]


def lines_in(text: str, wheres: list[Where], fallback: int | None = None) -> list[int | None]:
    """The line of the node at each of ``wheres`` (a path of keys and indexes) in ``text``, a file that is one
    YAML document: the deepest node found on the way, else ``fallback``."""
    return _lines(text, wheres, 1, fallback, top=True)


def _lines(text: str, wheres: list[Where], first: int, fallback: int | None, *, top: bool = False) \
        -> list[int | None]:
    """The line (in the file, whose ``text`` starts at line ``first``) of the node at each of ``wheres`` below
    the ``tests`` list (the whole document when ``top``): the deepest node found on the way, else
    ``fallback``. The YAML is composed once for them all: a file may have many problems."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return [fallback for _ in wheres]
    if not top:
        found = _child(root, "tests")
        root = found[0] if found is not None else None
    return [_line(root, where, first, fallback) for where in wheres]


def _line(root: Any, where: Where, first: int, fallback: int | None) -> int | None:
    import yaml

    if not where or root is None:  # the tests as a whole: where they start
        return fallback
    node = root
    line: int = node.start_mark.line
    for step in where:
        found = _child(node, step)
        if found is None:
            break
        node, key = found
        # A block list or mapping starts on the line after its key: the key's line is the one to fix.
        block = isinstance(node, yaml.CollectionNode) and not node.flow_style
        line = key.start_mark.line if block and key is not None else node.start_mark.line
    return line + first


def _child(node: Any, step: int | str) -> tuple[Any, Any] | None:
    """(the node at ``step`` below ``node``, the key naming it or None), or None when there is none."""
    import yaml

    if isinstance(step, int) and isinstance(node, yaml.SequenceNode):
        return (node.value[step], None) if 0 <= step < len(node.value) else None
    if isinstance(step, str) and isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == step:
                return (value if not isinstance(value, yaml.ScalarNode) or value.value else key), key
    return None


def read_sidecar(read: Any, rel: str, arguments: tuple[Argument, ...]) \
        -> tuple[PromptTests | None, list[PromptFileError]]:
    """The tests of the sidecar of ``rel`` if there is one, read with ``read(path, limit)`` (a library's
    confined reader, which raises ``InvalidParams`` for a file that is not there)."""
    path = sidecar_of(rel)
    try:
        data: bytes = read(path, MAX_SIDECAR_BYTES)
    except InvalidParams as exc:
        if "does not exist" in exc.message or "no file" in exc.message:
            return None, []
        return None, [PromptFileError(path, exc.message)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [PromptFileError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})")]
    return sidecar_tests(text, arguments, path)
