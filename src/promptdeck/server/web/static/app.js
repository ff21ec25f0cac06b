// The page: routes by the URL fragment (#/ the catalog, #/p/NAME a prompt), asks for a token on 401, and signs
// in from the address only by exchanging the one-time #code= that `promptdeck ui` opens it with.

import { ARGUMENTS, Catalog, CatalogView } from "./catalog.js";
import { $, announce, h, show } from "./dom.js";
import { ArgumentForm } from "./form.js";
import { Parts } from "./graph.js";
import { Proposals } from "./proposals.js";
import { Client, HttpError, McpError, setToken, token } from "./mcp.js";
import { conversationText, copy, renderMessages } from "./messages.js";
import { Skills, openSkill, renderSkillList } from "./skills.js";
import { StoreApi, StoreError } from "./store.js";
import { CatalogUsage, UsagePanel } from "./usage.js";
import { renderSnippets, snippets } from "./useit.js";
import { Versions } from "./versions.js";

const client = new Client(document.querySelector('meta[name="promptdeck-endpoint"]').content);
let catalog = null;
let skills = new Skills(client);
let view = null;
let current = null;  // {form, prompt, messages}
let stopFollowing = null;

function banner(text) {
  const el = $("banner");
  el.textContent = text || "";
  show(el, Boolean(text));
}

/** Shows an error where it belongs; true when it needs a token (the sign-in form is then shown). */
function failed(err) {
  if (err instanceof HttpError && err.status === 401) {
    login(token() ? `The token was refused: ${err.message}` : null);
    return true;
  }
  if (err instanceof HttpError && err.status === 403) {
    banner(`Refused (403): ${err.message}`);
  } else {
    banner(err instanceof McpError ? `Error ${err.code}: ${err.message}` : err.message);
  }
  return false;
}

const storeApi = new StoreApi();
const parts = new Parts();
const usage = new UsagePanel();
const catalogUsage = new CatalogUsage();
const proposals = new Proposals(storeApi);

// The open prompt's versions, when the server serves a store label. A 401 from the store API is the same
// as one from /mcp: the token is asked for again. Any other refusal is shown in the versions panel.
const versions = new Versions(storeApi, (err) => {
  if (!(err instanceof StoreError) || err.status !== 401) return false;
  return failed(new HttpError(401, err.message));
});

function login(error) {
  for (const id of ["catalog", "prompt", "skill"]) show($(id), false);
  show($("login"));
  const why = $("login-error");
  why.textContent = error || "";
  show(why, Boolean(error));
  $("token").value = "";
  $("token").focus();
}

$("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = $("token").value.trim();
  if (!value) return;
  setToken(value);
  start();
});

$("forget-token").addEventListener("click", () => {
  setToken(null);
  location.hash = "#/";
  start();
});

function start() {
  banner("");
  show($("login"), false);
  show($("forget-token"), Boolean(token()));
  stopFollowing?.();
  catalog = new Catalog(client);
  if (view) view.swap(catalog);
  else view = new CatalogView(catalog, catalogUsage);
  let first = true;
  catalog.load(() => {
    view.refresh();
    const info = client.serverInfo;
    if (info) $("server").textContent = `${info.title || info.name || ""} ${info.version || ""}`.trim();
    if (first) {
      first = false;
      route();
    }
  }).then(() => {
    stopFollowing = client.listen(changed);
    view.readUsage();  // each prompt's renders, for the sort and filter by use
    return loadSkills();
  }).catch((err) => {
    if (first) first = false;
    failed(err);
  });
}

