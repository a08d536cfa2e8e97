"""The scripts lookout runs inside a page, each one pass and one round trip.

- `BEFORE_ACTION` (on the action's element, or on the page): checks the input a control cannot take (letters
  for a number field, an option a select does not have) before anything runs, then starts watching what the
  action adds, changes or reveals, in the document and in every open shadow root, with the state of every
  control (value, checked, selected: properties that no mutation shows), and returns where the focus is.
- `AFTER_ACTION`: what the action did: the text it made appear or change (on the same document) or the new
  document's messages, the controls whose state changed, the focus, the title.
- `DOM_QUIET`: whether the DOM (with its open shadow roots) stayed quiet for a while, to settle an action.

An element is named as the snapshot names it: its role (explicit, else implied by its tag and type) and its
accessible name (aria-labelledby, aria-label, its labels, title, placeholder, or its text for the roles named
by their content); focus inside a shadow root is the element focused there, never its host.
"""

from __future__ import annotations

_HELPERS = r"""
const norm = t => (t || '').replace(/\s+/g, ' ').trim();
const cut = (t, n) => t.length > n ? t.slice(0, n - 1) + '…' : t;
const roots = () => {  // the document and every open shadow root in it
  const out = [document];
  for (let i = 0; i < out.length; i++)
    for (const el of out[i].querySelectorAll('*')) if (el.shadowRoot) out.push(el.shadowRoot);
  return out;
};
const INPUT_ROLES = {checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
  button: 'button', submit: 'button', reset: 'button', image: 'button', color: 'button', file: 'button'};
const roleOf = el => {
  const explicit = (el.getAttribute('role') || '').trim().split(/\s+/)[0];
  if (explicit) return explicit;
  const tag = el.localName;
  if (tag === 'input') return INPUT_ROLES[el.type] || 'textbox';
  if (tag === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
  if (tag === 'a' || tag === 'area') return el.hasAttribute('href') ? 'link' : tag;
  if (/^h[1-6]$/.test(tag)) return 'heading';
  return {textarea: 'textbox', button: 'button', option: 'option', summary: 'button', img: 'img'}[tag] || tag;
};
const FROM_CONTENT = new Set(['button', 'link', 'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
  'checkbox', 'radio', 'switch', 'heading', 'cell', 'treeitem', 'row', 'columnheader']);
const ownText = (label, el) => {  // a label's text without the control it wraps
  let out = '';
  const walk = node => { for (const c of node.childNodes) {
    if (c === el) continue;
    if (c.nodeType === 3) out += c.data; else if (c.nodeType === 1 && !c.matches('select,textarea')) walk(c);
  } };
  walk(label);
  return out;
};
const nameOf = el => {
  const root = el.getRootNode();
  const byIds = (el.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)
    .map(id => (root.getElementById ? root.getElementById(id) : null) || document.getElementById(id)).filter(Boolean);
  let name = byIds.length ? byIds.map(n => n.textContent).join(' ') : el.getAttribute('aria-label') || '';
  if (!norm(name) && el.labels && el.labels.length) name = [...el.labels].map(l => ownText(l, el)).join(' ');
  if (!norm(name)) name = el.getAttribute('title') || el.getAttribute('placeholder') || el.getAttribute('alt') || '';
  if (!norm(name) && el.localName === 'input' && ['submit', 'button', 'reset'].includes(el.type)) name = el.value;
  if (!norm(name) && FROM_CONTENT.has(roleOf(el))) name = el.textContent;
  return cut(norm(name), 80);
};
const describe = el => { if (!el) return null; const n = nameOf(el); return roleOf(el) + (n ? ' ' + JSON.stringify(n) : ''); };
const deepActive = () => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el && el !== document.body && el !== document.documentElement ? el : null;
};
const CONTROLS = 'input,select,textarea,[role=checkbox],[role=radio],[role=switch],[role=slider],[role=spinbutton],'
  + '[role=option],[role=tab],[role=menuitemcheckbox],[role=menuitemradio],[role=combobox],[role=textbox],[aria-pressed]';
const stateOf = el => {
  const tag = el.localName;
  if (tag === 'select') return {selected: [...el.selectedOptions].map(o => norm(o.label)).join(', ')};
  if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return {checked: el.checked};
  if (tag === 'input' || tag === 'textarea') return el.type === 'password' ? {value: el.value ? '•••' : ''} : {value: el.value};
  const a = n => el.getAttribute(n);
  if (a('aria-checked') !== null) return {checked: a('aria-checked') === 'mixed' ? 'mixed' : a('aria-checked') === 'true'};
  if (a('aria-pressed') !== null) return {pressed: a('aria-pressed') === 'true'};
  if (a('aria-selected') !== null) return {selected: a('aria-selected') === 'true'};
  if (a('aria-valuenow') !== null || a('aria-valuetext') !== null) return {value: a('aria-valuetext') || a('aria-valuenow')};
  if (el.isContentEditable || roleOf(el) === 'textbox' || roleOf(el) === 'combobox') return {value: norm(el.textContent)};
  return null;
};
const controlStates = all => {
  const states = new Map();
  for (const root of all) for (const el of root.querySelectorAll(CONTROLS)) {
    const state = stateOf(el);
    if (state) states.set(el, JSON.stringify(state));
  }
  return states;
};
"""

