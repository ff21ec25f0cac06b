// "Use it from": how to get the open prompt, with the values in the form, elsewhere. Every snippet is
// built as text and shown with textContent; a token the tab holds is never written into one.

import { h } from "./dom.js";
import { token } from "./mcp.js";

/** A server's name as clients key it: what `claude mcp add NAME` and mcp.json entries would use. */
function keyOf(info) {
  const name = String(info?.name || "promptdeck").toLowerCase().replace(/[^a-z0-9_-]+/g, "-");
  return name.replace(/^-+|-+$/g, "") || "promptdeck";
}

/** A word for a POSIX shell: as is when plain, else single-quoted with ' written as '\''. */
function shellWord(text) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/** A Python string literal (JSON's escapes are Python's too, for the characters JSON escapes). */
function pyString(text) {
  return JSON.stringify(text);
}

/**
 * Claude Code's line for the prompt: it fills the arguments in order from the words typed after the command,
 * split at whitespace, and does not honour quotes (anthropics/claude-code issues 14210 and 70284; promptdeck's
 * own export to Claude Code says the same). So a value with a space in it, or an empty one before a given
 * one, cannot be typed there: then the line is the command alone, and the note says which and why.
 */
function claudeCode(server, name, values, order, endpoint) {
  const command = `/mcp__${server}__${name}`;
  const names = order.length ? order : Object.keys(values);
  const upTo = names.reduce((last, n, i) => ((values[n] ?? "") !== "" ? i : last), -1);
  const used = names.slice(0, upTo + 1);
  const blocked = used.filter((n) => !/^\S+$/.test(values[n] ?? ""));
  const added = `After claude mcp add --transport http ${server} ${endpoint}.`;
  if (!blocked.length) {
    return { text: [command, ...used.map((n) => values[n])].join(" "),
      note: `${added} Claude Code splits what follows the command at spaces, one word per argument in order; ` +
        `newer versions list it as /${server}:${name}.` };
  }
  const why = blocked.map((n) => `${n} (${values[n] ? "several words" : "empty, before a later one"})`);
  return { text: command,
    note: `${added} Claude Code splits what follows the command at spaces, one word per argument in order, ` +
      `and does not honour quotes, so ${why.join(", ")} cannot be typed after it: the promptdeck CLI or ` +
      "Python above carries such values." };
}

/**
 * [{label, text, note}] for the prompt `name` at `endpoint` with `values` (strings by argument name);
 * `order`: the prompt's argument names, as declared (Claude Code takes them by position).
 */
export function snippets(name, values, endpoint, info, order = []) {
  const server = keyOf(info);
  const given = Object.entries(values).filter(([, v]) => v !== "");
  const auth = token() ? " --token \"$PROMPTDECK_TOKEN\"" : "";
  // As every command in the docs: the venv's, from the promptdeck folder (promptdeck is not on PyPI).
  const cli = [`.venv/bin/promptdeck get${auth}`, shellWord(endpoint), shellWord(name),
    ...given.map(([k, v]) => `-a ${shellWord(`${k}=${v}`)}`)].join(" ");
  const kwargs = given.map(([k, v]) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? `${k}=${pyString(v)}` : null))
    .filter(Boolean);
  const python = [
    "import asyncio",
    ...(token() ? ["import os"] : []),
    "import promptdeck",
    "",
    "async def main() -> None:",
    `    async with promptdeck.connect(${pyString(endpoint)}` +
      `${token() ? ', token=os.environ["PROMPTDECK_TOKEN"]' : ""}) as client:`,
    `        result = await client.get_prompt(${[pyString(name), ...kwargs].join(", ")})`,
    "        for message in result.messages:",
    "            print(message.role, message.content)",
    "",
    "asyncio.run(main())",
  ].join("\n");
  return [
    { label: "promptdeck CLI", text: cli,
      note: "From the promptdeck folder, where make put the command in .venv (docs/cli.md)." },
    { label: "Python", text: python },
    { label: "Claude Code", ...claudeCode(server, name, values, order, endpoint) },
    { label: "VS Code", text: `/mcp.${server}.${name}`,
      note: `With the server in .vscode/mcp.json as "${server}": {"type": "http", "url": "${endpoint}"}; ` +
        "VS Code asks for each argument." },
    { label: "Cursor", text: JSON.stringify({ mcpServers: { [server]: { url: endpoint } } }, null, 2),
      note: "In .cursor/mcp.json; the prompt is then offered in Cursor's chat." },
  ];
}

/** The panel's content: one labelled block per client, each with a copy button. */
export function renderSnippets(list, container, copy) {
  container.replaceChildren(...list.map(({ label, text, note }) => h("div", { className: "snippet" },
    h("div", { className: "snippet-head" },
      h("h3", {}, label),
      h("button", { type: "button", onclick: () => copy(text, `${label} copied`) }, "Copy")),
    h("pre", { className: "text", tabIndex: 0, "aria-label": `${label} snippet` }, text),  // focusable: selected and read by keyboard
    note ? h("p", { className: "muted" }, note) : null)));
}
