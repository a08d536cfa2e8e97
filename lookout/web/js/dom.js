// Building the page from data without ever parsing it as HTML: every text goes in as text.

/** el("li", {class: "card", dataset: {n: 3}}, "text", childNode, ...) */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children.flat().filter((c) => c !== undefined && c !== null && c !== false).map(
    (c) => (c instanceof Node ? c : document.createTextNode(String(c))),
  ));
  return node;
}

export function seconds(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function time(ts) {
  return ts ? new Date(ts * 1000).toLocaleTimeString() : "";
}

export function exitBadge(code) {
  if (code === null || code === undefined) return el("span", { class: "badge" }, "exit ?");
  return el("span", { class: `badge ${code === 0 ? "ok" : "bad"}`, "data-exit-code": code }, `exit ${code}`);
}

/** A status line for errors and progress inside a view (role=status, or alert for errors). */
export function notice(container, message, isError = false) {
  const node = el("p", { class: isError ? "error" : "muted", role: isError ? "alert" : "status" }, message);
  container.replaceChildren(node);
  return node;
}

/** A list view: a heading, then what `render` makes of the answer of `load()` (a node, or a string saying
 * why there is nothing to list); a failed load shows its error. */
export function listing(main, title, load, render) {
  const body = el("div");
  main.append(el("h2", {}, title), body);
  load().then((answer) => {
    const made = render(answer);
    if (typeof made === "string") notice(body, made);
    else body.replaceChildren(made);
  }, (error) => notice(body, error.message, true));
}
