"""Actions refused at once with what to do (real headless Chromium, pages served from 127.0.0.1): a click that a
modal dialog or an overlay would take names what covers its target (never Playwright's wait for the timeout);
a ref no snapshot had is unknown, one whose element went is no longer on the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lookout.browser.action_kinds import Check, Click
from lookout.browser.registry import PageRegistry
from lookout.browser.snapshot_view import SnapshotOptions
from lookout.core.errors import Conflict
from tests.support.pages import ref_of
from tests.support.site import serve_directory

PAGE = """<!doctype html><title>Covered</title><body>
<button id="save" onclick="document.getElementById('out').textContent = 'saved'">Save</button>
<label><input type="checkbox" id="agree"> I agree</label>
<p id="out">-</p>
<dialog id="d" aria-label="Confirm delete"><p>Sure?</p><button onclick="this.closest('dialog').close()">Cancel</button></dialog>
<div id="cookies" hidden style="position: fixed; inset: 0; background: white">We use cookies. <button>Accept</button></div>
</body>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "page.html").write_text(PAGE)
    with serve_directory(root) as url:
        yield url


async def test_a_click_under_a_modal_or_an_overlay_is_refused_at_once_naming_it(pages: PageRegistry, site: str) -> None:
    page = pages.get((await pages.create(f"{site}/page.html", (1280, 720)))["id"])
    text = (await page.snapshot(SnapshotOptions()))["text"]
    save, agree = ref_of(text, '- button "Save"'), ref_of(text, '- checkbox "I agree"')
    await page.act(Check(ref=agree), None)  # a checkbox in its label: the label is not a cover
    assert await page.page.is_checked("#agree")

    await page.page.evaluate("document.getElementById('d').showModal()")
    with pytest.raises(Conflict) as refused:
        await page.act(Click(ref=save, timeout_ms=60_000), None)
    assert 'covered by dialog "Confirm delete"' in refused.value.message and "Timeout" not in refused.value.message
    assert 'button "Save"' in refused.value.message
    assert await page.page.text_content("#out") == "-", "nothing was clicked"
    cancel = ref_of((await page.snapshot(SnapshotOptions()))["text"], '- button "Cancel"')
    await page.act(Click(ref=cancel), None)  # the modal's own button is not covered
    assert not await page.page.evaluate("document.getElementById('d').open")

    await page.page.evaluate("document.getElementById('cookies').hidden = false")
    with pytest.raises(Conflict) as refused:
        await page.act(Click(ref=save, timeout_ms=60_000), None)
    assert "covered by div" in refused.value.message and "We use cookies." in refused.value.message
    await page.page.evaluate("document.getElementById('cookies').hidden = true")
    await page.act(Click(ref=save), None)
    assert await page.page.text_content("#out") == "saved"


async def test_a_ref_never_given_is_unknown_and_one_whose_element_went_is_gone(pages: PageRegistry, site: str) -> None:
    page = pages.get((await pages.create(f"{site}/page.html", (1280, 720)))["id"])
    save = ref_of((await page.snapshot(SnapshotOptions()))["text"], '- button "Save"')
    with pytest.raises(Conflict) as unknown:
        await page.act(Click(ref="e999"), None)
    assert "ref e999 is unknown: no snapshot of this page had it" in unknown.value.message
    await page.page.evaluate("document.getElementById('save').remove()")
    await page.snapshot(SnapshotOptions())
    with pytest.raises(Conflict) as gone:
        await page.act(Click(ref=save), None)
    assert f"ref {save} is no longer on the page" in gone.value.message and "unknown" not in gone.value.message
