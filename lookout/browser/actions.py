"""Actions on a page, the settling after them, and what they did (their effects).

An action names its element by a ref of the page's last observation. A ref that observation did not
have, or one whose element is gone (the page navigated, the element was removed), is refused with a
Conflict that says to snapshot again: never a click on the wrong element, never a long wait for one. Input
a control cannot take (letters for a number field, an option a select does not have) is a BadInput that
names the control and what it accepts, checked in the page before anything runs.
After the action the page settles: the requests the action started end, the new document loads (when it
navigated) and the DOM is quiet for `SETTLE_QUIET_MS` (`INPUT_QUIET_MS` after an action that only gives a
control its value), within `SETTLE_MAX_MS`; the answer says which ended the wait. The effects are read from the page's captured events since the action began (navigation and the new
URL, new tabs, dialogs, downloads, console errors and warnings, failed requests) and from one pass in the
page after it (lookout.browser.in_page): the text the action made appear or change (`text`: on the same document
what it added, changed or revealed, in the document and in open shadow roots, each with its kind: alert,
status, live, message, field_error, dialog, added, changed; after a navigation the new page's messages and
field errors), the controls whose value, checked or selected state changed (`controls`), and the focus when
it moved to an element (named by role and name, inside shadow roots too).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lookout.browser import in_page
from lookout.browser import playwright_api as pw
from lookout.browser.action_kinds import (
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
from lookout.core.errors import BadInput, Conflict
from lookout.core.observations import Seen, staleness

if TYPE_CHECKING:
    from playwright.async_api import Frame, Locator, Page

    from lookout.browser.shadow_actions import ShadowElement
DOM_QUIET_MS = 300
"""The `dom_quiet` wait's quiet: the DOM has not changed for this long."""
SETTLE_QUIET_MS = 100
"""After an action, the page has settled when the requests it started have ended (and the new document has
loaded, when it navigated) and the DOM has then not changed for this long."""
INPUT_QUIET_MS = 50
"""The same after an action that only gives a control its value (fill or type without Enter, select, check,
uncheck, hover): its handlers ran while it did; what they start later comes over the network (counted) or
changes the DOM within this."""
SETTLE_MAX_MS = 3000
ELEMENT_READ_MS = 2000
"""How long the check before an action waits for its element (it was just found on the page)."""
OUTCOME_ITEMS = 8
OUTCOME_CHARS = 200


SEEN_REFS_KEPT = 50_000
"""How many refs a page remembers having shown (the newest): a page open for days that keeps making elements
would otherwise grow the record without bound."""


class SeenRefs:
    """The refs this page's snapshots have had, the newest SEEN_REFS_KEPT of them; `complete` while none has
    been forgotten (only then is a ref not among them known never to have been given)."""

    def __init__(self, kept: int = SEEN_REFS_KEPT) -> None:
        self._refs: dict[str, None] = {}
        self._kept = kept
        self.complete = True

    def add(self, refs: AbstractSet[str]) -> None:
        for ref in refs:  # the newest last: a ref seen again moves to the end
            self._refs.pop(ref, None)
            self._refs[ref] = None
        if len(self._refs) > self._kept:
            for ref in list(self._refs)[: len(self._refs) - self._kept]:
                del self._refs[ref]
            self.complete = False

    def __contains__(self, ref: object) -> bool:
        return ref in self._refs

    def __len__(self) -> int:
        return len(self._refs)


@dataclass
class RefCheck:
    """What the page's last observation knew: its refs and when it was taken."""

    obs_id: str | None
    refs: frozenset[str]
    taken_at: float
    navigated_at: float
    ever: SeenRefs | None = None
    """The refs the page's snapshots have had (to tell a ref whose element went from one never given)."""


def check_ref(action: Action, known: RefCheck) -> None:
    """Refuse an action on an element whose ref the page's last snapshot did not have, or may have lost."""
    if not isinstance(action, OnElement):
        return
    if known.obs_id is None:
        raise Conflict("no snapshot of this page yet: take one, then use its refs")
    ever = known.ever if known.ever is not None else SeenRefs()
    if action.ref not in known.refs and action.ref not in ever:
        if not ever.complete:
            raise Conflict(f"ref {action.ref} is not in the last snapshot ({known.obs_id}) nor among the last "
                           f"{len(ever)} refs this page showed: snapshot again and use its refs")  # fmt: skip
        raise Conflict(f"ref {action.ref} is unknown: no snapshot of this page had it (the last is {known.obs_id});"
                       " snapshot again and use its refs")  # fmt: skip
    if action.ref not in known.refs:
        raise Conflict(f"ref {action.ref} is no longer on the page: the last snapshot ({known.obs_id}) does not "
                       "have it: snapshot again")  # fmt: skip
    reason = staleness(Seen(known.taken_at), time.time(), since={"the page navigated": known.navigated_at})
    if reason is not None:  # the observation store's one staleness check, as a screenshot click's and a tap's
        raise Conflict(f"{reason} snapshot {known.obs_id}, so ref {action.ref} is stale: snapshot again")