_PROBLEM = r"""
const problemOf = (el, check) => {  // input the control cannot take, said with what it accepts
  if (!el || !check) return null;
  const name = describe(el);
  if (check.fill !== undefined && el.localName === 'input') {
    const kinds = {number: 'a number', range: 'a number', date: 'a date as YYYY-MM-DD', time: 'a time as HH:MM',
      'datetime-local': 'a date and time as YYYY-MM-DDTHH:MM', month: 'a month as YYYY-MM', week: 'a week as YYYY-Www',
      color: 'a colour as #rrggbb'};
    const accepts = kinds[el.type];
    if (accepts && check.fill !== '') {
      const probe = document.createElement('input');
      probe.type = el.type;
      probe.value = check.fill;
      if (probe.value === '') return {control: name, accepts, given: check.fill};
    }
  }
  if (check.select && el.localName === 'select') {
    const options = [...el.options];
    const known = new Set(options.flatMap(o => [o.value, norm(o.label)]));
    const missing = check.select.filter(v => !known.has(v) && !known.has(norm(v)));
    if (missing.length) {
      const labels = options.map(o => norm(o.label) || o.value);
      const shown = labels.slice(0, 30).map(l => JSON.stringify(l)).join(', ');
      return {control: name, accepts: 'one of its options: ' + shown + (labels.length > 30 ? `, … (${labels.length} in all)` : ''),
              given: missing.join(', ')};
    }
    if (missing.length === 0 && check.select.length > 1 && !el.multiple)
      return {control: name, accepts: 'one option (it is not a multiple select)', given: check.select.join(', ')};
  }
  return null;
};
const within = (outer, node) => { for (let n = node; n; n = n.parentNode || n.host) if (n === outer) return true; return false; };
const coverOf = el => {  // what takes a pointer aimed at el (an open modal it is not in, an overlay), else null
  const doc = el.ownerDocument;
  const modal = [...doc.querySelectorAll('dialog, [aria-modal="true"]')].reverse().find(d =>
    (d.localName === 'dialog' ? d.matches(':modal') : d.getClientRects().length > 0) && !within(d, el));
  if (modal) return modal;
  if (el.scrollIntoViewIfNeeded) el.scrollIntoViewIfNeeded(true);
  const box = el.getClientRects()[0];
  if (!box || !box.width || !box.height) return null;
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  let hit = doc.elementFromPoint(x, y);
  const shadowOf = h => h.shadowRoot || (h === el.getRootNode().host ? el.getRootNode() : null);  // el's closed root too
  while (hit && shadowOf(hit)) { const inner = shadowOf(hit).elementFromPoint(x, y); if (!inner || inner === hit) break; hit = inner; }
  if (!hit || within(el, hit) || within(hit, el)) return null;  // el, inside it, or around it (a gap in its text)
  const label = hit.closest('label');
  if (label && (label.control === el || within(label, el))) return null;
  return hit.closest('dialog,[role=dialog],[role=alertdialog],[popover]') || hit;
};
const coverName = cover => {
  const named = describe(cover);
  const text = cut(norm(cover.innerText), 60);
  return named.includes('"') || !text ? named : named + ' ' + JSON.stringify(text);
};
"""

TIMER_MS = 1000
"""A timer of up to this delay that an action's handlers start (not one a timer starts: a clock, a poll) is part
of what the action does: settling waits for it to fire."""

