"""A page (`Page`): one browser tab, what happened on it and what it does: snapshot, screenshot, find, act,
script. Snapshots and screenshots are observations in the shared store (lookout.core.observations) under
`<data>/pages/<id>/observations/<obs_id>.{json,png}`; visited URLs go to `<data>/pages/<id>/history.jsonl`.
Frames in the timeline carry the agent of the request being served (`current_agent`, set by the HTTP layer).
The registry (lookout.browser.registry) creates pages and feeds them the events it captures.
"""

from __future__ import annotations

import asyncio
import base64
import io
import time
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from PIL import Image

from lookout.browser import playwright_api as pw
from lookout.browser.action_kinds import NAVIGATIONS, Action, ClickAt, DialogAnswer, OnElement
from lookout.browser.actions import (
    RefCheck,
    SeenRefs,
    after,
    before,
    check_ref,
    effects,
    element_of,
    frame_of,
    perform,
    quiet_ms,
    settle,
)
from lookout.browser.aria import AriaNode, parse
from lookout.browser.closed_shadow import ClosedShadow
from lookout.browser.frames import action_frame, resource, screenshot_frame, snapshot_frame
from lookout.browser.hands import PageHands, check_unchanged
from lookout.browser.page_read import Read, read_page
from lookout.browser.ref_places import RefPlaces
from lookout.browser.search import find
from lookout.browser.shadow_actions import ShadowElement, shadow_ref
from lookout.browser.snapshot_view import PageContext, SnapshotOptions
from lookout.browser.views import Answer, Earlier, snapshot_text
from lookout.core.errors import BadInput, Conflict, LookoutError, Unavailable
from lookout.core.gc_tuning import gc_paused
from lookout.core.images import ImageFormat, encode, resize
from lookout.core.leases import Holdable, LeaseBook
from lookout.core.observations import ObservationStore, Seen, staleness
from lookout.core.scaling import RAW_WARNING, Scale, fit, image_tokens
from lookout.timeline.recording import Recorder, current_agent

if TYPE_CHECKING:
    from playwright.async_api import Page as PlaywrightPage
    from playwright.async_api import Request

EVENTS_KEPT = 500
HISTORY_SHOWN = 5
NAVIGATION_TIMEOUT_MS = 30_000
OUTCOMES = frozenset({"alert", "status", "live", "message", "field_error", "dialog"})
"""The kinds of an action's text effects that are its outcome, repeated in the header of its snapshot."""


