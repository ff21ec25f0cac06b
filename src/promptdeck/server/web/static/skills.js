// The skills the server serves (the MCP skills extension): listed below the prompts, each opened at
// #/s/URI with its SKILL.md shown as Markdown and every file with its size and digest. A text file opens
// in place; nothing a file holds is ever parsed as HTML.

import { $, h, show } from "./dom.js";
import { McpError } from "./mcp.js";
import { renderMarkdown } from "./markdown.js";
import { when } from "./store.js";

/** Pages asked for at most, as for prompts. */
const MAX_PAGES = 10000;
/** The largest file shown in the page; a bigger one is named with its size. */
const SHOW_BYTES = 512 * 1024;

export class Skills {
  constructor(client) {
    this.client = client;
    this.skills = [];
    this.served = false;  // false until skills/list answers: a server without the extension has none
    this.loaded = false;  // true once skills/list has been asked, whatever it answered
  }

  /** Read every page of skills/list; a server that does not serve skills leaves the list empty. */
  async load() {
    const found = [];
    let cursor;
    const seen = new Set();
    try {
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await this.client.call("skills/list", cursor ? { cursor } : {});
        for (const skill of result.skills || []) {
          if (typeof skill?.uri === "string" && skill.frontmatter && typeof skill.frontmatter === "object") found.push(skill);
        }
        cursor = result.nextCursor;
        if (!cursor || seen.has(cursor)) break;
        seen.add(cursor);
      }
    } catch (err) {
      this.loaded = true;
      if (err instanceof McpError && err.code === -32601) return this;  // no skills extension here
      throw err;
    }
    this.loaded = true;
    this.skills = found;
    this.served = true;
    return this;
  }

  find(uri) {
    return this.skills.find((skill) => skill.uri === uri) || null;
  }
}

function skillName(skill) {
  const name = skill.frontmatter.name;
  return typeof name === "string" ? name : skill.uri.replace(/\/SKILL\.md$/, "").split("/").pop();
}

function files(skill) {
  return Array.isArray(skill.resources) ? skill.resources : [];
}

/** The list under the catalog: one row a skill, linking to its page. */
export function renderSkillList(skills) {
  show($("skills-list"), skills.served && skills.skills.length > 0);
  $("skills-list").dataset.loaded = String(skills.loaded);  // for whoever waits for the answer (tests)
  $("skills-count").textContent = `${skills.skills.length} skill${skills.skills.length === 1 ? "" : "s"}`;
  $("skills").replaceChildren(...skills.skills.map((skill) => h("li", { className: "result" },
    h("a", { href: `#/s/${encodeURIComponent(skill.uri)}` }, skillName(skill)),
    h("span", { className: "muted" }, ` ${files(skill).length} file${files(skill).length === 1 ? "" : "s"}`),
    h("p", { className: "description" }, String(skill.frontmatter.description || "")))));
}

function size(bytes) {
  if (typeof bytes !== "number") return "";
  if (bytes < 1024) return `${bytes} B`;
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A skill's page: its front matter, its SKILL.md, its files; `command` is how to fetch it with promptdeck;
 * `api` the store API, whose history of each file is shown when the server serves a store label. */
export async function openSkill(client, skill, command, api) {
  const name = skillName(skill);
  document.title = `${name} · skill · promptdeck`;
  $("skill-title").textContent = name;
  $("skill-uri").textContent = skill.uri;
  $("skill-description").textContent = String(skill.frontmatter.description || "");
  $("skill-fetch").textContent = command;
  const extra = Object.entries(skill.frontmatter).filter(([key]) => key !== "name" && key !== "description");
  $("skill-front").replaceChildren(...extra.map(([key, value]) => h("div", {},
    h("dt", {}, key), h("dd", {}, typeof value === "string" ? value : JSON.stringify(value)))));
  const root = skill.uri.replace(/\/SKILL\.md$/, "");
  $("skill-files").replaceChildren(...files(skill).map((file) => {
    const rel = file.uri.startsWith(`${root}/`) ? file.uri.slice(root.length + 1) : file.uri;
    const button = h("button", { type: "button", className: "link" }, rel);
    button.addEventListener("click", () => showFile(client, file, rel, api));
    return h("tr", {}, h("td", {}, button), h("td", { className: "num" }, size(file.size)),
      h("td", {}, h("code", { title: file.digest }, String(file.digest || "").slice(0, 19))));
  }));
  show($("skill-file"), false);
  showVersions(api, skill.uri, $("skill-versions"));
  const body = await readText(client, skill.uri);
  $("skill-body").replaceChildren(body === null ? h("p", { className: "muted" }, "SKILL.md could not be read.")
    : renderMarkdown(body.replace(/^---\n[\s\S]*?\n---\n/, "")));
}

async function readText(client, uri) {
  const result = await client.call("resources/read", { uri });
  const content = (result.contents || []).find((c) => c.uri === uri);
  return typeof content?.text === "string" ? content.text : null;
}

/** The versions of the file at `uri` from the store API, newest first; nothing when there is no store. */
async function showVersions(api, uri, list) {
  list.replaceChildren();
  show(list, false);
  let history;
  try {
    history = await api.get("/history", { skill: uri });
  } catch {
    return;  // no store behind this server (404), or none of it to see: no versions to show
  }
  const versions = Array.isArray(history.versions) ? history.versions : [];
  list.replaceChildren(...versions.map((v) => {
    const at = when(v.created);
    const labels = (v.labels || []).map((label) => h("span", { className: "tag" }, label));
    return h("li", {}, h("strong", {}, `v${v.version}`), " ", ...labels, " ",
      h("time", { dateTime: at.iso }, at.text), ` ${v.author || ""}: ${v.deleted ? "deleted" : v.message || ""}`);
  }));
  show(list, versions.length > 0);
}

async function showFile(client, file, rel, api) {
  showVersions(api, file.uri, $("skill-file-versions"));
  $("skill-file-title").textContent = rel;
  const box = $("skill-file-body");
  if (typeof file.size === "number" && file.size > SHOW_BYTES) {
    box.replaceChildren(h("p", { className: "muted" }, `${size(file.size)}: too big to show here.`));
  } else {
    try {
      const text = await readText(client, file.uri);
      box.replaceChildren(text === null ? h("p", { className: "muted" }, `Binary, ${size(file.size)}.`)
        : h("pre", { className: "text" }, text));
    } catch (err) {
      box.replaceChildren(h("p", { className: "error" }, err.message));
    }
  }
  show($("skill-file"));
  $("skill-file-title").focus();
}
