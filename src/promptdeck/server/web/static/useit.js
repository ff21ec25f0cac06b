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

/** [{label, text, note}] for the prompt `name` at `endpoint` with `values` (strings by argument name). */
export function snippets(name, values, endpoint, info) {
  const server = keyOf(info);
  const given = Object.entries(values).filter(([, v]) => v !== "");
  const auth = token() ? " --token \"$PROMPTDECK_TOKEN\"" : "";
  const cli = [`promptdeck get${auth}`, shellWord(endpoint), shellWord(name),
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
  const words = given.map(([, v]) => v).join(" ");
  return [
    { label: "promptdeck CLI", text: cli },
    { label: "Python", text: python },
    { label: "Claude Code", text: `/mcp__${server}__${name}${words ? ` ${words}` : ""}`,
      note: `After claude mcp add --transport http ${server} ${endpoint}. Claude Code splits what follows ` +
        `the command at spaces, one word per argument in order; newer versions list it as /${server}:${name}.` },
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
    h("pre", { className: "text", tabIndex: 0, "aria-label": `${label} snippet` }, text),  // scrolls: reachable by keyboard
    note ? h("p", { className: "muted" }, note) : null)));
}
