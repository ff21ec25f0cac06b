// The catalog: every prompt, paged in from prompts/list, searched and filtered in memory.
// Search never touches the network; the list shows at most PAGE rows more per "Show more", so a
// library of 10,000 prompts costs one string scan per keystroke and a few hundred DOM nodes. Sorting by use and
// the "not rendered in N days" filter read each prompt's usage (usage.js, CatalogUsage), asked for again when
// either is chosen.

import { $, h, show } from "./dom.js";

export const TAGS = "promptdeck.dev/tags";
export const ARGUMENTS = "promptdeck.dev/arguments";
const PAGE = 100;
/** Pages asked for at most: a server whose cursors never end must not keep the page busy forever. */
const MAX_PAGES = 10000;

export class Catalog {
  constructor(client) {
    this.client = client;
    this.prompts = [];
    this.byName = new Map();
    this.tags = new Map();
    this.complete = false;
    this.shown = PAGE;
    this.matches = [];
    this.loaded = null;
  }

  /** Read every page; `onPage` runs after each, so the first rows show before the last page arrives. */
  load(onPage) {
    this.loaded = (async () => {
      let cursor;
      const seen = new Set();
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await this.client.call("prompts/list", cursor ? { cursor } : {});
        for (const prompt of result.prompts || []) this.add(prompt);
        onPage();
        cursor = result.nextCursor;
        if (!cursor || seen.has(cursor)) break;
        seen.add(cursor);
      }
      this.complete = true;
      onPage();
    })();
    return this.loaded;
  }

  add(prompt) {
    if (typeof prompt?.name !== "string" || this.byName.has(prompt.name)) return;
    const tags = Array.isArray(prompt._meta?.[TAGS]) ? prompt._meta[TAGS].map(String) : [];
    const entry = {
      prompt, tags,
      title: prompt.title || prompt.name,
      haystack: [prompt.name, prompt.title, prompt.description, ...tags].filter(Boolean).join("\n").toLowerCase(),
    };
    this.prompts.push(entry);
    this.byName.set(prompt.name, entry);
    for (const tag of tags) this.tags.set(tag, (this.tags.get(tag) || 0) + 1);
  }

  /** The prompt named `name`, waiting for the rest of the list when it is not in yet. */
  async find(name) {
    if (!this.byName.has(name) && this.loaded) await this.loaded;
    return this.byName.get(name) || null;
  }

  /** keep(entry): a further test a row must pass; order(a, b): the rows' order (else the listing's).
   * fresh: the user chose another search, tag, sort or filter, so the list starts again at its first page. */
  filter(query, tag, keep = null, order = null, fresh = true) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    this.matches = this.prompts.filter((entry) =>
      (!tag || entry.tags.includes(tag)) && words.every((word) => entry.haystack.includes(word)) &&
      (!keep || keep(entry)));
    if (order) this.matches.sort(order);  // stable: equally used prompts keep the listing's order
    if (fresh) this.shown = PAGE;
  }
}

