"""promptdeck's OAuth client against the official MCP conformance suite's client scenarios.

The suite (``@modelcontextprotocol/conformance``, 0.1.x) starts an MCP server and an authorization server
of its own for each scenario, runs the client command with the server's URL, and checks what the client
did: discovery (RFC 9728 in the header, path-inserted and at the root; RFC 8414 and OIDC), PKCE S256, the
``resource`` parameter, dynamic or pre-registration, token endpoint authentication (basic, post, none),
scopes (from the 401, from the metadata, omitted, stepped up on a 403, and not retried for ever), client
credentials, a Client ID Metadata Document, and a 2025-03-26 server. The 0.2.0 alpha adds the 2026-07-28
authorization rules (``REVISION_2026``): the authorization response's ``iss`` (RFC 9207: present and right,
missing where promised, another issuer's, one that matches only once normalized), the metadata's issuer, an
``application_type`` on registration, credentials bound to their authorization server when the server moves
to another, and ``offline_access``. The client command is ``tests/support/conformance_oauth_client.py``:
``connect(URL, auth=OAuth(...))`` with the test "browser". Scenarios it does not pass are listed with their
reasons in ``tests/conformance/expected-failures-oauth-client.yml``; the suite fails the run on any other
failure and on a listed scenario that passes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.node_peers import NODE, SUITES, node_peers  # noqa: F401 - skips without the peers
from tests.support.paths import TESTS

pytestmark = pytest.mark.slow

BASELINE = TESTS / "conformance" / "expected-failures-oauth-client.yml"
ROOT = TESTS.parent
#: Scenarios outside the "auth" suite (other revisions, drafts, extensions) that the client passes.
MORE = ["auth/client-credentials-basic", "auth/resource-mismatch", "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback", "auth/offline-access-scope",
        "auth/offline-access-not-supported"]
#: What the 2026-07-28 revision requires of a client's authorization (``conformance list --client
#: --requirements 2026-07-28``) beyond the "auth" suite, run by the 0.2.0 alpha, which has them all.
REVISION_2026 = ["auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
                 "auth/authorization-server-migration", "auth/iss-supported", "auth/iss-not-advertised",
                 "auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized",
                 "auth/metadata-issuer-mismatch", "auth/basic-cimd"]


def run_client(out: Path, *selection: str, suite: str = "0.1") -> subprocess.CompletedProcess[str]:
    script, _ = SUITES[suite]
    client = f"{sys.executable} -m tests.support.conformance_oauth_client"
    command = [str(NODE), str(script), "client", "--command", client, *selection, "-o", str(out),
               "--expected-failures", str(BASELINE)]
    paths = os.pathsep.join(filter(None, [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT,
                          env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": paths})


def failed_checks(out: Path) -> dict[str, list[str]]:
    """Per scenario run, the checks the suite did not count as a success."""
    found: dict[str, list[str]] = {}
    for checks in out.rglob("checks.json"):
        bad = [f"{c['id']}: {c['status']} {c.get('description', '')}" for c in json.loads(checks.read_text())
               if c["status"] not in ("SUCCESS", "INFO")]
        found[str(checks.parent.relative_to(out))] = bad
    return found


def test_the_auth_suite(tmp_path: Path) -> None:
    result = run_client(tmp_path, "--suite", "auth")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    runs = failed_checks(tmp_path)
    assert len(runs) >= 14
    for run, bad in runs.items():
        assert bad == [], (run, bad)


@pytest.mark.parametrize("scenario", MORE)
def test_more_scenarios(scenario: str, tmp_path: Path) -> None:
    result = run_client(tmp_path, "--scenario", scenario)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    if scenario != "auth/2025-03-26-oauth-endpoint-fallback":
        assert all(bad == [] for bad in failed_checks(tmp_path).values()), failed_checks(tmp_path)


@pytest.mark.parametrize("scenario", REVISION_2026)
def test_the_2026_07_28_authorization_rules(scenario: str, tmp_path: Path) -> None:
    result = run_client(tmp_path, "--scenario", scenario, suite="0.2-alpha")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    runs = failed_checks(tmp_path)
    assert runs and all(bad == [] for bad in runs.values()), runs
