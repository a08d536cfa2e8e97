"""A snapshot read without boxes, or placed by its refs' boxes alone (lookout.browser.ref_places), is exactly the
snapshot a read with Playwright's boxes gives: lookout reads without them only when its answer cannot depend on
them, and reads again placed when it could (real headless Chromium, pages served from 127.0.0.1). Each answer is
compared with the view of a read with Playwright's boxes made right after it on the same tab (the page does not
change in between, so the refs are the same)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from lookout.browser.action_kinds import from_request
from lookout.browser.aria import parse
from lookout.browser.page import Page, read_page
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import PageContext, SnapshotOptions
from lookout.browser.views import Earlier, snapshot_text
from lookout.schemas.page import ActionRequest
from tests.support.page_views import view_with_playwrights_boxes
from tests.support.pages import big_page, ref_of
from tests.support.site import serve_directory

SMALL = """<!doctype html><title>Small</title><body><h1>Orders</h1><label>Search <input id="q"></label>
<button>Find</button><ul>{items}</ul><div style="height: 3000px"></div><a href="/far">Far link</a>
<table id="t"></table></body>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "small.html").write_text(SMALL.format(items="".join(f"<li>Order {i}</li>" for i in range(6))))
    (root / "big.html").write_text(big_page(120))
    with serve_directory(root) as url:
        yield url


@contextmanager
def _reads(page: Page) -> Iterator[list[bool]]:
    """For every accessibility read of the page made inside the block, whether its nodes were placed: by
    Playwright's boxes, or by its refs' boxes read right after it (lookout.browser.ref_places)."""
    tab, reads = page.page, []
    aria_snapshot, places_read = tab.aria_snapshot, page.places.read

    async def counted(**kwargs: Any) -> str:
        reads.append(bool(kwargs.get("boxes")))
        return await aria_snapshot(**kwargs)

    async def placed(tab_: Any) -> tuple[float, str] | None:
        places = await places_read(tab_)
        reads[-1] = reads[-1] or places is not None
        return places

    tab.aria_snapshot = counted  # type: ignore[method-assign]
    page.places.read = placed  # type: ignore[method-assign]
    try:
        yield reads
    finally:
        tab.aria_snapshot = aria_snapshot  # type: ignore[method-assign]
        page.places.read = places_read  # type: ignore[method-assign]


async def _snapshot(page: Page, options: SnapshotOptions) -> tuple[dict[str, Any], list[bool]]:
    """A snapshot, and the `boxes` of every accessibility read it made."""
    with _reads(page) as reads:
        return await page.snapshot(options), reads


async def _same_as_with_boxes(page: Page, options: SnapshotOptions) -> tuple[dict[str, Any], list[bool]]:
    snapshot, reads = await _snapshot(page, options)
    answer = await view_with_playwrights_boxes(page, options)
    text, metadata = answer.text, answer.metadata
    assert snapshot["text"] == text and snapshot["metadata"] == metadata
    stored = page.observation(snapshot["obs_id"])
    assert stored["text"] == text and "[box=" not in stored["raw"], "placed by the refs' boxes, not Playwright's"
    return snapshot, reads


async def test_under_the_budget_a_read_without_boxes_gives_the_same_answer(pages: PageRegistry, site: str) -> None:
    page = pages.get((await pages.create(f"{site}/small.html", (1280, 720)))["id"])
    first, reads = await _same_as_with_boxes(page, SnapshotOptions())
    assert reads == [True], "nothing known of the page yet: read with boxes"
    assert not first["metadata"]["truncated"] and "Far link" in first["text"]
    await page.page.evaluate("window.scrollTo(0, 99999)")  # what is on screen changed; the answer cannot
    second, reads = await _same_as_with_boxes(page, SnapshotOptions())
    assert reads == [False] and second["text"] == first["text"]
    _, reads = await _same_as_with_boxes(page, SnapshotOptions(interactive_only=True))
    assert reads == [False]
    _, reads = await _same_as_with_boxes(page, SnapshotOptions(max_elements=4, full=True))
    assert reads == [False], "a full view shows every node: boxes change nothing"


