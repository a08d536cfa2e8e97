// Replay: an agent's run frame by frame. A scrubber over the frames (filtered by agent and resource); at each
// position every resource touched so far is drawn as the agent last saw it then (GET /v1/timeline/frames/{seq}:
// terminals as the screen the read answered, rebuilt at that offset with the layers, region and budget it asked
// for, every column scaled to the card's width, with its colours; pages as their snapshot text or screenshot;
// devices as their screenshot with the elements marked), and the frame at the position is highlighted.
// Play steps through at the recorded pace, or faster.
import { api, objectUrl } from "./api.js";
import { el, notice, time } from "./dom.js";
import { drawLayered, fitScreens } from "./layered.js";

const MAX_FRAMES = 1000;
const MAX_PAUSE_MS = 3000; // a long idle gap in the run is shortened to this when playing

function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) q.set(key, value);
  return q.toString();
}

export function showReplay(main) {
  const state = { frames: [], shown: new Map(), timer: null, closed: false, drawn: 0 };
  const filters = el("form", { class: "toolbar", "aria-label": "Replay filters" },
    el("label", { for: "rp-agent" }, "Agent"),
    el("input", { id: "rp-agent", name: "agent", placeholder: "all agents" }),
    el("label", { for: "rp-resource" }, "Resource"),
    el("input", { id: "rp-resource", name: "resource", placeholder: "terminal:t_…, page:p_…, device:…" }),
    el("button", { type: "submit" }, "Load"));
  const scrubber = el("input", { type: "range", min: 0, max: 0, value: 0, step: 1, "aria-label": "Frame" });
  const play = el("button", { type: "button" }, "Play");
  const speed = el("select", { "aria-label": "Speed" }, ["1", "2", "5", "20"].map((s) => el("option", { value: s }, `${s}×`)));
  const position = el("p", { class: "muted", role: "status" });
  const current = el("div", { class: "replay-current", "aria-label": "This frame" });
  const resources = el("div", { class: "replay-resources", "aria-label": "Resources as they were" });
  const problem = el("div");
  main.append(el("h2", {}, "Replay"), filters, problem,
    el("div", { class: "toolbar" }, scrubber, play, speed), position, current, resources);

  async function load() {
    const data = new FormData(filters);
    stop();
    try {
      const answer = await api("GET", `/v1/timeline/frames?${query({ agent: data.get("agent").trim(),
        resource: data.get("resource").trim(), limit: MAX_FRAMES, text: "true" })}`);
      state.frames = answer.frames;
    } catch (error) {
      notice(problem, error.message, true);
      return;
    }
    problem.replaceChildren();
    scrubber.max = Math.max(0, state.frames.length - 1);
    scrubber.value = scrubber.max;
    await draw(state.frames.length - 1);
  }

  /** The frame at `index` highlighted, and every resource as its last observation up to there showed it. */
  async function draw(index) {
    const ticket = ++state.drawn;
    const frame = state.frames[index];
    if (!frame) {
      position.textContent = "No frames.";
      current.replaceChildren();
      resources.replaceChildren();
      return;
    }
    position.textContent = `Frame ${index + 1} of ${state.frames.length} (#${frame.seq}, ${time(frame.ts)}, ${frame.agent})`;
    current.replaceChildren(el("div", { class: `replay-frame ${frame.kind}`, "data-seq": frame.seq },
      el("strong", {}, `${frame.kind} · ${frame.resource}`), " ", el("span", { class: "line" }, frame.line)));
    const latest = new Map();
    for (const f of state.frames.slice(0, index + 1)) {
      if (f.kind === "observation" && f.refs && (f.refs.raw_offset !== undefined || f.refs.obs_id)) latest.set(f.resource, f);
    }
    const drawn = [];
    for (const [resource, f] of latest) {
      let shown = state.shown.get(f.seq);
      if (!shown) {
        try {
          shown = (await api("GET", `/v1/timeline/frames/${f.seq}`)).observation;
        } catch (error) {
          shown = { kind: "gone", message: error.message };
        }
        state.shown.set(f.seq, shown);
      }
      if (ticket !== state.drawn || state.closed) return; // the scrubber moved on meanwhile
      drawn.push(await card(resource, f, shown, resource === frame.resource));
    }
    resources.replaceChildren(...drawn);
    fitScreens(resources); // a screen is measured in the page
  }

  async function card(resource, frame, shown, touched) {
    const box = el("section", { class: `replay-card${touched ? " touched" : ""}`, "data-resource": resource },
      el("h3", {}, `${resource} · as of frame #${frame.seq}`));
    if (!shown) return box;
    if (shown.kind === "gone") {
      box.append(el("p", { class: "error" }, shown.message));
    } else if (shown.kind === "terminal screen") {
      box.classList.add("wide");
      if (shown.incomplete) box.append(el("p", { class: "banner" }, shown.incomplete));
      box.append(drawLayered(shown.screen, `Screen of ${resource}`));
    } else if (shown.kind === "page snapshot") {
      box.append(el("pre", { class: "snapshot", "aria-label": `Snapshot of ${resource}` }, shown.text));
    } else {
      box.append(await image(shown));
    }
    return box;
  }

  async function image(shown) {
    const figure = el("figure", { class: "replay-shot" });
    try {
      const path = shown.kind === "device screenshot" ? shown.url : shown.image;
      figure.append(el("img", { src: await objectUrl(path), alt: `${shown.kind} ${shown.obs_id}` }));
    } catch (error) {
      figure.append(el("p", { class: "error" }, error.message));
    }
    for (const [i, e] of (shown.elements ?? []).entries()) {
      if (!e.center || !shown.image?.width) continue;
      figure.append(el("span", { class: "mark", title: e.text ?? e.id ?? "",
        style: `left:${(100 * e.center[0]) / shown.image.width}%;top:${(100 * e.center[1]) / shown.image.height}%` }, String(e.index ?? i)));
    }
    return figure;
  }

  function stop() {
    clearTimeout(state.timer);
    state.timer = null;
    play.textContent = "Play";
  }

  function step() {
    const index = Number(scrubber.value);
    if (index >= state.frames.length - 1) {
      stop();
      return;
    }
    const gap = (state.frames[index + 1].ts - state.frames[index].ts) * 1000;
    state.timer = setTimeout(async () => {
      scrubber.value = index + 1;
      await draw(index + 1);
      if (state.timer !== null) step();
    }, Math.min(Math.max(gap, 0), MAX_PAUSE_MS) / Number(speed.value));
  }

  play.addEventListener("click", () => {
    if (state.timer !== null) {
      stop();
      return;
    }
    if (Number(scrubber.value) >= state.frames.length - 1) scrubber.value = 0;
    play.textContent = "Pause";
    draw(Number(scrubber.value)).then(step);
  });
  scrubber.addEventListener("input", () => {
    stop();
    draw(Number(scrubber.value));
  });
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  let width = 0;
  const resized = new ResizeObserver(() => { // a new width only: fitting changes the height
    if (resources.clientWidth !== width) fitScreens(resources);
    width = resources.clientWidth;
  });
  resized.observe(resources);
  load();
  return () => {
    state.closed = true;
    stop();
    resized.disconnect();
  };
}
