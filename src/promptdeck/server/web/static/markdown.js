// Message text as Markdown, without ever parsing prompt text as HTML. markdown-it (vendored, MIT,
// markdown-it.min.js: loaded as a classic script before the app) turns the text into tokens, with raw
// HTML off so that any markup stays text; the DOM is built here from those tokens, every string through
// textContent, and a link only when it is http(s). The copy buttons still copy the text as written.

import { h } from "./dom.js";

let parser = null;

function markdown() {
  // html: false: tags in a prompt are text. linkify off: only links the author wrote become links.
  parser ??= window.markdownit({ html: false, linkify: false, typographer: false });
  return parser;
}

/** Opening token type -> element made for it (closing tokens end it). */
const BLOCKS = {
  paragraph_open: "p", bullet_list_open: "ul", ordered_list_open: "ol", list_item_open: "li",
  blockquote_open: "blockquote", table_open: "table", thead_open: "thead", tbody_open: "tbody",
  tr_open: "tr", th_open: "th", td_open: "td", strong_open: "strong", em_open: "em", s_open: "s",
};

/** A <div class="markdown"> for `text`; falls back to a plain block when markdown-it is not there. */
export function renderMarkdown(text) {
  if (typeof window.markdownit !== "function") return h("pre", { className: "text" }, text);
  const root = h("div", { className: "markdown text" });
  build(markdown().parse(text, {}), root);
  return root;
}

function build(tokens, root) {
  const stack = [root];
  const top = () => stack[stack.length - 1];
  for (const token of tokens) {
    const { type } = token;
    if (token.hidden) continue;  // a tight list's paragraphs: their text goes straight into the item
    if (type === "inline") {
      build(token.children || [], top());
    } else if (BLOCKS[type]) {
      const el = h(BLOCKS[type]);
      if (type === "ordered_list_open" && token.attrGet("start")) el.start = Number(token.attrGet("start"));
      top().append(el);
      stack.push(el);
    } else if (type === "heading_open") {
      // Headings in a message sit below the message's own header (an h3): h4 to h6.
      const el = h(`h${Math.min(6, 3 + Number(token.tag.slice(1)))}`);
      top().append(el);
      stack.push(el);
    } else if (type === "link_open") {
      const el = safeLink(token.attrGet("href"));
      top().append(el);
      stack.push(el);
    } else if (type.endsWith("_close")) {
      if (stack.length > 1) stack.pop();
    } else if (type === "text") {
      top().append(document.createTextNode(token.content));
    } else if (type === "code_inline") {
      top().append(h("code", {}, token.content));
    } else if (type === "fence" || type === "code_block") {
      top().append(h("pre", { className: "code" }, h("code", {}, token.content)));
    } else if (type === "softbreak") {
      top().append(document.createTextNode("\n"));
    } else if (type === "hardbreak") {
      top().append(h("br"));
    } else if (type === "hr") {
      top().append(h("hr"));
    } else if (type === "image") {
      // No remote images from prompt text: its alt text and address, as text.
      top().append(document.createTextNode(`[image: ${token.content || ""} ${token.attrGet("src") || ""}]`));
    } else if (token.content) {
      top().append(document.createTextNode(token.content));
    }
  }
}

/** An absolute http(s) link as a link; anything else (relative, javascript:, data:) as plain text. */
function safeLink(href) {
  let url = null;
  try {
    url = new URL(String(href ?? ""));  // no base: a relative address does not parse, and stays text
  } catch {
    url = null;
  }
  if (url && (url.protocol === "http:" || url.protocol === "https:")) {
    return h("a", { href: url.href, rel: "noopener noreferrer", target: "_blank" });
  }
  return h("span", { className: "link-text" });
}