async def element_of(page: Page, action: Action) -> Locator | None:
    """The element the action is on (checked to be on the page), None for an action on the page."""
    ref = action.ref if isinstance(action, OnElement | Press) else None
    if ref is None:
        return None
    locator = page.locator(f"aria-ref={ref}")
    try:
        found = await locator.count()
    except pw.Error as exc:
        raise Conflict(f"ref {ref} cannot be found now ({_first_line(exc)}): snapshot again") from exc
    if found != 1:
        raise Conflict(f"ref {ref} is no longer on the page (it changed since the snapshot): snapshot again")
    return locator


async def frame_of(page: Page, element: Locator | None) -> Frame | None:
    """The iframe the element is in (None for the top document, an action on the page, or a page without
    frames: then no round trip is spent on asking)."""
    if element is None or len(page.frames) < 2:
        return None
    try:
        handle = await element.element_handle(timeout=ELEMENT_READ_MS)
        try:
            frame = await handle.owner_frame()
        finally:
            await handle.dispose()
    except pw.Error:
        return None
    return None if frame is None or frame == page.main_frame else frame


async def before(page: Page, element: Locator | ShadowElement | None, action: Action) -> str | None:
    """Check what the action gives its control (BadInput naming the control and what it accepts) and that
    nothing covers the element a pointer action aims at (a Conflict naming what covers it: a modal, an
    overlay, at once rather than after the action's timeout), start
    watching what the action does (lookout.browser.in_page), and return where the focus is."""
    check: dict[str, Any] = {}
    if isinstance(action, Fill | Type):
        check["fill"] = action.text
    elif isinstance(action, Select):
        check["select"] = list(action.values)
    elif isinstance(action, Click | Hover | Check | Uncheck):
        check["hit"] = True
    try:
        if element is not None:
            seen = await element.evaluate(in_page.BEFORE_ACTION, check, timeout=ELEMENT_READ_MS)
        else:
            seen = await page.evaluate(in_page.BEFORE_PAGE_ACTION, check)
    except pw.Error:
        return None  # a page that cannot run it (navigating): the outcome then reads the document it lands on
    problem = seen.get("problem")
    if problem:
        if "covered" in problem:
            raise Conflict(f"{action.name}: the {problem['control']} ({_ref(action)}) is covered by "
                           f"{problem['covered']}, which would take the {action.name}: close or answer it first")  # fmt: skip
        field = "values" if isinstance(action, Select) else "text"
        given = problem["given"]
        raise BadInput(f"{action.name}: the {problem['control']} ({_ref(action)}) takes {problem['accepts']}; "
                       f"{given!r} is not one", field=field)  # fmt: skip
    focused: str | None = seen.get("focus")
    return focused


def _ref(action: Action) -> str:
    return f"ref {action.ref}" if isinstance(action, OnElement | Press) and action.ref else "the page"


