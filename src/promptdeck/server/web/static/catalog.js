// The catalog: every prompt, paged in from prompts/list, searched and filtered in memory.
// Search never touches the network; the list shows at most PAGE rows more per "Show more", so a
// library of 10,000 prompts costs one string scan per keystroke and a few hundred DOM nodes.

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

  filter(query, tag) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    this.matches = this.prompts.filter((entry) =>
      (!tag || entry.tags.includes(tag)) && words.every((word) => entry.haystack.includes(word)));
    this.shown = PAGE;
  }
}

/** The catalog's view: search box, tag select, result list and count. */
export class CatalogView {
  constructor(catalog) {
    this.catalog = catalog;
    this.search = $("search");
    this.tag = $("tag");
    this.results = $("results");
    this.more = $("more");
    this.knownTags = 0;
    this.rendered = null;
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

  update() {
    this.catalog.filter(this.search.value, this.tag.value);
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
      this.results.replaceChildren(...visible.map(row));
      this.rendered = visible;
    }
    show(this.more, matches.length > shown);
    this.more.textContent = `Show more (${matches.length - shown} left)`;
    const of = matches.length === prompts.length ? "" : ` of ${prompts.length}`;
    $("count").textContent = `${matches.length}${of} prompt${prompts.length === 1 ? "" : "s"}` +
      (complete ? "" : " (loading…)");
  }
}

function row(entry) {
  const { prompt, tags } = entry;
  const args = Array.isArray(prompt.arguments) ? prompt.arguments.length : 0;
  return h("li", { className: "result" },
    h("a", { href: `#/p/${encodeURIComponent(prompt.name)}`, className: "result-link" },
      h("span", { className: "result-title" }, entry.title),
      h("code", { className: "result-name" }, prompt.name)),
    prompt.description ? h("p", { className: "result-description" }, prompt.description) : null,
    h("p", { className: "result-meta" },
      h("span", {}, `${args} argument${args === 1 ? "" : "s"}`),
      tags.map((tag) => h("span", { className: "tag" }, tag))));
}
