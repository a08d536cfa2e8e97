"""Where the refs of a snapshot are on the page, read without Playwright's boxes.

Playwright's `aria_snapshot(mode="ai", boxes=True)` takes a rectangle for every node as it renders the tree and
sends each as an object through its serializer: 1.3x to 1.45x of the snapshot without them (docs/pages.md). A
view places a node by its box only when the node has a ref of the top document (`lookout.browser.aria.placed_box`),
and Playwright leaves each such ref on its element (`element._ariaRef`, in its own world of the page, where its
snapshot ran). So lookout reads the snapshot without boxes, then, in that world over the DevTools protocol, the
rectangle of every element that carries a ref: one short script and one string back (`ref x y w h ...`), with
the document's time origin, which must be the one the title probe beside the snapshot saw (refs are numbered
anew in each document: a navigation between the two reads must not lend one document's boxes to another's refs).

Nothing here is taken on trust: places that do not give every top-document ref of the snapshot exactly one box
(`lookout.browser.aria.placed`: Playwright changed how it keeps refs, an element went or was given a new ref
between the two reads), or of another document, or none (the world not found) are not used; the page is read
again with Playwright's boxes (lookout.browser.page). The places are taken in the page's next task after the
snapshot's, as the title and the modal check are.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page as PlaywrightPage

PLACES_WAIT_S = 10.0
"""The longest a read of the places (or a search for the world) may take: a page that does not answer is left to
Playwright's own read, which says so."""
UTILITY_WORLD = "__playwright_utility_world_"
"""The name Playwright gives its world of a page (then the page's id)."""

PLACES_JS = r"""(() => {
  const out = [];
  const walk = root => {
    for (const element of root.querySelectorAll('*')) {
      const kept = element._ariaRef;
      if (kept && typeof kept.ref === 'string') {
        const r = element.getBoundingClientRect();
        out.push(kept.ref, Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height));
      }
      if (element.shadowRoot) walk(element.shadowRoot);
    }
  };
  walk(document);
  return [performance.timeOrigin, out.join(' ')];
})()"""
"""Which document (its time origin), and every element of it (open shadow roots too) that carries a ref:
`ref x y w h`, rounded as Playwright rounds its boxes."""


class RefPlaces:
    """One page's reader of its refs' places: its DevTools session and Playwright's world in the top document,
    found beside the snapshot when the page has a new document, and again whenever the one kept is gone."""

    def __init__(self) -> None:
        self._cdp: CDPSession | None = None
        self._world: str | None = None
        """The unique id of Playwright's world of the top document (None: to be found)."""
        self._document = -1.0
        """The page's `navigated_at` when the world was found."""
        self._refused = False
        """The browser gave no DevTools session for the page."""
        self.reads = 0
        """Places read (a test's count)."""

    def ready(self, document: float) -> bool:
        """The world of the page's document (its `navigated_at`) is known: the places can be asked for beside
        the snapshot (sent after it, they are read after it: the page answers in turn)."""
        return self._world is not None and self._document == document

    async def prepare(self, page: PlaywrightPage, document: float) -> None:
        """Find the world of the page's document: run beside the snapshot, so that a new document costs its
        first read no round trips of its own."""
        self._document = document
        await self._find(page)

    async def read(self, page: PlaywrightPage) -> tuple[float, str] | None:
        """The time origin of the page's document (refs are numbered anew in each: the caller checks that it is
        the snapshot's) and its refs' places now; None when they cannot be read (no DevTools session, the world
        not found): the caller reads Playwright's boxes instead."""
        for _ in range(2):  # the world kept may have gone with its document: found again once
            if self._world is None and not await self._find(page):
                return None
            try:
                assert self._cdp is not None
                async with asyncio.timeout(PLACES_WAIT_S):
                    answer = await self._cdp.send("Runtime.evaluate", {
                        "expression": PLACES_JS, "uniqueContextId": self._world, "returnByValue": True})  # fmt: skip
            except TimeoutError:  # a page that does not answer: Playwright's read says so
                self._world = None
                return None
            except PlaywrightError:  # no such context (a new document), or the session went with its target
                self._world = None
                continue
            value = answer.get("result", {}).get("value")
            if "exceptionDetails" not in answer and isinstance(value, list) and len(value) == 2:
                self.reads += 1
                return float(value[0]), str(value[1])
            self._world = None
        return None

    def forget(self) -> None:
        """Find the world again before the next read (its places did not give every ref)."""
        self._world = None

    async def _find(self, page: PlaywrightPage) -> bool:
        """Find the world (and open the session first); whether it was found."""
        if self._cdp is None:
            if self._refused:
                return False
            try:
                self._cdp = await page.context.new_cdp_session(page)
            except PlaywrightError:  # a browser that gives no DevTools session: Playwright's boxes, every time
                self._refused = True
                return False
        try:
            async with asyncio.timeout(PLACES_WAIT_S):
                self._world = await _world(self._cdp)
        except TimeoutError:
            self._world = None
        except (PlaywrightError, KeyError, TypeError):
            self._cdp = self._world = None  # a session that went with its target: the next read opens another
        return self._world is not None


async def _world(cdp: CDPSession) -> str | None:
    """The unique id of Playwright's world of the top document; None unless exactly one is found."""
    top = (await cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    found: list[dict[str, object]] = []

    def created(event: dict[str, dict[str, object]]) -> None:
        found.append(event["context"])

    cdp.on("Runtime.executionContextCreated", created)
    try:
        await cdp.send("Runtime.enable")  # reports every context that exists, before it answers
        await cdp.send("Runtime.disable")  # and no more: console messages are not sent here
    finally:
        cdp.remove_listener("Runtime.executionContextCreated", created)
    worlds = [str(c["uniqueId"]) for c in found if str(c.get("name", "")).startswith(UTILITY_WORLD)
              and isinstance(aux := c.get("auxData"), dict) and aux.get("frameId") == top]  # fmt: skip
    return worlds[0] if len(worlds) == 1 else None