@dataclass(eq=False)
class Page(Holdable):
    """One open page: what happened on it (captured from its creation) and its operations: snapshot,
    screenshot, find, act, script, and its stored observations."""

    id: str
    page: PlaywrightPage
    created_at: float
    viewport: tuple[int, int]
    store: ObservationStore
    recorder: Recorder
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=EVENTS_KEPT))
    history: list[str] = field(default_factory=list)
    """Titles (or URLs) of the pages visited, oldest first."""
    last_obs: str | None = None
    obs_refs: frozenset[str] = frozenset()
    """Every ref of the last observation's raw snapshot (shown or folded)."""
    refs_seen: SeenRefs = field(default_factory=SeenRefs)
    """The refs the page's snapshots have had (the newest SEEN_REFS_KEPT)."""
    obs_taken_at: float = 0.0
    navigated_at: float = 0.0
    pending: dict[Request, float] = field(default_factory=dict)
    """Requests in flight, with the time each started."""
    saving: set[asyncio.Future[None]] = field(default_factory=set)
    """Downloads being saved (lookout.browser.downloads): an action settles once they are."""
    seq: int = 0
    """The number of the last event captured."""
    dialog_answer: tuple[bool, str | None] | None = None
    """How to answer the next dialog (accept?, prompt text), set by the `dialog` action; else dismiss."""
    profile: str | None = None
    """The profile whose persistent context the page is in (None: an isolated context of its own)."""
    used_at: float = field(default_factory=time.monotonic)
    """When a call last named it (monotonic): idle pages are closed."""
    _last: Earlier | None = None
    """The last snapshot's parsed tree, for the diff of the next one (an action's snapshot)."""
    _last_raw: str = ""
    """The raw text that tree was parsed from."""
    _boxes: bool = True
    """Whether the next read that is not a diff's asks for boxes: the last view could depend on them, or the page
    has closed shadow roots (a guess only: an answer that needs them is always made from a read with them)."""
    _closed: bool = False
    """The last read found closed shadow roots (their nodes are placed by the boxes)."""
    _obs_url: str = ""
    """The URL of the last snapshot."""
    leases: LeaseBook = field(default_factory=lambda: LeaseBook(None))
    """The daemon's leases (the registry's book): whose actions are let in."""
    hands: PageHands = field(default_factory=PageHands)
    """Each agent's last snapshot and the last action (lookout.browser.hands)."""
    shadow: ClosedShadow = field(default_factory=ClosedShadow)
    """The reader of the page's closed shadow roots (and its CDP session)."""
    places: RefPlaces = field(default_factory=RefPlaces)
    """The reader of its refs' boxes (and its CDP session)."""
    _acting: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One action at a time: the events between an action's start and its end are its own effects."""

    def event(self, kind: str, **fields: Any) -> None:
        self.seq += 1
        self.events.append({"seq": self.seq, "ts": time.time(), "kind": kind, **fields})

    def request_started(self, request: Request) -> None:
        self.pending[request] = time.monotonic()

    def request_ended(self, request: Request) -> None:
        self.pending.pop(request, None)

    async def open(self, url: str) -> None:
        if not url.startswith(("http://", "https://", "file://", "about:", "data:")):
            raise BadInput(f"{url!r} is not a URL lookout opens (http, https, file, about, data)", field="url")
        try:
            await self.page.goto(url, timeout=NAVIGATION_TIMEOUT_MS, wait_until="load")
        except pw.Error as exc:
            raise Conflict(f"navigation to {url} failed: {str(exc).splitlines()[0]}") from exc
        self.history.append(await _title(self.page) or url)

    async def describe(self) -> dict[str, Any]:
        closed = self.page.is_closed()
        return {"id": self.id, "url": self.page.url, "title": "" if closed else await _title(self.page),
                "viewport": {"width": self.viewport[0], "height": self.viewport[1]}, "profile": self.profile,
                "created_at": self.created_at, "closed": closed, "last_obs": self.last_obs,
                "lease": self.lease(),
                "last_action": self.hands.last.to_json() if self.hands.last else None}  # fmt: skip

    async def snapshot(
        self, options: SnapshotOptions, since: str | None = None, expand: str | None = None,
        outcome: tuple[str, ...] = (),
    ) -> dict[str, Any]:  # fmt: skip
        """A budgeted snapshot of the page as it is now (read afresh every time: no kept read can show that
        nothing changed, see docs/pages.md); with `since` a diff against that earlier snapshot (a full snapshot
        that says why when the URL changed or most of the page did); with `expand` only the subtree of that
        ref; `outcome`: header lines (an action's messages)."""
        read_at = time.time()
        # the earlier observation is read while the page answers
        before, read = await asyncio.gather(self._earlier(since), self._read(self._guess(since)))
        obs_id = self.store.new_id()
        result, answer = await self._answer(obs_id, read, options, before, expand, outcome)
        while result is None:  # the answer could depend on boxes the read did not have: read it placed
            exact = read.places is not None  # the refs' boxes did not place every ref: Playwright's boxes
            if exact:
                self.places.forget()
            read_at = time.time()
            read = await self._read(True, exact)
            result, answer = await self._answer(obs_id, read, options, before, expand, outcome)
        self._closed, self._obs_url = read.closed, read.url
        if "diff_against" not in answer.metadata:  # a diff shows no boxes: it says nothing of what a view needs
            self._boxes = answer.by_position or read.closed
        if answer.root is not None:
            self._last, self._last_raw = Earlier(obs_id, read.url, answer.root), read.raw
        elif self._last is not None and self._last_raw == read.raw:  # a kept answer of the same text
            self._last = self._last._replace(obs_id=obs_id)
        else:
            self._last = None
        self.last_obs, self.obs_taken_at, self.obs_refs = obs_id, time.time(), answer.refs
        self.refs_seen.add(answer.refs)
        self.hands.saw(current_agent.get(), RefCheck(obs_id, answer.refs, read_at, self.navigated_at))
        mode = "snapshot since" if before is not None else "snapshot expand" if expand is not None else "snapshot"
        self.recorder.record(snapshot_frame(self.id, result, mode))
        return result

    def _guess(self, since: str | None) -> bool:
        """Whether to read with boxes: not for a diff against the last snapshot of this URL (likely a diff, which
        shows none), else as the last view needed."""
        likely_diff = since is not None and since == self.last_obs and self._obs_url == self.page.url
        return self._closed if likely_diff else self._boxes

    async def _read(self, boxes: bool, exact: bool = False) -> Read:
        """The page read now; with `boxes` its nodes placed (`exact`: by Playwright's boxes)."""
        try:
            return await read_page(self.page, self.shadow, boxes, None if exact else self.places, self.navigated_at)
        except pw.Error as exc:
            raise Unavailable(f"the page did not answer a snapshot: {str(exc).splitlines()[0]}") from exc

    async def _answer(
        self, obs_id: str, read: Read, options: SnapshotOptions, before: Earlier | None, expand: str | None,
        outcome: tuple[str, ...],
    ) -> tuple[dict[str, Any] | None, Answer]:  # fmt: skip
        """The answer to a snapshot from `read`, stored as `obs_id`; None (nothing stored) when the read has no
        boxes and the answer could depend on them."""
        ctx = PageContext(read.url, read.title, self.viewport, tuple(self.history[-HISTORY_SHOWN:-1]),
                          modal=read.modal, outcome=outcome)  # fmt: skip
        if expand is not None:
            ctx = replace(ctx, note=f"Expanded: {expand}")
        return await asyncio.to_thread(_observed, self.store, self.id, obs_id, read, options, ctx, before, expand)

    async def _earlier(self, since: str | None) -> Earlier | None:
        """The snapshot a diff is against: the last one's tree when it is the one, else read and parsed."""
        if since is None:
            return None
        if self._last is not None and self._last.obs_id == since:
            return self._last
        stored = await asyncio.to_thread(self._snapshot_observation, since)
        return Earlier(since, stored["url"], await asyncio.to_thread(_parsed, stored["raw"]))

    async def screenshot(
        self, *, max_dimension: int | None, fmt: ImageFormat, inline: bool, full_page: bool
    ) -> dict[str, Any]:
        """The page as an image scaled like a device screenshot (max_dimension None: raw), stored as an
        observation whose scale converts a later click at image coordinates back to the page."""
        try:
            png = await self.page.screenshot(full_page=full_page, type="png")
            scroll = await self.page.evaluate("[window.scrollX, window.scrollY]")
        except pw.Error as exc:
            raise Unavailable(f"the page did not answer a screenshot: {str(exc).splitlines()[0]}") from exc
        obs_id = self.store.new_id()
        scale, data = await asyncio.to_thread(_scaled, png, max_dimension, fmt)
        stored = {"obs_id": obs_id, "kind": "screenshot", "ts": time.time(), "url": self.page.url,
                  "full_page": full_page, "scroll": scroll, "format": fmt, "scale": asdict(scale)}  # fmt: skip
        await asyncio.to_thread(self.store.save, self.id, stored, {fmt: data})
        result = {"obs_id": obs_id, "page": {"width": scale.device_width, "height": scale.device_height},
                  "image": {"width": scale.image_width, "height": scale.image_height},
                  "scale_factor": round(scale.factor, 6), "path": str(self.store.file(self.id, obs_id, fmt)),
                  "url": f"/v1/pages/{self.id}/observations/{obs_id}/image", "format": fmt,
                  "tokens": image_tokens(scale.image_width, scale.image_height)}  # fmt: skip
        if max_dimension is None:
            result["warning"] = RAW_WARNING
        self.recorder.record(screenshot_frame(self.id, result, stored["url"]))
        if inline:
            result["image_b64"] = base64.b64encode(data).decode()
        return result

    def observation(self, obs_id: str) -> dict[str, Any]:
        return self.store.load(self.id, obs_id)

    async def find(self, pattern: str, regex: bool) -> dict[str, Any]:
        """Search the page's last observation (its whole snapshot, folded parts included)."""
        if self.last_obs is None:
            raise Conflict("no snapshot of this page yet: take one, then search it")
        return await asyncio.to_thread(self._find, self.last_obs, pattern, regex)

    def _find(self, obs_id: str, pattern: str, regex: bool) -> dict[str, Any]:
        last = self._last
        root = last.root if last is not None and last.obs_id == obs_id else None
        if root is None:
            root = _parsed(self._snapshot_observation(obs_id)["raw"])
        try:
            with gc_paused():
                matches, count = find(root, pattern, regex)
        except ValueError as exc:
            raise BadInput(str(exc), field="text") from exc
        return {"obs_id": obs_id, "count": count, "matches": [{"line": m.line, "path": list(m.path)} for m in matches]}

    def _snapshot_observation(self, obs_id: str) -> dict[str, Any]:
        """A stored snapshot with its raw text (read from the observation that holds it, for one that names it:
        a kept read of an earlier version of lookout)."""
        stored = self.observation(obs_id)
        if stored.get("kind") != "snapshot":
            raise BadInput(f"{obs_id} is a screenshot; `since` takes a snapshot's obs_id", field="since")
        if "raw" not in stored:
            stored["raw"] = self.observation(stored["raw_from"])["raw"]
        return stored

    async def _point(self, action: ClickAt) -> tuple[float, float]:
        """Image coordinates of a screenshot observation as page (viewport) coordinates, while the
        screenshot still shows the page (not scrolled, not navigated since)."""
        stored = self.observation(action.obs_id)
        if stored.get("kind") != "screenshot" or stored["full_page"]:
            raise Conflict(f"{action.obs_id} is not a viewport screenshot: click by ref, or take one")
        scroll = await self.page.evaluate("[window.scrollX, window.scrollY]")
        seen = Seen(stored["ts"], {"the scroll position": _scroll_text(stored["scroll"])})
        reason = staleness(seen, time.time(), {"the scroll position": _scroll_text(scroll)},
                           since={"the page navigated": self.navigated_at})  # fmt: skip
        if reason is not None:
            raise Conflict(f"screenshot {action.obs_id} no longer shows the page ({reason}): take a new one")
        scale = Scale(**stored["scale"])
        if not scale.contains_image_point(action.x, action.y):
            raise BadInput(f"({action.x:g}, {action.y:g}) is outside the screenshot "
                           f"({scale.image_width}x{scale.image_height})")  # fmt: skip
        return action.x * scale.factor, action.y * scale.factor

    def lease_key(self) -> str:
        return resource(self.id)

    def unholdable(self) -> str | None:
        return f"page {self.id} is closed: there is nothing to hold" if self.page.is_closed() else None

    async def act(self, action: Action, snapshot: SnapshotOptions | None) -> dict[str, Any]:
        """Run one action, let the page settle, and say what it did (and show the page, when asked). The
        action (or its failure) is recorded in the timeline before the snapshot it asked for. Another hand's
        lease refuses it; actions run one at a time, so each one's effects are its own."""
        agent = current_agent.get()
        self.admit(agent)
        try:
            async with self._acting:
                result = await self._act(action, agent)
        except LookoutError as exc:
            self.recorder.record(action_frame(self.id, action, None, exc.message))
            raise
        self.recorder.record(action_frame(self.id, action, result, None))
        if snapshot is not None:  # a diff against the observation the action was based on, when there is one
            said = tuple(
                f"{t['kind']}: {t['text']}" for t in result["effects"].get("text", ()) if t["kind"] in OUTCOMES
            )
            result["snapshot"] = await self.snapshot(snapshot, since=self.last_obs, outcome=said)
        return result

    async def _act(self, action: Action, agent: str) -> dict[str, Any]:
        if isinstance(action, DialogAnswer):
            self.dialog_answer = (action.accept, action.text)
            answer = (
                "accepted" + (f" with {action.text!r}" if action.text is not None else "")
                if action.accept
                else "dismissed"
            )
            return {"ok": True, "action": "dialog", "url": self.page.url, "effects": {},
                    "note": f"the next dialog on this page will be {answer}"}  # fmt: skip
        point = None
        if isinstance(action, ClickAt):
            point = await self._point(action)
        else:
            page_last = RefCheck(self.last_obs, self.obs_refs, self.obs_taken_at, 0.0)
            known = self.hands.known(agent, page_last)
            check_ref(action, replace(known, navigated_at=self.navigated_at, ever=self.refs_seen))
            await self._check_since_others(action, agent, known)
        page = self.page
        started, seq, url_before = time.monotonic(), self.seq, page.url
        backend_id = shadow_ref(action)  # an `s` ref: inside a closed shadow root, acted on over CDP
        inside = None if backend_id is None else await ShadowElement.resolve(page, self.shadow, backend_id)
        element = await element_of(page, action) if point is None and inside is None else None
        frame = await frame_of(page, element)  # an action in an iframe is watched, settled and read there
        focus_before = await before(page, inside or element, action)
        self.hands.acted(agent, action.name)  # from here on the page may change, until it ends (below)

        def navigated() -> bool:
            return any(e["kind"] == "navigation" for e in self.events if e["seq"] > seq)

        where = frame if frame is not None and not frame.is_detached() else page
        try:
            await (inside.perform(page, action) if inside is not None else perform(page, action, element, point))
            settled = await settle(
                where, lambda: any(t >= started for t in self.pending.values()) or self._saving(), navigated,
                quiet_ms(action),
            )  # fmt: skip
            done = await after(where)
        finally:
            self.hands.acted(agent, action.name)
        title = done["title"] if frame is None else await _title(page)  # the frame's document has its own
        if navigated():
            self.history.append(title or page.url)
        said = effects([e for e in self.events if e["seq"] > seq], url_before, page.url, focus_before, done)
        if frame is not None:
            said["frame"] = frame.url
        return {"ok": True, "action": action.name, "url": page.url, "title": title, "settled": settled,
                "effects": said}  # fmt: skip

    def _saving(self) -> bool:
        self.saving = {task for task in self.saving if not task.done()}
        return bool(self.saving)

    async def _check_since_others(self, action: Action, agent: str, known: RefCheck) -> None:
        """When another hand acted after the agent's snapshot, the element of its ref must be there still,
        as the snapshot showed it (lookout.browser.hands.check_unchanged)."""
        other = self.hands.other_since(agent, known.taken_at)
        if other is None or not isinstance(action, OnElement) or known.obs_id is None:
            return
        seen = await asyncio.to_thread(self._snapshot_observation, known.obs_id)
        try:
            now = await self.page.aria_snapshot(mode="ai")
            if shadow_ref(action) is not None:
                now = await self.shadow.spliced(self.page, now)
        except pw.Error as exc:
            raise Unavailable(f"the page did not answer the check of ref {action.ref}: {exc}") from exc
        check_unchanged(action.ref, known.obs_id, seen["raw"], now, other)

    async def script(self, steps: list[Action | str], snapshot: SnapshotOptions) -> dict[str, Any]:
        """Run steps in order (actions, "snapshot", "screenshot"); stop at the first error, or at a new
        document, whose refs a later step's would not be (a step that is not navigate, back, forward or reload
        and is not the last; a same-document navigation keeps refs). Then one budgeted snapshot of where the
        page ended."""
        self.admit(current_agent.get())
        results: list[dict[str, Any]] = []
        stopped: dict[str, Any] | None = None
        for index, step in enumerate(steps):
            try:
                if step == "snapshot":
                    done = await self.snapshot(snapshot)
                    results.append({"step": index, "action": "snapshot", "ok": True, "obs_id": done["obs_id"]})
                    continue
                if step == "screenshot":
                    done = await self.screenshot(max_dimension=1000, fmt="png", inline=False, full_page=False)
                    results.append({"step": index, "action": "screenshot", "ok": True, "obs_id": done["obs_id"],
                                    "url": done["url"]})  # fmt: skip
                    continue
                assert not isinstance(step, str)
                document_before = self.navigated_at
                done = await self.act(step, None)
            except LookoutError as exc:
                name = step if isinstance(step, str) else step.name
                results.append({"step": index, "action": name, "ok": False, "error": exc.message})
                stopped = {"step": index, "reason": exc.message}
                break
            results.append({"step": index, "action": step.name, "ok": True, "effects": done["effects"]})
            moved = self.navigated_at != document_before and not isinstance(step, NAVIGATIONS)  # a new document
            if moved and index < len(steps) - 1:
                stopped = {
                    "step": index,
                    "reason": f"the page navigated to {done['url']}: the next steps' refs are stale",
                }
                break
        out: dict[str, Any] = {"results": results, "snapshot": await self.snapshot(snapshot)}
        if stopped is not None:
            out["stopped_at"] = stopped
        return out


