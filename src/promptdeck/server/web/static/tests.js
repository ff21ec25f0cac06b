// A prompt's tests (promptfoo's vocabulary: docs/prompt-files.md, "Tests") and how they fared: for the served
// version in the versions panel (GET /api/store/tests), and for the editor's text with each check and save.
// The server runs them; this only lays out its report. Text goes in with textContent (dom.js), never as markup.

import { h } from "./dom.js";

/** A one-line summary of a report: "3 of 4 test cases pass; 1 fails". */
export function summary(report) {
  const cases = Number(report?.cases) || 0;
  const failed = Number(report?.failed) || 0;
  return `${cases - failed} of ${cases} test case${cases === 1 ? "" : "s"} pass` +
    (failed ? `; ${failed} fail${failed === 1 ? "s" : ""}` : "");
}

/** The elements that show `tests` ({origin, cases, report}): a summary, then each case with its result. A
 * reader's have no report (`notRun` says why: running them needs the write scope): the cases, each not run. */
export function testsView(tests) {
  if (!tests) return [h("p", { className: "muted" }, "This prompt has no tests.")];
  if (!tests.report) {
    return [
      h("p", { className: "tests-summary muted" }, `Not run: ${String(tests.notRun ?? "no report")}`),
      h("ol", { className: "tests", "aria-label": "Test cases" },
        (tests.cases || []).map((written, i) => caseItem(written, null, i))),
    ];
  }
  const results = (tests.report.prompts?.[0]?.cases) || [];
  const items = (tests.cases || []).map((written, i) => caseItem(written, results[i] || null, i));
  return [
    h("p", { className: tests.report.passed ? "tests-summary pass" : "tests-summary fail" }, summary(tests.report),
      h("span", { className: "muted" }, ` (from ${String(tests.origin ?? "front matter")})`)),
    h("ol", { className: "tests", "aria-label": "Test cases" }, items),
  ];
}

function caseItem(written, result, index) {
  const passed = result ? Boolean(result.passed) : null;
  const name = written.description ? String(written.description) : `Case ${index + 1}`;
  const state = passed === null ? "not run" : passed ? "pass" : "fail";
  const vars = Object.entries(written.vars || {}).map(([k, v]) => `${k}=${JSON.stringify(String(v))}`).join(" ");
  const expects = written.error
    ? [h("li", {}, `expects error ${String(written.error.code)}` +
      (written.error.message ? ` with “${String(written.error.message)}”` : ""))]
    : (result?.asserts || written.assert || []).map((a) => h("li", { className: a.passed === false ? "fail" : "" },
      h("code", {}, String(a.type)), a.value === undefined ? "" : ` ${JSON.stringify(a.value)}`,
      a.passed === false ? h("span", { className: "why" }, ` — ${String(a.message)}`) : ""));
  return h("li", { className: `test-case ${state.replace(" ", "-")}`, "data-case": index + 1 },
    h("div", { className: "test-head" },
      h("span", { className: `chip ${state.replace(" ", "-")}` }, state), " ", h("strong", {}, name),
      vars ? h("code", { className: "muted" }, ` ${vars}`) : "",
      written.message ? h("span", { className: "muted" }, ` (message ${String(written.message)})`) : ""),
    result?.problem ? h("p", { className: "why" }, String(result.problem)) : null,
    h("ul", { className: "asserts" }, expects));
}