async def test_a_view_the_boxes_decide_is_read_with_them(pages: PageRegistry, site: str) -> None:
    small = pages.get((await pages.create(f"{site}/small.html", (1280, 720)))["id"])
    await _same_as_with_boxes(small, SnapshotOptions())
    await small.page.evaluate("window.scrollTo(0, 99999)")
    for options in (SnapshotOptions(viewport_only=True), SnapshotOptions(max_elements=5)):
        cut, reads = await _same_as_with_boxes(small, options)
        assert reads[-1] and cut["metadata"]["truncated"], options
    on_screen, _ = await _snapshot(small, SnapshotOptions(viewport_only=True))
    assert "Far link" in on_screen["text"] and "Orders" not in on_screen["text"]

    big = pages.get((await pages.create(f"{site}/big.html", (1280, 720)))["id"])
    for _ in range(2):
        snapshot, reads = await _same_as_with_boxes(big, SnapshotOptions())
        assert reads == [True] and snapshot["metadata"]["truncated"]


async def test_a_page_that_grows_past_the_budget_between_reads_is_read_again_with_boxes(
    pages: PageRegistry, site: str
) -> None:
    page = pages.get((await pages.create(f"{site}/small.html", (1280, 720)))["id"])
    await _same_as_with_boxes(page, SnapshotOptions())
    _, reads = await _same_as_with_boxes(page, SnapshotOptions())
    assert reads == [False]
    kept = len(page.store.records(page.id))
    await page.page.evaluate("""() => { const t = document.getElementById('t');
        for (let i = 0; i < 150; i++) t.insertAdjacentHTML('beforeend',
          `<tr><td>Row ${i}</td><td><button>Open ${i}</button></td></tr>`); }""")
    grown, reads = await _same_as_with_boxes(page, SnapshotOptions())
    assert reads == [False, True], "the read without boxes could not give this answer: read again with them"
    assert grown["metadata"]["truncated"] and grown["metadata"]["reason"] in ("token budget", "element limit")
    assert len(page.store.records(page.id)) == kept + 1, "one observation per answer, from the read with boxes"
    _, reads = await _same_as_with_boxes(page, SnapshotOptions())
    assert reads == [True], "the last answer needed boxes: the next read asks for them at once"
    shrunk = replace(SnapshotOptions(), max_elements=10_000, max_tokens=100_000)
    _, reads = await _same_as_with_boxes(page, shrunk)
    assert reads == [True]
    _, reads = await _same_as_with_boxes(page, shrunk)
    assert reads == [False], "the grown page within a larger budget: read without boxes again"


async def test_an_actions_diff_is_read_without_boxes_and_the_next_view_with_them(
    pages: PageRegistry, site: str
) -> None:
    page = pages.get((await pages.create(f"{site}/big.html", (1280, 720)))["id"])
    first, reads = await _snapshot(page, SnapshotOptions())
    assert reads == [True] and first["metadata"]["truncated"]
    with _reads(page) as calls:
        done = await page.act(from_request(ActionRequest(action="click", ref=ref_of(first["text"], '- button "Add 1"'))),
                              SnapshotOptions())  # fmt: skip
    assert done["snapshot"]["metadata"]["diff_against"] == first["obs_id"]
    assert calls == [False], "a diff against the last snapshot of the same URL shows no boxes: read without them"
    before = page.observation(first["obs_id"])
    read = await read_page(page.page, page.shadow, boxes=True)
    ctx = PageContext(read.url, read.title, page.viewport, modal=read.modal)
    assert done["snapshot"]["text"] == snapshot_text(read.raw, SnapshotOptions(), ctx, Earlier(
        first["obs_id"], before["url"], parse(before["raw"]))).text  # fmt: skip
    _, reads = await _same_as_with_boxes(page, SnapshotOptions())
    assert reads == [True], "the page's view still needs boxes: read with them at once, not twice"
