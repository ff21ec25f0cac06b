// The editor for a new version of the open prompt's file. The server checks the text as `promptdeck check`
// would (POST /api/store/check) on "Check" and once typing stops; each problem is listed with its line, the
// line is marked in the gutter and behind the text, and choosing a problem puts the cursor on its line.
// Saving (POST /api/store/publish, write scope only) names the version the edit started from, so an edit of
// a file that moved on meanwhile is refused rather than silently undoing the newer version. The text's tests
// run with each check of a text without problems, and with each save: failing tests refuse the save unless
// "Save even though tests fail" is ticked (tests.js lays out the results).

import { $, announce, h, show, showText } from "./dom.js";
import { StoreError } from "./store.js";
import { summary, testsView } from "./tests.js";

/** Quiet time after the last keystroke before the text is checked. */
const CHECK_AFTER_MS = 600;

export class Editor {
  /** onSaved(): the history should be read again; refused(err): true when the page took a 401. */
  constructor(api, onSaved, refused) {
    this.api = api;
    this.onSaved = onSaved;
    this.refused = refused;
    this.prompt = null;
    this.base = null;
    this.timer = null;
    this.asked = 0;  // the latest check sent: an older answer arriving late is ignored
    this.bad = new Set();
    this.lines = 0;
    const text = $("editor-text");
    text.addEventListener("input", () => {
      this.layout();
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.check(), CHECK_AFTER_MS);
    });
    $("editor-check").addEventListener("click", () => this.check());
    $("editor-close").addEventListener("click", () => {
      this.close();
      $("edit-open").focus();
    });
    $("editor-save").addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
  }

  /** Open on `version` of `prompt` (its newest): its text, and the save form if the principal may write. */
  async open(prompt, version, overview) {
    try {
      const found = await this.api.get("/version", { prompt, version });
      if (typeof found.text !== "string") throw new Error(`Version ${version} is a deletion: there is no text to edit.`);
      this.prompt = prompt;
      this.base = found.version;
      $("editor-path").textContent = found.path;
      $("editor-base").textContent = `Starting from version ${found.version}. Checked as you type; nothing is ` +
        "saved until you save.";
      const text = $("editor-text");
      text.value = found.text;
      this.marks([]);
      $("editor-state").textContent = "";
      this.error("");
      $("editor-message").value = "";
      $("editor-label").value = "";
      $("editor-propose").checked = false;
      this.showTests(null);
      $("editor-skip-tests").checked = false;
      show($("editor-skip"), false);
      // Only the labels this principal may move (a protected one needs its scope too) are suggested.
      $("editor-labels").replaceChildren(...(overview?.labels || []).filter((l) => l.move)
        .map((l) => h("option", { value: l.name })));
      show($("editor-save"), Boolean(overview?.write));
      show($("editor"));
      this.layout();
      text.focus();
      text.setSelectionRange(0, 0);
      $("editor-frame").scrollTop = 0;
    } catch (err) {
      if (!this.refused(err)) {
        show($("editor"));
        this.error(err.message);
      }
    }
  }

  close() {
    clearTimeout(this.timer);
    this.asked++;
    this.prompt = null;
    show($("editor"), false);
  }

  /** Line numbers, and one band per line behind the text; the textarea grows to fit its lines. */
  layout() {
    const text = $("editor-text");
    const lines = text.value.split("\n");
    text.rows = Math.max(lines.length, 8);
    text.cols = Math.max(40, ...lines.map((line) => line.length + 2));
    if (lines.length === this.lines) return;  // same lines: numbers and marks stand
    this.lines = lines.length;
    const count = Math.max(lines.length, 8);  // as many as the textarea has rows
    const numbers = [];
    const bands = [];
    for (let n = 1; n <= count; n++) {
      const bad = this.bad.has(n);
      numbers.push(h("div", { className: bad ? "bad" : "" }, n <= lines.length ? String(n) : ""));
      bands.push(h("div", { className: bad ? "bad" : "" }));
    }
    $("editor-gutter").replaceChildren(...numbers);
    $("editor-bands").replaceChildren(...bands);
  }

  async check() {
    clearTimeout(this.timer);
    if (this.prompt === null) return null;
    const asked = ++this.asked;
    $("editor-state").textContent = "Checking…";
    try {
      const answer = await this.api.post("/check", { prompt: this.prompt, text: $("editor-text").value });
      if (asked !== this.asked) return null;
      const problems = Array.isArray(answer.problems) ? answer.problems : [];
      this.marks(problems);
      this.showTests(answer.tests);
      return problems;
    } catch (err) {
      if (asked !== this.asked) return null;
      $("editor-state").textContent = "";
      if (!this.refused(err)) this.error(err.message);
      return null;
    }
  }

  /** Show `problems`: the list (each one a button to its line), the marked lines, and a count. */
  marks(problems) {
    const text = $("editor-text");
    this.bad = new Set(problems.map((p) => Number(p.line)).filter((n) => Number.isInteger(n) && n > 0));
    this.lines = 0;  // redraw the gutter and bands with the new marks
    this.layout();
    $("editor-problems").replaceChildren(...problems.map((problem) => {
      const line = Number.isInteger(problem.line) && problem.line > 0 ? problem.line : null;
      const where = line ? `Line ${line}` : "Whole file";
      return h("li", {}, h("button", {
        type: "button", className: "problem", "data-line": line ?? "",
        onclick: () => (line ? this.goTo(line) : text.focus()),
      }, h("span", { className: "problem-line" }, `${where}:`), " ", String(problem.message ?? "")));
    }));
    show($("editor-problems"), problems.length > 0);
    text.setAttribute("aria-invalid", problems.length ? "true" : "false");
    const said = problems.length
      ? `${problems.length} problem${problems.length === 1 ? "" : "s"}`
      : this.prompt === null ? "" : "No problems found.";
    $("editor-state").textContent = said;
  }

  /** Put the cursor at the start of `line` and bring that line into view. */
  goTo(line) {
    const text = $("editor-text");
    const lines = text.value.split("\n");
    let offset = 0;
    for (let n = 1; n < line && n <= lines.length; n++) offset += lines[n - 1].length + 1;
    text.focus({ preventScroll: true });
    text.setSelectionRange(offset, offset);
    $("editor-gutter").children[line - 1]?.scrollIntoView({ block: "center", inline: "nearest" });
    announce(`Line ${line}`);
  }

  async save() {
    if (this.prompt === null) return;
    // The save checks the text too: a check asked before it (typing stopped just then) must not answer
    // after it, putting "No problems found." over what the save said.
    clearTimeout(this.timer);
    this.asked++;
    const message = $("editor-message").value.trim();
    const label = $("editor-label").value.trim();
    const button = $("editor-submit");
    button.disabled = true;
    this.error("");
    try {
      const body = { prompt: this.prompt, text: $("editor-text").value, message, base: this.base };
      if (label) body.label = label;
      if (label && $("editor-propose").checked) body.propose = true;
      if ($("editor-skip-tests").checked) body.skip_tests = true;
      const done = await this.api.post("/publish", body);
      const where = !label ? "" : done.proposal ? `; proposal ${done.proposal} proposes it for ${label}` :
        `; ${label} points at it`;
      const said = done.changed
        ? `Saved version ${done.version} of ${done.path}${where}.`
        : `Nothing saved: the text is the same as version ${done.version}.`;
      this.base = done.version;
      this.marks([]);
      $("editor-state").textContent = said;
      announce(said);
      await this.onSaved();
    } catch (err) {
      if (err instanceof StoreError && err.status === 422 && Array.isArray(err.body.problems)) {
        this.marks(err.body.problems);
        if (err.body.tests) {
          this.showTests(err.body.tests);
          show($("editor-skip"));  // the author may still save it, and the version's message will say so
        }
        this.error(err.message);
      } else if (!this.refused(err)) {
        this.error(err.message);
      }
    } finally {
      button.disabled = false;
    }
  }

  /** Show how the text's tests fared (`tests`: the server's {origin, cases, report}; null: none run). */
  showTests(tests) {
    show($("editor-tests"), Boolean(tests));
    $("editor-tests-body").replaceChildren(...(tests ? testsView(tests) : []));
    if (tests?.report) {
      $("editor-state").textContent += ` ${summary(tests.report)}.`;
      if (tests.report.passed) show($("editor-skip"), false);
    }
  }

  error(text) {
    showText($("editor-error"), text);
  }
}
