"""docs/architecture.md stands on its own and stays true: every file it names is in the repository, and every
module, class, function or attribute it names in code spans is defined in the package (issue 39: it had drifted,
naming `Store._moved`, `ui.CSP` and a `server/signin.py` that did not exist, and a design file outside the
repository)."""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from collections.abc import Iterator
from functools import cache

import pytest

from tests.support.paths import REPO

PAGE = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "src" / "promptdeck"
#: code spans, fenced blocks taken out first (they hold examples, not names)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
#: the repository's own top folders, and the package's, where a path may start
TOP = ("src/", "tests/", "docs/", "benchmarks/", "examples/", ".ci/")
PATHLIKE = re.compile(r"^[\w.-]+(/[\w.*-]+)*/?$")
FILE_ENDINGS = (
    ".py", ".md", ".json", ".js", ".css", ".html", ".toml", ".yaml", ".yml", ".txt", ".lock", ".prompt", ".prompty",
)
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
CAMEL = re.compile(r"^_?[A-Z][a-z0-9]+[A-Z]\w*$")
WORD = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
SNAKE = re.compile(r"^_?[a-z][a-z0-9]*(_[a-z0-9]+)+$")
#: names the page mentions that are not ours: other libraries' classes, JSON fields and settings on the wire
NOT_OURS = {"context.arguments", "data.argument", "data.missing", "run_coroutine_threadsafe", "AsyncOAuth2Client"}


class Index:
    """What the package defines: its modules by dotted path, and the names each module and class holds."""

    def __init__(self) -> None:
        self.modules: dict[str, set[str]] = {}
        self.classes: dict[str, set[str]] = defaultdict(set)
        self.names: set[str] = set()
        self.words: set[str] = set()
        self.strings: set[str] = set()
        for path in PACKAGE.rglob("*.py"):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            self.modules[dotted] = self._read(ast.parse(path.read_text()))
        for script in (PACKAGE / "server" / "web" / "static").glob("*.js"):
            # the page's classes and their methods (`CatalogView.swap`)
            text = script.read_text()
            methods = set(re.findall(r"^\s+(?:async\s+)?(\w+)\(.*\)\s*\{", text, re.M))
            for name in re.findall(r"^(?:export\s+)?class\s+(\w+)", text, re.M):
                self.classes[name] |= methods
                self.names.add(name)
        for module in list(self.modules):
            # a package holds its modules as attributes too
            head, _, tail = module.rpartition(".")
            self.names.add(tail)
            if head in self.modules:
                self.modules[head].add(tail)

    def _read(self, tree: ast.Module) -> set[str]:
        top: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] |= self._members(node)
                self.names.add(node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.names.add(node.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                self.strings.add(node.value)
                # the store's tables and columns, and the wire's fields, are named in the package's strings
                self.words |= set(WORD.findall(node.value))
        for node in ast.walk(tree):
            # a module's names, and the classes and functions it makes inside functions (`render.GuardTree`)
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                top.add(node.name)
        for node in tree.body:
            top |= set(_bound(node))
        self.names |= top
        return top

    def _members(self, node: ast.ClassDef) -> set[str]:
        members: set[str] = set()
        for item in node.body:
            members |= set(_bound(item))
        for inner in ast.walk(node):
            # attributes set on self in any method, and each enum member or struct field
            if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name) and inner.value.id == "self":
                if isinstance(inner.ctx, ast.Store):
                    members.add(inner.attr)
        self.names |= members
        return members

    def module(self, dotted: str) -> list[str]:
        """The package modules a dotted prefix may name: in full, or by its last parts (`skills` is four)."""
        return [m for m in self.modules if m == dotted or m.endswith("." + dotted)]

    def resolves(self, dotted: str) -> bool:
        parts = dotted.split(".")
        # the longest prefix that is one of our modules, then the rest through it and its classes
        for cut in range(len(parts), 0, -1):
            modules = self.module(".".join(parts[:cut]))
            if modules:
                return any(self._through(self.modules[module], parts[cut:]) for module in modules)
        if parts[0] in self.classes:
            return self._through(self.classes[parts[0]] | {"__init__"}, parts[1:], start=parts[0])
        return _external(dotted)

    def _through(self, names: set[str], rest: list[str], start: str = "") -> bool:
        if not rest:
            return True
        head = rest[0]
        if head not in names:
            return False
        if len(rest) == 1:
            return True
        # an attribute of an attribute: a class of that name, or any name the package defines
        if head in self.classes:
            return self._through(self.classes[head], rest[1:])
        return all(name in self.names for name in rest[1:])


def _bound(node: ast.stmt) -> Iterator[str]:
    if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        yield node.name
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    yield name.id
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target.id
    elif isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, ast.If | ast.Try):
        for inner in [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]:
            yield from _bound(inner)