TIMERS = (
    "() => {"
    + f"const TIMER_MS = {TIMER_MS};"
    + r"""
  if (window.__lookoutTimers) return window.__lookoutTimers;
  const t = {pending: new Set(), on: false, depth: 0, set: window.setTimeout, clear: window.clearTimeout, started: 0};
  window.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== 'function') return t.set.call(window, fn, ms, ...args);
    let id;
    const run = (...a) => { t.pending.delete(id); t.depth++; try { return fn.apply(this, a); } finally { t.depth--; } };
    id = t.set.call(window, run, ms, ...args);
    if (t.on && !t.depth && (+ms || 0) <= TIMER_MS) { t.pending.add(id); t.started++; }
    return id;
  };
  window.clearTimeout = function (id) { t.pending.delete(id); return t.clear.call(window, id); };
  Object.defineProperty(window, '__lookoutTimers', {value: t, configurable: true, enumerable: false});
  return t;
}"""
)
"""Installs (once per document) and returns the count of timers: while `on`, a timer of up to TIMER_MS set
outside any timer's callback is the action's. Run at every document's start (`TIMERS_AT_START`, so that a
chain a page started before lookout's first action is known as one), and again by `BEFORE_ACTION` for a
document that was there before (a browser lookout connected to)."""

TIMERS_AT_START = f"({TIMERS})();"
"""Part of the init script of every context lookout opens (lookout.browser.profile_contexts.AT_DOCUMENT_START)."""

BEFORE_ACTION = (
    "(el, check) => {"
    + _HELPERS
    + _PROBLEM
    + r"""
  const problem = problemOf(el, check);
  if (problem) return {problem};
  const cover = el && check && check.hit ? coverOf(el) : null;
  if (cover) return {problem: {control: describe(el), covered: coverName(cover)}};
  if (window.__lookoutWatch) window.__lookoutWatch.observers.forEach(o => o.disconnect());  // left by a failed action
  const timers = ("""
    + TIMERS
    + r""")();  // the timers the action's handlers start, to settle on them
  timers.pending.clear(); timers.started = 0; timers.on = true;
  const added = new Set(), revealed = new Set(), all = roots(), own = el && el.getRootNode();
  if (own && own !== document && !all.includes(own)) all.push(own);  // a closed shadow root (reached by CDP)
  const observers = all.map(root => {
    const observer = new MutationObserver(records => { for (const r of records) {
      if (r.type === 'childList') r.addedNodes.forEach(n => added.add(n.nodeType === 1 ? n : n.parentElement));
      else if (r.type === 'characterData') added.add(r.target.parentElement);
      else revealed.add(r.target);
    } });
    observer.observe(root, {subtree: true, childList: true, characterData: true, attributes: true,
                            attributeFilter: ['hidden', 'open', 'style', 'class', 'aria-hidden']});
    return observer;
  });
  window.__lookoutWatch = {observers, added, revealed, states: controlStates(all), own,
                           before: norm(document.body && document.body.innerText)};
  return {problem: null, focus: describe(deepActive())};
}"""
)
"""Before an action, with its element (or null): `{problem}` when the input cannot be taken, or (`check.hit`, a
pointer action) when something else would take the pointer aimed at the element (`covered`: an open modal it
is not in, an overlay, by role and name); nothing is watched then. Else `{focus}`, and the watch is on."""

BEFORE_PAGE_ACTION = f"(check) => ({BEFORE_ACTION})(null, check)"
"""`BEFORE_ACTION` for an action without an element (press on the page, navigate, back, a wait)."""

