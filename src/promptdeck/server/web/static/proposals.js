// The open proposals of the store the page serves (/api/store/proposals), under the prompt list: each with its
// diff against what its label serves, its comments and approvals, and (for whoever may) comment, approve and
// reject. The server decides everything: who may see a proposal (one hiding a prompt you may not see is not
// listed), who may approve (the label's scope, not an author), and whether a merge may serve it.

import { $, announce, h, show } from "./dom.js";
import { diffTable } from "./diff.js";
import { StoreError, when } from "./store.js";

export class Proposals {
  constructor(api) {
    this.api = api;
  }

  /**
   * Read the open proposals again and show them; a server without a store (404) shows no section. With `keep`
   * (read again because the library changed, not for an action here), a review open stays open, with the
   * comment typed in it so far.
   */
  async load(keep = false) {
    let answer;
    try {
      answer = await this.api.get("/proposals");
    } catch (err) {
      show($("proposals"), false);
      if (!(err instanceof StoreError) || (err.status !== 404 && err.status !== 401)) console.warn(err);
      return;
    }
    const list = Array.isArray(answer.proposals) ? answer.proposals : [];
    const open = keep ? reviewing() : new Map();
    $("proposal-list").replaceChildren(...list.map((p) => this.item(p, open.get(String(p.id)))));
    $("proposals-count").textContent = `(${list.length})`;
    show($("proposals"), list.length > 0);
  }

  /** kept: the review was open before the list was read again ({comment, focused}). */
  item(p, kept = null) {
    const needed = Number(p.approvals?.needed) || 0;
    const by = Array.isArray(p.approvals?.by) ? p.approvals.by : [];
    const details = h("div", { className: "proposal-details", hidden: true });
    const toggle = h("button", { type: "button", className: "review", "aria-expanded": "false",
      onclick: () => this.toggle(p.id, details, toggle) }, `Review proposal ${p.id}`);
    if (kept) this.toggle(p.id, details, toggle, kept);
    return h("li", { className: "proposal", "data-proposal": String(p.id) },
      h("p", {}, h("strong", {}, `Proposal ${p.id} for ${String(p.label)}`),
        ` by ${String(p.author)} · ${when(p.created).text} · ${p.files} file${p.files === 1 ? "" : "s"} · `,
        h("span", { className: "approvals" }, needed ? `${by.length} of ${needed} approvals` :
          `${by.length} approval${by.length === 1 ? "" : "s"}`)),
      p.message ? h("p", { className: "muted" }, String(p.message)) : null,
      toggle, details);
  }

  async toggle(id, details, toggle, kept = null) {
    const open = details.hidden;
    toggle.setAttribute("aria-expanded", String(open));
    show(details, open);
    if (open) await this.fill(id, details, kept);
  }

  async fill(id, details, kept = null) {
    let p;
    try {
      p = await this.api.get("/proposal", { id, tests: 1 });
    } catch (err) {
      details.replaceChildren(h("p", { className: "error", role: "alert" }, err.message));
      return;
    }
    const changes = (p.changes || []).map((c) => c.binary ? h("p", {}, `${c.path}: binary files differ`) :
      c.tooLarge ? h("p", {}, `${c.path}: ${c.tooLarge}`) :
        diffTable(c.deleted ? `${c.path} (deleted)` : String(c.path), c.source || [],
          c.from === null ? "not served" : `served: version ${c.from}`, `proposed: version ${c.to}`));
    const reviews = h("ol", { className: "proposal-reviews" }, (p.reviews || []).map((r) =>
      h("li", { "data-kind": String(r.kind) }, `${String(r.principal)} ${String(r.kind)}`,
        r.kind === "approve" && !r.current ? " (earlier versions)" : "",
        r.message ? `: ${String(r.message)}` : "", ` · ${when(r.created).text}`)));
    const tests = h("div", { className: "proposal-tests" }, h("h3", {}, "Tests"),
      testsOf(p.tests));
    const text = h("textarea", { className: "proposal-comment", rows: 2, "aria-label": `Comment on proposal ${id}`,
      value: kept?.comment ?? "" });
    const error = h("p", { className: "error", role: "alert", hidden: true });
    const act = (action) => async () => {
      show(error, false);
      try {
        await this.api.post(`/proposal/${action}`, { id, message: text.value });
      } catch (err) {
        error.textContent = err.message;
        show(error);
        return;
      }
      announce(`Proposal ${id}: ${action} done.`);
      await this.load();
    };
    const buttons = ["comment", "approve", "reject"].map((action) =>
      h("button", { type: "button", className: action, onclick: act(action) },
        action[0].toUpperCase() + action.slice(1)));
    details.replaceChildren(...changes, tests, h("h3", {}, "Reviews"), reviews, text, h("p", {}, buttons), error);
    if (kept?.focused && document.activeElement === document.body) text.focus();  // unless the user moved on
  }
}

/** The reviews open in the list, by proposal id: the comment typed in each so far, and whether it has the focus. */
function reviewing() {
  const open = new Map();
  for (const item of $("proposal-list").children) {
    const details = item.querySelector(".proposal-details");
    if (!details || details.hidden) continue;
    const text = details.querySelector(".proposal-comment");
    open.set(item.dataset.proposal, { comment: text?.value ?? "", focused: Boolean(text) && text === document.activeElement });
  }
  return open;
}

/** The server's word on the merge's tests: not run (and why), none, or a summary and the first failures. */
function testsOf(tests) {
  if (!tests) return h("p", { className: "muted" }, "not run");
  if (tests.notRun) return h("p", { className: "muted" }, `not run: ${String(tests.notRun)}`);
  if (tests.summary === null) return h("p", { className: "muted" }, "none of what the merge would serve has tests");
  return h("div", {},
    h("p", { className: tests.passed ? "passed" : "error" }, String(tests.summary)),
    (tests.failures || []).length ? h("ul", {}, tests.failures.map((line) => h("li", {}, String(line)))) : null);
}
