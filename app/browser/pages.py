"""Pages: the browser tabs lookout keeps (`PageRegistry`), what happens on each and what it does (`Page`).

From the moment a page is created, its console messages, failed requests, dialogs, downloads, new tabs
and main-frame navigations are captured (bounded), so an action can later report its effects. Dialogs are
answered at once (as the `dialog` action said, else dismissed), so a page never hangs on one. Snapshots
and screenshots are observations in the shared store (app.core.observations) under
`<data>/pages/<id>/observations/<obs_id>.{json,png}`; visited URLs go to `<data>/pages/<id>/history.jsonl`.
Frames in the timeline carry the agent of the request being served (`current_agent`, set by the HTTP
layer). A page unused (no call names it) for `idle_s` is closed with a `page.closed` event (reason
`idle`): an agent that forgets its pages does not keep gigabytes of them; and at most `max_pages` are open
at once (one more is a Conflict that says what to do).
"""

from __future__ import annotations

import asyncio
import base64
import io
import time
from collections import deque
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from app.browser import playwright_api as pw
from app.browser.action_kinds import NAVIGATIONS, Action, ClickAt, DialogAnswer
from app.browser.actions import RefCheck, check_ref, effects, focus, outcome, perform, settle, watch
from app.browser.aria import holds_dialog, parse
from app.browser.browser import BrowserHost
from app.browser.frames import action_frame, closed_frame, opened_frame, screenshot_frame, snapshot_frame
from app.browser.profile_contexts import ProfileContexts
from app.browser.profiles import ProfileFiles, check_name
from app.browser.search import find
from app.browser.snapshot_view import PageContext, SnapshotOptions
from app.browser.views import snapshot_text
from app.core.archive import ArchivePart
from app.core.errors import BadInput, Conflict, Gone, LookoutError, NotFound, Unavailable
from app.core.events import EventBus
from app.core.gc_tuning import gc_paused
from app.core.ids import check_id, new_id
from app.core.images import ImageFormat, encode, resize
from app.core.observations import ObservationStore, Seen, staleness
from app.core.scaling import RAW_WARNING, Scale, fit, image_tokens
from app.core.storage import append_jsonl
from app.timeline.recording import NullRecorder, Recorder

if TYPE_CHECKING:
    from playwright.async_api import Dialog, Download, Request
    from playwright.async_api import Page as PlaywrightPage

EVENTS_KEPT = 500
HISTORY_SHOWN = 5
NAVIGATION_TIMEOUT_MS = 30_000
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


async def read_page(page: PlaywrightPage) -> tuple[str, str | None, str]:
    """The page's title, the name of its open modal dialog (None when none is open) and its AI snapshot with
    boxes. The title is read while the snapshot is taken (one round trip's wait). The modal check, a script
    on the page's main thread, runs only when the snapshot holds a dialog: without one there is nothing a
    modal could be (the view shows a modal only as a dialog's node), and the script costs 2 to 4 ms of CPU
    (measured), half of a small page's whole snapshot."""
    title, raw = await asyncio.gather(page.title(), page.aria_snapshot(mode="ai", boxes=True))
    modal = await page.evaluate(_MODAL_JS) if holds_dialog(raw) else None
    return title, modal, raw


