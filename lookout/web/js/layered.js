// A layered screenshot (the JSON a screen read answers: see docs/terminals.md) drawn as it was given: its text
// in the viewport's columns, with the colours and styles of its fgColors, bgColors, styles, bold, italic and
// underline layers (when the read asked for them), the cursor, the scrollback lines, and the rows the answer
// left out marked as such. `fitScreens` scales each drawn screen to the width it has, down to MIN_FONT_PX;
// narrower than that, the screen scrolls sideways. Every text goes in as text.
import { el } from "./dom.js";

const BASE_FONT_PX = 13;
const MIN_FONT_PX = 6;
const THEME = { fg: "#e6e6e6", bg: "#111418" }; // the default colours (style.css --term), as default-fg/bg
const STYLE_LAYERS = ["styles", "bold", "italic", "underline"];
const WIDE = [[0x1100, 0x115f], [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff],
  [0xa000, 0xa4cf], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe30, 0xfe4f], [0xff00, 0xff60], [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f], [0x1f900, 0x1f9ff], [0x20000, 0x3fffd]];

/** Cells a character cluster takes: 2 for East Asian wide characters and emoji, else 1. */
function cellWidth(cluster) {
  const code = cluster.codePointAt(0);
  if (cluster.includes("\ufe0f")) return 2;
  return WIDE.some(([low, high]) => code >= low && code <= high) ? 2 : 1;
}

const segmenter = typeof Intl.Segmenter === "function" ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;
function clusters(text) {
  return segmenter ? Array.from(segmenter.segment(text), (s) => s.segment) : Array.from(text);
}

/** A row of a cell layer (a string with a symbol per cell, or [start, end, symbol] runs) as a function of the
 * column: its symbol there, or undefined for the layer's default. */
function symbolAt(value) {
  if (!value || !value.length) return () => undefined;
  if (typeof value === "string") return (col) => value[col];
  const cells = [];
  for (const [start, end, symbol] of value) for (let col = start; col < end; col += 1) cells[col] = symbol;
  return (col) => cells[col];
}

function colour(palette, symbol) {
  const value = symbol === undefined ? null : palette[symbol];
  if (value === "default-fg") return THEME.fg;
  if (value === "default-bg") return THEME.bg;
  return value ?? null;
}

/** The viewport of the answer, with its left, top, width and height whatever its mode. */
function viewportOf(screen) {
  const vp = screen.viewport ?? { mode: "full" };
  if (vp.mode === "full") return { mode: "full", left: 0, top: 0, width: screen.terminal.width, height: screen.terminal.height };
  return vp;
}

/** For each screen row of the viewport, the index of its values in the answer's row lists (or undefined). */
function rowIndex(screen, vp) {
  const index = new Map();
  const rows = screen.rows ?? Array.from({ length: vp.height }, (_, i) => vp.top + i);
  rows.forEach((row, i) => index.set(row, i));
  return index;
}

/** What the layers say of each cell of one answer row: [{fg, bg, bold, italic, underline}] by column. */
function cellStyles(screen, i, width) {
  const palette = screen.colorPalette ?? {};
  const legend = screen.styleLegend ?? {};
  const fg = symbolAt(screen.fgColors?.[i]);
  const bg = symbolAt(screen.bgColors?.[i]);
  const styles = STYLE_LAYERS.filter((name) => screen[name]).map((name) => symbolAt(screen[name][i]));
  const out = [];
  let last = -1;
  for (let col = 0; col < width; col += 1) {
    const style = { fg: colour(palette, fg(col)), bg: colour(palette, bg(col)), bold: false, italic: false, underline: false };
    for (const at of styles) {
      for (const part of (legend[at(col)] ?? "").split("+")) if (part in style) style[part] = true;
    }
    if (style.fg || style.bg || style.underline) last = col;
    out.push(style);
  }
  return { styles: out, last };
}

function key(style, cursor) {
  return `${style.fg}|${style.bg}|${style.bold}|${style.italic}|${style.underline}|${cursor}`;
}

function span(text, style, classes) {
  const node = el("span", { class: classes || undefined }, text);
  if (style.fg) node.style.color = style.fg;
  if (style.bg) node.style.backgroundColor = style.bg;
  if (style.bold) node.style.fontWeight = "bold";
  if (style.italic) node.style.fontStyle = "italic";
  if (style.underline) node.style.textDecoration = "underline";
  return node;
}

