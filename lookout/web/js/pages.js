// Browser pages: open one, and for a page its URL, the latest snapshot text, the latest screenshot, navigate.
import { api, objectUrl } from "./api.js";
import { el, listing, notice } from "./dom.js";

export function showPages(main) {
  listing(main, "Pages", () => api("GET", "/v1/pages"), ({ pages }) => (!pages.length
    ? "No page is open: open one with “Open page”."
    : el("ul", {}, pages.map((p) => el("li", {}, el("a", { href: `#/pages/${p.id}` }, p.title || p.id), ` ${p.url}`)))));
}

export function newPageForm(main) {
  const error = el("p", { class: "error", role: "alert" });
  const form = el("form", { class: "grid" },
    el("label", { for: "np-url" }, "URL"),
    el("input", { id: "np-url", name: "url", type: "url", required: true, placeholder: "https://example.org/" }),
    el("div", { class: "actions" }, el("button", { type: "submit" }, "Open"), error));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "Opening…";
    try {
      const page = await api("POST", "/v1/pages", { url: form.elements.url.value });
      location.hash = `#/pages/${page.id}`;
    } catch (e) {
      error.textContent = e.message;
    }
  });
  main.append(el("h2", {}, "Open a page"), form);
  form.elements.url.focus();
}

export function showPage(main, id) {
  const path = `/v1/pages/${id}`;
  let imageUrl = null;
  const title = el("h2", {}, id);
  const status = el("div", { class: "status" });
  const url = el("input", { id: "page-url", type: "url", required: true });
  const navigate = el("form", { class: "toolbar wide" }, el("label", { for: "page-url" }, "URL"), url,
    el("button", { type: "submit" }, "Go"));
  const snapshotButton = el("button", { type: "button", class: "secondary" }, "Snapshot");
  const screenshotButton = el("button", { type: "button", class: "secondary" }, "Screenshot");
  const text = el("pre", { class: "snapshot", "aria-label": "Latest snapshot", tabindex: 0 });
  const image = el("img", { alt: "Latest screenshot of the page", hidden: true });
  main.append(title, navigate, el("div", { class: "toolbar" }, snapshotButton, screenshotButton), status,
    el("div", { class: "split" }, el("section", { "aria-label": "Snapshot" }, text),
      el("section", { "aria-label": "Screenshot", class: "screen" }, image)));

  async function run(work) {
    try {
      await work();
    } catch (error) {
      notice(status, error.message, true);
    }
  }
  const describe = () => run(async () => {
    const page = await api("GET", path);
    title.textContent = page.title || page.url;
    url.value = page.url;
    if (page.last_obs && !text.textContent) {
      text.textContent = (await api("GET", `${path}/observations/${page.last_obs}`)).text ?? "";
    }
  });
  const snapshot = () => run(async () => {
    notice(status, "Taking a snapshot…");
    const taken = await api("POST", `${path}/snapshot`, {});
    text.textContent = taken.text;
    notice(status, `Snapshot ${taken.obs_id} of ${taken.url}`);
  });
  const screenshot = () => run(async () => {
    const shot = await api("POST", `${path}/screenshot`, {});
    const next = await objectUrl(shot.url);
    if (imageUrl) URL.revokeObjectURL(imageUrl);
    imageUrl = next;
    image.src = next;
    image.hidden = false;
  });
  navigate.addEventListener("submit", (event) => {
    event.preventDefault();
    run(async () => {
      notice(status, "Loading…");
      const done = await api("POST", `${path}/action`, { action: "navigate", url: url.value });
      notice(status, `Now at ${done.url}`);
      await describe();
      await snapshot();
      if (!image.hidden) await screenshot();
    });
  });
  snapshotButton.addEventListener("click", snapshot);
  screenshotButton.addEventListener("click", screenshot);
  describe();
  return () => imageUrl && URL.revokeObjectURL(imageUrl);
}
