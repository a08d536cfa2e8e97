"""A snapshot is never a stale answer: a changed title, DOM or modal dialog is seen even when the rest of the
page is unchanged, every snapshot reads the page, and the modal check runs only on a page whose snapshot
holds a dialog (real headless Chromium, pages served from 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lookout.browser.action_kinds import from_request
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from lookout.schemas.page import ActionRequest
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


async def test_every_snapshot_reads_the_page_and_stores_what_it_read(pages: PageRegistry, site: str) -> None:
    page_id = (await pages.create(f"{site}/page.html", (1280, 720)))["id"]
    page = pages.get(page_id)
    answers = []
    for _ in range(4):  # an unchanged page too: lookout cannot show that nothing changed, so it reads again
        snapshot, _, reads = await _counted(pages, page_id)
        assert reads == 1
        answers.append(snapshot)
    assert len({a["obs_id"] for a in answers}) == 4 and len({a["text"] for a in answers}) == 1
    assert all("raw" in page.observation(a["obs_id"]) for a in answers), "each observation holds what was read"
    await page.act(from_request(ActionRequest(action="press", key="Tab")), None)
    _, _, reads = await _counted(pages, page_id)
    assert reads == 1
