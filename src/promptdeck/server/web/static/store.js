// The versioned store's JSON API (/api/store, served beside /mcp when the server serves a store label).
// Same origin, and the same bearer token as the MCP client (mcp.js keeps it), so the page has exactly its
// principal's rights: reading needs only sight of the prompt, writing the scope the server names.

import { token } from "./mcp.js";

/** A refusal from the store API: the HTTP status, its one-sentence `error`, and the whole JSON answer. */
export class StoreError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body || {};
  }
}

// The server runs at most this many store calls at once for a principal (StoreApi.calls in
// server/web/store_api.py; /api/usage's on a store server among them) and refuses one more (429). The page's
// panels ask at the same time (versions, proposals, usage), so their calls wait their turn here instead.
const STORE_CALLS = 2;
let running = 0;
const waiting = [];

async function turn() {
  if (running < STORE_CALLS) {
    running++;
    return;
  }
  await new Promise((resolve) => waiting.push(resolve));  // the finished call hands its turn over
}

function done() {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

export class StoreApi {
  /**
   * base: the API's URL, resolved against the page (relative, so the app still works under a prefix).
   * queued: its calls take a turn among the store's (false for an API that reads no store, such as the graph).
   */
  constructor(base = "api/store", { queued = true } = {}) {
    this.base = new URL(base, document.baseURI).href;
    this.queued = queued;
  }

  get(path, query = {}) {
    const url = new URL(this.base + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, String(value));
    return this.send(url.href, { method: "GET" });
  }

  post(path, body) {
    return this.send(this.base + path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  }

  async send(url, init) {
    if (!this.queued) return this.fetch(url, init);
    await turn();
    try {
      return await this.fetch(url, init);
    } finally {
      done();
    }
  }

  async fetch(url, init) {
    const headers = { Accept: "application/json", ...(init.headers || {}) };
    const bearer = token();
    if (bearer) headers["Authorization"] = `Bearer ${bearer}`;
    let response;
    try {
      response = await fetch(url, { ...init, headers, credentials: "omit", cache: "no-store" });
    } catch (err) {
      throw new StoreError(0, `The server could not be reached (${err.message}).`);
    }
    const text = await response.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    if (!response.ok) {
      const said = body && typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
      throw new StoreError(response.status, said, body);
    }
    if (!body || typeof body !== "object") throw new StoreError(response.status, "The answer is not JSON.");
    return body;
  }
}

/** A store timestamp (seconds) as the reader's local date and time, and as a machine-readable value. */
export function when(seconds) {
  const date = new Date(Number(seconds) * 1000);
  if (Number.isNaN(date.getTime())) return { text: "", iso: "" };
  return { text: date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }), iso: date.toISOString() };
}
