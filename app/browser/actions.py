"""Actions on a page, the settling after them, and what they did (their effects).

An action names its element by a ref of the page's last observation. A ref that observation did not
have, or one whose element is gone (the page navigated, the element was removed), is refused with a
Conflict that says to snapshot again: never a click on the wrong element, never a long wait for one.
After the action the page settles: until the requests the action started have ended and the DOM has
been quiet for a moment, bounded. The effects are read from the page's captured events since the
action began: navigation and the new URL, new tabs, dialogs, downloads, console errors and warnings,
failed requests, and whether the focus moved. And the text the action made appear or change (`text`): on
the same document, what a MutationObserver installed just before the action saw added, changed or revealed
(each with its kind: alert, status, live, message, field_error, dialog, added, changed); after a navigation,
the new page's messages (alerts, status and live regions, open dialogs, invalid fields' errors, and
elements whose class names them a message, an error or a notice, as Django's `messagelist` and
`errorlist`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.browser import playwright_api as pw
from app.browser.action_kinds import (
    Action,
    Back,
    Check,
    Click,
    ClickAt,
    DialogAnswer,
    Fill,
    Forward,
    Hover,
    Navigate,
    OnElement,
    Press,
    Reload,
    Select,
    Type,
    Uncheck,
    Upload,
    WaitDomQuiet,
    WaitElement,
    WaitNetworkIdle,
    WaitText,
    WaitUrl,
)
from app.core.errors import Conflict
from app.core.observations import Seen, staleness

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page
DOM_QUIET_MS = 300
SETTLE_MAX_MS = 3000
_QUIET_JS = """([quiet, max]) => new Promise(resolve => {
  let timer; const done = () => { observer.disconnect(); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quiet); });
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(done, quiet); setTimeout(done, max);
})"""
OUTCOME_ITEMS = 8
OUTCOME_CHARS = 200
_WATCH_JS = r"""() => {
  if (window.__lookoutWatch) window.__lookoutWatch.observer.disconnect();  // an action that failed left it
  const added = new Set(), revealed = new Set();
  const observer = new MutationObserver(records => { for (const r of records) {
    if (r.type === 'childList') r.addedNodes.forEach(n => added.add(n.nodeType === 1 ? n : n.parentElement));
    else if (r.type === 'characterData') added.add(r.target.parentElement);
    else revealed.add(r.target);
  } });
  observer.observe(document, {subtree: true, childList: true, characterData: true, attributes: true,
                              attributeFilter: ['hidden', 'open', 'style', 'class', 'aria-hidden']});
  const norm = t => (t || '').replace(/\s+/g, ' ').trim();
  window.__lookoutWatch = {observer, added, revealed, before: norm(document.body && document.body.innerText)};
}"""
"""Before an action: watch what it adds, changes or reveals (and remember the visible text before it)."""
_OUTCOME_JS = r"""([maxItems, maxChars]) => {
  const norm = t => (t || '').replace(/\s+/g, ' ').trim();
  const visible = el => el && el.isConnected && (el.checkVisibility ? el.checkVisibility() : !!el.getClientRects().length);
  const LIVE = '[role=alert],[role=alertdialog],[role=status],[role=log],[aria-live]:not([aria-live=off]),output';
  const MESSAGE = '[class*=message],[class*=alert],[class*=error],[class*=success],[class*=notice],[class*=warning],[class*=flash],[class*=toast],[class*=invalid-feedback]';
  const kind = el => {
    const live = el.closest(LIVE);
    if (live) { const role = live.getAttribute('role'); return role === 'alert' || role === 'alertdialog' ? 'alert' : role === 'status' ? 'status' : 'live'; }
    if (el.closest('dialog,[role=dialog]')) return 'dialog';
    if (el.closest('[class*=errorlist],[class*=field-error],[class*=invalid-feedback]')) return 'field_error';
    return el.closest(MESSAGE) ? 'message' : null;
  };
  const out = [], seen = new Set();
  const take = (el, fallback) => {
    if (out.length >= maxItems || !visible(el) || el === document.body || el === document.documentElement) return;
    const text = norm(el.innerText || el.getAttribute('aria-label'));
    if (!text || seen.has(text)) return;
    seen.add(text);
    out.push({kind: kind(el) || fallback, text: text.length > maxChars ? text.slice(0, maxChars - 1) + '…' : text});
  };
  const outermost = set => [...set].filter(el => el && el.nodeType === 1 && ![...set].some(o => o && o !== el && o.nodeType === 1 && o.contains(el)));
  const watch = window.__lookoutWatch;
  if (watch) {  // the same document: what the action added, changed or revealed
    watch.observer.disconnect();
    delete window.__lookoutWatch;
    const tags = el => el.matches('script,style,link,meta,template,noscript');
    for (const el of outermost(watch.added)) if (!tags(el)) take(el, 'added');
    for (const el of outermost(watch.revealed)) {
      const text = norm(el.innerText);
      if (text && !watch.before.includes(text)) take(el, el.matches('dialog,[role=dialog]') ? 'dialog' : 'changed');
    }
    return {document: 'same', text: out};
  }
  // a new document: its messages
  const found = new Set([...document.querySelectorAll(LIVE + ',dialog[open],[role=dialog],' + MESSAGE)]
    .filter(el => el !== document.body && norm(el.innerText).length <= 2000));
  for (const el of outermost(found)) take(el, 'message');
  for (const field of document.querySelectorAll('[aria-invalid=true]')) {
    const ids = (field.getAttribute('aria-errormessage') || field.getAttribute('aria-describedby') || '').split(/\s+/);
    for (const id of ids) { const el = id && document.getElementById(id); if (el) take(el, 'field_error'); }
  }
  return {document: 'new', text: out};
}"""
"""After an action: the text it made appear or change, each with its kind (at most `maxItems`)."""
_FOCUS_JS = """() => { const e = document.activeElement; if (!e || e === document.body) return null;
  return (e.getAttribute('aria-label') || e.name || e.id || e.tagName.toLowerCase()) + ' (' + e.tagName.toLowerCase() + ')'; }"""


@dataclass
class RefCheck:
    """What the page's last observation knew: its refs and when it was taken."""

    obs_id: str | None
    refs: frozenset[str]
    taken_at: float
    navigated_at: float


