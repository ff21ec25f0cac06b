"""The tests folder mirrors the package: every module that has logic has a unit file (docs/architecture.md).

A module ``src/promptdeck/<dir>/<name>.py`` is tested by ``tests/<dir>/test_<name>.py``; a private module's
leading underscores are dropped (``_common.py`` → ``test_common.py``), and a package's ``__init__.py`` is
tested by ``tests/<dir>/test_<package>.py`` (``sources/__init__.py`` → ``tests/sources/test_sources.py``).
The top package, the public API, is tested by ``tests/test_api.py``, the name the docs give it.

A module *has logic* when running it or calling into it runs code of its own: it defines a function (or
method, at any depth) whose body is more than a docstring, ``...`` or ``pass``, or it runs a statement at
module level other than imports, assignments, annotations, class and function definitions (``if`` and
``try`` blocks are looked into; an ``if __name__ == "__main__"`` block is not). A module of re-exports,
constants, Protocols or plain records (dataclasses, Structs, enums without methods) has none.

``MISSING`` lists the modules with logic that have no unit file yet. It is kept exact both ways: a module
missing from it fails, and so does an entry that no longer needs to be there (its unit file was written, or
the module moved or lost its logic), so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO, TESTS

PACKAGE = REPO / "src" / "promptdeck"

#: Modules with logic and no unit file yet, as paths under src/promptdeck. Write the file, then drop the line.
MISSING: frozenset[str] = frozenset()


def _is_stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of a docstring, ``...`` or ``pass`` only: a Protocol's method, an overload, a click group."""
    return all(isinstance(statement, ast.Pass)
               or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                   and (statement.value.value is Ellipsis or isinstance(statement.value.value, str)))
               for statement in function.body)


def _is_main_guard(statement: ast.If) -> bool:
    test = statement.test
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__")


def _runs_at_module_level(body: list[ast.stmt]) -> bool:
    """A statement that does something when the module is imported (not a declaration)."""
    for statement in body:
        if isinstance(statement, ast.If):
            if not _is_main_guard(statement) and _runs_at_module_level(statement.body + statement.orelse):
                return True
        elif isinstance(statement, ast.Try):
            blocks = statement.body + statement.orelse + statement.finalbody
            if _runs_at_module_level(blocks + [s for handler in statement.handlers for s in handler.body]):
                return True
        elif not isinstance(statement, ast.Import | ast.ImportFrom | ast.Assign | ast.AnnAssign | ast.Expr
                            | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef | ast.Raise):
            return True
    return False


def has_logic(source: str) -> bool:
    """Whether a module's text holds logic, as the module's docstring defines it."""
    tree = ast.parse(source)
    functions = (node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))
    return any(not _is_stub(function) for function in functions) or _runs_at_module_level(tree.body)


def unit_file(module: str) -> Path:
    """The unit file of ``module``, a path under src/promptdeck."""
    path = Path(module)
    if path.name == "__init__.py":
        return TESTS / "test_api.py" if not path.parent.parts else TESTS / path.parent / f"test_{path.parent.name}.py"
    return TESTS / path.parent / f"test_{path.stem.lstrip('_')}.py"


def modules_with_logic() -> dict[str, Path]:
    return {path.relative_to(PACKAGE).as_posix(): path for path in sorted(PACKAGE.rglob("*.py"))
            if has_logic(path.read_text())}


def test_every_module_with_logic_has_a_unit_file() -> None:
    untested = {module for module in modules_with_logic() if not unit_file(module).exists()}
    new = sorted(untested - MISSING)
    assert not new, "modules with logic and no unit file: " + ", ".join(
        f"{module} (write {unit_file(module).relative_to(REPO)})" for module in new)


def test_the_missing_list_is_not_stale() -> None:
    logic = modules_with_logic()
    stale = sorted(module for module in MISSING if module not in logic or unit_file(module).exists())
    assert not stale, "drop these from MISSING (tested now, gone, or without logic): " + ", ".join(stale)


def test_has_logic_tells_declarations_from_code() -> None:
    assert not has_logic('"""Re-exports."""\nfrom .a import b as b\n__all__ = ["b"]\n')
    assert not has_logic("from typing import Protocol\nclass P(Protocol):\n    def f(self) -> int: ...\n")
    assert not has_logic("from dataclasses import dataclass\n@dataclass\nclass R:\n    x: int = 0\n")
    assert not has_logic("if TYPE_CHECKING:\n    from x import y\n")
    assert not has_logic("def main() -> None:\n    '''Help.'''\nif __name__ == '__main__':\n    main()\n")
    assert has_logic("def f() -> int:\n    return 1\n")
    assert has_logic("class C:\n    def m(self) -> None:\n        print(1)\n")
    assert has_logic("for command in (1, 2):\n    register(command)\n")
    assert has_logic("try:\n    import x\nexcept ImportError:\n    for a in b:\n        pass\n")


def test_unit_files_are_named_by_the_module() -> None:
    assert unit_file("cli/store.py") == TESTS / "cli" / "test_store.py"
    assert unit_file("logs.py") == TESTS / "test_logs.py"
    assert unit_file("sources/files/native/_common.py") == TESTS / "sources/files/native/test_common.py"
    assert unit_file("sources/__init__.py") == TESTS / "sources" / "test_sources.py"
    assert unit_file("__init__.py") == TESTS / "test_api.py"
