"""The import rule of the package, checked rather than hoped for (docs/architecture.md, "Layers").

Every import counts: at module level, inside functions and under ``TYPE_CHECKING`` (a type-only cycle is
still a cycle for the reader). A module imports only from its own layer or below, and no two modules
import each other, however far round.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import REPO

SRC = REPO / "src"
PACKAGE = SRC / "promptdeck"

#: The layers, top first. A module belongs to the first entry that names it or a package above it.
LAYERS = (
    "promptdeck.__main__",        # python -m promptdeck
    "promptdeck.cli",             # the only code that prints or exits
    "promptdeck",                 # the public API (__init__): a facade over what is below
    "promptdeck.application",     # Prompts: a library rendered in an application (local core, or a client)
    "promptdeck.server.http",     # Streamable HTTP, 2024-11-05 SSE, the 2026 routes, uvicorn
    "promptdeck.server.web",      # the web page, its store API and sign-in
    "promptdeck.server",          # the MCP core: app, handlers, both eras, outcome, tools, stdio, watch
    "promptdeck.server.security",  # principals, tokens, OAuth, rate limits, quotas, audit
    "promptdeck.importers",       # other tools' prompts into a folder or a store (a Langfuse fetch: the client)
    "promptdeck.client",
    "promptdeck.export",
    "promptdeck.sources.store",
    "promptdeck.sources.files",
    "promptdeck.sources",         # the Source seam, and prompts written in Python
    "promptdeck.prompts",         # the domain
    "promptdeck.providers",       # a rendered prompt in the model providers' request formats
    "promptdeck.protocol",        # sans-IO MCP
    "promptdeck.logs",
    "promptdeck.extras",          # how to add an optional extra, for the message that says it is missing
    "promptdeck._version",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def layer(module: str) -> int:
    """The index in ``LAYERS`` of ``module``: the most specific entry naming it or a package above it."""
    best, depth = None, -1
    for index, name in enumerate(LAYERS):
        if (module == name or module.startswith(name + ".")) and name.count(".") > depth:
            best, depth = index, name.count(".")
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best


def imports(module: str) -> Iterator[tuple[str, int]]:
    """(module imported, line) for every promptdeck import in ``module``, wherever it stands."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            if not base.startswith("promptdeck"):
                continue
            named = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            for target in named or [base]:
                yield _known(target), node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("promptdeck"):
                    yield _known(alias.name), node.lineno


def _known(name: str) -> str:
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


GRAPH = {module: {target for target, _ in imports(module) if target != module} for module in MODULES}


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_or_across(module: str) -> None:
    upward = [f"line {line}: {target} ({LAYERS[layer(target)]})" for target, line in imports(module)
              if layer(target) < layer(module)]
    assert not upward, f"{module} ({LAYERS[layer(module)]}) imports from a layer above it: " + "; ".join(upward)


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components over every import: none holds two modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


def test_the_checks_see_what_they_must() -> None:
    """The walker finds imports in functions and under TYPE_CHECKING, and the rule would catch a cycle."""
    assert "promptdeck.server.stdio" in GRAPH["promptdeck.server.app"]  # imported inside PromptServer.serve
    assert "promptdeck.server.served" in GRAPH["promptdeck.server.modern"]  # under TYPE_CHECKING only
    assert layer("promptdeck.server.http.app") < layer("promptdeck.server.app") < layer("promptdeck.prompts.spec")


def test_no_module_is_over_600_lines() -> None:
    long = {module: lines for module, path in MODULES.items() if (lines := len(path.read_text().splitlines())) > 600}
    assert not long, f"modules over the 600-line rule (split them by concept): {long}"


#: No class has more than this many methods, counting the ones it inherits from classes within the package
#: (issue 39): a class wider than that holds more than one concept.
MOST_METHODS = 40


