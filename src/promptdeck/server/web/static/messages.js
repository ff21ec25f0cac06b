// Rendered messages as a person reads them. Prompt text is untrusted: it only ever reaches the page as
// textContent (Markdown is built into elements from markdown-it's tokens: markdown.js). Images and audio come as data: URLs of a checked media type; links only when http(s).

import { copyText, h, announce } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const MEDIA_TYPE = /^[a-z]+\/[a-z0-9.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

export function renderMessages(messages, container) {
  container.replaceChildren(...messages.map((message, index) => {
    const role = String(message?.role ?? "unknown");
    const parts = Array.isArray(message?.content) ? message.content : [message?.content];
    return h("article", { className: `message role-${role === "assistant" ? "assistant" : "user"}`,
                          "aria-labelledby": `message-${index}` },
      h("header", { className: "message-head" },
        h("h3", { id: `message-${index}` }, `${index + 1}. ${role}`),
        h("button", { type: "button", className: "small", "aria-label": `Copy message ${index + 1}`,
                      onclick: () => copy(messageText(message), `Message ${index + 1} copied`) }, "Copy")),
      parts.filter(Boolean).map(part));
  }));
}

function part(content) {
  switch (content.type) {
    case "text":
      return renderMarkdown(String(content.text ?? ""));
    case "image":
      return media("image", content, "image/", (src, type) => h("img", { src, alt: `Image (${type})` }));
    case "audio":
      return media("audio", content, "audio/", (src, type) =>
        h("audio", { controls: true, src, "aria-label": `Audio (${type})` }));
    case "resource":
      return resource(content.resource || {});
    case "resource_link":
      return h("p", { className: "link" }, "Resource link: ", link(content.uri, content.title || content.name),
        content.description ? h("span", { className: "muted" }, ` — ${content.description}`) : null);
    default:
      return h("pre", { className: "text muted" }, `[${String(content.type)} content]\n` +
        JSON.stringify(content, null, 2));
  }
}

function media(kind, content, prefix, make) {
  const type = String(content.mimeType ?? "");
  const data = String(content.data ?? "");
  if (!MEDIA_TYPE.test(type) || !type.startsWith(prefix) || !BASE64.test(data)) {
    return h("p", { className: "error" }, `This ${kind} (${type || "no media type"}) cannot be shown.`);
  }
  return h("figure", { className: "media" }, make(`data:${type};base64,${data.replace(/\s/g, "")}`, type),
    h("figcaption", { className: "muted" }, type));
}

function resource(res) {
  const caption = h("figcaption", {}, h("code", {}, String(res.uri ?? "")),
    res.mimeType ? h("span", { className: "muted" }, ` ${res.mimeType}`) : null);
  const blob = String(res.blob ?? "").replace(/\s/g, "");
  const size = Math.floor(blob.length * 3 / 4) - (blob.endsWith("==") ? 2 : blob.endsWith("=") ? 1 : 0);
  const body = typeof res.text === "string"
    ? h("pre", { className: "text" }, res.text)
    : h("p", { className: "muted" }, `Binary content, ${size} bytes`);
  return h("figure", { className: "resource" }, caption, body);
}

function link(uri, label) {
  const text = String(label || uri || "");
  let url = null;
  try {
    url = new URL(String(uri));
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return h("code", {}, String(uri ?? ""));
  }
  return h("a", { href: url.href, rel: "noopener noreferrer", target: "_blank" }, text);
}

/** One message as plain text: its parts in order, non-text parts named in brackets. */
export function messageText(message) {
  const parts = Array.isArray(message?.content) ? message.content : [message?.content];
  const body = parts.filter(Boolean).map((c) => {
    switch (c.type) {
      case "text": return String(c.text ?? "");
      case "image": case "audio": return `[${c.type} ${c.mimeType ?? ""}]`;
      case "resource": {
        const r = c.resource || {};
        return typeof r.text === "string" ? `[resource ${r.uri}]\n${r.text}` : `[resource ${r.uri}]`;
      }
      case "resource_link": return `[${c.title || c.name || c.uri}](${c.uri})`;
      default: return `[${c.type}]`;
    }
  }).join("\n\n");
  return `## ${message?.role ?? "unknown"}\n\n${body}`;
}

export function conversationText(messages) {
  return messages.map(messageText).join("\n\n");
}

export async function copy(text, done) {
  try {
    await copyText(text);
    announce(done);
  } catch (err) {
    announce(`Copying failed: ${err.message}`);
  }
}
