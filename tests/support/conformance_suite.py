"""The official conformance suites run against a served library, as tests/interop/test_conformance.py runs them
and tests/sources/store/test_peers.py runs them again against a store (by replacing ``http_server`` here)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from tests.support.http_server import http_server
from tests.support.node_peers import HERE, NODE, SUITES

FIXTURES = HERE / "conformance"
MODES = {
    "stateful": ([], FIXTURES / "expected-failures.yml"),
    "stateless": (["--stateless"], FIXTURES / "expected-failures-stateless.yml"),
}


def run_suite(suite: str, url: str, baseline: Path, out: Path, *extra: str,
              options: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    script, default_options = SUITES[suite]
    command = [str(NODE), str(script), "server", "--url", url, *(default_options if options is None else options),
               *extra, "-o", str(out), "--expected-failures", str(baseline)]
    return subprocess.run(command, capture_output=True, text=True, timeout=150, cwd=out,
                          env={**os.environ, "NO_COLOR": "1"})


def _summary(output: str) -> str:
    totals = re.findall(r"Total: \d+ passed, \d+ failed", output)
    return totals[-1] if totals else "(no summary)"


def check_active_suite(suite: str, mode: str, tmp_path: Path) -> None:
    """The active suite ``suite`` passes against the fixture library served in ``mode``, but for its baseline."""
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
                     "prompts-get-with-image", "dns-rebinding-protection", "resources-list", "resources-subscribe",
                     "resources-unsubscribe"):
        assert re.search(rf"✓ {re.escape(scenario)}: [1-9]\d* passed, 0 failed", output), (scenario, output[-3000:])


SELECTIONS_2026 = {
    # Every scenario of the revision, the draft and pending ones included (the active suite has only 20).
    "spec-version": ["--spec-version", "2026-07-28", "--suite", "all"],
    # Exactly what the revision requires, frozen at its release; tasks (an extension) run unscored.
    "requirements": ["--requirements", "2026-07-28"],
}
BASELINE_2026 = FIXTURES / "expected-failures-2026.yml"
#: Scenarios promptdeck passes whole at 2026-07-28.
PASSING_2026 = ("completion-complete", "prompts-list", "prompts-get-simple", "prompts-get-with-args",
                "prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
                "input-required-result-non-tool-request", "resources-list", "sep-2164-resource-not-found")
#: Baselined scenarios whose other checks must pass: the checks that may fail, all driven by a tool.
TOOL_CHECKS_2026 = {
    "server-stateless": {
        "sep-2575-server-rejects-undeclared-capability",  # tool test_missing_capability
        "sep-2575-missing-capability-http-400",  # tool test_missing_capability
        "sep-2575-http-server-no-independent-requests-on-stream",  # tool test_streaming_elicitation
        "sep-2575-server-no-log-without-loglevel",  # tool test_logging_tool
        "sep-2575-server-sends-prompts-list-changed-on-subscription",  # tool test_trigger_prompt_change
    },
    "caching": {"sep-2549-tools-list-caching-hints"},
}
#: Checks of those scenarios that must have run and passed (discover, _meta, versions, headers, 404s,
#: subscriptions, cache hints of prompts/list).
REQUIRED_CHECKS_2026 = {
    "server-stateless": {
        "sep-2575-request-meta-invalid-missing-meta", "sep-2575-request-meta-invalid-missing-protocol-version",
        "sep-2575-request-meta-invalid-missing-client-capabilities", "sep-2575-http-server-meta-invalid-400",
        "sep-2575-request-meta-client-info-optional", "sep-2575-server-implements-discover",
        "sep-2575-server-identifies-in-result-meta", "sep-2575-server-declares-prompts-in-discover",
        "sep-2575-discover-capabilities-match-handlers", "sep-2575-server-unsupported-version-error",
        "sep-2575-http-server-unsupported-version-400", "sep-2575-http-server-header-mismatch-400",
        "sep-2575-http-server-method-not-found-404", "sep-2575-http-server-method-not-found-404-initialize",
        "sep-2575-server-sends-subscription-ack", "sep-2575-server-tags-subscription-id",
        "sep-2575-server-honors-notification-filter", "sep-2575-http-server-error-jsonrpc-id",
    },
    "caching": {"sep-2549-prompts-list-caching-hints", "sep-2549-resources-list-caching-hints",
                "sep-2549-resources-templates-list-caching-hints", "sep-2549-ttl-non-negative",
                "sep-2549-cache-scope-valid"},
}
_RESULTS_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def read_checks(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario name -> the checks the suite recorded for it under ``out``."""
    scenarios: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(out.glob("server-*/checks.json")):
        match = _RESULTS_DIR.match(path.parent.name)
        assert match, path
        scenarios[match["scenario"]] = json.loads(path.read_text())
    return scenarios


def check_2026_suite(selection: str, mode: str, tmp_path: Path) -> None:
    """The 0.2 alpha at 2026-07-28 (``selection`` of its scenarios) passes against the 2026 fixtures served in
    ``mode``, but for its baseline, and the checks of its mixed scenarios that do not need a tool pass."""
    options, _ = MODES[mode]
    with http_server(str(FIXTURES / "prompts"), str(FIXTURES / "prompts-2026"), *options) as url:
        result = run_suite("0.2-alpha", url, BASELINE_2026, tmp_path, options=SELECTIONS_2026[selection])
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"2026-07-28 {selection} {mode}: {_summary(output)}\n{output[-6000:]}"
    assert "Baseline check passed" in output, output[-3000:]
    for scenario in PASSING_2026:
        assert re.search(rf"✓ {re.escape(scenario)}: [1-9]\d* passed, 0 failed", output), (scenario, output[-3000:])
    scenarios = read_checks(tmp_path)
    assert set(PASSING_2026) | set(TOOL_CHECKS_2026) <= set(scenarios), sorted(scenarios)
    # Every message promptdeck sent in every scenario, tool scenarios included, matched the 2026 schema.
    wire = [check for checks in scenarios.values() for check in checks if check["id"] == "wire-schema-valid"]
    assert len(wire) >= len(PASSING_2026) + len(TOOL_CHECKS_2026)
    assert all(check["status"] == "SUCCESS" for check in wire), [c for c in wire if c["status"] != "SUCCESS"]
    for scenario, excused in TOOL_CHECKS_2026.items():
        status = {check["id"]: check["status"] for check in scenarios[scenario]}
        # A check id can repeat (one per probe); a failing repeat must not hide behind a passing one.
        failing = {c["id"]: c.get("errorMessage") for c in scenarios[scenario]
                   if c["status"] not in ("SUCCESS", "SKIPPED", "INFO")}
        assert set(failing) <= excused, (scenario, {k: v for k, v in failing.items() if k not in excused})
        missing = {name for name in REQUIRED_CHECKS_2026[scenario] if status.get(name) != "SUCCESS"}
        assert not missing, (scenario, missing)
    # resources/read with its uri in Mcp-Name, as the spec has it: an unknown URI is -32602 (not -32020).
    codes = [c["details"].get("receivedErrorCode") for c in scenarios["sep-2164-resource-not-found"]
             if c["id"] == "sep-2164-error-code"]
    assert codes == [-32602], codes