def check_ref(action: Action, known: RefCheck) -> None:
    """Refuse an action on an element whose ref the page's last snapshot did not have, or may have lost."""
    if not isinstance(action, OnElement):
        return
    if known.obs_id is None:
        raise Conflict("no snapshot of this page yet: take one, then use its refs")
    if action.ref not in known.refs:
        raise Conflict(f"ref {action.ref} is not in the last snapshot ({known.obs_id}): snapshot again")
    reason = staleness(Seen(known.taken_at), time.time(), since={"the page navigated": known.navigated_at})
    if reason is not None:  # the observation store's one staleness check, as a screenshot click's and a tap's
        raise Conflict(f"{reason} snapshot {known.obs_id}, so ref {action.ref} is stale: snapshot again")


async def perform(page: Page, action: Action, point: tuple[float, float] | None = None) -> None:
    """Run the action (a click at `point`, page coordinates, when given); Playwright's failures become
    Conflicts with its first line."""
    try:
        if point is not None:
            await page.mouse.click(*point)
            return
        await _perform(page, action)
    except pw.Error as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Conflict(f"{action.name} failed: {message}") from exc


async def _perform(page: Page, action: Action) -> None:
    match action:
        case Navigate(url=url, timeout_ms=timeout):
            await page.goto(url, timeout=timeout)
        case Back(timeout_ms=timeout):
            await page.go_back(timeout=timeout)
        case Forward(timeout_ms=timeout):
            await page.go_forward(timeout=timeout)
        case Reload(timeout_ms=timeout):
            await page.reload(timeout=timeout)
        case Press(key=key, ref=None):
            await page.keyboard.press(key)
        case Press(key=key, ref=str(ref), timeout_ms=timeout):
            await (await _element(page, ref)).press(key, timeout=timeout)
        case WaitText(text=text, gone=gone, timeout_ms=timeout):
            await page.get_by_text(text).first.wait_for(state="hidden" if gone else "visible", timeout=timeout)
        case WaitUrl(url=url, timeout_ms=timeout):
            await page.wait_for_url(f"**{url}**", timeout=timeout)
        case WaitElement(ref=ref, state=state, timeout_ms=timeout):
            await page.locator(f"aria-ref={ref}").wait_for(state=state, timeout=timeout)
        case WaitDomQuiet(timeout_ms=timeout):
            await page.evaluate(_QUIET_JS, [DOM_QUIET_MS, timeout])
        case WaitNetworkIdle(timeout_ms=timeout):
            await page.wait_for_load_state("networkidle", timeout=timeout)
        case OnElement():
            await _on_element(await _element(page, action.ref), action)
        case ClickAt() | DialogAnswer():
            raise AssertionError(f"{action.name} is run by the page manager")  # a click at a point, an answer


