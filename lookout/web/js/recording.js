// A terminal's recording (GET /v1/terminals/{id}/recording: asciicast v3 derived from the journal), played in
// its own xterm.js: seek anywhere with the slider (the output up to that moment is written again from the
// start), play and pause at the recorded pace, or faster.
import { Terminal } from "/ui/vendor/xterm.mjs";
import { api } from "./api.js";
import { el, notice } from "./dom.js";

const TICK_MS = 50;

/** {time, code, data} of every event, with times from the start (v3 stores the gap since the last one). */
function parse(text) {
  const [head, ...lines] = text.split("\n").filter((line) => line.trim());
  const header = JSON.parse(head);
  let at = 0;
  const events = lines.map((line) => {
    const [gap, code, data] = JSON.parse(line);
    at += gap;
    return { time: at, code, data };
  });
  return { header, events, duration: at };
}

export function recordingPlayer(id) {
  const state = { recording: null, term: null, timer: null, at: 0 };
  const load = el("button", { type: "button", class: "secondary" }, "Load the recording");
  const slider = el("input", { type: "range", min: 0, max: 0, step: 0.01, value: 0, "aria-label": "Recording time", disabled: true });
  const play = el("button", { type: "button", disabled: true }, "Play");
  const speed = el("select", { "aria-label": "Recording speed" }, ["1", "2", "5", "20"].map((s) => el("option", { value: s }, `${s}×`)));
  const clock = el("span", { class: "muted", role: "status" });
  const host = el("div", { class: "recording-host", "aria-label": "Recording" });
  const problem = el("div");
  const node = el("section", { class: "recording", "aria-labelledby": `rec-${id}` },
    el("h3", { id: `rec-${id}` }, "Recording"), el("div", { class: "toolbar" }, load, slider, play, speed, clock), problem, host);

  function seek(to) {
    const { header, events } = state.recording;
    state.term?.dispose();
    state.term = new Terminal({ cols: header.term.cols, rows: header.term.rows, disableStdin: true, scrollback: 1000,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, monospace', fontSize: 13 });
    state.term.open(host);
    const out = [];
    for (const event of events) {
      if (event.time > to) break;
      if (event.code === "o") out.push(event.data);
      else if (event.code === "r") {
        state.term.write(out.splice(0).join(""));
        const [cols, rows] = event.data.split("x").map(Number);
        state.term.resize(cols, rows);
      }
    }
    state.term.write(out.join(""));
    state.at = to;
    slider.value = to;
    clock.textContent = `${to.toFixed(1)} s of ${state.recording.duration.toFixed(1)} s`;
  }

  function stop() {
    clearInterval(state.timer);
    state.timer = null;
    play.textContent = "Play";
  }

  load.addEventListener("click", async () => {
    try {
      state.recording = parse(await api("GET", `/v1/terminals/${id}/recording`));
    } catch (error) {
      notice(problem, error.message, true);
      return;
    }
    slider.max = state.recording.duration;
    slider.disabled = play.disabled = false;
    seek(state.recording.duration);
  });
  slider.addEventListener("input", () => {
    stop();
    seek(Number(slider.value));
  });
  play.addEventListener("click", () => {
    if (state.timer !== null) {
      stop();
      return;
    }
    if (state.at >= state.recording.duration) seek(0);
    play.textContent = "Pause";
    state.timer = setInterval(() => {
      const next = Math.min(state.recording.duration, state.at + (TICK_MS / 1000) * Number(speed.value));
      seek(next);
      if (next >= state.recording.duration) stop();
    }, TICK_MS);
  });
  return { node, dispose: () => { stop(); state.term?.dispose(); } };
}
