// Devices: the latest screenshot with the UI elements' marks; a click on it taps there (converted to the
// device with the observation, like any tap), and each element can be tapped from the list (keyboard).
import { api, objectUrl } from "./api.js";
import { el, listing, notice } from "./dom.js";

export function showDevices(main) {
  listing(main, "Devices", () => api("GET", "/v1/devices"), ({ devices, adb_server }) => (!devices.length
    ? `No device on the adb server at ${adb_server}.`
    : el("ul", {}, devices.map((d) => el("li", {},
      el("a", { href: `#/devices/${encodeURIComponent(d.serial)}` }, `${d.model || d.serial} (${d.serial})`),
      ` ${d.state}`, d.advice ? el("span", { class: "muted" }, ` ${d.advice}`) : null)))));
}

export function showDevice(main, serial) {
  const path = `/v1/devices/${encodeURIComponent(serial)}`;
  let current = null; // the observation shown: {obs_id, image: {width, height}}
  let imageUrl = null;
  const status = el("div", { class: "status" });
  const image = el("img", { alt: `Screen of ${serial}; click to tap there` });
  const elements = el("ol", { class: "elements", "aria-label": "UI elements" });
  const refresh = el("button", { type: "button" }, "Refresh");
  main.append(el("h2", {}, serial), el("div", { class: "toolbar" }, refresh), status,
    el("div", { class: "split" }, el("div", { class: "screen" }, image),
      el("section", { "aria-label": "Elements" }, el("h3", {}, "Elements"), elements)));

  async function tap(body, what) {
    try {
      const done = await api("POST", `${path}/tap`, { ...body, obs_id: current.obs_id });
      const tapped = `Tapped ${what} (device pixel ${done.device_point.join(",")}).`;
      notice(status, tapped);
      setTimeout(() => load(tapped), 400);
    } catch (error) {
      notice(status, error.message, true);
    }
  }

  // `before`: what the status said first (the tap that led here), kept in front of what load says
  async function load(before = "") {
    const say = (text, isError = false) => notice(status, before ? `${before} ${text}` : text, isError);
    say("Taking a screenshot…");
    try {
      current = await api("POST", `${path}/screenshot`, { marks: true, ui: true });
      const url = await objectUrl(current.url);
      if (imageUrl) URL.revokeObjectURL(imageUrl);
      imageUrl = url;
      image.src = url;
      image.dataset.obsId = current.obs_id;
      elements.replaceChildren(...current.ui.elements.map((e) => el("li", {},
        el("button", { type: "button", class: "secondary", onclick: () => tap({ element: e.index }, `element ${e.index}`) }, `[${e.index}]`),
        [e.class, e.text || e.id, e.flags].filter(Boolean).join(" "))));
      say(`Observation ${current.obs_id}: ${current.image.width}x${current.image.height} of ${current.device.width}x${current.device.height}.`);
    } catch (error) {
      say(error.message, true);
    }
  }

  image.addEventListener("click", (event) => {
    if (!current) return;
    const box = image.getBoundingClientRect();
    const x = Math.round(((event.clientX - box.left) / box.width) * current.image.width);
    const y = Math.round(((event.clientY - box.top) / box.height) * current.image.height);
    tap({ x, y }, `at ${x},${y}`);
  });
  refresh.addEventListener("click", () => load());
  load();
  return () => imageUrl && URL.revokeObjectURL(imageUrl);
}