/** One row: its text laid over its cells, in spans of equal style (a wide character in a span of its own, two
 * cells wide); cells past the text that have a colour are drawn as blanks in that colour. */
function drawRow(screen, i, vp, cursorCol) {
  const text = screen.text?.[i] ?? "";
  const { styles, last } = cellStyles(screen, i, vp.width);
  const cells = [];
  let col = 0;
  for (const cluster of clusters(text)) {
    const width = cellWidth(cluster);
    cells.push({ text: cluster, col, width });
    col += width;
  }
  for (; col <= Math.max(last, cursorCol ?? -1); col += 1) cells.push({ text: " ", col, width: 1 });
  const plain = { fg: null, bg: null, bold: false, italic: false, underline: false };
  const parts = [];
  let run = null;
  for (const cell of cells) {
    const style = styles[cell.col] ?? plain;
    const cursor = cell.col === cursorCol;
    const k = key(style, cursor);
    if (cell.width === 2 || cursor || !run || run.key !== k || run.wide) {
      run = { key: k, text: "", style, classes: [cell.width === 2 ? "w2" : "", cursor ? "cursor" : ""].join(" ").trim(), wide: cell.width === 2 };
      parts.push(run);
    }
    run.text += cell.text;
  }
  return parts.map((p) => span(p.text, p.style, p.classes));
}

/** The answer of a screen read drawn: a line that says what it is, the scrollback lines, then the viewport's
 * rows (rows the answer left out are marked). A text-format answer is shown as the text it was. */
export function drawLayered(screen, label) {
  if (typeof screen === "string") return el("pre", { class: "snapshot", "aria-label": label }, screen);
  const vp = viewportOf(screen);
  const index = rowIndex(screen, vp);
  const colours = "fgColors" in screen || "bgColors" in screen;
  const facts = [`${screen.terminal.width}x${screen.terminal.height}`];
  if (vp.mode !== "full") facts.push(`${vp.mode === "region" ? "region" : "around the cursor"}: columns ${vp.left}-${vp.left + vp.width - 1}, rows ${vp.top}-${vp.top + vp.height - 1}`);
  if (!colours) facts.push("no colours asked for");
  if (screen.omitted?.rows) facts.push(`${screen.omitted.rows} rows left out to fit max_tokens`);
  if (screen.omitted?.scrollback) facts.push(`${screen.omitted.scrollback} older scrollback lines left out`);
  const cursor = screen.cursor?.visible ? screen.cursor : null;
  const rows = [];
  for (let row = vp.top; row < vp.top + vp.height; row += 1) {
    const i = index.get(row);
    if (i === undefined) {
      rows.push(el("div", { class: "lrow absent", title: "not in the answer", dataset: { row } }, " "));
      continue;
    }
    const cursorCol = cursor && cursor.top === row ? cursor.left - vp.left : undefined;
    rows.push(el("div", { class: "lrow", dataset: { row } }, drawRow(screen, i, vp, cursorCol)));
  }
  const pre = el("pre", { class: "layered-screen", "aria-label": label }, rows);
  pre.style.setProperty("--cols", String(vp.width));
  pre.style.color = THEME.fg;
  pre.style.backgroundColor = THEME.bg;
  const parts = [el("p", { class: "muted layered-facts" }, facts.join(" · "))];
  if (screen.scrollback?.length) {
    parts.push(el("pre", { class: "layered-scrollback", "aria-label": `Scrollback of ${label}` }, screen.scrollback.join("\n")));
  }
  parts.push(pre);
  return el("div", { class: "layered" }, parts);
}

/** Scale every drawn screen in `container` so all its columns fit the width it has (never above the base size,
 * never below MIN_FONT_PX: narrower, it scrolls). Call it once the screens are in the page, and on resizes. */
export function fitScreens(container) {
  for (const pre of container.querySelectorAll(".layered-screen")) {
    pre.style.fontSize = `${BASE_FONT_PX}px`;
    const computed = getComputedStyle(pre);
    const padding = parseFloat(computed.paddingLeft) + parseFloat(computed.paddingRight);
    const natural = pre.scrollWidth - padding;
    const room = pre.clientWidth - padding;
    if (natural <= 0 || room <= 0) continue;
    const size = Math.max(MIN_FONT_PX, Math.min(BASE_FONT_PX, Math.floor((10 * BASE_FONT_PX * room) / natural) / 10));
    pre.style.fontSize = `${size}px`;
  }
}
