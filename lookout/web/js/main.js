// The UI's shell: sign-in, the resource lists kept live by WS /v1/events, and routing between views.
import { api, clearToken, setToken, socket, token, whenUnauthorized } from "./api.js";
import { el } from "./dom.js";
import { dispatch } from "./events.js";
import { showDevice, showDevices } from "./devices.js";
import { newPageForm, showPage, showPages } from "./pages.js";
import { newTerminalForm, showTerminal, showTerminals } from "./terminals.js";
import { showReplay } from "./replay.js";
import { showTimeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const main = $("main");
let events = null;
let view = null; // the current view's cleanup
let refreshDue = null;
let listTimer = null; // devices come and go without events: the lists are also refreshed now and then
const LIST_REFRESH_MS = 10000;

function showSignIn(message = "") {
  if (view) view();
  view = null;
  events?.close();
  events = null;
  clearInterval(listTimer);
  $("app").hidden = true;
  $("views").hidden = true;
  $("sign-out").hidden = true;
  $("sign-in").hidden = false;
  $("sign-in-error").textContent = message;
  $("token").focus();
}

async function signIn(candidate) {
  setToken(candidate);
  try {
    await api("GET", "/v1/terminals");
  } catch (error) {
    clearToken();
    showSignIn(error.status === 401 ? "That token is not the daemon's: check it and try again." : error.message);
    return;
  }
  $("sign-in").hidden = true;
  $("app").hidden = false;
  $("views").hidden = false;
  $("sign-out").hidden = false;
  connectEvents(0);
  clearInterval(listTimer);
  listTimer = setInterval(refreshLists, LIST_REFRESH_MS);
  route(); // at once (it loads the lists too): a view opened later is never drawn again under the user
}

function connectEvents(attempt) {
  const ws = socket("/v1/events");
  events = ws;
  ws.onopen = () => {
    $("connection").textContent = "live";
    attempt = 0;
  };
  ws.onmessage = (message) => {
    const event = JSON.parse(message.data);
    scheduleRefresh();
    dispatch(event);
  };
  ws.onclose = () => {
    if (events !== ws) return; // signed out, or replaced
    $("connection").textContent = "reconnecting…";
    setTimeout(() => events === ws && connectEvents(attempt + 1), Math.min(10000, 500 * 2 ** attempt));
  };
}

function scheduleRefresh() {
  if (refreshDue) return;
  refreshDue = setTimeout(() => {
    refreshDue = null;
    refreshLists();
  }, 250);
}

function link(href, label, state, current) {
  return el("li", {}, el("a", { href, "aria-current": current ? "page" : null },
    label, state ? el("span", { class: "state" }, state) : null));
}

async function refreshLists() {
  const here = location.hash;
  const [terminals, devices, pages] = await Promise.allSettled([
    api("GET", "/v1/terminals"), api("GET", "/v1/devices"), api("GET", "/v1/pages"),
  ]);
  const fill = (id, result, render, empty) => {
    const list = $(id);
    if (result.status === "rejected") {
      list.replaceChildren(el("li", { class: "muted" }, result.reason.message));
      return;
    }
    const items = render(result.value);
    list.replaceChildren(...(items.length ? items : [el("li", { class: "muted" }, empty)]));
  };
  fill("terminal-list", terminals, (v) => v.terminals.map((t) => link(`#/terminals/${t.id}`, t.name || t.id,
    t.status === "running" ? t.state : t.status, here === `#/terminals/${t.id}`)), "none yet");
  fill("device-list", devices, (v) => v.devices.map((d) => link(`#/devices/${encodeURIComponent(d.serial)}`,
    d.model || d.serial, d.state, here === `#/devices/${encodeURIComponent(d.serial)}`)), "no device");
  fill("page-list", pages, (v) => v.pages.map((p) => link(`#/pages/${p.id}`, p.title || p.url || p.id,
    p.closed ? "closed" : "", here === `#/pages/${p.id}`)), "none open");
}

function route() {
  if (!token()) return;
  if (view) view();
  view = null;
  const [, part = "", id] = location.hash.replace(/^#\/?/, "#/").split("/");
  const section = part || "terminals";
  for (const a of document.querySelectorAll("#views a")) {
    a.setAttribute("aria-current", a.dataset.view === section ? "page" : "false");
  }
  main.replaceChildren();
  const name = id ? decodeURIComponent(id) : null;
  const views = {
    terminals: () => (name === "new" ? newTerminalForm(main) : name ? showTerminal(main, name) : showTerminals(main)),
    devices: () => (name ? showDevice(main, name) : showDevices(main)),
    pages: () => (name === "new" ? newPageForm(main) : name ? showPage(main, name) : showPages(main)),
    timeline: () => showTimeline(main),
    replay: () => showReplay(main),
  };
  view = (views[section] ?? views.terminals)() ?? null;
  refreshLists();
}

whenUnauthorized((message) => {
  clearToken();
  showSignIn(message);
});

$("sign-in-form").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn($("token").value.trim());
});
$("sign-out").addEventListener("click", () => {
  clearToken();
  showSignIn();
});
window.addEventListener("hashchange", route);

if (token()) signIn(token());
else showSignIn();