async def perform(
    page: Page, action: Action, element: Locator | None, point: tuple[float, float] | None = None
) -> None:
    """Run the action (on `element`, or a click at `point`, page coordinates, when given); Playwright's
    failures become Conflicts with its first line, input the control refused a BadInput."""
    try:
        if point is not None:
            await page.mouse.click(*point)
            return
        await _perform(page, action, element)
    except pw.Error as exc:
        message = _first_line(exc)
        if "Cannot type text into" in message or "Malformed value" in message:
            raise BadInput(f"{action.name}: {_ref(action)} refused {getattr(action, 'text', '')!r}: {message}",
                           field="text") from exc  # fmt: skip
        raise Conflict(f"{action.name} failed: {message}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def _perform(page: Page, action: Action, element: Locator | None) -> None:
    match action:
        case Navigate(url=url, timeout_ms=timeout):
            await page.goto(url, timeout=timeout)
        case Back(timeout_ms=timeout):
            await page.go_back(timeout=timeout)
        case Forward(timeout_ms=timeout):
            await page.go_forward(timeout=timeout)
        case Reload(timeout_ms=timeout):
            await page.reload(timeout=timeout)
        case Press(key=key, timeout_ms=timeout):
            await (element.press(key, timeout=timeout) if element is not None else page.keyboard.press(key))
        case WaitText(text=text, gone=gone, timeout_ms=timeout):
            await page.get_by_text(text).first.wait_for(state="hidden" if gone else "visible", timeout=timeout)
        case WaitUrl(url=url, timeout_ms=timeout):
            await page.wait_for_url(f"**{url}**", timeout=timeout)
        case WaitElement(ref=ref, state=state, timeout_ms=timeout):
            await page.locator(f"aria-ref={ref}").wait_for(state=state, timeout=timeout)
        case WaitDomQuiet(timeout_ms=timeout):
            await page.evaluate(in_page.DOM_QUIET, [DOM_QUIET_MS, timeout])
        case WaitNetworkIdle(timeout_ms=timeout):
            await page.wait_for_load_state("networkidle", timeout=timeout)
        case OnElement():
            assert element is not None, "an action on an element is given its element"
            await _on_element(element, action)
        case ClickAt() | DialogAnswer():
            raise AssertionError(f"{action.name} is run by the page")  # a click at a point, an answer


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


async def after(page: Page | Frame) -> dict[str, Any]:
    """What the action did, read in one pass (lookout.browser.in_page.AFTER_ACTION): `text`, `controls`, `focus`,
    `title`, `document` (same or new; unread when the page could not run it)."""
    for _ in range(2):  # a navigation may destroy the context the first read runs in
        try:
            done: dict[str, Any] = await page.evaluate(in_page.AFTER_ACTION, [OUTCOME_ITEMS, OUTCOME_CHARS])
            return done
        except pw.Error:
            await asyncio.sleep(0.05)
    return {"text": [], "controls": [], "focus": None, "title": "", "document": "unread"}


def quiet_ms(action: Action) -> int:
    """How long the DOM must be quiet after this action for the page to have settled."""
    if isinstance(action, Hover | Check | Uncheck | Select) or (isinstance(action, Fill | Type) and not action.submit):
        return INPUT_QUIET_MS
    return SETTLE_QUIET_MS


async def settle(page: Page | Frame, in_flight: Callable[[], bool], navigated: Callable[[], bool], quiet_for: int,
                 deadline_ms: int = SETTLE_MAX_MS) -> str:  # fmt: skip
    """Wait (bounded) for the requests counted by `in_flight()` to end, the new document to load (when the
    action navigated), the timers the action's handlers started to fire (lookout.browser.in_page.TIMER_MS) and the
    DOM to be quiet for `quiet_for` ms; returns what ended the wait."""
    start = time.monotonic()
    deadline = start + deadline_ms / 1000
    while in_flight() and time.monotonic() < deadline:  # noqa: ASYNC110 (a predicate; no event tells)
        await asyncio.sleep(0.02)
    for _ in range(2):  # a navigation destroys the context the first wait runs in
        left = max(1, int((deadline - time.monotonic()) * 1000))
        try:
            if navigated():
                await page.wait_for_load_state("load", timeout=left)
            left = max(quiet_for, int((deadline - time.monotonic()) * 1000))
            quiet, timers = await page.evaluate(in_page.DOM_QUIET, [quiet_for, left])
        except pw.Error:
            continue
        took = time.monotonic() - start
        if not quiet:
            return f"the {deadline_ms} ms limit (the DOM kept changing or its timers ran on) at {took:.2f} s"
        steps = ["requests ended"] + (["the page loaded"] if navigated() else [])
        steps += [f"its {timers} timer{'s' if timers > 1 else ''} fired"] if timers else []
        steps.append(f"DOM quiet {quiet_for} ms")
        return f"{', '.join(steps)} at {took:.2f} s"
    return f"the {deadline_ms} ms limit at {time.monotonic() - start:.2f} s"


def effects(events: list[dict[str, Any]], url_before: str, url_after: str, focus_before: str | None,
            done: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """What happened on the page since the action began, from its captured events and what the page read
    after it (`done`: lookout.browser.in_page.AFTER_ACTION's answer)."""
    out: dict[str, Any] = {}
    if url_after != url_before or any(e["kind"] == "navigation" for e in events):
        out["navigation"] = {"url": url_after}
    tabs = [{"page_id": e["page_id"], "url": e["url"]} for e in events if e["kind"] == "new_tab"]
    dialogs = [
        {"type": e["type"], "message": e["message"], "answer": e["answer"]} for e in events if e["kind"] == "dialog"
    ]
    downloads = [{key: e[key] for key in ("url", "filename", "path", "get", "state")}
                 for e in events if e["kind"] == "download"]  # fmt: skip
    console = [{"level": e["level"], "text": e["text"]} for e in events
               if e["kind"] == "console" and e["level"] in ("error", "warning")]  # fmt: skip
    failed = [{"url": e["url"], "error": e["error"]} for e in events if e["kind"] == "request_failed"]
    for key, values in (("new_tabs", tabs), ("dialogs", dialogs), ("downloads", downloads), ("console", console),
                        ("failed_requests", failed), ("text", done.get("text")), ("controls", done.get("controls"))):  # fmt: skip
        if values:
            out[key] = values
    focus_after = done.get("focus")
    if focus_after is not None and focus_after != focus_before:  # moved to an element (not just lost)
        out["focus"] = focus_after
    return out
