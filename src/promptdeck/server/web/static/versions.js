// The open prompt's versions, when the server serves a label of a versioned store: its history with the
// labels on each version, a side-by-side diff of any two, and (for a principal holding the write scope)
// promoting a version to a label (the served one unless another is chosen) and rolling that label back. The
// editor is editor.js; the served version's tests and their results are tests.js.

import { diffTable, hasChanges } from "./diff.js";
import { $, announce, h, show, showText } from "./dom.js";
import { Editor } from "./editor.js";
import { Promotion } from "./promote.js";
import { StoreError, when } from "./store.js";
import { testsView } from "./tests.js";

export class Versions {
  /** api: a StoreApi; refused(err): the page's handling of a 401 (sign in again), true when it took it. */
  constructor(api, refused) {
    this.api = api;
    this.refused = refused;
    this.available = true;  // false once the server said it serves no store: not asked again
    this.name = null;
    this.overview = null;
    this.versions = [];
    this.path = "";
    this.target = null;  // the label promote and roll back act on; null: the label this page serves
    this.reading = null;
    this.again = false;
    this.editor = new Editor(api, () => this.refresh(), (err) => this.refused(err));
    this.promotion = new Promotion(api, (err) => this.refused(err), () => this.refresh());
    $("compare").addEventListener("submit", (event) => {
      event.preventDefault();
      this.compare();
    });
    $("edit-open").addEventListener("click", () => {
      const newest = this.versions.find((v) => !v.deleted);
      if (newest) this.editor.open(this.name, newest.version, this.overview);
    });
  }

  /** Show the versions of prompt `name` (kept as they are, editor included, when it is already open). */
  async open(name) {
    if (name !== this.name) {
      this.name = name;
      this.versions = [];
      show($("versions"), false);
      show($("diff"), false);
      $("versions-done").textContent = "";
      this.editor.close();
    }
    await this.refresh();
  }

