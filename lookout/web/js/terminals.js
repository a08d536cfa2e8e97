// Terminals: the list, a new-terminal form, and a terminal's two surfaces: finished command blocks as
// frozen cards, and one live xterm.js terminal (the running block, or the prompt) that takes input.
import { Terminal } from "/ui/vendor/xterm.mjs";
import { FitAddon } from "/ui/vendor/addon-fit.mjs";
import { api, socket } from "./api.js";
import { el, exitBadge, listing, notice, seconds } from "./dom.js";
import { onEvent } from "./events.js";
import { recordingPlayer } from "./recording.js";

const POLL_MS = 1000;
const CARD_TOKENS = 2000;
const UNSENT_MAX = 1000; // messages typed before the live stream connects, kept to be sent once it does

export function showTerminals(main) {
  listing(main, "Terminals", () => api("GET", "/v1/terminals"), ({ terminals }) => (!terminals.length
    ? "No terminal yet: open one with “New terminal”."
    : el("table", {},
      el("thead", {}, el("tr", {}, ["Name", "Command", "State", "Size", "Blocks", "Held by"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, terminals.map((t) => el("tr", {},
        el("td", {}, el("a", { href: `#/terminals/${t.id}` }, t.name || t.id)),
        el("td", { class: "line" }, t.command),
        el("td", {}, t.status === "running" ? t.state : t.status),
        el("td", {}, `${t.cols}x${t.rows}`),
        el("td", {}, t.block_count),
        el("td", {}, t.lease ? `${t.lease.holder} until ${t.lease.expires_at}` : "")))))));
}

export function newTerminalForm(main) {
  const error = el("p", { class: "error", role: "alert" });
  const form = el("form", { class: "grid", "aria-labelledby": "new-terminal-title" },
    el("label", { for: "nt-command" }, "Command"),
    el("input", { id: "nt-command", name: "command", placeholder: "empty: your login shell", autocomplete: "off" }),
    el("label", { for: "nt-cwd" }, "Working directory"),
    el("input", { id: "nt-cwd", name: "cwd", placeholder: "empty: your home directory", autocomplete: "off" }),
    el("label", { for: "nt-cols" }, "Columns"),
    el("input", { id: "nt-cols", name: "cols", type: "number", min: 20, max: 500, value: 120, required: true }),
    el("label", { for: "nt-rows" }, "Rows"),
    el("input", { id: "nt-rows", name: "rows", type: "number", min: 5, max: 200, value: 32, required: true }),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Open terminal"), error));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const body = { cols: Number(data.get("cols")), rows: Number(data.get("rows")) };
    const command = data.get("command").trim();
    // one word (a program such as bash) runs as itself, with shell integration; more runs in a shell
    if (command) body.command = /^[\w./-]+$/.test(command) ? [command] : command;
    if (data.get("cwd").trim()) body.cwd = data.get("cwd").trim();
    try {
      const created = await api("POST", "/v1/terminals", body);
      location.hash = `#/terminals/${created.id}`;
    } catch (e) {
      error.textContent = e.message;
    }
  });
  main.append(el("h2", { id: "new-terminal-title" }, "New terminal"), form);
  form.querySelector("input").focus();
}

function card(block, output) {
  return el("li", { class: "card", dataset: { n: block.n } },
    el("header", {},
      el("code", {}, block.command || "(no command line)"),
      el("span", { class: "muted" }, block.cwd),
      exitBadge(block.exit_code),
      el("span", { class: "muted" }, seconds(block.duration_ms))),
    el("pre", { "aria-label": `output of block ${block.n}` }, output));
}

export function showTerminal(main, id) {
  const state = { closed: false, described: null, shown: new Set(), live: null, takeOver: false, ended: null };
  const title = el("h2", {}, id);
  const facts = el("p", { class: "facts" });
  const problem = el("div");
  const cards = el("ol", { class: "cards", "aria-label": "Finished commands" });
  const label = el("span");
  const banner = el("div", { class: "banner", role: "alert", hidden: true },
    "The program is asking for a password: what you type here goes to it, is not shown, and is not recorded.");
  const leaseText = el("span");
  const typeAnyway = el("button", { type: "button", class: "danger",
    title: "Your keys go to the program although another hand holds it; its timeline records that you took over" },
  "Type anyway (take over)");
  const leaseBanner = el("div", { class: "banner", role: "status", "aria-label": "Lease", hidden: true },
    leaseText, " ", typeAnyway);
  const host = el("div", { class: "xterm-host", "aria-label": "Live terminal" });
  const takeOver = el("button", { type: "button", class: "secondary" }, "Type in the terminal");
  const fitButton = el("button", { type: "button", class: "secondary",
    title: "Resize the program's terminal to this window (the agent's screen changes, and its timeline says so)" },
  "Fit to this window");
  const closeButton = el("button", { type: "button", class: "danger" }, "Close terminal");
  const prompt = el("form", { class: "prompt", hidden: true },
    el("label", { for: "command-line" }, "Command"),
    el("input", { id: "command-line", autocomplete: "off", spellcheck: "false" }),
    el("button", { type: "submit" }, "Run"));
  const player = recordingPlayer(id);
  main.append(title, facts, el("div", { class: "toolbar" }, takeOver, fitButton, closeButton), problem, cards,
    el("section", { class: "live", "aria-label": "Live terminal and input" }, el("div", { class: "live-label" }, label),
      leaseBanner, banner, host, prompt), player.node);

  const term = new Terminal({ cursorBlink: true, fontSize: 14, scrollback: 2000, convertEol: false,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, monospace' });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(host);
  takeOver.addEventListener("click", () => term.focus());

  let ws = null;
  const unsent = []; // typed while the stream connects: sent, in order, once it is open
  const send = (message) => {
    if (ws?.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(message));
    } else if ((!ws || ws.readyState === WebSocket.CONNECTING) && unsent.length < UNSENT_MAX) {
      unsent.push(message);
    } else {
      notice(problem, "The live stream is not connected: what you typed was not sent. Reload to reconnect.", true);
    }
  };
  // While another hand holds the terminal (a lease), keys are refused unless the person took over knowingly.
  const typed = (message) => send(state.takeOver ? { ...message, take_over: true } : message);
  const showLease = (lease) => {
    leaseBanner.hidden = !lease;
    if (!lease) {
      state.takeOver = false; // a later lease is confirmed again
      return;
    }
    const taking = state.takeOver ? "You took over: your keys go in, and the timeline records it."
      : "What you type is refused unless you take over.";
    leaseText.textContent = `Held by ${lease.holder} until ${lease.expires_at}. ${taking}`;
    typeAnyway.hidden = state.takeOver;
  };
  typeAnyway.addEventListener("click", () => {
    state.takeOver = true;
    showLease(state.described?.lease);
    term.focus();
  });
  term.onData((text) => typed({ type: "input", text }));
  // A viewer shows the PTY at the size the agent set (clipped or padded by the card): only the take-over
  // button resizes it.
  fitButton.addEventListener("click", () => {
    const size = fit.proposeDimensions();
    if (size && size.cols > 0 && size.rows > 0) send({ type: "resize", cols: size.cols, rows: size.rows });
  });

  // The program's end, from the stream's exit message or the terminal's status (whichever comes first).
  function ended(code, status = "exited") {
    if (state.ended === null) {
      state.ended = status === "exited" && code !== null && code !== undefined
        ? `The program exited (code ${code}); this is its last screen.`
        : `The terminal has ${status}; this is its last screen.`;
    }
    label.textContent = state.ended;
  }

  function connect() {
    if (state.closed) return; // the view was left while it loaded
    ws = socket(`/v1/terminals/${id}/stream`, { mode: "raw" });
    ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      for (const message of unsent.splice(0)) ws.send(JSON.stringify(message));
    };
    ws.onmessage = (message) => {
      if (state.closed) return;
      if (message.data instanceof ArrayBuffer) {
        term.write(new Uint8Array(message.data));
        return;
      }
      const event = JSON.parse(message.data);
      if (event.type === "hydrate") {
        term.reset();
        term.resize(event.cols, event.rows);
        term.write(event.data);
        if (state.described) state.described.lease = event.lease;
        showLease(event.lease);
      } else if (event.type === "resize") {
        term.resize(event.cols, event.rows);
      } else if (event.type === "exit") {
        ended(event.exit_code);
      } else if (event.type === "error") {
        notice(problem, event.error.message, true);
        if (event.error.code === "leased") describe(); // show the lease and its take-over button
      }
    };
    ws.onclose = (event) => {
      if (state.closed) return;
      if (event.code === 4404) notice(problem, event.reason || "no such terminal", true);
    };
  }

  prompt.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = prompt.querySelector("input");
    typed({ type: "input", text: input.value, keys: ["Enter"] });
    input.value = "";
    term.focus();
  });

  async function addCards() {
    let finished;
    try {
      ({ blocks: finished } = await api("GET", `/v1/terminals/${id}/blocks`));
    } catch (error) {
      notice(problem, error.message, true);
      return;
    }
    for (const block of finished) {
      if (state.shown.has(block.n)) continue;
      state.shown.add(block.n);
      const placeholder = card(block, "…");
      cards.append(placeholder);
      api("GET", `/v1/terminals/${id}/blocks/${block.n}?max_tokens=${CARD_TOKENS}`).then(
        (full) => placeholder.replaceWith(card(full, full.output.text)),
        (error) => placeholder.querySelector("pre").replaceChildren(error.message));
    }
  }

  async function describe() {
    let t;
    try {
      t = await api("GET", `/v1/terminals/${id}`);
    } catch (error) {
      notice(problem, error.message, true);
      return;
    }
    state.described = t;
    title.textContent = `${t.name || t.id}`;
    facts.replaceChildren(...[
      el("span", {}, el("code", {}, t.command)),
      el("span", {}, `cwd ${t.cwd}`),
      el("span", { "data-size": `${t.cols}x${t.rows}` }, `${t.cols}x${t.rows}`),
      el("span", { class: `badge ${t.state === "password" ? "warn" : ""}`, "data-state": t.state },
        t.status === "running" ? t.state : t.status),
      t.exit_code === null || t.exit_code === undefined ? null : exitBadge(t.exit_code),
    ].filter(Boolean));
    banner.hidden = t.state !== "password";
    showLease(t.lease);
    // An answer sent before the program's end (the stream's exit message) is stale: the end stays shown.
    const running = t.status === "running" && state.ended === null;
    closeButton.disabled = !running;
    if (!running) ended(t.exit_code, t.status);
    else if (t.block) label.textContent = `Running: ${t.block.command}`;
    else label.textContent = t.shell_integration ? `Prompt in ${t.cwd}` : "Live terminal";
    prompt.hidden = !(running && t.shell_integration && !t.block && t.state === "idle");
    prompt.querySelector("label").textContent = `${t.cwd} $`;
  }

  closeButton.addEventListener("click", async () => {
    try {
      await api("DELETE", `/v1/terminals/${id}`);
    } catch (error) {
      notice(problem, error.message, true);
    }
    describe();
  });

  const stopEvents = onEvent((event) => {
    if (event.id !== id) return;
    if (event.type === "terminal.block_ended") addCards();
    describe();
  });
  const timer = setInterval(describe, POLL_MS);
  describe().then(addCards).then(connect);

  return () => {
    state.closed = true;
    clearInterval(timer);
    stopEvents();
    ws?.close();
    term.dispose();
    player.dispose();
  };
}
