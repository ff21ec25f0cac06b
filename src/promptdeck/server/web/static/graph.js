// The open prompt's place in the composition graph (GET api/graph?prompt=NAME, server/web/graph_api.py): the
// partials and files it uses, the prompts it composes, and the prompts that compose it. The server answers
// with the principal's sight only, so nothing here needs hiding; a prompt named links to its own page.

import { $, h, show } from "./dom.js";
import { StoreApi } from "./store.js";

function promptLink(name) {
  return h("a", { href: `#/p/${encodeURIComponent(name)}` }, name);
}

function row(label, items) {
  if (!items.length) return null;
  return h("li", {}, `${label} `, ...items.flatMap((item, i) => (i ? [", ", item] : [item])));
}

export class Parts {
  constructor(api = new StoreApi("api/graph", { queued: false })) {
    this.api = api;
    this.asked = 0;  // a late answer for a prompt no longer open is dropped
  }

  /** Shows `name`'s parts and users; the section stays hidden when it has none, or the server has no graph. */
  async open(name) {
    const asked = ++this.asked;
    const section = $("parts");
    let found;
    try {
      found = await this.api.get("", { prompt: name });
    } catch {
      if (asked === this.asked) show(section, false);
      return;
    }
    if (asked !== this.asked) return;
    const uses = found.uses || {};
    const prompts = (uses.prompts || []).map(promptLink);
    const files = (uses.files || []).map((path) => h("code", {}, path));
    const users = (found.usedBy || []).map(promptLink);  // null (unknown) shows as a note below
    const further = (found.affects || []).filter((n) => !(found.usedBy || []).includes(n)).map(promptLink);
    const rows = [
      row("Composes", prompts),
      row("Includes or reads", files),
      uses.dynamic ? h("li", {}, "Also parts named by an expression, known only when it renders") : null,
      row("Used by", users),
      row("Through those, a change here also reaches", further),
      // null: the library is too large for the server to ask every prompt (graph_api.MAX_GRAPH_PROMPTS)
      found.usedBy === null ? h("li", { className: "muted" }, "What uses it is not worked out for a library this large") : null,
    ].filter(Boolean);
    $("parts-list").replaceChildren(...rows);
    show(section, rows.length > 0);
  }
}
