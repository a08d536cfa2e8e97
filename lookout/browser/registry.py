"""The browser tabs lookout keeps (`PageRegistry`): create, get, describe_all, close, the idle reaper and the
limit on open pages, profiles, and the capture of every page's events from its creation.

From the moment a page is created, its console messages, failed requests, dialogs, downloads, new tabs and
main-frame navigations are captured (bounded), so an action can later report its effects. Dialogs are
answered at once (as the `dialog` action said, else dismissed), so a page never hangs on one. A page unused
(no call names it) for `idle_s` is closed with a `page.closed` event (reason `idle`): an agent that forgets
its pages does not keep gigabytes of them; and at most `max_pages` are open at once (one more is a Conflict
that says what to do).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lookout.browser import playwright_api as pw
from lookout.browser.browser import BrowserHost
from lookout.browser.downloads import download_path, kept_name, save
from lookout.browser.frames import closed_frame, opened_frame, resource
from lookout.browser.profile_contexts import AT_DOCUMENT_START, ProfileContexts
from lookout.browser.profiles import ProfileFiles, check_name
from lookout.core.archive import ArchivePart
from lookout.core.errors import BadInput, Conflict, Gone, LookoutError, NotFound, Unavailable
from lookout.core.events import EventBus
from lookout.core.ids import check_id, new_id
from lookout.core.leases import LeaseBook
from lookout.core.observations import ObservationStore
from lookout.core.storage import append_jsonl
from lookout.core.tokens import load_soon
from lookout.timeline.recording import NullRecorder, Recorder, current_agent

if TYPE_CHECKING:
    from playwright.async_api import Dialog, Download
    from playwright.async_api import Page as PlaywrightPage

    from lookout.browser.page import Page


class PageRegistry:
    """The open pages: create, get, describe_all, close; an idle reaper and a limit (`max_pages`)."""

    def __init__(self, root: Path, host: BrowserHost, bus: EventBus, upload_dir: Path,
                 recorder: Recorder | None = None, idle_s: float = 1800, max_pages: int = 20,
                 leases: LeaseBook | None = None) -> None:  # fmt: skip
        """`root`: <data>/pages; profiles live beside it, in <data>/profiles; `leases`: the daemon's book of
        leases (lookout.core.leases), in memory only when not given."""
        self.leases = leases or LeaseBook(None)
        self.host, self.bus, self.upload_dir = host, bus, upload_dir
        self.profiles = ProfileContexts(host, ProfileFiles(root.parent / "profiles"))
        self.store = ObservationStore(root, "page", lambda page_id: check_id(page_id, "page"), "ts")
        self.recorder = recorder or NullRecorder()
        self.idle_s, self.max_pages = idle_s, max_pages
        self._pages: dict[str, Page] = {}
        self._opening = 0
        """Pages admitted and not yet listed: counted against `max_pages` from their first step on."""
        self._reaper: asyncio.Task[None] | None = None

    async def create(self, url: str | None, viewport: tuple[int, int], profile: str | None = None) -> dict[str, Any]:
        """A new page: in an isolated context that leaves nothing behind, or in `profile`'s persistent one. The
        limit counts the pages being opened from their admission on, so no number of concurrent opens passes it."""
        open_pages = [p for p in self._pages.values() if not p.page.is_closed()]
        if len(open_pages) + self._opening >= self.max_pages:
            oldest = min(open_pages, key=lambda p: p.used_at, default=None)
            raise Conflict(f"{len(open_pages)} pages are open and {self._opening} opening, the limit "
                           f"is LOOKOUT_MAX_PAGES={self.max_pages}: close one you are done with (DELETE "
                           f"/v1/pages/{{id}}; GET /v1/pages lists them"
                           + (f"; the least recently used is {oldest.id}" if oldest else "")
                           + f"); pages idle for {self.idle_s:g} s close by themselves",
                           limit="max_pages", value=self.max_pages)  # fmt: skip
        self._opening += 1
        try:
            return await self._create(url, viewport, profile)
        finally:
            self._opening -= 1

    async def _create(self, url: str | None, viewport: tuple[int, int], profile: str | None) -> dict[str, Any]:
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
        # The first snapshot counts tokens: the tokenizer loads while the agent reads this (not while the browser
        # starts: the load holds the GIL, and Playwright's start would wait for it).
        load_soon()
        return await page.describe()

    async def _new_tab(self, viewport: tuple[int, int], profile: str | None) -> PlaywrightPage:
        size = {"width": viewport[0], "height": viewport[1]}
        if profile is None:
            browser = await self.host.browser()
            context = await browser.new_context(viewport=size, accept_downloads=True)  # type: ignore[arg-type]
            await context.add_init_script(script=AT_DOCUMENT_START)
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
        from lookout.browser.page import Page  # loaded with the first page: a daemon without pages never pays for it

        page = Page(page_id, tab, time.time(), viewport, self.store, self.recorder, profile=profile, leases=self.leases)
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
        new_documents = pw.on_new_document(tab.main_frame, lambda: setattr(page, "navigated_at", time.time()))
        tab.on("framenavigated", lambda frame: self._navigated(page, frame.url, new_documents)
               if frame == tab.main_frame else None)  # fmt: skip
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
        """Keep the file with the page's (lookout.browser.downloads); the settling after the action waits for it."""
        name = kept_name(download.suggested_filename)
        path = self.store.resource_dir(page.id) / "downloads" / name
        page.event("download", url=download.url, filename=download.suggested_filename, path=str(path),
                   get=f"/v1/pages/{page.id}/downloads/{name}", state="saving")  # fmt: skip
        page.saving.add(asyncio.ensure_future(save(download, path, page.events[-1])))

    def download(self, page_id: str, name: str) -> Path:
        """The kept file of one of the page's downloads (also of a page closed since)."""
        check_id(page_id, "page")
        return download_path(self.store.resource_dir(page_id) / "downloads", name)

    def _popup(self, page: Page, popup: PlaywrightPage) -> None:
        tab = self._register(popup, page.viewport, page.profile)
        page.event("new_tab", page_id=tab.id, url=popup.url)
        self.bus.publish("page.created", id=tab.id, url=popup.url, opener=page.id)

    def _navigated(self, page: Page, url: str, new_documents: bool) -> None:
        """A navigation of the page's main frame. Only a new document makes the page's refs stale (`navigated_at`,
        set when it commits); a same-document one (pushState, a hash change) keeps them, when Playwright says
        which it was (`new_documents`), else every navigation counts."""
        if not new_documents:
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
        """Every page's facts, as listings show them: the pages open when asked, described at once (pages open
        and close while each is described)."""
        return list(await asyncio.gather(*(page.describe() for page in list(self._pages.values()))))

    async def close(self, page_id: str, reason: str = "deleted") -> dict[str, Any]:
        check_id(page_id, "page")
        if reason == "deleted" and page_id in self._pages:  # another hand's lease refuses it; it ends with the page
            self.leases.admit(resource(page_id), current_agent.get())
        page = self._pages.pop(page_id, None)
        if page is None:
            raise NotFound(f"no page {page_id!r}")
        self.leases.forget(resource(page_id))
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
