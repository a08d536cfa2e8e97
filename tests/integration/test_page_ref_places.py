"""The refs' boxes read in Playwright's world of the page (lookout.browser.ref_places) are Playwright's own boxes
of those nodes, and a view placed by them is the view a read with Playwright's boxes gives; where they cannot
place every ref, the page is read with Playwright's boxes instead (real headless Chromium, pages served from
127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lookout.browser.aria import parse, placed
from lookout.browser.page import Page
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from tests.conftest import free_port
from tests.support.page_views import view_with_playwrights_boxes
from tests.support.pages import big_page
from tests.support.remote_browsers import registry_elsewhere
from tests.support.site import serve_directory

SHAPES = """<!doctype html><title>Shapes</title><body>
<header style="position: fixed; top: 0; left: 0; right: 0; background: white"><a href="/home">Home</a>
<button>Menu</button></header>
<main style="margin-top: 60px"><h1>Shapes</h1>
<p>A paragraph with <a href="/one">an inline link that may wrap over two lines of text</a> and more.</p>
<div style="transform: translate(40px, 30px) scale(1.5)"><button>Moved</button></div>
<button style="pointer-events: none">Inert</button><span style="display: contents"><a href="/c">Contents</a></span>
<x-panel></x-panel><div style="height: 2500px"></div><a href="/far">Far link</a>
<iframe srcdoc="<button>In frame</button><a href='/f'>Frame link</a>" style="width: 300px; height: 80px"></iframe>
</main><script>
customElements.define('x-panel', class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: 'open'}).innerHTML = '<button>Open root</button><a href="/r">Root link</a>'; } });
</script></body>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "shapes.html").write_text(SHAPES)
    (root / "big.html").write_text(big_page(150))
    with serve_directory(root) as url:
        yield url


async def _boxes_view(page: Page, options: SnapshotOptions) -> str:
    return (await view_with_playwrights_boxes(page, options)).text


async def _playwrights_and_places(page: Page) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each top-document ref's box: Playwright's, and the one read apart right after it."""
    raw = await page.page.aria_snapshot(mode="ai", boxes=True)
    read = await page.places.read(page.page)
    assert read is not None and read[0] == await page.page.evaluate("performance.timeOrigin")
    places = read[1]
    theirs = {n.ref: n.box for n in parse(raw).walk() if n.ref and n.ref[0] == "e"}
    root = parse(raw)
    assert placed(root, places)
    return theirs, {n.ref: n.box for n in root.walk() if n.ref and n.ref[0] == "e"}


@pytest.mark.parametrize("scroll", [0, 700, 99999])
async def test_the_refs_boxes_are_playwrights_own(pages: PageRegistry, site: str, scroll: int) -> None:
    page = pages.get((await pages.create(f"{site}/shapes.html", (1280, 720)))["id"])
    await page.page.evaluate(f"window.scrollTo(0, {scroll})")
    theirs, ours = await _playwrights_and_places(page)
    assert len(theirs) >= 12 and ours == theirs
    assert any(ref for ref, box in theirs.items() if box and box[1] < 0) == (scroll > 0), "scrolled: some above"


async def test_a_view_placed_by_the_refs_boxes_is_the_view_playwrights_boxes_give(
    pages: PageRegistry, site: str
) -> None:
    for name in ("shapes", "big"):
        page = pages.get((await pages.create(f"{site}/{name}.html", (1280, 720)))["id"])
        for scroll in (0, 900):
            await page.page.evaluate(f"window.scrollTo(0, {scroll})")
            for options in (SnapshotOptions(), SnapshotOptions(max_elements=8), SnapshotOptions(viewport_only=True)):
                reads = page.places.reads
                snapshot = await page.snapshot(options)
                assert page.places.reads == reads + 1, "placed by the refs' boxes"
                assert "[box=" not in page.observation(snapshot["obs_id"])["raw"]
                assert snapshot["text"] == await _boxes_view(page, options), (name, scroll, options)
        assert page.shadow.reads == 0


async def test_a_new_document_has_a_world_of_its_own_and_it_is_found(pages: PageRegistry, site: str) -> None:
    page = pages.get((await pages.create(f"{site}/big.html", (1280, 720)))["id"])
    await page.snapshot(SnapshotOptions())
    for url in (f"{site}/shapes.html", f"{site}/big.html"):
        await page.open(url)
        reads = page.places.reads
        snapshot = await page.snapshot(SnapshotOptions(max_elements=8))
        assert page.places.reads == reads + 1 and "[box=" not in page.observation(snapshot["obs_id"])["raw"]
        theirs, ours = await _playwrights_and_places(page)
        assert ours == theirs
    page.places._world = "1.2.3"  # a world that is gone (an id no context has)
    theirs, ours = await _playwrights_and_places(page)
    assert ours == theirs


async def test_refs_the_boxes_read_apart_cannot_place_are_read_with_playwrights(
    pages: PageRegistry, site: str
) -> None:
    page = pages.get((await pages.create(f"{site}/big.html", (1280, 720)))["id"])
    places_read = page.places.read

    async def without_refs(tab: Any) -> tuple[float, str] | None:  # as if Playwright stopped keeping its refs
        read = await places_read(tab)
        return None if read is None else (read[0], "")

    page.places.read = without_refs  # type: ignore[method-assign]
    snapshot = await page.snapshot(SnapshotOptions())
    assert snapshot["metadata"]["truncated"] and "[box=" in page.observation(snapshot["obs_id"])["raw"]
    page.places.read = places_read  # type: ignore[method-assign]
    assert snapshot["text"] == await _boxes_view(page, SnapshotOptions())


async def test_the_boxes_of_another_document_place_nothing(pages: PageRegistry, site: str) -> None:
    """Refs are numbered anew in each document: boxes read in another document (a navigation between the
    snapshot and the read of its places) are never lent to the snapshot's refs, even where every ref has one."""
    page = pages.get((await pages.create(f"{site}/big.html", (1280, 720)))["id"])
    await page.snapshot(SnapshotOptions())
    places_read = page.places.read

    async def of_another_document(tab: Any) -> tuple[float, str] | None:
        read = await places_read(tab)
        return None if read is None else (read[0] + 1, read[1])

    page.places.read = of_another_document  # type: ignore[method-assign]
    snapshot = await page.snapshot(SnapshotOptions())
    page.places.read = places_read  # type: ignore[method-assign]
    assert "[box=" in page.observation(snapshot["obs_id"])["raw"], "read again, placed by Playwright's boxes"
    assert snapshot["text"] == await _boxes_view(page, SnapshotOptions())