@dataclass(eq=False)
class Page:
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
    obs_taken_at: float = 0.0
    navigated_at: float = 0.0
    pending: dict[Request, float] = field(default_factory=dict)
    """Requests in flight, with the time each started."""
    seq: int = 0
    """The number of the last event captured."""
    dialog_answer: tuple[bool, str | None] | None = None
    """How to answer the next dialog (accept?, prompt text), set by the `dialog` action; else dismiss."""
    profile: str | None = None
    """The profile whose persistent context the page is in (None: an isolated context of its own)."""
    used_at: float = field(default_factory=time.monotonic)
    """When a call last named it (monotonic): idle pages are closed."""

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
                "created_at": self.created_at, "closed": closed, "last_obs": self.last_obs}  # fmt: skip

    async def snapshot(
        self, options: SnapshotOptions, since: str | None = None, expand: str | None = None
    ) -> dict[str, Any]:
        """A budgeted snapshot; with `since` a diff against that earlier snapshot (a full snapshot that says
        why when the URL changed or most of the page did); with `expand` only the subtree of that ref."""
        try:  # the earlier observation is read while the page answers
            before, (title, modal, raw) = await asyncio.gather(
                asyncio.to_thread(self._snapshot_observation, since) if since is not None else _none(),
                read_page(self.page),
            )
        except pw.Error as exc:
            raise Unavailable(f"the page did not answer a snapshot: {str(exc).splitlines()[0]}") from exc
        ctx = PageContext(self.page.url, title, self.viewport, tuple(self.history[-HISTORY_SHOWN:-1]),
                          modal=modal)  # fmt: skip
        if expand is not None:
            ctx = replace(ctx, note=f"Expanded: {expand}")
        obs_id = self.store.new_id()
        result, refs = await asyncio.to_thread(_observed, self.store, self.id, obs_id, raw, options, ctx, before,
                                               expand)  # fmt: skip
        self.last_obs, self.obs_taken_at, self.obs_refs = obs_id, time.time(), refs
        mode = "snapshot since" if before is not None else "snapshot expand" if expand is not None else "snapshot"
        self.recorder.record(snapshot_frame(self.id, result, mode))
        return result

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
        stored = self._snapshot_observation(obs_id)
        try:
            with gc_paused():
                matches, count = find(parse(stored["raw"]), pattern, regex)
        except ValueError as exc:
            raise BadInput(str(exc), field="text") from exc
        return {"obs_id": obs_id, "count": count, "matches": [{"line": m.line, "path": list(m.path)} for m in matches]}

    def _snapshot_observation(self, obs_id: str) -> dict[str, Any]:
        stored = self.observation(obs_id)
        if stored.get("kind") != "snapshot":
            raise BadInput(f"{obs_id} is a screenshot; `since` takes a snapshot's obs_id", field="since")
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

    async def act(self, action: Action, snapshot: SnapshotOptions | None) -> dict[str, Any]:
        """Run one action, let the page settle, and say what it did (and show the page, when asked). The
        action (or its failure) is recorded in the timeline before the snapshot it asked for."""
        try:
            result = await self._act(action)
        except LookoutError as exc:
            self.recorder.record(action_frame(self.id, action, None, exc.message))
            raise
        self.recorder.record(action_frame(self.id, action, result, None))
        if snapshot is not None:  # a diff against the observation the action was based on, when there is one
            result["snapshot"] = await self.snapshot(snapshot, since=self.last_obs)
        return result

    async def _act(self, action: Action) -> dict[str, Any]:
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
            check_ref(action, RefCheck(self.last_obs, self.obs_refs, self.obs_taken_at, self.navigated_at))
        page = self.page
        started, seq = time.monotonic(), self.seq
        url_before, focus_before = page.url, await focus(page)
        await watch(page)
        await perform(page, action, point)
        await settle(page, lambda: any(t >= started for t in self.pending.values()))
        text = await outcome(page)
        new_events = [e for e in self.events if e["seq"] > seq]
        if any(e["kind"] == "navigation" for e in new_events):
            self.history.append(await _title(page) or page.url)
        return {"ok": True, "action": action.name, "url": page.url, "title": await _title(page),
                "effects": effects(new_events, url_before, page.url, focus_before, await focus(page), text)}  # fmt: skip

    async def script(self, steps: list[Action | str], snapshot: SnapshotOptions) -> dict[str, Any]:
        """Run steps in order (actions, "snapshot", "screenshot"); stop at the first error, or at a
        navigation that a later step's refs would not survive (a step that is not navigate, back, forward
        or reload and is not the last). Then one budgeted snapshot of where the page ended."""
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
                done = await self.act(step, None)
            except LookoutError as exc:
                name = step if isinstance(step, str) else step.name
                results.append({"step": index, "action": name, "ok": False, "error": exc.message})
                stopped = {"step": index, "reason": exc.message}
                break
            results.append({"step": index, "action": step.name, "ok": True, "effects": done["effects"]})
            moved = "navigation" in done["effects"] and not isinstance(step, NAVIGATIONS)
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


