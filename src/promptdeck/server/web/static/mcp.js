// A tiny MCP client for the 2026-07-28 era over Streamable HTTP: one POST per request, no session.
// Every request carries its protocol version in _meta and repeats method and name in headers, as the
// server checks (server/http_modern.py). The answer is JSON, or an SSE stream when notifications came first.

export const VERSION = "2026-07-28";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
// The page's renders count as this client in usage (docs/usage.md).
const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
const CLIENT_INFO = { name: "promptdeck-web", version: "1" };
const TOKEN_KEY = "promptdeck.token";
/** Methods whose Mcp-Name header repeats a member of their params. */
const NAMED = { "prompts/get": "name", "resources/read": "uri" };

/** A JSON-RPC error from the server: code, message and data as sent. */
export class McpError extends Error {
  constructor(error, status) {
    super(String(error.message ?? "error"));
    this.code = error.code;
    this.data = error.data;
    this.status = status;
  }
}

/** The server refused the request at the HTTP level (401 needs a token, 403 refused, other statuses). */
export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// Header values must be ISO-8859-1 for fetch; anything else goes base64-wrapped, as the server unwraps it.
function headerValue(text) {
  if (/^[\x20-\x7e]*$/.test(text) && text.trim() === text) return text;
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `=?base64?${btoa(binary)}?=`;
}

let nextId = 1;

export class Client {
  /** endpoint: the MCP URL, resolved against the page. */
  constructor(endpoint) {
    this.endpoint = new URL(endpoint, document.baseURI).href;
    this.serverInfo = null;
  }

  request(id, method, params) {
    const body = {
      jsonrpc: "2.0", id, method,
      params: { ...params, _meta: { [META_VERSION]: VERSION, [META_CAPABILITIES]: {}, [META_CLIENT_INFO]: CLIENT_INFO } },
    };
    const headers = {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "MCP-Protocol-Version": VERSION,
      "Mcp-Method": method,
    };
    if (NAMED[method]) headers["Mcp-Name"] = headerValue(String(params[NAMED[method]] ?? ""));
    const bearer = token();
    if (bearer) headers["Authorization"] = `Bearer ${bearer}`;
    return { method: "POST", headers, body: JSON.stringify(body), credentials: "omit", cache: "no-store" };
  }

  async call(method, params = {}) {
    const id = nextId++;
    let response;
    try {
      response = await fetch(this.endpoint, this.request(id, method, params));
    } catch (err) {
      throw new HttpError(0, `The server could not be reached (${err.message}).`);
    }
    const text = await response.text();
    const message = findAnswer(text, response.headers.get("content-type") || "", id);
    if (response.status === 401 || response.status === 403) {
      throw new HttpError(response.status, message?.error?.message || text || response.statusText);
    }
    if (!message) throw new HttpError(response.status, `HTTP ${response.status}: ${text.slice(0, 200)}`);
    if (message.error) throw new McpError(message.error, response.status);
    const info = message.result?._meta?.["io.modelcontextprotocol/serverInfo"];
    if (info) this.serverInfo = info;
    return message.result;
  }

  /**
   * Follows the prompt list: a subscriptions/listen stream, on which each list_changed calls `onChange`.
   * A stream that ends or fails is opened again after a pause that doubles up to 30 s; as changes may
   * have been missed meanwhile, `onChange` is called once the new stream is acknowledged. A 401 or 403
   * stops it (the page asks for a token and starts over). Returns a function that stops it.
   */
  listen(onChange) {
    let stopped = false;
    let controller = null;
    let pause = 1000;
    const follow = async () => {
      let reopened = false;
      while (!stopped) {
        controller = new AbortController();
        try {
          const init = this.request(nextId++, "subscriptions/listen", { notifications: { promptsListChanged: true } });
          const response = await fetch(this.endpoint, { ...init, signal: controller.signal });
          if (response.status === 401 || response.status === 403) return;
          if (response.ok && response.body) {
            for await (const message of events(response.body)) {
              if (message.method === "notifications/subscriptions/acknowledged") {
                pause = 1000;
                document.body.dataset.following = "yes";  // what tests (and curious users) can look for
                if (reopened) onChange();
              } else if (message.method === "notifications/prompts/list_changed") {
                onChange();
              }
            }
          }
        } catch {
          // A dropped connection or an abort: opened again below, unless stopped.
        }
        delete document.body.dataset.following;
        if (stopped) return;
        reopened = true;
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(pause * 2, 30000);
      }
    };
    follow();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}

/** The JSON messages of an SSE body, as they arrive. */
async function* events(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const message = eventMessage(buffer.slice(0, end));
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
      if (message) yield message;
    }
  }
}

/** The JSON-RPC answer in a body: plain JSON, or the one among an SSE stream's events that answers `id`. */
function findAnswer(text, contentType, id) {
  if (contentType.startsWith("text/event-stream")) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const parsed = eventMessage(event);
      if (parsed && ("result" in parsed || "error" in parsed) && (parsed.id === id || parsed.id === null)) {
        return parsed;
      }
    }
    return null;
  }
  const parsed = parse(text);
  return parsed && typeof parsed === "object" && ("result" in parsed || "error" in parsed) ? parsed : null;
}

/** The JSON message of one SSE event (its data lines joined), or null when it carries none. */
function eventMessage(event) {
  const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
  const message = data ? parse(data) : null;
  return message && typeof message === "object" ? message : null;
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
