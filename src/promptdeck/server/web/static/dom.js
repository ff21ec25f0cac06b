// Building DOM without HTML strings: text is always set with textContent, never parsed as markup.

/** h("p", {className: "x", hidden: true}, "text", child, ...): an element with properties and children. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("aria-") || key.startsWith("data-") || key === "role" || key === "for" || key === "list") {
      el.setAttribute(key, value === true ? "" : String(value));
    } else if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else {
      el[key] = value;
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function $(id) {
  return document.getElementById(id);
}

export function show(el, visible = true) {
  el.hidden = !visible;
}

/** Put `text` in `el`, shown only when there is text to show. */
export function showText(el, text) {
  el.textContent = text;
  show(el, Boolean(text));
}

/** Announce a short message to screen readers. */
export function announce(text) {
  const status = $("status");
  status.textContent = "";
  status.textContent = text;
}

/** Copy text to the clipboard; falls back to a selection where the async API is missing (plain http). */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = h("textarea", { value: text, readOnly: true, className: "offscreen" });
  document.body.append(area);
  area.select();
  try {
    if (!document.execCommand("copy")) throw new Error("copy refused");
  } finally {
    area.remove();
  }
}
