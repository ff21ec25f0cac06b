// A side-by-side diff laid out from the rows the server made (difflib, server side): the page compares
// nothing itself. A change is marked three ways, so colour is never the only sign: a −/+ column, <del>/<ins>
// around the text (read out by screen readers), and the row's colour.

import { h } from "./dom.js";

const SIGNS = { delete: ["−", "removed"], insert: ["+", "added"] };

/** A table of `rows` ({op, left, right} or {op: "skip", count}) under `caption`, old on the left. */
export function diffTable(caption, rows, fromLabel, toLabel) {
  const body = h("tbody", {}, rows.map(row));
  return h("div", { className: "diff-box" },
    h("table", { className: "diff" },
      h("caption", {}, caption),
      h("colgroup", {}, h("col", { className: "num" }), h("col", { className: "sign" }), h("col", {}),
        h("col", { className: "num" }), h("col", { className: "sign" }), h("col", {})),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col", colSpan: 3 }, fromLabel),
        h("th", { scope: "col", colSpan: 3 }, toLabel))),
      body));
}

function row(item) {
  const op = String(item?.op ?? "");
  if (op === "skip") {
    const count = Number(item.count) || 0;
    return h("tr", { className: "row-skip", "data-op": "skip" },
      h("td", { colSpan: 6 }, `⋯ ${count} unchanged line${count === 1 ? "" : "s"}`));
  }
  const changed = op !== "equal";
  return h("tr", { className: `row-${changed ? op : "equal"}`, "data-op": op },
    side(item.left, changed ? "delete" : null), side(item.right, changed ? "insert" : null));
}

/** One side's three cells: line number, sign, text. `kind` is how a present line changed (null: it did not). */
function side(line, kind) {
  if (!Array.isArray(line)) {
    return [h("td", { className: "num" }), h("td", { className: "sign" }), h("td", { className: "code none" })];
  }
  const [number, text] = line;
  const sign = kind ? SIGNS[kind] : null;
  const content = String(text ?? "");
  const marked = kind ? ` ${kind}` : "";
  return [
    h("td", { className: `num${marked}` }, String(number ?? "")),
    h("td", { className: `sign${marked}` }, sign ? [h("span", { "aria-hidden": "true" }, sign[0]),
      h("span", { className: "visually-hidden" }, sign[1])] : null),
    h("td", { className: `code${marked}` },
      kind === "delete" ? h("del", {}, content) : kind === "insert" ? h("ins", {}, content) : content),
  ];
}

/** Whether any row is a change (so an unchanged argument schema can be said in one line). */
export function hasChanges(rows) {
  return rows.some((item) => item?.op !== "equal" && item?.op !== "skip");
}