class PageRegistry:
    """The open pages: create, get, describe_all, close; an idle reaper and a limit (`max_pages`)."""

    def __init__(self, root: Path, host: BrowserHost, bus: EventBus, upload_dir: Path,
                 recorder: Recorder | None = None, idle_s: float = 1800, max_pages: int = 20) -> None:  # fmt: skip
        """`root`: <data>/pages; profiles live beside it, in <data>/profiles."""
        self.host, self.bus, self.upload_dir = host, bus, upload_dir
        self.profiles = ProfileContexts(host, ProfileFiles(root.parent / "profiles"))
        self.store = ObservationStore(root, "page", lambda page_id: check_id(page_id, "page"), "ts")
        self.recorder = recorder or NullRecorder()
        self.idle_s, self.max_pages = idle_s, max_pages
        self._pages: dict[str, Page] = {}
        self._reaper: asyncio.Task[None] | None = None

    async def create(self, url: str | None, viewport: tuple[int, int], profile: str | None = None) -> dict[str, Any]:
        """A new page: in an isolated context that leaves nothing behind, or in `profile`'s persistent one."""
        open_pages = [p for p in self._pages.values() if not p.page.is_closed()]
        if len(open_pages) >= self.max_pages:
            oldest = min(open_pages, key=lambda p: p.used_at)
            raise Conflict(f"{len(open_pages)} pages are open, the limit (LOOKOUT_MAX_PAGES={self.max_pages}): close "
                           f"one you are done with (DELETE /v1/pages/{{id}}; GET /v1/pages lists them; the least "
                           f"recently used is {oldest.id}); pages idle for {self.idle_s:g} s close by themselves")  # fmt: skip
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.create_task(self._close_idle())
        if profile is not None:
            check_name(profile)
        tab = await self._new_tab(viewport, profile)
        page = self._register(tab, viewport, profile)
        if url:
            try:
                await page.open(url)
            except LookoutError:  # a page that could not open its URL is not kept
                self._pages.pop(page.id, None)
                await self._close_tab(page)
                raise
        self.bus.publish("page.created", id=page.id, url=page.page.url)
        self.recorder.record(opened_frame(page.id, page.page.url if url else ""))
        return await page.describe()

    async def _new_tab(self, viewport: tuple[int, int], profile: str | None) -> PlaywrightPage:
        size = {"width": viewport[0], "height": viewport[1]}
        if profile is None:
            browser = await self.host.browser()
            context = await browser.new_context(viewport=size, accept_downloads=True)  # type: ignore[arg-type]
            return await context.new_page()
        context = await self.profiles.context(profile, viewport)
        used = {p.page for p in self._pages.values()}
        blank = next((tab for tab in context.pages if tab not in used and tab.url == "about:blank"), None)
        tab = blank or await context.new_page()
        await tab.set_viewport_size(size)  # type: ignore[arg-type]
        return tab

    async def _close_tab(self, page: Page) -> None:
        """Close a page: its isolated context with it, or (a profile's) the page, and the profile's context
        once no page of it is open."""
        if page.profile is None:
            if not page.page.is_closed():
                await page.page.context.close()
            return
        if not page.page.is_closed():
            await page.page.close()
        if not any(p.profile == page.profile and not p.page.is_closed() for p in self._pages.values()):
            await self.profiles.release(page.profile)

    def _register(self, tab: PlaywrightPage, viewport: tuple[int, int], profile: str | None = None) -> Page:
        page_id = new_id("p")
        self.store.dir(page_id, create=True)
        page = Page(page_id, tab, time.time(), viewport, self.store, self.recorder, profile=profile)
        self._pages[page_id] = page
        self._capture(page)
        return page

    def _capture(self, page: Page) -> None:
        tab, event = page.page, page.event
        tab.on("console", lambda msg: event("console", level=msg.type, text=msg.text[:2000]))
        tab.on("pageerror", lambda exc: event("console", level="error", text=str(exc)[:2000]))
        tab.on("requestfailed", lambda req: event("request_failed", url=req.url, error=req.failure or ""))
        tab.on("dialog", lambda dialog: asyncio.ensure_future(self._dialog(page, dialog)))
        tab.on("download", lambda download: self._download(page, download))
        tab.on("popup", lambda popup: self._popup(page, popup))
        tab.on("framenavigated", lambda frame: self._navigated(page, frame.url) if frame == tab.main_frame else None)
        tab.on("request", page.request_started)
        tab.on("requestfinished", page.request_ended)
        tab.on("requestfailed", page.request_ended)

    async def _dialog(self, page: Page, dialog: Dialog) -> None:
        """Answer as the `dialog` action said (once), else dismiss: a page never hangs on a dialog."""
        accept, text = page.dialog_answer or (False, None)
        page.dialog_answer = None
        page.event("dialog", type=dialog.type, message=dialog.message, answer="accepted" if accept else "dismissed")
        try:
            await (
                dialog.accept(text) if accept and text is not None else dialog.accept() if accept else dialog.dismiss()
            )
        except pw.Error:
            pass

    def _download(self, page: Page, download: Download) -> None:
        page.event("download", url=download.url, filename=download.suggested_filename)

    def _popup(self, page: Page, popup: PlaywrightPage) -> None:
        tab = self._register(popup, page.viewport, page.profile)
        page.event("new_tab", page_id=tab.id, url=popup.url)
        self.bus.publish("page.created", id=tab.id, url=popup.url, opener=page.id)

    def _navigated(self, page: Page, url: str) -> None:
        page.navigated_at = time.time()
        page.event("navigation", url=url)
        append_jsonl(self.store.resource_dir(page.id) / "history.jsonl", {"ts": time.time(), "url": url})
        self.bus.publish("page.navigated", id=page.id, url=url)

    async def _close_idle(self) -> None:
        """Close the pages no call has named for `idle_s`, checking at a quarter of that (at most a minute)."""
        while self._pages:
            await asyncio.sleep(min(self.idle_s / 4, 60))
            now = time.monotonic()
            for page in [p for p in self._pages.values() if now - p.used_at > self.idle_s]:
                try:
                    await self.close(page.id, reason="idle")
                except (LookoutError, pw.Error):
                    self._pages.pop(page.id, None)

    def get(self, page_id: str) -> Page:
        check_id(page_id, "page")
        page = self._pages.get(page_id)
        if page is None:
            raise NotFound(f"no page {page_id!r} (GET /v1/pages lists them; pages unused for "
                           f"{self.idle_s:g} s are closed)")  # fmt: skip
        page.used_at = time.monotonic()
        if (gone := self.host.gone()) is not None:
            raise Unavailable(f"page {page_id} cannot answer: {gone}")
        if page.page.is_closed():
            raise Conflict(f"page {page_id} was closed (by itself or with the browser); open a new one")
        return page

    async def describe_all(self) -> list[dict[str, Any]]:
        """Every page's facts, as listings show them."""
        return [await page.describe() for page in self._pages.values()]

    async def close(self, page_id: str, reason: str = "deleted") -> dict[str, Any]:
        check_id(page_id, "page")
        page = self._pages.pop(page_id, None)
        if page is None:
            raise NotFound(f"no page {page_id!r}")
        described = await page.describe()
        await self._close_tab(page)
        self.store.forget(page_id)
        self.bus.publish("page.closed", id=page_id, reason=reason)
        self.recorder.record(closed_frame(page_id, described["url"]))
        return {**described, "closed": True}

    def observation(self, page_id: str, obs_id: str) -> dict[str, Any]:
        """A stored observation of a page, also of one closed since."""
        return self.store.load(page_id, obs_id)

    def exported(self, page_id: str, refs: list[dict[str, Any]]) -> list[ArchivePart]:
        """The files of the observations the refs name."""
        obs_ids = {r["obs_id"] for r in refs if isinstance(r.get("obs_id"), str)}
        return [part for obs_id in sorted(obs_ids) for part in self.store.archive_parts(page_id, obs_id)]

    def _profile_pages(self, name: str) -> list[str]:
        return [p.id for p in self._pages.values() if p.profile == name]

    async def profiles_listed(self) -> list[dict[str, Any]]:
        """Every profile with its size, last change and open pages."""
        found = await asyncio.to_thread(self.profiles.files.list)
        return [{"name": p.name, "size_bytes": p.size_bytes, "updated_at": p.updated_at,
                 "open_pages": self._profile_pages(p.name)} for p in found]  # fmt: skip

    async def delete_profile(self, name: str) -> None:
        """Remove a profile's files; a Conflict while pages of it are open."""
        check_name(name)
        if open_pages := self._profile_pages(name):
            raise Conflict(f"profile {name!r} has open pages ({', '.join(open_pages)}): close them first")
        await asyncio.to_thread(self.profiles.files.delete, name)

    async def observed(self, page_id: str, refs: dict[str, Any]) -> dict[str, Any] | None:
        """What a frame of this page gave the agent: its snapshot's text, or its screenshot (None for a frame
        with no observation); Gone when the record is gone."""
        obs_id = refs.get("obs_id")
        if not isinstance(obs_id, str):
            return None
        try:
            stored = await asyncio.to_thread(self.store.load, page_id, obs_id)
        except NotFound:
            raise Gone(f"observation {obs_id} of page {page_id} is gone: it cannot be shown again") from None
        if stored.get("kind") == "screenshot":
            return {"kind": "page screenshot", "page_id": page_id, "obs_id": obs_id, "url": stored.get("url"),
                    "image": f"/v1/pages/{page_id}/observations/{obs_id}/image", "scale": stored.get("scale")}  # fmt: skip
        return {"kind": "page snapshot", "page_id": page_id, "obs_id": obs_id, "url": stored.get("url"),
                "title": stored.get("title"), "text": stored.get("text"), "metadata": stored.get("metadata")}  # fmt: skip

    def image(self, page_id: str, obs_id: str) -> tuple[Path, str]:
        """The image file of a screenshot observation, and its format."""
        stored = self.store.load(page_id, obs_id)
        if stored.get("kind") != "screenshot":
            raise NotFound(f"observation {obs_id} is a snapshot, not a screenshot")
        return self.store.file(page_id, obs_id, stored["format"]), stored["format"]

    def upload_paths(self, names: list[str]) -> tuple[str, ...]:
        """Files for an upload, each inside the upload directory (a name or a path under it)."""
        root = self.upload_dir.resolve()
        out = []
        for name in names:
            shown = repr(name) if len(name) <= 200 else repr(name[:200]) + f"… ({len(name)} characters)"
            try:
                path = (root / name).resolve()
                found = path.is_relative_to(root) and path.is_file()
            except (ValueError, OSError) as exc:  # a NUL byte, a name too long for the file system
                raise BadInput(f"{shown} cannot be a file name ({exc.strerror if isinstance(exc, OSError) else exc})",
                               field="files") from exc  # fmt: skip
            if not found:
                raise BadInput(f"{shown} is not a file in the upload directory {root}", field="files")
            out.append(str(path))
        return tuple(out)

    async def shutdown(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        self._pages.clear()
        await self.profiles.close_all()
        await self.host.stop()


def _observed(
    store: ObservationStore, page_id: str, obs_id: str, raw: str, options: SnapshotOptions, ctx: PageContext, before: dict[str, Any] | None,
    expand: str | None,
) -> tuple[dict[str, Any], frozenset[str]]:  # fmt: skip
    """A snapshot's answer, stored as an observation, and every ref of its raw text: the work after
    Playwright's part, in one worker thread."""
    text, metadata, refs = snapshot_text(raw, options, ctx, before, expand)
    result = {"obs_id": obs_id, "url": ctx.url, "title": ctx.title, "text": text, "metadata": metadata}
    stored = {**result, "kind": "snapshot", "ts": time.time(), "raw": raw}
    store.save(page_id, stored)
    return result, refs


def _scroll_text(scroll: list[float]) -> str:
    return f"x {scroll[0]:g}, y {scroll[1]:g}"


def _scaled(png: bytes, max_dimension: int | None, fmt: ImageFormat) -> tuple[Scale, bytes]:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    scale = fit(image.width, image.height, max_dimension)
    return scale, encode(resize(image, scale.image_width, scale.image_height), fmt)


async def _none() -> None:
    return None


async def _title(page: PlaywrightPage) -> str:
    try:
        return await page.title()
    except pw.Error:
        return ""
