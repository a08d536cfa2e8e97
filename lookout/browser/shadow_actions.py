"""Actions on elements inside closed shadow roots, by their `s<N>` refs (lookout.browser.closed_shadow), over the
DevTools protocol: the ref's backend node id is resolved to the element (`DOM.resolveNode`), scripts run on it
(`Runtime.callFunctionOn`, so the checks and watching before an action are lookout.browser.in_page's own), and
input goes through Playwright's mouse and keyboard (`Input.dispatch*`), so the page gets trusted events as from a
person. click, hover, check, uncheck, fill, type, press, select and upload work; a wait on such a ref is refused.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from lookout.browser import playwright_api as pw
from lookout.browser.action_kinds import (
    Action,
    Check,
    Click,
    Fill,
    Hover,
    OnElement,
    Press,
    Select,
    Type,
    Uncheck,
    Upload,
    WaitElement,
)
from lookout.core.errors import Conflict

if TYPE_CHECKING:
    from playwright.async_api import CDPSession
    from playwright.async_api import Page as PlaywrightPage

    from lookout.browser.closed_shadow import ClosedShadow

SHADOW_REF = re.compile(r"s(\d+)")
_POINT = """el => {
  if (!el.isConnected) return null;
  el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  const box = el.getBoundingClientRect();
  return box.width && box.height ? [box.left + box.width / 2, box.top + box.height / 2] : [];
}"""
"""The element's centre in the viewport after scrolling it into view (null: gone; []: it has no box)."""
_FOCUS = """(el, select) => {
  el.focus();
  if (select && (el.localName === 'input' || el.localName === 'textarea')) el.select();
  else if (select && el.isContentEditable) getSelection().selectAllChildren(el);
  return el.getRootNode().activeElement === el || el.contains(el.getRootNode().activeElement);
}"""
_CHECKED = "el => el.getAttribute('aria-checked') !== null ? el.getAttribute('aria-checked') === 'true' : el.checked"
_SELECT = """(el, values) => {
  const wanted = new Set(values.map(v => v.trim()));
  for (const option of el.options) option.selected = wanted.has(option.value) || wanted.has(option.label.trim());
  el.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
}"""


def shadow_ref(action: Action) -> int | None:
    """The backend node id of the action's `s<N>` ref, None for any other action; a Conflict for a wait on one."""
    ref = action.ref if isinstance(action, OnElement | Press | WaitElement) else None
    match = SHADOW_REF.fullmatch(ref or "")
    if match is None:
        return None
    if isinstance(action, WaitElement):
        raise Conflict(f"wait on ref {ref} is not done: it is inside a closed shadow root, which only a snapshot "
                       "reads; wait for its text (wait.text) or snapshot again")  # fmt: skip
    return int(match.group(1))


class ShadowElement:
    """An element inside a closed shadow root, resolved for one action."""

    def __init__(self, cdp: CDPSession, backend_id: int, object_id: str, ref: str) -> None:
        self.cdp, self.backend_id, self.object_id, self.ref = cdp, backend_id, object_id, ref

    @classmethod
    async def resolve(cls, page: PlaywrightPage, shadow: ClosedShadow, backend_id: int) -> ShadowElement:
        """The element of ref `s<backend_id>`, or a Conflict when it is gone."""
        ref = f"s{backend_id}"
        cdp = await shadow.session(page)
        try:
            found = await cdp.send("DOM.resolveNode", {"backendNodeId": backend_id})
        except pw.Error as exc:
            raise Conflict(
                f"ref {ref} is no longer on the page (it changed since the snapshot): snapshot again"
            ) from exc
        element = cls(cdp, backend_id, found["object"]["objectId"], ref)
        if not await element.evaluate("el => el.isConnected", None):
            raise Conflict(f"ref {ref} is no longer on the page (it changed since the snapshot): snapshot again")
        return element

    async def evaluate(self, expression: str, arg: Any, timeout: float | None = None) -> Any:
        """`expression` (a function of the element and `arg`) run on the element, as Locator.evaluate does."""
        del timeout  # one round trip: the element is resolved already
        done = await self.cdp.send("Runtime.callFunctionOn", {
            "functionDeclaration": f"function (arg) {{ return ({expression})(this, arg); }}",
            "objectId": self.object_id, "arguments": [{"value": arg}], "returnByValue": True, "awaitPromise": True,
        })  # fmt: skip
        if "exceptionDetails" in done:
            details = done["exceptionDetails"]
            raise pw.Error(str(details.get("exception", {}).get("description") or details.get("text")))
        return done["result"].get("value")

    async def perform(self, page: PlaywrightPage, action: Action) -> None:
        """Run the action on the element; Playwright's failures become Conflicts."""
        try:
            await self._perform(page, action)
        except pw.Error as exc:
            raise Conflict(f"{action.name} on ref {self.ref} failed: {str(exc).strip().splitlines()[0]}") from exc

    async def _perform(self, page: PlaywrightPage, action: Action) -> None:
        match action:
            case Click():
                await page.mouse.click(*await self._point(action))
            case Hover():
                await page.mouse.move(*await self._point(action))
            case Check() | Uncheck():
                wanted = isinstance(action, Check)
                if await self.evaluate(_CHECKED, None) != wanted:
                    await page.mouse.click(*await self._point(action))
                if await self.evaluate(_CHECKED, None) != wanted:
                    raise Conflict(f"{action.name}: clicking ref {self.ref} did not make it "
                                   f"{'checked' if wanted else 'unchecked'}")  # fmt: skip
            case Fill(text=text, submit=submit) | Type(text=text, submit=submit):
                await self._focus(action, select=isinstance(action, Fill))
                if isinstance(action, Type):
                    await page.keyboard.type(text)
                elif text:
                    await page.keyboard.insert_text(text)
                else:
                    await page.keyboard.press("Delete")
                if submit:
                    await page.keyboard.press("Enter")
            case Press(key=key):
                await self._focus(action, select=False)
                await page.keyboard.press(key)
            case Select(values=values):
                await self.evaluate(_SELECT, list(values))
            case Upload(files=files):
                await self.cdp.send("DOM.setFileInputFiles", {"files": list(files), "backendNodeId": self.backend_id})
            case _:
                raise Conflict(f"{action.name} is not done on ref {self.ref} (inside a closed shadow root)")

    async def _point(self, action: Action) -> tuple[float, float]:
        point = await self.evaluate(_POINT, None)
        if point is None:
            raise Conflict(f"ref {self.ref} is no longer on the page (it changed since the snapshot): snapshot again")
        if not point:
            raise Conflict(f"{action.name}: ref {self.ref} has no box on the page (hidden): snapshot again")
        return point[0], point[1]

    async def _focus(self, action: Action, select: bool) -> None:
        if not await self.evaluate(_FOCUS, select):
            raise Conflict(f"{action.name}: ref {self.ref} does not take the focus, so it takes no keys")