AFTER_ACTION = (
    "([maxItems, maxChars]) => {"
    + _HELPERS
    + r"""
  const visible = el => el && el.isConnected && (el.checkVisibility ? el.checkVisibility() : !!el.getClientRects().length);
  const LIVE = '[role=alert],[role=alertdialog],[role=status],[role=log],[aria-live]:not([aria-live=off]),output';
  const MESSAGE = '[class*=message],[class*=alert],[class*=error],[class*=success],[class*=notice],[class*=warning],[class*=flash],[class*=toast],[class*=invalid-feedback]';
  const FIELD_ERROR = '[class*=errorlist],[class*=field-error],[class*=invalid-feedback]';
  const kind = (el, fallback) => {
    const live = el.closest(LIVE);
    if (live) { const role = live.getAttribute('role'); return role === 'alert' || role === 'alertdialog' ? 'alert' : role === 'status' ? 'status' : 'live'; }
    if (el.closest('dialog,[role=dialog]')) return 'dialog';
    if (el.closest(FIELD_ERROR) || fallback === 'field_error') return 'field_error';
    return el.closest(MESSAGE) ? 'message' : null;
  };
  const out = [], seen = new Set();
  const take = (el, fallback, text) => {
    if (out.length >= maxItems || !visible(el) || el === document.body || el === document.documentElement) return;
    text = text || norm(el.innerText || el.getAttribute('aria-label'));
    if (!text || seen.has(text)) return;
    seen.add(text);
    out.push({kind: kind(el, fallback) || fallback, text: cut(text, maxChars)});
  };
  const outermost = set => [...set].filter(el => el && el.nodeType === 1 && ![...set].some(o => o && o !== el && o.nodeType === 1 && o.contains(el)));
  const fieldOf = el => {  // the field an error is about: the one it describes, else the one beside it
    const id = el.id || (el.closest('[id]') || {}).id;
    const described = id && document.querySelector(`[aria-describedby~="${CSS.escape(id)}"],[aria-errormessage="${CSS.escape(id)}"]`);
    if (described) return described;
    const box = el.closest('.form-row,.field,fieldset,p,div') || el.parentElement;
    return box && [...box.querySelectorAll('input,select,textarea')].find(f => f.type !== 'hidden');
  };
  const fieldError = el => {  // `Name: This field is required.`
    const field = fieldOf(el), text = norm(el.innerText);
    const name = field ? nameOf(field).replace(/:$/, '') : '';
    return name && text && !text.startsWith(name) ? `${name}: ${text}` : text;
  };
  if (window.__lookoutTimers) window.__lookoutTimers.on = false;
  const pending = window.__lookoutWatch;
  let active = deepActive();  // inside the action's closed shadow root: the element focused there, not its host
  if (pending && pending.own && active && active === pending.own.host && pending.own.activeElement) active = pending.own.activeElement;
  const result = {focus: describe(active), title: document.title, text: out, controls: []};
  if (pending) {  // the same document: what the action added, changed or revealed
    pending.observers.forEach(o => o.disconnect());
    delete window.__lookoutWatch;
    const tags = el => el.matches('script,style,link,meta,template,noscript');
    for (const el of outermost(pending.added)) if (!tags(el)) take(el, 'added');
    for (const el of outermost(pending.revealed)) {
      const text = norm(el.innerText);
      if (text && !pending.before.includes(text)) take(el, el.matches('dialog,[role=dialog]') ? 'dialog' : 'changed');
    }
    for (const [el, before] of pending.states) {
      if (result.controls.length >= maxItems || !el.isConnected) continue;
      const now = stateOf(el);
      if (!now || JSON.stringify(now) === before) continue;
      const [key, value] = Object.entries(now)[0];
      result.controls.push({control: describe(el), [key]: typeof value === 'string' ? cut(value, maxChars) : value});
    }
    result.document = 'same';
    return result;
  }
  // a new document: its fields' errors (each with its field's name), then its other messages
  const errors = new Set(document.querySelectorAll(FIELD_ERROR));
  for (const field of document.querySelectorAll('[aria-invalid=true]')) {
    const ids = (field.getAttribute('aria-errormessage') || field.getAttribute('aria-describedby') || '').split(/\s+/);
    for (const id of ids) { const el = id && document.getElementById(id); if (el) errors.add(el); }
  }
  for (const el of outermost(errors)) take(el, 'field_error', fieldError(el));
  const found = new Set([...document.querySelectorAll(LIVE + ',dialog[open],[role=dialog],' + MESSAGE)]
    .filter(el => el !== document.body && norm(el.innerText).length <= 2000 && !el.matches(FIELD_ERROR)
            && ![...errors].some(e => el.contains(e))));
  for (const el of outermost(found)) take(el, 'message');
  result.document = 'new';
  return result;
}"""
)
"""After an action: `{document: same|new, text: [{kind, text}], controls: [{control, value|checked|selected|
pressed}], focus, title}` (at most `maxItems` of each)."""

DOM_QUIET = (
    "([quiet, max]) => new Promise(resolve => {"
    + _HELPERS
    + r"""
  const t = window.__lookoutTimers, later = t ? t.set : setTimeout, cancel = t ? t.clear : clearTimeout;
  const started = t && t.on ? t.started : 0;
  if (t) t.on = false;  // the timers started from here on are not the action's
  let timer;
  const ended = () => { if (t && t.pending.size) timer = later.call(window, ended, 20); else done(true); };
  const all = roots();
  const observers = all.map(() => new MutationObserver(() => { cancel.call(window, timer); timer = later.call(window, ended, quiet); }));
  const done = quiet => { observers.forEach(o => o.disconnect()); resolve([quiet, started]); };
  observers.forEach((o, i) => o.observe(all[i], {subtree: true, childList: true, attributes: true, characterData: true}));
  timer = later.call(window, ended, quiet); later.call(window, () => done(false), max);
})"""
)
"""Resolves `[quiet, timers]`: quiet true once the timers an action's handlers started (`BEFORE_ACTION`, up to
`TIMER_MS`) have fired and the DOM (the document and its open shadow roots) has then not changed for `quiet`
ms, false when `max` ms passed first; `timers`: how many the action started."""
