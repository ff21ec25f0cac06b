// A tiny MCP client for the 2026-07-28 era over Streamable HTTP: one POST per request, no session.
// Every request carries its protocol version in _meta and repeats method and name in headers, as the
// server checks (server/http_modern.py). The answer is JSON, or an SSE stream when notifications came first.

export const VERSION = "2026-07-28";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const TOKEN_KEY = "promptdeck.token";
/** Methods whose Mcp-Name header repeats a member of their params. */
const NAMED = { "prompts/get": "name" };

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

  async call(method, params = {}) {
    const id = nextId++;
    const body = {
      jsonrpc: "2.0", id, method,
      params: { ...params, _meta: { [META_VERSION]: VERSION, [META_CAPABILITIES]: {} } },
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
    let response;
    try {
      response = await fetch(this.endpoint, { method: "POST", headers, body: JSON.stringify(body),
                                              credentials: "omit", cache: "no-store" });
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
}

/** The JSON-RPC answer in a body: plain JSON, or the one among an SSE stream's events that answers `id`. */
function findAnswer(text, contentType, id) {
  if (contentType.startsWith("text/event-stream")) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (!data) continue;
      const parsed = parse(data);
      if (parsed && ("result" in parsed || "error" in parsed) && (parsed.id === id || parsed.id === null)) {
        return parsed;
      }
    }
    return null;
  }
  const parsed = parse(text);
  return parsed && typeof parsed === "object" && ("result" in parsed || "error" in parsed) ? parsed : null;
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