/** The skills, read after the prompts (and again on every change), shown under them. */
async function loadSkills() {
  const fresh = await new Skills(client).load();
  skills = fresh;
  renderSkillList(fresh);
  proposals.load(true);  // a store's open proposals, under the list (none shown without a store), reviews kept open
  if (/^#\/s\//.test(location.hash)) route();
}

// The library changed (list_changed on the page's subscription): the whole list is read again, then
// swapped in at once, keeping the search, the tag and the open prompt's form where it can.
let reloading = null;
let again = false;

function changed() {
  if (reloading) {
    again = true;  // one more read once this one is done: changes may have come after its first page
    return;
  }
  const fresh = new Catalog(client);
  reloading = fresh.load(() => {}).then(() => {
    catalog = fresh;
    view.swap(fresh);
    view.refresh();
    announce(`The library changed: ${fresh.prompts.length} prompt${fresh.prompts.length === 1 ? "" : "s"}`);
    if (current) followOpenPrompt(fresh.byName.get(current.prompt.name));
    return loadSkills();
  }).catch((err) => {
    failed(err);
  }).finally(() => {
    reloading = null;
    if (again) {
      again = false;
      changed();
    }
  });
}

/** The open prompt after a change: gone (said so), its arguments changed (form built again), or kept. */
function followOpenPrompt(entry) {
  if (!entry) {
    banner(`The prompt ${current.prompt.name} was removed from the library.`);
    return;
  }
  const before = JSON.stringify([current.prompt.arguments, current.prompt._meta?.[ARGUMENTS]]);
  const after = JSON.stringify([entry.prompt.arguments, entry.prompt._meta?.[ARGUMENTS]]);
  if (before !== after) {
    openPrompt(entry);
    banner(`The prompt ${entry.prompt.name} changed; its form was built again.`);
    return;
  }
  current.prompt = entry.prompt;
  versions.refresh();  // a new version or a label move may be what changed
  parts.open(entry.prompt.name);  // what it composes may have changed too
  $("prompt-title").textContent = entry.title;
  $("prompt-description").textContent = entry.prompt.description || "";
  $("prompt-tags").replaceChildren(...entry.tags.map((tag) => h("span", { className: "tag" }, tag)));
}

async function route() {
  if (!$("login").hidden) return;
  const asked = location.hash;
  const skillAt = /^#\/s\/(.+)$/.exec(location.hash);
  if (skillAt) {
    openSkillPage(decodeURIComponent(skillAt[1]));
    return;
  }
  show($("skill"), false);
  const match = /^#\/p\/(.+)$/.exec(location.hash);
  if (!match) {
    show($("prompt"), false);
    show($("catalog"));
    document.title = "Prompts · promptdeck";
    if (current) {
      view.readUsage();  // renders made since it was read
      // Back from a prompt: to its row in the list, so keyboard users keep their place.
      const hash = `#/p/${encodeURIComponent(current.prompt.name)}`;
      const link = [...$("results").querySelectorAll("a")].find((a) => a.hash === hash);
      (link || $("search")).focus();
      current = null;
    }
    return;
  }
  const name = decodeURIComponent(match[1]);
  show($("catalog"), false);
  const entry = await catalog.find(name);
  // The rest of a large catalog may take a while: the user may have gone elsewhere meanwhile, and that route wins.
  if (location.hash !== asked) return;
  if (!entry) {
    show($("catalog"));
    banner(`No prompt named ${name} here (or not one you may see).`);
    return;
  }
  banner("");
  openPrompt(entry);
}

async function openSkillPage(uri) {
  show($("catalog"), false);
  show($("prompt"), false);
  const skill = skills.find(uri);
  if (!skill) {
    if (!skills.loaded) return;  // not read yet: loadSkills routes again when it is
    show($("catalog"));
    banner(`No skill ${uri} here (or not one you may see).`);
    return;
  }
  banner("");
  show($("skill"));
  const command = `promptdeck skill ${client.endpoint} ${skill.uri} --to .claude/skills`;
  try {
    await openSkill(client, skill, command, storeApi);
  } catch (err) {
    failed(err);
  }
  $("skill-title").focus();
}

function openPrompt(entry) {
  const { prompt, tags } = entry;
  document.title = `${entry.title} · promptdeck`;
  $("prompt-title").textContent = entry.title;
  $("prompt-name").textContent = prompt.name;
  $("prompt-tags").replaceChildren(...tags.map((tag) => h("span", { className: "tag" }, tag)));
  $("prompt-description").textContent = prompt.description || "";
  $("form-error").hidden = true;
  show($("output"), false);
  current = { prompt, form: new ArgumentForm(client, prompt, $("fields")), messages: [] };
  updateSnippets();
  versions.open(prompt.name);
  parts.open(prompt.name);
  usage.open(prompt.name);
  show($("prompt"));
  $("prompt-title").tabIndex = -1;
  $("prompt-title").focus();
}

$("prompt-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!current) return;
  const { form, prompt } = current;
  form.clearErrors();
  const top = $("form-error");
  top.hidden = true;
  const button = $("render");
  button.disabled = true;
  try {
    const result = await client.call("prompts/get", { name: prompt.name, arguments: form.values() });
    current.messages = Array.isArray(result.messages) ? result.messages : [];
    // The result's description, when it says more than the listing's (shown above already).
    const said = result.description && result.description !== prompt.description ? result.description : "";
    $("output-description").textContent = said;
    show($("output-description"), Boolean(said));
    renderMessages(current.messages, $("messages"));
    show($("output"));
    announce(`Rendered ${current.messages.length} message${current.messages.length === 1 ? "" : "s"}`);
    usage.refresh();  // this render counted (a store's counts show once its writer has written them)
  } catch (err) {
    if (err instanceof McpError && err.code === -32602 && form.showError(err)) return;
    if (err instanceof HttpError && (err.status === 401 || err.status === 403)) {
      failed(err);
      return;
    }
    top.textContent = err instanceof McpError ? err.message : `${err.message}`;
    top.hidden = false;
  } finally {
    button.disabled = false;
  }
});

