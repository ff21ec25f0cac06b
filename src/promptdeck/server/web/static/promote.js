// Promoting a label (POST /api/store/promote): point one label at what another holds, every file of it or
// only the open prompt, after a confirmation that says what will happen. Offered only to a principal the
// overview says may move the target label (the write scope, and a protected label's scope); the server holds
// every move to the same rules anyway, and its refusal (a scope, failing tests) is shown as it says it.

import { $, announce, h, show, showText } from "./dom.js";
import { StoreError } from "./store.js";

export class Promotion {
  /** api: a StoreApi; refused(err): the page's handling of a 401; done(): read the label and history again. */
  constructor(api, refused, done) {
    this.api = api;
    this.refused = refused;
    this.done = done;
    this.prompt = null;
    this.overview = null;
    this.pending = null;  // the promotion asked about, until confirmed or cancelled
    $("promote-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.ask();
    });
    $("promote-yes").addEventListener("click", () => this.promote());
    $("promote-no").addEventListener("click", () => this.cancel());
  }

  /** Offer promotions with `overview` (GET /api/store) for the open prompt `prompt`, keeping the choices made. */
  render(overview, prompt) {
    if (prompt !== this.prompt) {
      this.cancel();
      showText($("promote-done"), "");
      show($("promote-list"), false);
      $("promote-only").checked = false;
    }
    this.overview = overview;
    this.prompt = prompt;
    const labels = Array.isArray(overview.labels) ? overview.labels : [];
    const movable = labels.filter((l) => l.move);
    show($("promote-label"), Boolean(overview.write && labels.length > 1 && movable.length));
    if (!movable.length) return;
    const target = $("promote-target");
    const source = $("promote-source");
    const kept = [source.value, target.value];
    target.replaceChildren(...movable.map((l) => h("option", { value: l.name }, l.name)));
    source.replaceChildren(...labels.map((l) => h("option", { value: l.name }, `${l.name} (position ${l.position})`)));
    const has = (select, name) => [...select.options].some((o) => o.value === name);
    // By default the served label takes what another label holds (staging into production, say). Choices made
    // stay as made, even two the same (ask says so): this runs again on every change to the library.
    const keepTarget = has(target, kept[1]);
    target.value = keepTarget ? kept[1] : has(target, overview.label) ? overview.label : movable[0].name;
    source.value = has(source, kept[0]) && (keepTarget || kept[0] !== target.value)
      ? kept[0] : (labels.find((l) => l.name !== target.value) || labels[0]).name;
    $("promote-prompt").textContent = prompt;
  }

  /** What the form asks for, as words to confirm; nothing is sent yet. */
  ask() {
    const source = $("promote-source").value;
    const label = $("promote-target").value;
    showText($("promote-error"), "");
    if (!source || !label) return;
    if (source === label) {
      showText($("promote-error"), "Choose two different labels: a label already holds what it holds.");
      return;
    }
    const only = $("promote-only").checked ? this.prompt : null;
    this.pending = { source, label, prompts: only ? [only] : [], message: $("promote-message").value };
    $("promote-question").textContent = only
      ? `Point ${label}'s ${only} at the version ${source} holds? ${label}'s other prompts stay as they are.`
      : `Point ${label} at what ${source} holds? Every file of ${label} becomes ${source}'s, in one move; ` +
        `files ${source} does not have leave ${label}.`;
    show($("promote-confirm"));
    $("promote-yes").focus();
  }

  cancel() {
    this.pending = null;
    show($("promote-confirm"), false);
  }

  async promote() {
    const call = this.pending;
    if (!call) return;
    this.cancel();
    const button = $("promote-ask");
    button.disabled = true;
    showText($("promote-done"), "");
    try {
      const done = await this.api.post("/promote", call);
      const changes = Array.isArray(done.changes) ? done.changes : [];
      const count = changes.length + (Number(done.more) || 0);
      const what = call.prompts.length ? `${call.prompts[0]} as ${done.source} holds it` : `what ${done.source} holds`;
      const said = done.moved
        ? `${done.label} now holds ${what}: position ${done.position}, ${count} file${count === 1 ? "" : "s"} changed.`
        : `${done.label} already holds ${what}; nothing moved.`;
      showText($("promote-done"), said);
      announce(said);
      const more = Number(done.more) > 0 ? [`… and ${done.more} more`] : [];
      this.list([...changes.map((c) => `${c.path}: ${c.from == null ? `added (version ${c.to})` : c.to == null
        ? `removed (was version ${c.from})` : `version ${c.from} → ${c.to}`}`), ...more]);
      $("promote-message").value = "";
      await this.done();
    } catch (err) {
      if (this.refused(err)) return;
      showText($("promote-error"), err.message);
      // A label that requires passing tests names the failures of the prompts you may see.
      const failures = err instanceof StoreError && Array.isArray(err.body.failures) ? err.body.failures : [];
      this.list(failures.flatMap((f) => (Array.isArray(f.failures) ? f.failures : []).map(String)));
    } finally {
      button.disabled = false;
    }
  }

  list(lines) {
    $("promote-list").replaceChildren(...lines.map((line) => h("li", {}, line)));
    show($("promote-list"), lines.length > 0);
  }
}