def _defs_by_class(module: str) -> dict[str, set[str]]:
    """Qualified class name -> the names its own body defines with ``def`` (properties and dunders included)."""
    found: dict[str, set[str]] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found[prefix + node.name] = {item.name for item in node.body
                                             if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
                walk(node.body, f"{prefix}{node.name}.")

    walk(ast.parse(MODULES[module].read_text()).body, "")
    return found


def method_counts() -> dict[str, tuple[int, int]]:
    """Every class of the package (module level or nested) -> (methods its own body defines, distinct methods
    counting those of its bases within the package). The classes come from importing the modules, so the
    inheritance is Python's own MRO; the methods come from the source, so generated ones (a dataclass's
    __init__) do not count."""
    import importlib
    import inspect

    defs = {module: _defs_by_class(module) for module in MODULES if not module.endswith("__main__")}
    counts: dict[str, tuple[int, int]] = {}

    def count(klass: type, module: str) -> None:
        names: set[str] = set()
        for base in klass.__mro__:
            if base.__module__ in defs:
                names |= defs[base.__module__].get(base.__qualname__, set())
        own = defs[module].get(klass.__qualname__, set())
        counts[f"{module}.{klass.__qualname__}"] = (len(own), len(names))
        for inner in vars(klass).values():
            if inspect.isclass(inner) and inner.__module__ == module and inner.__qualname__.startswith(
                    klass.__qualname__ + "."):
                count(inner, module)

    for module in defs:
        for value in vars(importlib.import_module(module)).values():
            if inspect.isclass(value) and value.__module__ == module and "." not in value.__qualname__:
                count(value, module)
    return counts


def test_no_class_has_more_than_40_methods() -> None:
    over = {name: total for name, (_, total) in method_counts().items() if total > MOST_METHODS}
    assert not over, f"classes over {MOST_METHODS} methods, inherited ones counted (split them by concept): {over}"


def test_the_method_count_sees_the_classes_and_what_they_inherit() -> None:
    """The counter finds the package's classes and counts inherited methods: some class has more methods than
    its own body defines, and every count is at least the class's own."""
    counts = method_counts()
    assert len(counts) > 100 and max(total for _, total in counts.values()) > 20
    assert all(total >= own for own, total in counts.values())
    assert any(total > own > 0 for own, total in counts.values()), "no class counted an inherited method"



# -- the tests' own imports -----------------------------------------------------------------------------------

TESTS = REPO / "tests"
SUPPORT = TESTS / "support"


def _test_module_path(dotted: str) -> Path | None:
    """The file of module ``dotted`` (``tests.…``), or None if it is no module of the tests."""
    base = REPO.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_test_modules(path: Path, text: str) -> Iterator[tuple[Path, int]]:
    """(module file imported, line) for every import of a module of the tests in ``text``, the file at ``path``,
    wherever the import stands."""
    package = list(path.relative_to(REPO).parent.parts)
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "tests":
                continue
            # ``from tests.support import modern`` imports the module ``modern``; ``from x import name``, x.
            named: list[Path | None] = [found for alias in node.names
                                        if (found := _test_module_path(f"{base}.{alias.name}"))]
            for found in named or [_test_module_path(base)]:
                if found is not None:
                    yield found, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "tests" and (module := _test_module_path(alias.name)):
                    yield module, node.lineno


def import_problems(path: Path, text: str) -> list[str]:
    """What is wrong with the imports of ``text``, the test file at ``path``: a test module imported (what it
    shares belongs in tests/support), or a helper module beside other tests imported from outside its folder
    (shared, so it belongs in tests/support too)."""
    problems = []
    for target, line in imported_test_modules(path, text):
        shown = f"{path.relative_to(REPO)}:{line}: imports {target.relative_to(REPO)}"
        if target.name.startswith("test_"):
            problems.append(f"{shown}, a test module (move what it shares to tests/support)")
        elif (not target.is_relative_to(path.parent) and not target.is_relative_to(SUPPORT)
              and target.name not in ("__init__.py", "conftest.py")):
            problems.append(f"{shown}, a helper beside other tests (move it to tests/support)")
    return problems


def test_no_test_module_imports_another() -> None:
    """Shared helpers live in tests/support. A helper module may sit beside the tests that use it (if it is no
    ``test_*`` module), but one used from another folder is shared, and belongs in tests/support."""
    # node_modules under tests/peers holds the Node peers' files (some of them Python), none of them a test
    ours = sorted(path for path in TESTS.rglob("*.py") if "node_modules" not in path.parts)
    problems = [problem for path in ours for problem in import_problems(path, path.read_text())]
    assert not problems, "\n".join(problems)


def test_the_import_check_sees_every_kind_of_import() -> None:
    """Absolute and relative imports of a test module, inside a function too, and of a helper beside other
    tests, are all caught; an import from tests/support or of a helper in the same folder is not."""
    text = ("from tests.server.http.test_app import x\nfrom .test_legacy import y\n"
            "from tests.interop import sdk_modern\nimport tests.server.test_modern\n"
            "from tests.support.modern import legacy\nfrom . import test_modern\n"
            "def f():\n    from ..cli.test_picker import z\n")
    problems = import_problems(TESTS / "server" / "test_probe.py", text)
    assert [problem.split(": ", 1)[1] for problem in problems] == [
        "imports tests/server/http/test_app.py, a test module (move what it shares to tests/support)",
        "imports tests/server/test_legacy.py, a test module (move what it shares to tests/support)",
        "imports tests/interop/sdk_modern.py, a helper beside other tests (move it to tests/support)",
        "imports tests/server/test_modern.py, a test module (move what it shares to tests/support)",
        "imports tests/server/test_modern.py, a test module (move what it shares to tests/support)",
        "imports tests/cli/test_picker.py, a test module (move what it shares to tests/support)",
    ]
    assert import_problems(TESTS / "interop" / "test_probe.py", "from .sdk_modern import check_modern\n") == []