async def _on_element(element: Locator, action: OnElement) -> None:
    timeout = action.timeout_ms
    match action:
        case Click():
            await element.click(timeout=timeout)
        case Hover():
            await element.hover(timeout=timeout)
        case Check():
            await element.check(timeout=timeout)
        case Uncheck():
            await element.uncheck(timeout=timeout)
        case Fill(text=text, submit=submit) | Type(text=text, submit=submit):
            if isinstance(action, Fill):
                await element.fill(text, timeout=timeout)
            else:
                await element.press_sequentially(text, timeout=timeout)
            if submit:
                await element.press("Enter", timeout=timeout)
        case Select(values=values):
            await element.select_option(list(values), timeout=timeout)
        case Upload(files=files):
            await element.set_input_files(list(files), timeout=timeout)


async def _element(page: Page, ref: str) -> Locator:
    locator = page.locator(f"aria-ref={ref}")
    if await locator.count() != 1:
        raise Conflict(f"ref {ref} is no longer on the page (it changed since the snapshot): snapshot again")
    return locator


async def watch(page: Page) -> None:
    """Start watching what the next action adds, changes or reveals on the page."""
    try:
        await page.evaluate(_WATCH_JS)
    except pw.Error:
        pass  # a page that cannot run it (navigating): the outcome then reads the document it lands on


async def outcome(page: Page) -> list[dict[str, str]]:
    """The text the action made appear or change (see the module's docstring)."""
    for _ in range(2):  # a navigation may destroy the context the first read runs in
        try:
            return (await page.evaluate(_OUTCOME_JS, [OUTCOME_ITEMS, OUTCOME_CHARS]))["text"]
        except pw.Error:
            await asyncio.sleep(0.05)
    return []


async def focus(page: Page) -> str | None:
    try:
        return await page.evaluate(_FOCUS_JS)
    except pw.Error:
        return None


async def settle(page: Page, in_flight: Any, deadline_ms: int = SETTLE_MAX_MS) -> None:
    """Wait (bounded) for the requests counted by `in_flight()` to end and the DOM to be quiet."""
    deadline = time.monotonic() + deadline_ms / 1000
    while in_flight() and time.monotonic() < deadline:  # noqa: ASYNC110 (a predicate; no event tells)
        await asyncio.sleep(0.05)
    left = max(0, int((deadline - time.monotonic()) * 1000))
    for _ in range(2):  # a navigation destroys the context the first wait runs in
        try:
            await page.wait_for_load_state("domcontentloaded", timeout=max(left, 1))
            await page.evaluate(_QUIET_JS, [DOM_QUIET_MS, max(left, DOM_QUIET_MS)])
            return
        except pw.Error:
            left = max(0, int((deadline - time.monotonic()) * 1000))


def effects(events: list[dict[str, Any]], url_before: str, url_after: str, focus_before: str | None,
            focus_after: str | None, text: list[dict[str, str]] | None = None) -> dict[str, Any]:  # fmt: skip
    """What happened on the page since the action began, from its captured events and the text it made
    appear or change."""
    out: dict[str, Any] = {}
    if url_after != url_before or any(e["kind"] == "navigation" for e in events):
        out["navigation"] = {"url": url_after}
    tabs = [{"page_id": e["page_id"], "url": e["url"]} for e in events if e["kind"] == "new_tab"]
    dialogs = [
        {"type": e["type"], "message": e["message"], "answer": e["answer"]} for e in events if e["kind"] == "dialog"
    ]
    downloads = [{"url": e["url"], "filename": e["filename"]} for e in events if e["kind"] == "download"]
    console = [{"level": e["level"], "text": e["text"]} for e in events
               if e["kind"] == "console" and e["level"] in ("error", "warning")]  # fmt: skip
    failed = [{"url": e["url"], "error": e["error"]} for e in events if e["kind"] == "request_failed"]
    for key, values in (("new_tabs", tabs), ("dialogs", dialogs), ("downloads", downloads), ("console", console),
                        ("failed_requests", failed)):  # fmt: skip
        if values:
            out[key] = values
    if text:
        out["text"] = text
    if focus_after != focus_before:
        out["focus"] = focus_after
    return out
