"""The view a read with Playwright's own boxes gives of a page as it is now: what the browser tests compare
lookout's answers with (reads without boxes, or placed by the refs' boxes, must give the same)."""
from __future__ import annotations

from lookout.browser.page import HISTORY_SHOWN, Page, read_page
from lookout.browser.snapshot_view import PageContext, SnapshotOptions
from lookout.browser.views import Answer, snapshot_text


async def view_with_playwrights_boxes(page: Page, options: SnapshotOptions) -> Answer:
    read = await read_page(page.page, page.shadow, boxes=True)
    assert "[box=" in read.raw and read.places is None
    ctx = PageContext(read.url, read.title, page.viewport, tuple(page.history[-HISTORY_SHOWN:-1]), modal=read.modal)
    return snapshot_text(read.raw, options, ctx, None)