function updateSnippets() {
  if (!current) return;
  renderSnippets(snippets(current.prompt.name, current.form.values(), client.endpoint, client.serverInfo,
                          (current.prompt.arguments || []).map((arg) => arg.name)),
                 $("snippets"), copy);
}

// The snippets follow the form as it is filled in (text fields on input, selects and switches on change).
$("prompt-form").addEventListener("input", updateSnippets);
$("prompt-form").addEventListener("change", updateSnippets);

$("copy-text").addEventListener("click", () => copy(conversationText(current?.messages || []), "Conversation copied"));
$("copy-json").addEventListener("click", () =>
  copy(JSON.stringify(current?.messages || [], null, 2), "Conversation copied as JSON"));

// "/" focuses search from anywhere but a text field; on a prompt page it goes back to the catalog first.
document.addEventListener("keydown", (event) => {
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(target?.tagName) || target?.isContentEditable;
  if (typing) return;
  if ($("login").hidden === false) return;
  event.preventDefault();
  if (location.hash.startsWith("#/p/")) {
    current = null;  // no row to return to: search has the focus
    location.hash = "#/";
    show($("prompt"), false);
    show($("catalog"));  // now, not at hashchange: a hidden field cannot take the focus
  }
  $("search").focus();
  $("search").select();
});

/**
 * Exchanges the one-time code `promptdeck ui` opened this page with (#code=…) for a token, by a POST to this
 * page's own server: null once signed in, else why not. JSON, so a page of another site cannot make the
 * same request without a preflight, which the server never grants (server/signin.py).
 */
async function exchange(code) {
  let response;
  try {
    response = await fetch(new URL("signin", document.baseURI), {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ code }),
      credentials: "omit", cache: "no-store",
    });
  } catch (err) {
    return `The sign-in code could not be exchanged (${err.message}).`;
  }
  const answer = await response.json().catch(() => ({}));
  if (response.ok && typeof answer.token === "string") {
    setToken(answer.token);
    return null;
  }
  return `The sign-in link was refused (${answer.error || response.status}): sign in with the token of ` +
    "promptdeck ui, or start it again.";
}

// Signing in from the address: only with a token this page got itself, by exchanging the code. A token in
// the address (#token=…) is never taken: any site can open this page with a token of its choosing, which
// would sign the tab in as someone else. Either leaves the address at once, so it is in neither the
// history nor a copied link.
const signingIn = /^#(code|token)=/.test(location.hash) ? location.hash : null;
if (signingIn) history.replaceState(null, "", `${location.pathname}${location.search}#/`);
window.addEventListener("hashchange", () => route());
if (signingIn?.startsWith("#code=")) {
  exchange(decodeURIComponent(signingIn.slice("#code=".length))).then((refused) => {
    if (refused && !token()) {
      login(refused);
      return;
    }
    start();
    if (refused) banner(refused);
  });
} else {
  start();
}
