"""``server.json``, promptdeck's entry for the official MCP registry, checked against the registry's published
schema and against what the registry checks at publish time.

The schema is the file published at the ``$schema`` URL that server.json names (2025-12-11, the newest the
registry has released). This machine and CI reach PyPI but not that host, so the test takes the published
file from a PyPI package that ships it unchanged: skillsaw 0.22.0 (a linter for agent configuration) bundles
it as ``skillsaw/schemas/mcp_registry/v2025_12_11/server.schema.json``, copied byte for byte from
modelcontextprotocol/static at a9ba437d9fbbe92076a24b20d56449ac7c7786ac, the repository served at
static.modelcontextprotocol.io. ``SCHEMA_SHA256`` is that published file's digest (checked against the
repository's blob), so a different file, from this package or any other, fails the test instead of being
trusted. The wheel is installed without its dependencies into the test's own folder at test time.

skillsaw's own ``mcp-registry-server-json-valid`` rule then lints the file as a second, independent reader:
it adds the registry's publishing constraints that the schema leaves out (an exact package version, the
name's reverse-DNS shape).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from promptdeck._version import __version__
from tests.support.paths import REPO

SERVER_JSON = REPO / "server.json"
BIN = Path(sys.executable).parent

# Where the schema is published, the package and path that ship it, and the published file's SHA-256.
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SCHEMA_PACKAGE = "skillsaw==0.22.0"
SCHEMA_IN_PACKAGE = "skillsaw/schemas/mcp_registry/v2025_12_11/server.schema.json"
# = git show a9ba437d:schemas/2025-12-11/server.schema.json | sha256sum, in modelcontextprotocol/static
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


def server_json() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SERVER_JSON.read_text())
    return loaded


def problems(schema: dict[str, Any], document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return sorted(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
                  for e in validator.iter_errors(document))


@pytest.fixture(scope="module")
def uv_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {**os.environ, "UV_CACHE_DIR": str(tmp_path_factory.mktemp("uv-cache"))}


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory, uv_env: dict[str, str]) -> dict[str, Any]:
    target = tmp_path_factory.mktemp("schema-package")
    installed = subprocess.run([str(BIN / "uv"), "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                                "--python", sys.executable, SCHEMA_PACKAGE],
                               capture_output=True, text=True, timeout=300, env=uv_env)
    assert installed.returncode == 0, installed.stderr
    raw = (target / SCHEMA_IN_PACKAGE).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "not the schema the registry published"
    loaded: dict[str, Any] = json.loads(raw)
    assert loaded["$id"] == SCHEMA_URL
    return loaded


def test_server_json_follows_the_published_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft7Validator.check_schema(schema)
    document = server_json()
    assert document["$schema"] == SCHEMA_URL
    assert problems(schema, document) == []


# Each breaks server.json in place, in a way the published schema must refuse.
BROKEN: dict[str, Callable[[dict[str, Any]], object]] = {
    "package without transport": lambda d: d["packages"][0].pop("transport"),
    "transport not in the schema": lambda d: d["packages"][0].update(transport={"type": "websocket"}),
    "package version 'latest'": lambda d: d["packages"][0].update(version="latest"),
    "description over 100 characters": lambda d: d.update(description="x" * 101),
    "name without a namespace": lambda d: d.update(name="promptdeck"),
    "positional argument with neither value nor hint": lambda d: d["packages"][0]["packageArguments"][1].pop(
        "valueHint"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_server_json_fails_the_schema(case: str, schema: dict[str, Any]) -> None:
    broken = copy.deepcopy(server_json())
    BROKEN[case](broken)
    assert problems(schema, broken), f"the schema accepted a server.json with a {case}"


def test_the_entry_is_the_pypi_package_run_by_uvx_over_stdio() -> None:
    (package,) = server_json()["packages"]
    assert (package["registryType"], package["identifier"], package["runtimeHint"]) == ("pypi", "promptdeck", "uvx")
    assert package["transport"] == {"type": "stdio"}
    # ``uvx promptdeck serve FOLDER...``: the fixed subcommand, then the library folders the user fills in.
    serve, folder = package["packageArguments"]
    assert serve == {"type": "positional", "value": "serve"}
    assert folder["type"] == "positional" and "value" not in folder
    assert folder["isRequired"] and folder["isRepeated"] and folder["format"] == "filepath"


def test_versions_agree_with_the_package() -> None:
    document = server_json()
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert document["version"] == document["packages"][0]["version"] == __version__ == pyproject["version"]


def test_the_readme_carries_the_ownership_line() -> None:
    """The registry proves a PyPI package is the publisher's by finding ``mcp-name: NAME`` in the package's
    description, which is this README (pyproject ``readme``); an HTML comment keeps it out of the page."""
    name = server_json()["name"]
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["readme"] == "README.md"
    readme = (REPO / "README.md").read_text()
    # As the registry matches (internal/validators/registries/mcpname.go): the name must end at a character
    # that cannot be part of a server name, so the marker for io.github.x/a-evil does not prove io.github.x/a.
    assert re.search(rf"mcp-name: {re.escape(name)}(?![A-Za-z0-9._/-])", readme), f"no 'mcp-name: {name}'"
    assert f"<!-- mcp-name: {name} -->" in readme


def _skillsaw(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "uvx"), SCHEMA_PACKAGE.replace("==", "@"), "lint", str(folder)],
                          capture_output=True, text=True, timeout=300, env=env)


def test_skillsaw_lints_it_as_a_registry_entry(tmp_path: Path, uv_env: dict[str, str]) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.mkdir()
    bad.mkdir()
    (good / "server.json").write_text(SERVER_JSON.read_text())
    broken = server_json()
    broken["packages"][0]["version"] = "^0.1"  # a range: the registry wants the exact release
    (bad / "server.json").write_text(json.dumps(broken))
    linted = _skillsaw(good, uv_env)
    assert linted.returncode == 0 and "Repo type: mcp-registry" in linted.stdout, linted.stdout + linted.stderr
    refused = _skillsaw(bad, uv_env)
    assert refused.returncode != 0 and "mcp-registry-server-json-valid" in refused.stdout, refused.stdout
