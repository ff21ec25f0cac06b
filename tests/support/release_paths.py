"""The store's functions as their source says (for the tests that list the paths to the release gate,
tests/attack/test_release_gate.py and test_review_gate.py): each function of promptdeck's modules, the attribute
calls it makes, and the public store methods that reach ``Governance.release``."""

from __future__ import annotations

import ast
from pathlib import Path

STORE = Path(__file__).parents[2] / "src" / "promptdeck" / "sources" / "store"


def functions(root: Path = STORE) -> list[tuple[str, ast.FunctionDef]]:
    """(module path below ``root``, function) for every function defined in ``root``'s modules."""
    found = []
    for module in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.FunctionDef):
                found.append((str(module.relative_to(root)), node))
    return found


def calls(function: ast.FunctionDef) -> set[str]:
    """The names of the attributes ``function`` calls (``self.release(…)``: ``release``)."""
    return {node.func.attr for node in ast.walk(function)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}


def public_paths_to_the_gate() -> set[str]:
    """The public functions of the store that call the gate, directly or through a private helper. By name, the
    calls of every function so named together: a protocol's ``label`` beside ``Store.label``."""
    called: dict[str, set[str]] = {}
    for _, function in functions():
        called.setdefault(function.name, set()).update(calls(function))
    reaching = {"release"}
    while True:
        more = {name for name, made in called.items() if made & reaching} - reaching
        if not more:
            break
        reaching |= more
    return {name for name in reaching if not name.startswith("_")} - {"release"}
