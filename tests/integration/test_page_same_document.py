"""A same-document navigation (pushState, replaceState, a hash change) keeps every ref whose element stayed; a
ref whose element went is a 409, and a new document makes every ref stale (real headless Chromium, a
single-page app served from 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lookout.browser.action_kinds import Click, Navigate
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from lookout.core.errors import Conflict
from tests.support.pages import ref_of
from tests.support.site import serve_directory

APP = """<!doctype html><title>App</title><body>
<nav><button id="about" onclick="history.pushState({}, '', '/about'); view('About us', 'Contact')">About</button>
<button onclick="history.replaceState({}, '', '/team'); view('Team', 'Hire')">Team</button>
<button onclick="location.hash = 'faq'; view('FAQ', 'Ask')">FAQ</button>
<button id="count" onclick="this.textContent = 'Clicks ' + (++window.clicks)">Clicks 0</button></nav>
<main id="main"><h1>Home</h1><button>Start</button></main>
<script>window.clicks = 0;
const view = (title, action) => { document.getElementById('main').innerHTML = `<h1>${title}</h1><button>${action}</button>`; };
</script></body>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "app.html").write_text(APP)
    with serve_directory(root) as url:
        yield url


@pytest.mark.parametrize("route", ["About", "Team", "FAQ"])
async def test_a_route_change_keeps_the_refs_of_elements_that_stayed(
    pages: PageRegistry, site: str, route: str
) -> None:
    page = pages.get((await pages.create(f"{site}/app.html", (1280, 720)))["id"])
    text = (await page.snapshot(SnapshotOptions()))["text"]
    counter, start = ref_of(text, '- button "Clicks 0"'), ref_of(text, '- button "Start"')
    moved = await page.act(Click(ref=ref_of(text, f'- button "{route}"')), None)
    assert "navigation" in moved["effects"], "the URL changed: it is reported"
    assert page.page.url != f"{site}/app.html"
    await page.act(Click(ref=counter), None)  # no snapshot between: the ref of the button that stayed still works
    assert await page.page.text_content("#count") == "Clicks 1"
    with pytest.raises(Conflict) as gone:
        await page.act(Click(ref=start), None)  # its element went with the route's view
    assert f"ref {start} is no longer on the page" in gone.value.message


async def test_a_new_document_makes_every_ref_stale(pages: PageRegistry, site: str) -> None:
    page = pages.get((await pages.create(f"{site}/app.html", (1280, 720)))["id"])
    counter = ref_of((await page.snapshot(SnapshotOptions()))["text"], '- button "Clicks 0"')
    await page.act(Navigate(url=f"{site}/app.html?again"), None)
    with pytest.raises(Conflict) as stale:
        await page.act(Click(ref=counter), None)
    assert "the page navigated" in stale.value.message and "snapshot again" in stale.value.message


async def test_a_script_goes_on_after_a_route_change_and_stops_at_a_new_document(pages: PageRegistry, site: str) -> None:
    """A script's later steps keep their refs across a pushState (it goes on); a new document stops it there."""
    page = pages.get((await pages.create(f"{site}/app.html", (1280, 720)))["id"])
    text = (await page.snapshot(SnapshotOptions()))["text"]
    about, counter = ref_of(text, '- button "About"'), ref_of(text, '- button "Clicks 0"')
    done = await page.script([Click(ref=about), Click(ref=counter)], SnapshotOptions())
    assert "stopped_at" not in done and [r["ok"] for r in done["results"]] == [True, True], done
    assert await page.page.text_content("#count") == "Clicks 1"
    await page.page.evaluate("() => { document.getElementById('about').onclick = () => { location.href = '/x.html'; }; }")
    text = (await page.snapshot(SnapshotOptions()))["text"]
    about, counter = ref_of(text, '- button "About"'), ref_of(text, '- button "Clicks 1"')
    done = await page.script([Click(ref=about), Click(ref=counter)], SnapshotOptions())
    assert done["stopped_at"]["step"] == 0 and "refs are stale" in done["stopped_at"]["reason"], done
    assert len(done["results"]) == 1
