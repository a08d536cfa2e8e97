// The timeline: frames filtered by resource and agent, and the history rendered at a budget, each message
// with the frames it came from.
import { api } from "./api.js";
import { el, notice, time } from "./dom.js";

function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== "" && value !== null) q.set(key, value);
  return q.toString();
}

export function showTimeline(main) {
  const filters = el("form", { class: "toolbar", "aria-label": "Filters" },
    el("label", { for: "tl-resource" }, "Resource"),
    el("input", { id: "tl-resource", name: "resource", placeholder: "terminal:t_…, page:p_…, device:…" }),
    el("label", { for: "tl-agent" }, "Agent"),
    el("input", { id: "tl-agent", name: "agent", placeholder: "all agents" }),
    el("label", { for: "tl-budget" }, "Budget (tokens)"),
    el("input", { id: "tl-budget", name: "budget", type: "number", min: 1, value: 2000 }),
    el("button", { type: "submit" }, "Show"));
  const framesBox = el("div");
  const contextBox = el("div");
  main.append(el("h2", {}, "Timeline"), filters,
    el("section", { "aria-labelledby": "tl-context" }, el("h3", { id: "tl-context" }, "History within the budget"), contextBox),
    el("section", { "aria-labelledby": "tl-frames" }, el("h3", { id: "tl-frames" }, "Frames (newest 200)"), framesBox));

  async function load() {
    const data = new FormData(filters);
    const filter = { resource: data.get("resource").trim(), agent: data.get("agent").trim() };
    try {
      const [frames, context] = await Promise.all([
        api("GET", `/v1/timeline/frames?${query({ ...filter, limit: 200 })}`),
        api("GET", `/v1/timeline/context?${query({ ...filter, budget: data.get("budget") || 2000 })}`),
      ]);
      framesBox.replaceChildren(frames.frames.length ? el("table", {},
        el("thead", {}, el("tr", {}, ["#", "Time", "Agent", "Resource", "Kind", "Tokens", "What"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, frames.frames.slice().reverse().map((f) => el("tr", { class: f.pinned ? "pinned" : "" },
          el("td", {}, f.seq), el("td", {}, time(f.ts)), el("td", {}, f.agent), el("td", {}, f.resource),
          el("td", {}, f.pinned ? `${f.kind} (pinned)` : f.kind), el("td", {}, f.tokens.full),
          el("td", { class: "line" }, f.line))))) : el("p", { class: "muted" }, "No frames."));
      const meta = context.metadata;
      contextBox.replaceChildren(
        el("p", { class: "muted" }, `${meta.total_tokens} of ${meta.budget} tokens, ${context.messages.length} messages, up to frame ${meta.last_seq}.`),
        el("ol", { class: "messages" }, context.messages.map((m) => el("li", {},
          el("header", {}, `${m.role} · frames ${m.source_frames.from}${m.source_frames.to !== m.source_frames.from ? `–${m.source_frames.to}` : ""}`),
          el("pre", {}, m.content)))));
    } catch (error) {
      notice(contextBox, error.message, true);
    }
  }
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  load();
}
