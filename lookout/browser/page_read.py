"""A page's read for a snapshot: its title, its open modal dialog and its AI snapshot with, when a view needs
them, the nodes' boxes (Playwright's, or its refs' read apart: lookout.browser.ref_places)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lookout.browser.aria import holds_dialog
from lookout.browser.closed_shadow import PROBE, ClosedShadow
from lookout.browser.ref_places import RefPlaces

if TYPE_CHECKING:
    from playwright.async_api import Page as PlaywrightPage

_MODAL_JS = """() => {
  const open = [...document.querySelectorAll('[aria-modal="true"], dialog')].filter(el =>
    (el.tagName === 'DIALOG' ? el.matches(':modal') : true) && el.getClientRects().length > 0);
  if (!open.length) return null;
  const el = open[open.length - 1];
  const by = el.getAttribute('aria-labelledby');
  const label = el.getAttribute('aria-label') || (by && document.getElementById(by)?.textContent) || '';
  return label.trim();
}"""
"""The accessible name of the page's open modal dialog ("" for one without a name), null when none is open."""


@dataclass(frozen=True, slots=True)
class Read:
    """What a snapshot read from the page."""

    url: str
    title: str
    modal: str | None
    raw: str
    boxes: bool = True
    """The nodes are placed: the snapshot has every node's box, or `places` has its refs'."""
    closed: bool = False
    """The page has closed shadow roots."""
    places: str | None = None
    """The boxes of the refs (lookout.browser.ref_places), when the snapshot was read without Playwright's."""


async def read_page(
    page: PlaywrightPage, shadow: ClosedShadow, boxes: bool = True, places: RefPlaces | None = None,
    document: float = 0.0,
) -> Read:  # fmt: skip
    """The page's title, the name of its open modal dialog (None when none is open) and its AI snapshot, read
    now; with `boxes`, its nodes placed: by `places` when given (the snapshot without Playwright's boxes, then its
    refs' boxes: lookout.browser.ref_places; `document`: the page's `navigated_at`), else, or when they cannot be
    read, by Playwright's boxes. The modal check, a script on the page's main thread, runs only when the snapshot
    holds a dialog: without one there is nothing a modal could be (the view shows a modal only as a dialog's
    node). The nodes of closed shadow roots are read only when the page has any (lookout.browser.closed_shadow),
    and placed by Playwright's boxes: a page that has some is read with them."""
    by_refs = places if boxes else None
    by_playwright = boxes and by_refs is None
    reads: list[Awaitable[Any]] = [page.evaluate(PROBE), page.aria_snapshot(mode="ai", boxes=by_playwright)]
    at_once = by_refs is not None and by_refs.ready(document)
    if by_refs is not None:  # the places sent after the snapshot, or the world of a new document found
        reads.append(by_refs.read(page) if at_once else by_refs.prepare(page, document))
    (title, closed, origin), raw, *found = await asyncio.gather(*reads)
    placed = None
    if closed:
        if not by_playwright:
            raw, boxes = await page.aria_snapshot(mode="ai", boxes=True), True
        raw = await shadow.spliced(page, raw)
    elif by_refs is not None:
        read = found[0] if at_once else await by_refs.read(page)
        if read is not None and read[0] == origin:  # the snapshot's document: refs are numbered anew in each
            placed = read[1]
        else:
            raw = await page.aria_snapshot(mode="ai", boxes=True)
    modal = await page.evaluate(_MODAL_JS) if holds_dialog(raw) else None
    return Read(page.url, title, modal, raw, boxes, bool(closed), placed)