  /**
   * Read the label and the history again (after a write here, or a change to the library). One read at a
   * time, and one more after it when asked meanwhile: the server allows each principal only a couple of
   * store calls at once, and a write here is followed both by this and by the library's list_changed.
   */
  refresh() {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    });
    return this.reading;
  }

  async read() {
    const name = this.name;
    if (!this.available || name === null) return;
    let step = "overview";
    try {
      // One after the other: the server runs a few store calls per principal at a time, and the editor's
      // check may be running too.
      const overview = await this.api.get("");
      step = "history";
      const history = await this.api.get("/history", { prompt: name });
      step = "tests";
      const tests = await this.api.get("/tests", { prompt: name });
      if (name !== this.name) return;  // another prompt was opened meanwhile
      show($("tests"), Boolean(tests.tests));
      $("tests-body").replaceChildren(...(tests.tests ? testsView(tests.tests) : []));
      this.overview = overview;
      this.versions = Array.isArray(history.versions) ? history.versions : [];
      this.path = history.path || "";
      this.render();
      this.error("");
    } catch (err) {
      if (name !== this.name || this.refused(err)) return;
      if (err instanceof StoreError && err.status === 404) {
        // No store here at all (not asked again), or this prompt is not from the served label.
        if (step === "overview") {
          this.available = false;
          $("versions").dataset.store = "none";  // said, for tests and the curious
        }
        show($("versions"), false);
        return;
      }
      show($("versions"));
      this.error(err.message);
    }
  }

  render() {
    const { write, writeScope, label: served } = this.overview;
    const names = (this.overview.labels || []).map((l) => l.name);
    const label = names.includes(this.target) ? this.target : served;
    $("versions-path").textContent = this.path;
    const access = $("versions-access");
    access.textContent = write ? "" : `You can read the history and check an edit. Saving a version, promoting and ` +
      `rolling back need the scope ${writeScope}.`;
    show(access, !write);
    show($("editor-save"), Boolean(write));  // the token may have changed under an open editor
    // Moves are offered only where the server says this principal may make them (a protected label needs
    // its scope as well as the write scope).
    const movable = Boolean(write && (this.overview.labels || []).find((l) => l.name === label)?.move);
    this.renderLabel(label, served, names, movable);
    this.promotion.render(this.overview, this.name);
    $("history").replaceChildren(...this.versions.map((v) => this.item(v, label, movable)));
    this.fillCompare();
    show($("versions"));
  }

  /** Where the chosen label points (the served one unless another is chosen), and where a rollback would
   * take it; with several labels, a menu to choose the one that promote and roll back act on. */
  renderLabel(label, served, names, movable) {
    const now = (this.overview.labels || []).find((l) => l.name === label);
    const box = $("label-state");
    const chooser = names.length > 1
      ? h("p", { className: "label-choice" }, h("label", { for: "label-target" }, "Label "),
        h("select", {
          id: "label-target",
          onchange: (event) => {
            this.target = event.target.value;
            this.render();
            $("label-target").focus();  // rebuilt: keep the keyboard where it was
          },
        }, names.map((name) => h("option", { value: name, selected: name === label },
          name === served ? `${name} (served here)` : name))))
      : null;
    if (!now) {
      box.replaceChildren(...[chooser, h("p", {}, `This page serves the label ${served}.`)].filter(Boolean));
      return;
    }
    const previous = now.previous;
    const where = label === served
      ? h("p", {}, "This page serves the label ", h("strong", {}, label), `, at position ${now.position}: `,
        move(now), ".")
      : h("p", {}, "The label ", h("strong", {}, label), ` is at position ${now.position}: `, move(now),
        `. This page serves ${served}, which follows only its own moves.`);
    // A protected label and this prompt's rollouts on it (the overview lists only rollouts you may see).
    const rollouts = (Array.isArray(now.rollouts) ? now.rollouts : []).filter((r) => r.path === this.path);
    box.replaceChildren(...[
      chooser,
      where,
      now.protected
        ? h("p", { id: "label-protected" }, `The label ${label} is protected: moving it needs the scope ` +
            `${now.protected.scope}.` +
            (this.overview.write && !now.move ? " You do not hold it, so you cannot move it here." : ""))
        : null,
      ...rollouts.map((r) => h("p", { className: "rollout", "data-rollout": String(r.id) },
        `Rollout ${r.id}: ${r.percent}% of the renders get version ${r.version}, the rest version ${r.base} ` +
        `(started by ${r.author}, ${when(r.created).text}).`)),
      previous
        ? h("p", { id: "rollback-what" }, `Rolling back moves the whole label to where it was before: position ` +
            `${previous.position}, `, move(previous), ".")
        : h("p", { className: "muted" }, "The label has no earlier position to roll back to."),
      movable && previous
        ? h("button", { type: "button", id: "rollback", className: "small", onclick: () => this.rollback(label) },
          `Roll back ${label}`)
        : null].filter(Boolean));
  }

  item(version, label, movable) {
    const labels = Array.isArray(version.labels) ? version.labels : [];
    const date = when(version.created);
    const promotable = movable && !version.deleted && !labels.includes(label);
    return h("li", { className: "version", "data-version": version.version },
      h("div", { className: "version-head" },
        h("strong", {}, `Version ${version.version}`),
        h("time", { dateTime: date.iso }, date.text),
        h("span", { className: "muted" }, `by ${version.author ?? "unknown"}`),
        version.git ? h("span", { className: "muted git", title: `git commit ${String(version.git.commit)}` },
          `from git ${String(version.git.commit).slice(0, 12)} on ${version.git.branch == null ? "a detached HEAD"
            : String(version.git.branch)}${version.git.dirty ? ", with uncommitted changes" : ""}`) : null,
        labels.length || version.deleted
          ? h("ul", { className: "chips", "aria-label": "Labels" },
            labels.map((name) => h("li", { className: "chip" }, String(name))),
            version.deleted ? h("li", { className: "chip deleted" }, "deleted") : null)
          : null),
      version.message
        ? h("p", { className: "version-message" }, String(version.message))
        : h("p", { className: "version-message muted" }, "No message."),
      promotable
        ? h("button", { type: "button", className: "small promote", onclick: () => this.promote(version.version, label) },
          `Promote version ${version.version} to ${label}`)
        : null);
  }

  /** The two version menus, keeping a choice that still exists; by default the newest two. */
  fillCompare() {
    const from = $("compare-from");
    const to = $("compare-to");
    const kept = [from.value, to.value];
    const options = () => this.versions.map((v) =>
      h("option", { value: String(v.version) }, `Version ${v.version}${v.deleted ? " (deleted)" : ""}` +
        `${v.labels?.length ? ` · ${v.labels.join(", ")}` : ""}`));
    from.replaceChildren(...options());
    to.replaceChildren(...options());
    const have = (value) => this.versions.some((v) => String(v.version) === value);
    from.value = have(kept[0]) ? kept[0] : String(this.versions[1]?.version ?? this.versions[0]?.version ?? "");
    to.value = have(kept[1]) ? kept[1] : String(this.versions[0]?.version ?? "");
    const enough = this.versions.length > 1;
    show($("compare"), enough);
    show($("compare-none"), !enough);
  }

  async compare() {
    const from = $("compare-from").value;
    const to = $("compare-to").value;
    if (!from || !to) return;
    try {
      const diff = await this.api.get("/diff", { prompt: this.name, from, to });
      const left = `Version ${diff.from}`;
      const right = `Version ${diff.to}`;
      $("diff-title").textContent = `${left} → ${right}`;
      showText($("diff-same"), diff.same ? "The two versions are identical." : "");
      const source = Array.isArray(diff.source) ? diff.source : [];
      const args = Array.isArray(diff.arguments) ? diff.arguments : [];
      $("diff-source").replaceChildren(diffTable(`Source: ${diff.path}`, source, left, right));
      $("diff-arguments").replaceChildren(hasChanges(args)
        ? diffTable("Argument schema", args, left, right)
        : h("p", { className: "muted" }, "The argument schema is the same in both."));
      show($("diff"));
      $("diff-title").focus();
      this.error("");
    } catch (err) {
      if (!this.refused(err)) this.error(err.message);
    }
  }

  async promote(version, label) {
    await this.write(() => this.api.post("/label", { prompt: this.name, version, label }),
      (done) => `${done.label} now points at version ${done.version} of ${done.prompt}.`);
  }

  async rollback(label) {
    await this.write(() => this.api.post("/rollback", { label }),
      (done) => `${done.label} rolled back to position ${done.position} (${done.reason}).`);
  }

  async write(call, said) {
    try {
      const done = await call();
      announce(said(done));
      $("versions-done").textContent = said(done);
      await this.refresh();
    } catch (err) {
      if (!this.refused(err)) this.error(err.message);
    }
  }

  error(text) {
    showText($("versions-error"), text);
  }
}

/** A label move as words: its reason, who made it (when the server says: not for a move of what scopes
 * hide from this principal) and when. */
function move(m) {
  const date = when(m.created);
  const who = m.author == null ? "" : ` by ${m.author}`;
  return h("span", {}, `${m.reason}${who} on `, h("time", { dateTime: date.iso }, date.text));
}
