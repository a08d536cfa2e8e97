"""Pages: the browser tabs lookout keeps, what happens on them, and their observations.

From the moment a page is created, its console messages, failed requests, dialogs, downloads, new tabs
and main-frame navigations are captured (bounded), so an action can later report its effects. Dialogs are
recorded and dismissed for now, so a page never hangs on one. Snapshots are stored as observations under
`<data>/pages/<id>/observations/<obs_id>.json`; visited URLs go to `<data>/pages/<id>/history.jsonl`.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Dialog, Download, Page
from playwright.async_api import Error as PlaywrightError

from app.browser.aria import parse
from app.browser.browser import BrowserHost
from app.browser.snapshot_view import PageContext, SnapshotOptions, render
from app.core.errors import BadInput, Conflict, NotFound, Unavailable
from app.core.events import EventBus
from app.core.ids import check_id, new_id
from app.core.storage import append_jsonl, atomic_write_json

EVENTS_KEPT = 500
HISTORY_SHOWN = 5
NAVIGATION_TIMEOUT_MS = 30_000


@dataclass
class PageRecord:
    id: str
    page: Page
    created_at: float
    folder: Path
    viewport: tuple[int, int]
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=EVENTS_KEPT))
    history: list[str] = field(default_factory=list)
    """Titles (or URLs) of the pages visited, oldest first."""
    last_obs: str | None = None


class PageManager:
    def __init__(self, root: Path, host: BrowserHost, bus: EventBus) -> None:
        self.root, self.host, self.bus = root, host, bus
        self._pages: dict[str, PageRecord] = {}

    async def create(self, url: str | None, viewport: tuple[int, int]) -> dict[str, Any]:
        browser = await self.host.browser()
        context = await browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, accept_downloads=True)
        record = self._register(await context.new_page(), viewport)
        if url:
            await self._goto(record, url)
        self.bus.publish("page.created", id=record.id, url=record.page.url)
        return await self.describe(record)

    def _register(self, page: Page, viewport: tuple[int, int]) -> PageRecord:
        page_id = new_id("p")
        folder = self.root / page_id
        (folder / "observations").mkdir(parents=True, exist_ok=True)
        record = PageRecord(page_id, page, time.time(), folder, viewport)
        self._pages[page_id] = record
        self._capture(record)
        return record

    def _capture(self, record: PageRecord) -> None:
        page = record.page

        def event(kind: str, **fields: Any) -> None:
            record.events.append({"ts": time.time(), "kind": kind, **fields})

        page.on("console", lambda msg: event("console", level=msg.type, text=msg.text[:2000]))
        page.on("pageerror", lambda exc: event("console", level="error", text=str(exc)[:2000]))
        page.on("requestfailed", lambda req: event("request_failed", url=req.url, error=req.failure or ""))
        page.on("dialog", lambda dialog: asyncio.ensure_future(self._dialog(record, dialog)))
        page.on("download", lambda download: self._download(record, download))
        page.on("popup", lambda popup: self._popup(record, popup))
        page.on("framenavigated", lambda frame: self._navigated(record, frame.url) if frame == page.main_frame else None)

    async def _dialog(self, record: PageRecord, dialog: Dialog) -> None:
        record.events.append({"ts": time.time(), "kind": "dialog", "type": dialog.type, "message": dialog.message,
                              "answer": "dismissed"})  # fmt: skip
        try:
            await dialog.dismiss()
        except PlaywrightError:
            pass

    def _download(self, record: PageRecord, download: Download) -> None:
        record.events.append({"ts": time.time(), "kind": "download", "url": download.url,
                              "filename": download.suggested_filename})  # fmt: skip

    def _popup(self, record: PageRecord, popup: Page) -> None:
        tab = self._register(popup, record.viewport)
        record.events.append({"ts": time.time(), "kind": "new_tab", "page_id": tab.id, "url": popup.url})
        self.bus.publish("page.created", id=tab.id, url=popup.url, opener=record.id)

    def _navigated(self, record: PageRecord, url: str) -> None:
        record.events.append({"ts": time.time(), "kind": "navigation", "url": url})
        append_jsonl(record.folder / "history.jsonl", {"ts": time.time(), "url": url})

    async def _goto(self, record: PageRecord, url: str) -> None:
        if not url.startswith(("http://", "https://", "file://", "about:", "data:")):
            raise BadInput(f"{url!r} is not a URL lookout opens (http, https, file, about, data)", field="url")
        try:
            await record.page.goto(url, timeout=NAVIGATION_TIMEOUT_MS, wait_until="load")
        except PlaywrightError as exc:
            raise Conflict(f"navigation to {url} failed: {str(exc).splitlines()[0]}") from exc
        record.history.append(await _title(record.page) or url)

    def get(self, page_id: str) -> PageRecord:
        check_id(page_id, "page")
        record = self._pages.get(page_id)
        if record is None:
            raise NotFound(f"no page {page_id!r} (GET /v1/pages lists them)")
        if record.page.is_closed():
            raise Conflict(f"page {page_id} was closed (by itself or with the browser); open a new one")
        return record

    async def describe(self, record: PageRecord) -> dict[str, Any]:
        closed = record.page.is_closed()
        return {"id": record.id, "url": record.page.url, "title": "" if closed else await _title(record.page),
                "viewport": {"width": record.viewport[0], "height": record.viewport[1]},
                "created_at": record.created_at, "closed": closed, "last_obs": record.last_obs}  # fmt: skip

    async def list(self) -> list[dict[str, Any]]:
        return [await self.describe(record) for record in self._pages.values()]

    async def close(self, page_id: str) -> dict[str, Any]:
        check_id(page_id, "page")
        record = self._pages.pop(page_id, None)
        if record is None:
            raise NotFound(f"no page {page_id!r}")
        described = await self.describe(record)
        if not record.page.is_closed():
            await record.page.context.close()
        self.bus.publish("page.closed", id=page_id)
        return {**described, "closed": True}

    async def snapshot(self, page_id: str, options: SnapshotOptions) -> dict[str, Any]:
        record = self.get(page_id)
        try:
            raw = await record.page.aria_snapshot(mode="ai", boxes=True)
            title = await _title(record.page)
        except PlaywrightError as exc:
            raise Unavailable(f"the page did not answer a snapshot: {str(exc).splitlines()[0]}") from exc
        ctx = PageContext(record.page.url, title, record.viewport, tuple(record.history[-HISTORY_SHOWN:-1]))
        view = await asyncio.to_thread(_render, raw, options, ctx)
        obs_id = new_id("o")
        metadata = {"total_elements": view.total_elements, "included_elements": view.included_elements,
                    "truncated": view.truncated, "reason": view.reason, "tokens": view.tokens}  # fmt: skip
        result = {"obs_id": obs_id, "url": ctx.url, "title": title, "text": view.text, "metadata": metadata}
        stored = {**result, "ts": time.time(), "refs": list(view.refs), "raw": raw}
        await asyncio.to_thread(atomic_write_json, record.folder / "observations" / f"{obs_id}.json", stored)
        record.last_obs = obs_id
        return result

    async def shutdown(self) -> None:
        self._pages.clear()
        await self.host.stop()


def _render(raw: str, options: SnapshotOptions, ctx: PageContext):  # type: ignore[no-untyped-def]
    return render(parse(raw), options, ctx)


async def _title(page: Page) -> str:
    try:
        return await page.title()
    except PlaywrightError:
        return ""
