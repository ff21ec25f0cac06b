// The playground's form, built from a prompt's typed arguments (_meta "promptdeck.dev/arguments", a JSON
// Schema), or from the plain argument list of a server that sends none. The browser does not validate
// (the form is novalidate): the server's -32602 message is the one shown, next to the field it names.

import { ARGUMENTS } from "./catalog.js";
import { h } from "./dom.js";

/** A string that may be longer than this gets a text area (unless it is a path, patterned or has examples,
 * which suggest a short value, and take suggestions from a datalist). */
const SHORT = 200;
const COMPLETE_DELAY_MS = 120;

export class ArgumentForm {
  constructor(client, prompt, container) {
    this.client = client;
    this.prompt = prompt;
    this.fields = new Map();
    this.asked = new Map();
    const schema = prompt._meta?.[ARGUMENTS];
    const properties = schema && typeof schema.properties === "object" ? schema.properties : {};
    const listed = Array.isArray(prompt.arguments) ? prompt.arguments : [];
    container.replaceChildren(...listed.filter((a) => typeof a?.name === "string")
      .map((arg) => this.field(arg, properties[arg.name] || {})));
    if (!listed.length) container.append(h("p", { className: "muted" }, "This prompt takes no arguments."));
  }

  field(arg, schema) {
    const id = `arg-${this.fields.size}`;
    const required = arg.required === true;
    const kind = schema.type || "string";
    const hasDefault = "default" in schema;
    let control;
    let completes = false;
    if (Array.isArray(schema.enum)) {
      const options = schema.enum.map((v) => h("option", { value: String(v) }, String(v)));
      if (!required && !hasDefault) options.unshift(h("option", { value: "" }, "(not given)"));
      control = h("select", { id }, options);
      if (hasDefault) control.value = String(schema.default);
    } else if (kind === "boolean") {
      control = h("input", { id, type: "checkbox", role: "switch", className: "switch",
                             checked: hasDefault && schema.default === true });
    } else if (kind === "integer" || kind === "number") {
      control = h("input", { id, type: "number", inputMode: kind === "integer" ? "numeric" : "decimal",
                             step: kind === "integer" ? "1" : "any" });
      if (typeof schema.minimum === "number") control.min = String(schema.minimum);
      if (typeof schema.maximum === "number") control.max = String(schema.maximum);
      completes = true;
    } else if (schema.format === "path" || schema.pattern || Array.isArray(schema.examples) ||
               (schema.maxLength ?? Infinity) <= SHORT) {
      control = h("input", { id, type: "text", spellcheck: false, autocomplete: "off" });
      if (typeof schema.maxLength === "number") control.maxLength = schema.maxLength;
      completes = true;
    } else {
      control = h("textarea", { id, rows: 4, spellcheck: false });
    }
    if (hasDefault && control.type !== "checkbox" && control.tagName !== "SELECT") {
      control.value = String(schema.default);
    }
    control.name = arg.name;
    if (required) control.setAttribute("aria-required", "true");
    const help = schema.description || arg.description;
    const errorId = `${id}-error`;
    const helpId = `${id}-help`;
    control.setAttribute("aria-describedby", help ? `${helpId} ${errorId}` : errorId);
    let list = null;
    if (completes) {
      list = h("datalist", { id: `${id}-list` });
      control.setAttribute("list", list.id);
      const ask = debounce(() => this.complete(arg.name, control, list), COMPLETE_DELAY_MS);
      control.addEventListener("focus", ask);
      control.addEventListener("input", ask);
    }
    const error = h("p", { id: errorId, className: "error field-error", hidden: true });
    const label = h("label", { for: id },
      arg.title || arg.name,
      arg.title ? h("code", { className: "arg-name" }, arg.name) : null,
      required ? h("span", { className: "required", title: "required" }, " (required)") : null);
    const wrapper = h("div", { className: `field${control.type === "checkbox" ? " check" : ""}` },
      label, control, list,
      help ? h("p", { id: helpId, className: "hint" }, help) : null,
      error);
    this.fields.set(arg.name, { control, error, required, hasDefault, wrapper });
    return wrapper;
  }

  /** The arguments as the wire carries them: strings, left out when empty. */
  values(except) {
    const out = {};
    for (const [name, { control, hasDefault, required }] of this.fields) {
      if (name === except) continue;
      if (control.type === "checkbox") {
        // An optional switch without a default is "not given" until switched on: a template may test
        // whether it is defined at all.
        if (control.checked || hasDefault || required) out[name] = control.checked ? "true" : "false";
      } else if (control.value !== "") {
        out[name] = control.value;
      }
    }
    return out;
  }

  /** Ask completion/complete for `name`, with the other filled arguments as context; newest answer wins. */
  async complete(name, control, list) {
    const turn = (this.asked.get(name) || 0) + 1;
    this.asked.set(name, turn);
    let values = [];
    try {
      const result = await this.client.call("completion/complete", {
        ref: { type: "ref/prompt", name: this.prompt.name },
        argument: { name, value: control.value },
        context: { arguments: this.values(name) },
      });
      values = Array.isArray(result?.completion?.values) ? result.completion.values : [];
    } catch {
      values = [];  // suggestions are a help, never an obstacle: a failure shows none
    }
    if (this.asked.get(name) !== turn) return;
    list.replaceChildren(...values.slice(0, 100).map((v) => h("option", { value: String(v) })));
  }

  clearErrors() {
    for (const { control, error } of this.fields.values()) {
      error.hidden = true;
      error.textContent = "";
      control.removeAttribute("aria-invalid");
    }
  }

  /** Show an error next to the field(s) it names; false when it names none here. */
  showError(err) {
    const data = err.data && typeof err.data === "object" ? err.data : {};
    const named = [];
    if (typeof data.argument === "string") named.push(data.argument);
    if (Array.isArray(data.missing)) named.push(...data.missing.filter((n) => typeof n === "string"));
    const fields = named.map((n) => this.fields.get(n)).filter(Boolean);
    if (!fields.length) return false;
    for (const { control, error } of fields) {
      error.textContent = err.message;
      error.hidden = false;
      control.setAttribute("aria-invalid", "true");
    }
    fields[0].control.focus();
    return true;
  }
}

function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}
