// Usage (GET api/usage, server/web/usage_api.py): the open prompt's renders over time, by version and by client,
// and for the catalog each prompt's renders and when it was last rendered. The server answers with the
// principal's sight only, so nothing here needs hiding. Client names are whatever clients call themselves: they
// go in as text (dom.js), never as markup, in the tables and in the chart's titles alike.

import { $, h, show } from "./dom.js";
import { StoreApi } from "./store.js";

// SVG's namespace, as the HTML parser puts an <svg> in it (so no address is written in the page's code).
const SVG = new DOMParser().parseFromString("<svg></svg>", "text/html").body.firstChild.namespaceURI;
const HOUR = 3600;
const DAY = 24 * HOUR;
/** What the panel's "since" choice means: how many bars, each how long. */
const SPANS = { "24h": { bars: 24, hours: 1 }, "7d": { bars: 7, hours: 24 }, "30d": { bars: 30, hours: 24 } };
/** Versions get a colour each, in turn (app.css: .series-0 to .series-5). */
const COLOURS = 6;
/** The chart's drawing box (scaled to the panel's width by CSS). */
const WIDTH = 600;
const HEIGHT = 140;

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A version as the panel names it: a folder's prompts have none (0). */
function versionName(version) {
  return version ? `Version ${version}` : "Unversioned (a folder's file)";
}

/** The starts of the bars (epoch seconds), oldest first: whole hours, or the reader's local midnights. */
export function bucketStarts(span, now = Date.now() / 1000) {
  const { bars, hours } = SPANS[span];
  const starts = [];
  if (hours === 1) {
    const current = Math.floor(now / HOUR) * HOUR;
    for (let i = bars - 1; i >= 0; i--) starts.push(current - i * HOUR);
    return starts;
  }
  const midnight = new Date(now * 1000);
  midnight.setHours(0, 0, 0, 0);
  for (let i = bars - 1; i >= 0; i--) {
    const day = new Date(midnight);
    day.setDate(midnight.getDate() - i);  // a calendar day, whatever daylight saving does to its length
    starts.push(day.getTime() / 1000);
  }
  return starts;
}

function label(start, hours) {
  const date = new Date(start * 1000);
  return hours === 1
    ? date.toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString(undefined, { weekday: "short", day: "numeric", month: "short" });
}

/** Totals of `hours` rows by a key: [key, renders] from most to least rendered. */
function totalsBy(hours, key) {
  const totals = new Map();
  for (const row of hours) totals.set(key(row), (totals.get(key(row)) || 0) + Number(row.renders || 0));
  return [...totals.entries()].sort((a, b) => b[1] - a[1]);
}

function table(caption, head, rows) {
  return h("table", { className: "files usage-table" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, head.map((text, i) =>
      h("th", { scope: "col", className: i === head.length - 1 ? "num" : "" }, text)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((cell, i) =>
      h("td", { className: i === cells.length - 1 ? "num" : "" }, cell))))));
}

/** The bar chart: a bar per hour or day, stacked by version, each bar titled with what it holds. */
function chart(entry, span, starts, versions) {
  const { hours } = SPANS[span];
  const bars = starts.map(() => new Map());
  for (const row of entry.hours) {
    let i = starts.length - 1;
    while (i > 0 && starts[i] > row.hour) i--;
    if (row.hour < starts[0]) continue;
    bars[i].set(row.version, (bars[i].get(row.version) || 0) + Number(row.renders || 0));
  }
  const highest = Math.max(1, ...bars.map((bar) => [...bar.values()].reduce((a, b) => a + b, 0)));
  const slot = WIDTH / starts.length;
  const gap = Math.min(4, slot / 5);
  const groups = bars.map((bar, i) => {
    const total = [...bar.values()].reduce((a, b) => a + b, 0);
    const parts = versions.filter((v) => bar.has(v)).map((v) => `${versionName(v)}: ${bar.get(v)}`);
    const title = `${label(starts[i], hours)}: ${plural(total, "render")}${parts.length > 1 ? ` (${parts.join(", ")})` : ""}`;
    let y = HEIGHT;
    const rects = versions.filter((v) => bar.has(v)).map((v) => {
      const tall = (bar.get(v) / highest) * (HEIGHT - 4);
      y -= tall;
      return svg("rect", { x: i * slot + gap / 2, y, width: slot - gap, height: tall,
                           class: `series-${versions.indexOf(v) % COLOURS}` });
    });
    // a column as tall as the chart behind each bar, so that its title shows wherever the bar is pointed at
    return svg("g", { class: "bar" }, svg("title", {}, title),
               svg("rect", { x: i * slot, y: 0, width: slot, height: HEIGHT, class: "hit" }), ...rects);
  });
  const picture = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: "none", class: "usage-bars",
                               role: "img", "aria-label": `Renders per ${hours === 1 ? "hour" : "day"}, highest ${highest}` },
                      svg("line", { x1: 0, x2: WIDTH, y1: HEIGHT - 0.5, y2: HEIGHT - 0.5, class: "axis" }), ...groups);
  const legend = versions.length > 1
    ? h("ul", { className: "usage-legend", "aria-label": "Colours" }, versions.map((v, i) =>
      h("li", {}, h("span", { className: `swatch series-${i % COLOURS}`, "aria-hidden": "true" }), versionName(v))))
    : null;
  // the scale's top on the left of the bars, the first and the last bar's time under them
  return [
    h("div", { className: "usage-scale" }, h("span", { className: "muted" }, `${highest}`), picture, h("span"),
      h("p", { className: "usage-axis muted" }, h("span", {}, label(starts[0], hours)),
        h("span", {}, hours === 1 ? "this hour" : "today"))),
    legend,
  ];
}