def _observed(
    store: ObservationStore, page_id: str, obs_id: str, read: Read, options: SnapshotOptions, ctx: PageContext,
    before: Earlier | None, expand: str | None,
) -> tuple[dict[str, Any] | None, Answer]:  # fmt: skip
    """A snapshot's answer, stored as an observation with its raw text, and the view's answer: the work after
    Playwright's part, in one worker thread. None, not stored, when the answer could depend on boxes the read
    does not have (none, or refs' boxes that did not place every ref)."""
    answer = snapshot_text(read.raw, options, ctx, before, expand, read.places)
    if answer.by_position and not (read.boxes and answer.placed):
        return None, answer
    result = {"obs_id": obs_id, "url": ctx.url, "title": ctx.title, "text": answer.text, "metadata": answer.metadata}
    store.save(page_id, {**result, "kind": "snapshot", "ts": time.time(), "raw": read.raw})
    return result, answer


def _parsed(raw: str) -> AriaNode:
    with gc_paused():
        return parse(raw)


def _scroll_text(scroll: list[float]) -> str:
    return f"x {scroll[0]:g}, y {scroll[1]:g}"


def _scaled(png: bytes, max_dimension: int | None, fmt: ImageFormat) -> tuple[Scale, bytes]:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    scale = fit(image.width, image.height, max_dimension)
    return scale, encode(resize(image, scale.image_width, scale.image_height), fmt)


async def _title(page: PlaywrightPage) -> str:
    try:
        return await page.title()
    except pw.Error:
        return ""
