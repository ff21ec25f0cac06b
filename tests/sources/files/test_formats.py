"""The prompt formats (sources/files/formats.py): one record per format, and every table about formats built
from that one list, so a format added there is found by the scan, the readers, ``--format`` and the store."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import promptdeck
from promptdeck.sources.files import native
from promptdeck.sources.files.formats import (
    BY_NAME,
    FORMATS,
    OWN,
    Format,
    folder_formats,
    in_folders,
    in_library,
    prompt_endings,
    readers,
)
from promptdeck.sources.files.paths import FOLDER_FORMATS, may_hold_prompts, prompt_format
from promptdeck.sources.store.model import _PROMPT_ENDINGS, is_safe_path

SRC = Path(promptdeck.__file__).parent
NAMES = frozenset(fmt.name for fmt in FORMATS)


def sample(fmt: Format) -> str:
    """A path where a file of ``fmt`` lies: in its tool's folder, else in a library's own tree."""
    if fmt.folder is None:
        return "a/x" + fmt.ending
    folder = fmt.folder.replace("*", "s")
    return folder + ("x" + fmt.ending if not fmt.ending.startswith("/") else fmt.ending[1:])


def test_each_format_is_found_where_its_record_says() -> None:
    for fmt in FORMATS:
        assert prompt_format(sample(fmt)) == fmt.name, fmt
        if fmt.in_library and fmt.folder is not None:
            assert prompt_format("a/x" + fmt.ending) == fmt.name, fmt
        if fmt.folder is not None:
            assert may_hold_prompts(sample(fmt).rsplit("/", 1)[0]), fmt


def test_every_table_holds_every_format_of_the_list() -> None:
    for fmt in FORMATS:
        assert (fmt.name in FOLDER_FORMATS) is fmt.option, fmt
        assert (fmt.name in native.READERS) is (fmt.reader is not None), fmt
        assert fmt.ending[fmt.ending.index("."):] in _PROMPT_ENDINGS, fmt
        if fmt.reader is not None:  # the reader named is there to be imported
            module = importlib.import_module(f"promptdeck.sources.files.native.{fmt.reader[0]}")
            assert callable(getattr(module, fmt.reader[1])), fmt


def test_a_format_added_to_the_list_appears_in_every_derived_table() -> None:
    new = Format("newtool", ".nt", ".newtool/prompts/", nested=True, in_library=True, reader=("newtool", "read"),
                 option=True)
    more = (*FORMATS, new)
    assert (".newtool/prompts/", "", ".nt", "newtool", True) in in_folders(more)
    assert (".nt", "newtool") in in_library(more)
    assert folder_formats(more)["newtool"] == ".newtool/prompts/"
    assert ".nt" in prompt_endings(more)
    assert readers(more)["newtool"] is new
    # and the tables of the list itself are these functions of it
    assert FOLDER_FORMATS == folder_formats(FORMATS) and native.READERS == readers(FORMATS)
    assert _PROMPT_ENDINGS == prompt_endings(FORMATS)


def test_a_longer_ending_is_tried_before_one_it_ends_with() -> None:
    endings = [ending for ending, _ in in_library(FORMATS)]
    for i, ending in enumerate(endings):
        assert not any(later != ending and later.endswith(ending) for later in endings[i + 1:]), endings
    assert prompt_format("a/x.prompt.md") == "copilot" and prompt_format("a/x.md") == OWN


def test_promptdecks_own_format_is_one_entry_and_the_only_one_without_a_reader() -> None:
    assert [fmt.name for fmt in FORMATS if fmt.reader is None] == [OWN]
    assert BY_NAME[OWN].in_library and BY_NAME[OWN].option and FOLDER_FORMATS[OWN] == ""
    assert len(BY_NAME) == len(FORMATS)  # no name given twice


def test_a_format_read_by_its_ending_in_a_library_is_no_folder_format() -> None:
    # --format NAME reads a folder as where NAME's files live; Prompty and dotprompt files are read wherever
    # promptdeck's own are, so a folder of them is served as it is: ``--format prompty`` would be ``promptdeck``.
    for fmt in FORMATS:
        if fmt.option:
            assert fmt.folder is not None or fmt.name == OWN, fmt
    assert "prompty" not in FOLDER_FORMATS and "dotprompt" not in FOLDER_FORMATS


def test_a_tests_file_may_stand_beside_a_prompt_file_of_every_format_and_mdc_is_none() -> None:
    for fmt in FORMATS:
        path = sample(fmt)
        stem = path[:-len(fmt.ending[fmt.ending.index("."):])]
        assert is_safe_path(stem + ".tests.yaml") or not stem.startswith("."), path
    assert ".mdc" not in _PROMPT_ENDINGS
    assert not is_safe_path(".cursor/rules/x.tests.yaml")


def _format_table(node: ast.AST) -> bool:
    """Whether ``node`` is a literal collection holding two or more format names (a table of formats)."""
    if isinstance(node, ast.Dict):
        items: list[ast.expr | None] = list(node.keys)
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = list(node.elts)
    else:
        return False
    names = {item.value for item in items if isinstance(item, ast.Constant) and item.value in NAMES}
    return len(names) >= 2


def test_no_other_module_keeps_a_table_of_formats() -> None:
    # The export writers name the tools they write for (their targets), not the formats read.
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in ("sources/files/formats.py",) or rel.startswith("export/"):
            continue
        tree = ast.parse(path.read_text(), rel)
        found += [f"{rel}:{getattr(node, 'lineno', 0)}" for node in ast.walk(tree) if _format_table(node)]
        names = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
        found += [f"{rel}: {old}" for old in ("NATIVE_FOLDERS", "TEMPLATED") if old in names]
    assert found == []
