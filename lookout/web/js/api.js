// The one way to the daemon: fetch with the token (kept in session storage) and WebSockets.
const TOKEN_KEY = "lookout-token";
export const AGENT = "web-ui";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let onUnauthorized = () => {};

export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

async function request(method, path, body) {
  const headers = { Authorization: `Bearer ${token() ?? ""}`, "X-Lookout-Agent": AGENT };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError(0, `lookout does not answer (${error.message})`);
  }
  if (response.status === 401) {
    onUnauthorized("The token was refused: sign in again.");
  }
  if (!response.ok) {
    let message = response.statusText;
    try {
      message = (await response.json()).error.message;
    } catch {
      // not a JSON error body: keep the status text
    }
    throw new ApiError(response.status, message);
  }
  return response;
}

/** The JSON (or text) answer of a request; an error answer throws ApiError with the daemon's message. */
export async function api(method, path, body) {
  const response = await request(method, path, body);
  const type = response.headers.get("content-type") ?? "";
  return type.includes("json") ? response.json() : response.text();
}

/** An image (or any file) the daemon serves, as an object URL an <img> can show. */
export async function objectUrl(path) {
  const response = await request("GET", path);
  return URL.createObjectURL(await response.blob());
}

/** The token as a WebSocket subprotocol: unpadded base64url of its UTF-8 bytes (any token fits the header). */
function bearerProtocol() {
  const bytes = new TextEncoder().encode(token() ?? "");
  const base64 = btoa(String.fromCharCode(...bytes));
  return `lookout.bearer.${base64.replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "")}`;
}

/** A WebSocket to the daemon. Browsers cannot set its headers, so the token goes in a subprotocol the daemon
 * reads and never echoes (it accepts "lookout"): never in the URL, where logs and history would keep it. */
export function socket(path, params = {}) {
  const url = new URL(path, location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  for (const [key, value] of Object.entries({ ...params, agent: AGENT })) {
    url.searchParams.set(key, value);
  }
  return new WebSocket(url, ["lookout", bearerProtocol()]);
}