/** The catalog's view: search box, tag select, sort and usage filter, result list and count. */
export class CatalogView {
  /** usage: a CatalogUsage, read now and whenever the sort or the usage filter is chosen. */
  constructor(catalog, usage) {
    this.catalog = catalog;
    this.usage = usage;
    this.search = $("search");
    this.tag = $("tag");
    this.sort = $("sort");
    this.idle = $("idle");
    this.results = $("results");
    this.more = $("more");
    this.knownTags = 0;
    this.rendered = null;
    this.choice = null;  // the search, tag, sort and filter the rows were last chosen by
    let pending = false;
    // Typing fast costs one filter per frame, not one per keystroke.
    const refresh = () => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        this.update();
      });
    };
    this.search.addEventListener("input", refresh);
    this.tag.addEventListener("change", () => this.update());
    this.sort.addEventListener("change", () => this.readUsage());
    this.idle.addEventListener("change", () => this.readUsage());
    this.more.addEventListener("click", () => {
      const first = this.catalog.shown;
      this.catalog.shown += PAGE;
      this.render();
      this.results.children[first]?.querySelector("a")?.focus();
    });
  }

  /** Show another catalog (the library changed): the search and the tag chosen stay. */
  swap(catalog) {
    this.catalog = catalog;
    this.knownTags = -1;
    this.rendered = null;
  }

  /** Each prompt's usage read again, the rows shown with it (the sort and filter by use offered only then). */
  async readUsage() {
    const known = await this.usage.load();
    show($("usage-filters"), known);
    this.rendered = null;  // each row says how much it was used
    this.update();
  }

  update() {
    const usage = this.usage;
    const days = usage.loaded ? Number(this.idle.value) : 0;
    const keep = days ? (entry) => usage.idle(entry.prompt.name, days) : null;
    const order = usage.loaded && this.sort.value === "use"
      ? (a, b) => usage.renders(b.prompt.name) - usage.renders(a.prompt.name) : null;
    // A page of the listing or the usage answer arriving late must not take back the rows the user asked for
    // with "Show more" (nor the focus on them): only a choice of the user's starts the list again.
    const choice = JSON.stringify([this.search.value, this.tag.value, days, Boolean(order)]);
    this.catalog.filter(this.search.value, this.tag.value, keep, order, choice !== this.choice);
    this.choice = choice;
    this.render();
  }

  /** After a page of the listing arrives: new tags in the select, the rows filtered again. */
  refresh() {
    if (this.catalog.tags.size !== this.knownTags) {
      this.knownTags = this.catalog.tags.size;
      const chosen = this.tag.value;
      const options = [...this.catalog.tags.entries()].sort((a, b) => a[0].localeCompare(b[0]))
        .map(([tag, count]) => h("option", { value: tag }, `${tag} (${count})`));
      this.tag.replaceChildren(h("option", { value: "" }, "All tags"), ...options);
      this.tag.value = chosen;
    }
    this.update();
  }

  render() {
    const { matches, shown, prompts, complete } = this.catalog;
    const visible = matches.slice(0, shown);
    // While pages arrive the first rows rarely change: the DOM is rebuilt only when they do.
    if (visible.length !== this.rendered?.length || visible.some((entry, i) => entry !== this.rendered[i])) {
      // The row that had the focus keeps it, rebuilt (usage read again as one comes back from a prompt).
      const focused = this.results.contains(document.activeElement) ? document.activeElement.hash : null;
      this.results.replaceChildren(...visible.map((entry) => row(entry, this.usage)));
      if (focused) [...this.results.querySelectorAll("a")].find((a) => a.hash === focused)?.focus();
      this.rendered = visible;
    }
    show(this.more, matches.length > shown);
    this.more.textContent = `Show more (${matches.length - shown} left)`;
    const of = matches.length === prompts.length ? "" : ` of ${prompts.length}`;
    $("count").textContent = `${matches.length}${of} prompt${prompts.length === 1 ? "" : "s"}` +
      (complete ? "" : " (loading…)");
  }
}

/** How much a row's prompt was used, once the usage is read: its renders in 30 days, or that it had none. */
function used(usage, name) {
  if (!usage.loaded) return null;
  const renders = usage.renders(name);
  if (renders) return h("span", { className: "used" }, `${renders} render${renders === 1 ? "" : "s"} in 30 days`);
  return h("span", { className: "chip idle" }, "Not rendered in 30 days");
}

function row(entry, usage) {
  const { prompt, tags } = entry;
  const args = Array.isArray(prompt.arguments) ? prompt.arguments.length : 0;
  return h("li", { className: "result" },
    h("a", { href: `#/p/${encodeURIComponent(prompt.name)}`, className: "result-link" },
      h("span", { className: "result-title" }, entry.title),
      h("code", { className: "result-name" }, prompt.name)),
    prompt.description ? h("p", { className: "result-description" }, prompt.description) : null,
    h("p", { className: "result-meta" },
      h("span", {}, `${args} argument${args === 1 ? "" : "s"}`),
      used(usage, prompt.name),
      tags.map((tag) => h("span", { className: "tag" }, tag))));
}
