"""A snapshot is never a stale answer: a changed title, DOM or modal dialog is seen even when the rest of the
page (and so lookout's kept answer for it) is unchanged, and the modal check runs only on a page whose
snapshot holds a dialog (real headless Chromium, pages served from 127.0.0.1)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.browser.action_kinds import from_request
from app.browser.registry import PageRegistry
from app.browser.snapshot_view import SnapshotOptions
from app.schemas.page import ActionRequest
from tests.support.site import serve_directory

PAGE = """<!doctype html><title>One</title><body><h1>Shop</h1><button id="go">Go</button>
<p>Opening a dialog here needs a click.</p>
<dialog id="d" aria-label="Settings"><button>Close</button></dialog>
<div id="m" role="dialog" aria-modal="true" aria-label="Confirm" hidden><button>Yes</button></div>
</body>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "page.html").write_text(PAGE)
    with serve_directory(root) as url:
        yield url


async def _modal_checks(pages: PageRegistry, page_id: str) -> tuple[dict[str, Any], int]:
    """A snapshot, and how many modal checks it ran on the page."""
    snapshot, scripts, _ = await _counted(pages, page_id)
    return snapshot, scripts


async def _counted(pages: PageRegistry, page_id: str) -> tuple[dict[str, Any], int, int]:
    """A snapshot, how many modal checks it ran on the page and how many accessibility snapshots it took."""
    page = pages.get(page_id).page
    calls: list[str] = []
    evaluate, aria_snapshot = page.evaluate, page.aria_snapshot

    async def counted(expression: str, *args: Any) -> Any:
        calls.append(expression)
        return await evaluate(expression, *args)

    async def read(**kwargs: Any) -> str:
        calls.append("aria_snapshot")
        return await aria_snapshot(**kwargs)

    page.evaluate, page.aria_snapshot = counted, read  # type: ignore[method-assign]
    try:
        snapshot = await pages.get(page_id).snapshot(SnapshotOptions())
    finally:
        page.evaluate, page.aria_snapshot = evaluate, aria_snapshot  # type: ignore[method-assign]
    return snapshot, sum("aria-modal" in c for c in calls), calls.count("aria_snapshot")


async def test_a_changed_title_dom_or_modal_is_seen(pages: PageRegistry, site: str) -> None:
    page_id = (await pages.create(f"{site}/page.html", (1280, 720)))["id"]
    page = pages.get(page_id).page
    first, scripts = await _modal_checks(pages, page_id)
    assert first["title"] == "One" and "# Page: One" in first["text"] and "# Modal" not in first["text"]
    assert scripts == 0, "no dialog in the snapshot (only the word in a paragraph): no modal check"

    await page.evaluate("document.title = 'Two'")  # the accessibility tree is the same: only the title changed
    second = await pages.get(page_id).snapshot(SnapshotOptions())
    assert second["title"] == "Two" and "# Page: Two" in second["text"]
    assert second["text"].split("\n", 1)[1] == first["text"].split("\n", 1)[1]

    await page.evaluate("document.getElementById('go').textContent = 'Buy now'")
    changed = await pages.get(page_id).snapshot(SnapshotOptions())
    assert '- button "Buy now"' in changed["text"] and '- button "Go"' not in changed["text"]
    buy = changed["text"].split('- button "Buy now" [ref=')[1].split("]")[0]
    assert buy in pages.get(page_id).obs_refs

    await page.evaluate("document.getElementById('d').show()")  # a dialog, but not a modal one
    shown, scripts = await _modal_checks(pages, page_id)
    assert '- dialog "Settings"' in shown["text"] and "# Modal" not in shown["text"] and scripts == 1

    await page.evaluate("const d = document.getElementById('d'); d.close(); d.showModal()")
    modal, scripts = await _modal_checks(pages, page_id)
    assert '# Modal dialog "Settings" is open: the rest of the page (' in modal["text"] and scripts == 1
    assert '- button "Buy now"' not in modal["text"]

    await page.evaluate("document.getElementById('d').close(); document.getElementById('m').hidden = false")
    confirm = await pages.get(page_id).snapshot(SnapshotOptions())
    assert '# Modal dialog "Confirm" is open' in confirm["text"] and '- button "Yes"' in confirm["text"]

    await page.evaluate("document.getElementById('m').hidden = true")
    closed, scripts = await _modal_checks(pages, page_id)
    assert "# Modal" not in closed["text"] and '- button "Buy now"' in closed["text"] and scripts == 0


async def test_an_unchanged_page_is_not_read_again_and_any_change_is_seen(pages: PageRegistry, site: str) -> None:
    page_id = (await pages.create(f"{site}/page.html", (1280, 720)))["id"]
    page = pages.get(page_id).page
    first, _, reads = await _counted(pages, page_id)
    assert reads == 1
    _, _, reads = await _counted(pages, page_id)
    assert reads == 1, "a URL's first read is watched only once it is answered: it is read again once"
    again, _, reads = await _counted(pages, page_id)
    assert reads == 0 and again["text"] == first["text"] and again["obs_id"] != first["obs_id"]
    stored = pages.get(page_id)._snapshot_observation(again["obs_id"])  # the raw text is the first one's
    assert stored["raw"] == pages.get(page_id)._snapshot_observation(first["obs_id"])["raw"]
    changes = [
        "document.getElementById('go').textContent = 'Buy'",  # a mutation
        "window.scrollTo(0, 50); document.body.style.height = '3000px'",  # a scroll (and a style)
        "document.querySelector('button').focus()",  # the focus
        "const i = document.createElement('input'); document.body.append(i); 0",  # a new control
        "document.querySelector('input').value = 'typed by a script'",  # a value no event or mutation shows
    ]
    for change in changes:
        await page.evaluate(change)
        _, _, reads = await _counted(pages, page_id)
        assert reads == 1, change
        _, _, reads = await _counted(pages, page_id)
        assert reads == 0, change
    await pages.get(page_id).act(from_request(ActionRequest(action="press", key="Tab")), None)
    _, _, reads = await _counted(pages, page_id)
    assert reads == 1, "after any action the page is read again"
    _, _, reads = await _counted(pages, page_id)
    assert reads == 0, "the pass after the action began the watch: that read is trusted"
    await page.evaluate("document.title = 'Three'")
    changed, _, reads = await _counted(pages, page_id)
    assert reads == 1 and changed["title"] == "Three", "the check that finds a change begins the watch anew"
    _, _, reads = await _counted(pages, page_id)
    assert reads == 0