@pytest.mark.parametrize("kind", ["ws", "cdp"])
async def test_a_browser_elsewhere_is_placed_by_the_refs_boxes(tmp_path: Path, site: str, kind: str) -> None:
    """A Playwright browser server and a Chromium over CDP give the DevTools session the refs' boxes are read by."""
    async with registry_elsewhere(tmp_path, kind, free_port()) as registry:
        page = registry.get((await registry.create(f"{site}/big.html", (1280, 720)))["id"])
        for _ in range(2):  # the world found beside the first snapshot, the places asked for beside the second
            reads = page.places.reads
            snapshot = await page.snapshot(SnapshotOptions(max_elements=8))
            assert page.places.reads == reads + 1 and "[box=" not in page.observation(snapshot["obs_id"])["raw"]
            assert snapshot["text"] == await _boxes_view(page, SnapshotOptions(max_elements=8))


async def test_a_ref_another_hand_renewed_between_the_reads_places_nothing(pages: PageRegistry, site: str) -> None:
    """Another hand renames a button and takes its own snapshot between lookout's snapshot and the read of its
    places: the button's element now carries a new ref, the snapshot's has no box, and the answer is made from
    a read with Playwright's boxes (the page as the other hand left it), never from boxes of the wrong refs."""
    page = pages.get((await pages.create(f"{site}/big.html", (1280, 720)))["id"])
    await page.snapshot(SnapshotOptions())
    places_read = page.places.read

    async def after_another_hand(tab: Any) -> tuple[float, str] | None:
        await tab.evaluate("document.querySelector('button').textContent = 'Renamed'")
        await tab.aria_snapshot(mode="ai")
        return await places_read(tab)

    page.places.read = after_another_hand  # type: ignore[method-assign]
    page.places.ready = lambda document: False  # type: ignore[method-assign]  # read after the snapshot's answer
    snapshot = await page.snapshot(SnapshotOptions())
    del page.places.read, page.places.ready
    assert "[box=" in page.observation(snapshot["obs_id"])["raw"], "read again, placed by Playwright's boxes"
    assert 'button "Renamed"' in snapshot["text"]
    assert snapshot["text"] == await _boxes_view(page, SnapshotOptions())