/** The open prompt's usage panel: since when (24h, 7d, 30d), a chart, and totals by version and by client. */
export class UsagePanel {
  constructor(api = new StoreApi("api/usage")) {
    this.api = api;
    this.name = null;
    this.asked = 0;  // a late answer for a prompt no longer open, or an earlier choice, is dropped
    $("usage-since").addEventListener("change", () => this.refresh());
  }

  open(name) {
    this.name = name;
    return this.refresh();
  }

  async refresh() {
    const asked = ++this.asked;
    const name = this.name;
    const span = $("usage-since").value in SPANS ? $("usage-since").value : "7d";
    const starts = bucketStarts(span);
    let found;
    try {
      found = await this.api.get("", { prompt: name, since: String(starts[0]) });
    } catch {
      if (asked === this.asked) show($("usage"), false);  // no usage to show this principal (or no server)
      return;
    }
    if (asked !== this.asked) return;
    const entry = (found.prompts || []).find((e) => e.prompt === name) || { renders: 0, last: null, hours: [] };
    this.show(entry, span, starts);
  }

  show(entry, span, starts) {
    const hours = Array.isArray(entry.hours) ? entry.hours : [];
    const versions = [...new Set(hours.map((row) => row.version))].sort((a, b) => b - a);
    const total = Number(entry.renders || 0);
    const last = entry.last ? new Date(entry.last * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) : null;
    const sinceText = $("usage-since").selectedOptions[0]?.textContent.toLowerCase() || "";
    $("usage-summary").textContent = `${plural(total, "render")} in the ${sinceText}` +
      (last ? `; last rendered in the hour from ${last}.` : "; never rendered since counting began.");
    const labels = new Map();
    for (const row of hours) {
      if (!labels.has(row.version)) labels.set(row.version, new Set());
      if (row.label) labels.get(row.version).add(row.label);
    }
    const body = total ? [
      ...chart({ hours }, span, starts, versions),
      h("div", { className: "usage-tables" },
        table("By version", ["Version", "Labels", "Renders"],
          totalsBy(hours, (row) => row.version).map(([v, n]) =>
            [versionName(v), [...(labels.get(v) || [])].join(", ") || "—", String(n)])),
        table("By client", ["Client", "Renders"],
          totalsBy(hours, (row) => String(row.client)).map(([client, n]) => [client, String(n)]))),
    ] : [];
    $("usage-body").replaceChildren(...body.filter(Boolean));  // no legend for one version
    show($("usage"));
  }
}

/** Each prompt's renders in the last 30 days and the last hour it was rendered in, for the catalog. */
export class CatalogUsage {
  constructor(api = new StoreApi("api/usage")) {
    this.api = api;
    this.byName = new Map();
    this.loaded = false;
  }

  /** Read it again; false when the server would not say (the catalog then offers no sort or filter by use). */
  async load() {
    try {
      const found = await this.api.get("", { since: "30d" });
      this.byName = new Map((found.prompts || []).map((entry) => [entry.prompt, entry]));
      this.loaded = true;
    } catch {
      this.loaded = false;
    }
    return this.loaded;
  }

  renders(name) {
    return Number(this.byName.get(name)?.renders || 0);
  }

  /** Whether `name` was not rendered in the last `days` days (a prompt never rendered never was). */
  idle(name, days, now = Date.now() / 1000) {
    const last = this.byName.get(name)?.last;
    return !last || last + HOUR <= now - days * DAY;
  }
}