def _external(dotted: str) -> bool:
    """Another library's name (`asyncio.to_thread`, `difflib`), which the page may mention in passing."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


@cache
def index() -> Index:
    return Index()


def spans() -> list[tuple[int, str]]:
    text = FENCE.sub(lambda block: "\n" * block.group().count("\n"), PAGE.read_text())
    return [(text.count("\n", 0, m.start()) + 1, m.group(1).strip()) for m in SPAN.finditer(text)]


def is_path(span: str) -> bool:
    """A span naming a file or folder; not a method (`prompts/get`), a media type or a file of a user's library
    (`SKILL.md`, `NAME.tests.yaml`), which the package names in its strings or the page as a placeholder."""
    if span in index().strings or any(part.isupper() for part in re.split(r"[/.]", span)):
        return False
    if not PATHLIKE.match(span) or "/" not in span and not span.endswith(FILE_ENDINGS):
        return False
    first = span.split("/")[0]
    return span.startswith(TOP) or span.endswith(FILE_ENDINGS) or (PACKAGE / first).is_dir()


def path_exists(span: str) -> bool:
    """A path from the repository's top, from the package's, or a file named alone that the package or docs
    hold (`app.js`, `served.py`)."""
    if "*" in span:
        return any(REPO.glob(span)) or any(PACKAGE.glob(span))
    for base in (REPO, REPO / "src", PACKAGE, REPO / "docs", REPO / "tests"):
        if (base / span).exists():
            return True
    if any(PACKAGE.rglob(span)) or any((REPO / "docs").glob(span)):
        # a file named by its folder within the package (`http/modern.py`, `static/graph.js`)
        return True
    module, dot, name = span.rpartition(".")
    if dot and not span.endswith(FILE_ENDINGS) and path_exists(module + ".py"):
        # a module's attribute written through its path (`cli/stopping.delivering`)
        return index().resolves(module.replace("/", ".") + "." + name)
    return False


def test_the_page_names_no_file_outside_the_repository() -> None:
    text = PAGE.read_text()
    outside = [line for line in text.splitlines() if "DESIGN.md" in line or "../" in line or "/work/" in line]
    assert not outside, f"docs/architecture.md refers outside the repository: {outside}"


def test_every_path_the_page_names_exists() -> None:
    missing = [(line, span) for line, span in spans() if is_path(span) and not path_exists(span)]
    assert not missing, f"docs/architecture.md names paths that do not exist (line, path): {missing}"


def test_every_dotted_name_the_page_names_is_defined() -> None:
    found = index()
    wrong = [
        (line, span) for line, span in spans()
        if DOTTED.match(span) and not span.endswith(FILE_ENDINGS) and span not in NOT_OURS
        and not found.resolves(span)
    ]
    assert not wrong, f"docs/architecture.md names what the package does not define (line, name): {wrong}"


def test_every_class_and_function_name_the_page_names_is_defined() -> None:
    found = index()
    wrong = [
        (line, span) for line, span in spans()
        if (CAMEL.match(span) or SNAKE.match(span)) and span not in NOT_OURS and span not in found.names
        and not (SNAKE.match(span) and span in found.words)
    ]
    assert not wrong, f"docs/architecture.md names what the package does not define (line, name): {wrong}"


@pytest.mark.parametrize(
    ("name", "defined"),
    [
        ("outcome.answer", True), ("server.outcome.assemble", True), ("LegacySession", True),
        ("Store._moved", False), ("ui.CSP", False), ("NoSuchThing", False), ("asyncio.to_thread", True),
    ],
)
def test_the_checker_tells_defined_names_from_drifted_ones(name: str, defined: bool) -> None:
    found = index()
    answer = found.resolves(name) if "." in name else name in found.names
    assert answer is defined


@pytest.mark.parametrize(
    ("span", "exists"),
    [("server/signin.py", False), ("server/web/signin.py", True), ("tests/test_layers.py", True),
     ("docs/nothing.md", False)],
)
def test_the_checker_tells_real_paths_from_drifted_ones(span: str, exists: bool) -> None:
    assert is_path(span)
    assert path_exists(span) is exists
